"""bench/bench_skip_check.py: the medians and ratios it reports, and its usage errors."""

import pytest

import checkout

bench_skip_check = checkout.load_bench('bench_skip_check')


def _run(config, repeat, cpu):
    return {'config': config, 'repeat': repeat, 'cpu_secs_per_1024': cpu, 'wall_secs': 1.0,
            'load_before': 0.5, 'load_after': 0.6}


def test_the_ratios_are_of_the_medians_over_the_repeats():
    runs = [_run('default', 0, 1.5), _run('tf.data', 0, 1.0), _run('skip', 0, 9.0),
            _run('skip', 1, 2.0), _run('tf.data', 1, 1.2), _run('default', 1, 1.6),
            _run('default', 2, 1.4), _run('tf.data', 2, 1.1), _run('skip', 2, 1.65)]
    summary = bench_skip_check.summarise(runs)
    assert summary['median_cpu_secs_per_1024'] == {'default': 1.5, 'tf.data': 1.1,
                                                   'skip': 2.0}
    assert summary['ratio_skip_vs_tf_data'] == pytest.approx(2.0 / 1.1)
    assert summary['ratio_skip_vs_default'] == pytest.approx(2.0 / 1.5)
    data = {'runs': runs, 'summary': summary,
            'dataset': {'images': 8, 'mean_jpeg_bytes': 83000.0},
            'args': {'batch_size': 4, 'image_size': 32, 'distortions': True, 'batches': 2}}
    table = bench_skip_check.markdown(data)
    assert table.splitlines()[0] == (
        'Input pipeline alone, 8 JPEGs of 500x375 (mean 83 KB), batch 4, 32x32, distortions, '
        '2 batches a run, one CPU device.')
    assert '| skip | 0 | 9.00 | 1.00 | 0.5-0.6 |' in table
    assert table.endswith('skip / tf.data 1.82 (the decode check), skip / default 1.33.')


@pytest.mark.parametrize('argv, message', [
    (['--batches=0'], '--batches must be at least 1, not 0'),
    (['--images=2'], '--images must be at least 4 (one a shard), not 2'),
])
def test_bad_arguments_are_one_error_line(argv, message, capsys):
    with pytest.raises(SystemExit) as info:
        bench_skip_check.main(argv)
    assert info.value.code == 2
    assert capsys.readouterr().err == 'bench_skip_check: error: %s; see --help\n' % message

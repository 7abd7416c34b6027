"""The regression gates: the statistics on synthetic repeat sets, `compare --fail_on_slower`,
the sweep's figures (--baseline's own tests: tests/test_baseline_gate.py)."""

import json

import pytest

from tf_cnn_benchmarks.metrics import significance
from tf_cnn_benchmarks.tools.sweep import cli as sweep
from tf_cnn_benchmarks.tools.sweep import results as sweep_results

import results_helpers as rh

A = [100.0, 101.0, 99.0, 100.5, 99.5]


def test_the_smallest_p_value_decides_how_many_repeats_a_verdict_needs():
    assert significance.min_p_value(2, 2) == pytest.approx(1 / 6)
    assert significance.min_p_value(3, 3) == pytest.approx(1 / 20)
    assert significance.min_repeats() == 3


def test_clearly_slower_beyond_the_tolerance_fails():
    j = significance.judge(A, [80.0, 81.0, 79.0, 80.5, 79.5], fail_pct=5)
    # Every B below every A: exact p = 1 / C(10, 5) = 1/252.
    assert j.verdict == 'slower' and j.p_slower == pytest.approx(1 / 252)
    assert j.ratio == pytest.approx(0.8) and j.failed


def test_noise_of_the_same_size_does_not_fail():
    j = significance.judge(A, [99.8, 100.7, 99.2, 100.2, 101.2], fail_pct=5)
    assert j.verdict == 'same' and not j.failed and j.p_slower > 0.05


def test_slower_by_the_test_but_within_the_tolerance_passes():
    j = significance.judge(A, [97.0, 98.0, 96.0, 97.5, 96.5], fail_pct=5)
    assert j.verdict == 'slower' and not j.failed


def test_a_large_ratio_with_too_few_repeats_has_no_verdict():
    # Issue 25: B/A 1.29 from 2 repeats each is not 'faster'.
    j = significance.judge([100.0, 101.0], [129.0, 130.0], fail_pct=5)
    assert j.verdict == '?' and not j.failed and j.p_slower is None
    assert j.reason == ('n=2+2: the Mann-Whitney test cannot reach p<=0.05 with fewer than 3 '
                        'repeats per side')
    assert significance.judge([100.0, 101.0, 99.0], [129.0, 130.0, 128.0]).verdict == 'faster'


def test_identical_samples_are_the_same():
    j = significance.judge([5.0] * 4, [5.0] * 4, fail_pct=0)
    assert j.verdict == 'same' and j.p_slower == 1.0 and not j.failed


def _write(directory, rates_by_batch, extra_flags=()):
    records = []
    for batch, rates in rates_by_batch.items():
        for i, rate in enumerate(rates):
            config = {'model': 'trivial', 'batch_size': batch, 'num_gpus': 1,
                      'precision': 'fp32', 'variable_update': 'parameter_server', 'repeat': i}
            records.append({
                'key': sweep_results.config_key(config), 'config': config, 'status': 'ok',
                'images_per_sec': rate, 'extra_flags': list(extra_flags), 'environment': {}})
    return rh.sweep_folder(directory, records)


def test_compare_gate_fails_on_a_slower_configuration_and_names_it(tmp_path, capsys):
    a = _write(str(tmp_path / 'a'), {8: [100.0, 101.0, 99.0], 16: [200.0, 202.0, 198.0]})
    b = _write(str(tmp_path / 'b'), {8: [70.0, 71.0, 69.0], 16: [201.0, 199.0, 203.0]})
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=10']) == 1
    out = capsys.readouterr().out
    assert '| 0.700 | 0.05 | slower | FAILED: 30.0% slower (> 10%) |' in out
    assert out.rstrip().endswith(
        'gate: FAILED: 1 of 2 configurations slower than A by more than 10% beyond the '
        'noise: trivial bs=8 gpus=1 fp32 parameter_server')
    # Within the tolerance: passes, and the table says by how much it was slower.
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=40']) == 0
    out = capsys.readouterr().out
    assert '| slower | 30.0% slower, within 40% |' in out
    assert 'gate: passed: no configuration of 2 slower than A by more than 40%' in out
    # Without the option, compare never fails.
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b]) == 0
    assert 'gate:' not in capsys.readouterr().out


def test_compare_gate_fails_when_nothing_was_compared(tmp_path, capsys):
    # Every run of B failed: nothing compared, no pass.
    a = _write(str(tmp_path / 'a'), {8: [100.0, 101.0, 99.0]})
    config = {'model': 'trivial', 'batch_size': 8, 'num_gpus': 1, 'precision': 'fp32',
              'variable_update': 'parameter_server', 'repeat': 0}
    b = rh.sweep_folder(str(tmp_path / 'b'), [{
        'key': sweep_results.config_key(config), 'config': config, 'status': 'failed',
        'images_per_sec': None, 'extra_flags': [], 'environment': {}}])
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=10']) == 3
    captured = capsys.readouterr()
    assert captured.out.rstrip().endswith(
        'gate: NOT JUDGED: nothing was compared (no configuration has successful runs in both A '
        'and B); check that both sweeps ran and that A and B are sweep folders')
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b]) == 0  # no gate asked: a report only
    capsys.readouterr()


@pytest.mark.parametrize('text, what', [
    ('not a sweep record\n{"also": "not one"}\n', '2 lines, none a sweep record'),
    ('', 'an empty file'),
])
@pytest.mark.parametrize('gate', [['--fail_on_slower=10'], []])
def test_compare_against_a_path_without_sweep_records_is_a_usage_error(tmp_path, capsys, text,
                                                                       what, gate):
    # Before: with the gate, NOT JUDGED (exit 3); without it, a table against "0 runs" and
    # exit 0, where docs/campaigns.md said a usage error (exit 2), which a CI job needs.
    a = _write(str(tmp_path / 'a'), {8: [100.0, 101.0, 99.0]})
    b = str(tmp_path / 'b.jsonl')  # a run's results JSON, or an empty results file
    with open(b, 'w') as f:
        f.write(text)
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b] + gate) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ('', (
        'error: B (%s) holds no sweep records (%s): give a sweep output directory or its '
        'results.jsonl\n' % (b, what)))
    assert sweep.main(['tf_cnn_sweep', 'compare', b, a] + gate) == 2
    assert capsys.readouterr().err.startswith('error: A (%s) holds no sweep records' % b)


def test_compare_gate_fails_when_too_few_repeats_left_nothing_to_judge(tmp_path, capsys):
    # One repeat a side: B at half of A's images/sec, but no test possible (verdict '?').
    a = _write(str(tmp_path / 'a'), {8: [100.0]})
    b = _write(str(tmp_path / 'b'), {8: [50.0]})
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=5']) == 3
    # The line names the configuration, its runs per side and why, then what to do: the
    # wording of every 'nothing could be judged' line (it had its own for too few repeats).
    # Exit status 3, not 1: a CI tells a first night's too few runs from a regression.
    assert capsys.readouterr().out.rstrip().endswith(
        'gate: NOT JUDGED: nothing could be judged: trivial bs=8 gpus=1 fp32 parameter_server '
        '(runs: 1 in A, 1 in B; too few for the test). To judge them: give each side 3 or more '
        'successful runs (the same sweep again with --repeats=3 or more adds the missing ones)')
    # --allow_unjudged never passes a gate that judged nothing.
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=5',
                       '--allow_unjudged']) == 3
    assert 'gate: NOT JUDGED: nothing could be judged' in capsys.readouterr().out


def _records(rates_by_model, status_by_model=()):
    records = []
    for model, rates in rates_by_model.items():
        for i, rate in enumerate(rates):
            config = {'model': model, 'batch_size': 8, 'num_gpus': 1, 'precision': 'fp32',
                      'variable_update': 'parameter_server', 'repeat': i}
            status = dict(status_by_model).get(model, 'ok') if rate is None else 'ok'
            records.append({'key': sweep_results.config_key(config), 'config': config,
                            'status': status, 'images_per_sec': rate, 'extra_flags': [],
                            'environment': {}})
    return records


def test_compare_gate_fails_naming_each_configuration_it_could_not_judge(tmp_path, capsys):
    # The report: lenet 18% slower in B from 2 repeats (one line of B's results deleted),
    # trivial the same; the gate passed on trivial alone ('no configuration of 2 slower').
    a = rh.sweep_folder(str(tmp_path / 'a'), _records(
        {'trivial': [100.0, 101.0, 99.0], 'lenet': [50.0, 51.0, 49.0]}))
    b = rh.sweep_folder(str(tmp_path / 'b'), _records(
        {'trivial': [100.0, 100.5, 99.5], 'lenet': [41.0, 40.5]}))
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=10',
                       '--include_unclean_runs']) == 3
    out = capsys.readouterr().out
    assert '| 0.815 | - | ? | n=3+2: the Mann-Whitney test cannot reach p<=0.05' in out
    assert out.splitlines()[-1] == (
        'gate: NOT JUDGED: 1 of 2 configurations could not be judged: lenet bs=8 gpus=1 fp32 '
        'parameter_server (runs: 3 in A, 2 in B; too few for the test). To judge them: give '
        'each side 3 or more successful runs (the same sweep again with --repeats=3 or more '
        'adds the missing ones); or --allow_unjudged passes the gate on the 1 judged')
    # Asked for: passes on the judged one, and still names the other.
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=10',
                       '--allow_unjudged']) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        'gate: passed: no configuration of 1 slower than A by more than 10% beyond the noise; '
        'not judged (--allow_unjudged): lenet bs=8 gpus=1 fp32 parameter_server (runs: 3 in A, '
        '2 in B; too few for the test)')


def test_compare_gate_fails_on_a_configuration_whose_runs_failed_on_a_side(tmp_path, capsys):
    # Every alexnet run of B failed, one lenet run did; trivial is both slower and judged.
    a = rh.sweep_folder(str(tmp_path / 'a'), _records(
        {'trivial': [100.0, 101.0, 99.0], 'lenet': [50.0, 51.0, 49.0],
         'alexnet': [10.0, 10.1, 9.9]}))
    b = rh.sweep_folder(str(tmp_path / 'b'), _records(
        {'trivial': [70.0, 71.0, 69.0], 'lenet': [50.0, 50.5, None],
         'alexnet': [None, None, None]}, {'lenet': 'failed', 'alexnet': 'failed'}))
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=10']) == 1
    out = capsys.readouterr().out
    assert 'failed in B (1): alexnet bs=8 gpus=1 fp32 parameter_server' in out
    assert out.splitlines()[-1] == (
        'gate: FAILED: 1 of 3 configurations slower than A by more than 10% beyond the '
        'noise: trivial bs=8 gpus=1 fp32 parameter_server; and 2 of 3 configurations could '
        'not be judged: alexnet bs=8 gpus=1 fp32 parameter_server (runs: 3 in A, 0 in B (3 '
        'failed)); lenet bs=8 gpus=1 fp32 parameter_server (runs: 3 in A, 2 in B (1 failed); '
        'too few for the test). To judge them: fix the failed runs and rerun them '
        '(--retry_failed); or --allow_unjudged passes the gate on the 1 judged')
    # With --allow_unjudged the failed line still names them (it dropped them: sweep53).
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=10',
                       '--allow_unjudged']) == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        'gate: FAILED: 1 of 3 configurations slower than A by more than 10% beyond the '
        'noise: trivial bs=8 gpus=1 fp32 parameter_server; not judged (--allow_unjudged): '
        'alexnet bs=8 gpus=1 fp32 parameter_server (runs: 3 in A, 0 in B (3 failed)); lenet '
        'bs=8 gpus=1 fp32 parameter_server (runs: 3 in A, 2 in B (1 failed); too few for the '
        'test)')


def test_compare_shows_the_p_value_of_a_verdict_the_gate_could_not_use(tmp_path, capsys):
    # Before (sweep53): 'p = -' in the text and "p_value": null in the JSON for a `?` whose
    # test was run (3+3 repeats, A spread too wide for a 10% slowdown to be caught).
    a = rh.sweep_folder(str(tmp_path / 'a'), _records({'trivial': [100.0, 130.0, 70.0]}))
    b = rh.sweep_folder(str(tmp_path / 'b'), _records({'trivial': [95.0, 96.0, 94.0]}))
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=10']) == 3
    row = [x for x in capsys.readouterr().out.splitlines() if x.startswith('| trivial')][0]
    assert '| 0.950 | 0.35 | ? | the test could not have caught a 10% slowdown' in row, row
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=10', '--json']) == 3
    [config] = json.loads(capsys.readouterr().out)['configurations']
    assert (config['verdict'], config['p_value']) == ('?', 0.35)


def test_compare_gate_passes_on_a_repeat_of_the_same_sweep(tmp_path, capsys):
    a = _write(str(tmp_path / 'a'), {8: [100.0, 101.0, 99.0]})
    b = _write(str(tmp_path / 'b'), {8: [100.5, 98.0, 99.5]})
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=5']) == 0
    assert '| same |' in capsys.readouterr().out


def test_compare_notes_flags_that_differ_in_meaning_not_in_spelling(tmp_path, capsys):
    # The report: A ran with `-- --noresults_db`, B from a sweep file's `noresults_db: true`
    # (--results_db=false): compare said the flags for every run differ.
    a = _write(str(tmp_path / 'a'), {8: [100.0, 101.0, 99.0]},
               ['--noresults_db', '--nodistortions'])
    b = _write(str(tmp_path / 'b'), {8: [100.5, 98.0, 99.5]},
               ['--results_db=false', '--distortions=False', '--optimizer=sgd'])  # the default
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b]) == 0
    assert 'note: the flags' not in capsys.readouterr().out
    c = _write(str(tmp_path / 'c'), {8: [100.5, 98.0, 99.5]},
               ['--results_db=false', '--distortions=false', '--num_batches=20'])
    assert sweep.main(['tf_cnn_sweep', 'compare', a, c]) == 0
    assert ('note: the flags for every run differ: A: --noresults_db --nodistortions; B: '
            '--results_db=false --distortions=false --num_batches=20'
            ) in capsys.readouterr().out


def test_compare_refuses_allow_unjudged_without_a_gate(tmp_path, capsys):
    # It was ignored (exit 0): it only means something to --fail_on_slower.
    a = _write(str(tmp_path / 'a'), {8: [100.0]})
    assert sweep.main(['tf_cnn_sweep', 'compare', a, a, '--allow_unjudged']) == 2
    assert capsys.readouterr().err.startswith(
        'error: --allow_unjudged needs --fail_on_slower=PCT: it passes the gate on the '
        'configurations it judged, and without a gate compare only reports. usage: ')


@pytest.mark.parametrize('arg, message', [
    ('--fail_on_slower=abc', 'error: --fail_on_slower=abc: takes a number (percent)'),
    ('--fail_on_slower=-1', 'error: --fail_on_slower=-1: must be >= 0'),
    ('--fail_slower=5', 'error: unknown option --fail_slower=5 (compare takes '
                        '--fail_on_slower=PCT); its other options are --include_unclean_runs, '
                        '--allow_unjudged and --json'),
])
def test_compare_refuses_bad_options(tmp_path, capsys, arg, message):
    a = _write(str(tmp_path / 'a'), {8: [100.0]})
    assert sweep.main(['tf_cnn_sweep', 'compare', a, a, arg]) == 2
    assert capsys.readouterr().err.startswith(message)


# --- The sweep's figures.

def test_sweep_records_keep_the_figures_and_the_report_tabulates_their_medians(tmp_path):
    from tf_cnn_benchmarks.tools.sweep import figures as sweep_figures
    result = {'utilisation': {'model_flops_per_sec': 2e10, 'fraction_of_peak': 0.25,
                              'peak_source': 'CPU peak'},
              'input': {'input_share': 0.2, 'compute_images_per_sec': 125.0,
                        'input_bound': True},
              'memory': {'process_peak_rss_bytes': 1 << 30}, 'latency_ms': None}
    figures = sweep_figures.record_figures(result)
    assert figures == {'model_flops_per_sec': 2e10, 'fraction_of_peak': 0.25,
                       'peak_source': 'CPU peak', 'input_share': 0.2,
                       'compute_images_per_sec': 125.0, 'input_bound': True,
                       'peak_rss_bytes': 1 << 30, 'latency_p50_ms': None,
                       'latency_p90_ms': None, 'latency_p99_ms': None}
    config = {'model': 'trivial', 'batch_size': 8, 'num_gpus': 1, 'precision': 'fp32',
              'variable_update': 'parameter_server'}
    slower = dict(figures, model_flops_per_sec=1e10, fraction_of_peak=0.15, input_share=0.0)
    records = [{'config': dict(config, repeat=i), 'status': 'ok', 'figures': f}
               for i, f in enumerate([figures, slower, figures])]
    table = sweep_figures.figures_table(records)
    assert ('| trivial bs=8 gpus=1 fp32 parameter_server | 20.0 | 25.0% | 20.0% input-bound '
            '| 125.0 | 1.00 | - |') in table
    assert table.rstrip().endswith('Peaks: CPU peak.')
    assert sweep_figures.figures_table([dict(records[0], status='failed')]) == ''

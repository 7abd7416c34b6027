"""A model of another dataset than the one the flags for every run choose, refused by the
sweep before any run with the benchmark's own check (preflight/usage.py check_model, no
TensorFlow), as an unknown model name is."""

from __future__ import annotations

from tf_cnn_benchmarks.tools.sweep import cli as sweep
from tf_cnn_benchmarks.tools.sweep import runner as sweep_runner


def test_a_model_of_another_dataset_is_refused_before_any_run(tmp_path, capsys, monkeypatch):
    """A trial: --models=resnet20,trivial without --data_name=cifar10 started, and the resnet20
    run failed with the benchmark's line after the others ran. Now the benchmark's own check
    refuses it first: one line, exit 2, nothing made."""
    calls = []
    monkeypatch.setattr(sweep_runner, 'run_configuration', lambda *a: calls.append(a))
    out = tmp_path / 'out'
    status = sweep.main(['tf_cnn_sweep', '--output_dir=%s' % out, '--batch_sizes=8',
                         '--models=trivial,resnet20', '--', '--device=cpu'])
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith(
        'error: the run --model=resnet20 --batch_size=8 --num_gpus=1 '
        '--variable_update=parameter_server: --model=resnet20 is a cifar10 model and does not '
        'run on synthetic data (for synthetic cifar10 images add --data_name=cifar10); models '
        'for synthetic: '), err
    assert err.count('\n') == 1 and 'Traceback' not in err
    assert calls == [] and not out.exists()
    axes = {'model': ['trivial', 'resnet20'], 'batch_size': [8], 'num_gpus': [1],
            'precision': ['fp32'], 'variable_update': ['parameter_server']}
    assert sweep.invalid_configuration(axes, ['--device=cpu', '--data_name=cifar10']) is None


def test_a_value_listed_twice_in_an_axis_is_refused_before_any_run(tmp_path, capsys,
                                                                   monkeypatch):
    """A trial: --models=trivial,trivial said `resuming: -1 of 1 runs already done`, ran the
    configuration twice into one run folder, and the report kept only the second run."""
    calls = []
    monkeypatch.setattr(sweep_runner, 'run_configuration', lambda *a: calls.append(a))
    for axis, flag in (('trivial,lenet,trivial', '--batch_sizes=4'),
                       ('trivial', '--batch_sizes=4,8,4')):
        out = tmp_path / 'out'
        status = sweep.main(['tf_cnn_sweep', '--output_dir=%s' % out, flag,
                             '--models=%s' % axis, '--', '--device=cpu'])
        named = ('--models lists trivial twice' if ',' in axis
                 else '--batch_sizes lists 4 twice')
        assert (status, capsys.readouterr().err) == (2, (
            'error: %s; give each value once (--repeats=N runs each configuration N times)\n'
            % named))
        assert calls == [] and not out.exists()


def test_a_misspelt_sweep_option_is_named_as_the_sweeps(tmp_path, capsys, monkeypatch):
    """A trial: `--modls=trivial` was taken for a run flag (`Did you mean: model ?`, which the
    sweep then refuses after --); `--repeat=3` named no --repeats. A misspelt run flag after
    -- still gets the run's own line."""
    calls = []
    monkeypatch.setattr(sweep_runner, 'run_configuration', lambda *a: calls.append(a))
    out = tmp_path / 'out'
    for given, meant in (('--modls=trivial', 'models'), ('--repeat=3', 'repeats')):
        status = sweep.main(['tf_cnn_sweep', '--output_dir=%s' % out, '--models=trivial',
                             '--batch_sizes=4', given, '--', '--num_batches=2'])
        assert (status, capsys.readouterr().err) == (2, (
            'error: --%s is neither a tf_cnn_sweep option nor a tf_cnn_benchmarks flag; did you '
            'mean --%s? (see tf_cnn_sweep --help)\n' % (given[2:].partition('=')[0], meant)))
    status = sweep.main(['tf_cnn_sweep', '--output_dir=%s' % out, '--models=trivial',
                         '--batch_sizes=4', '--', '--num_batchs=2'])
    assert status == 2 and "Unknown command line flag 'num_batchs'. Did you mean: " \
        'num_batches ?' in capsys.readouterr().err
    assert calls == [] and not out.exists()

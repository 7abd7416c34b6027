"""A dry run a person waits for (issue 40, item 5): a line before each phase expected to take
longer than dry_run.PROGRESS_SECS, saying what and roughly how long, and the report's lines as
soon as they are known."""

from __future__ import annotations

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.params import make_params
from tf_cnn_benchmarks.preflight import dry_run
from tf_cnn_benchmarks.speed_model import layer_profile


def _make_bench(q, gpus):
    return benchmark_cnn.BenchmarkCNN(q, gpus=gpus)


def _params():
    return make_params(model='trivial', image_size=16, batch_size=2, dry_run=True,
                       gpu_model='V100', num_gpus=2, variable_update='replicated',
                       use_nccl=True)


def test_every_long_phase_is_announced_before_it_runs(capsys, monkeypatch):
    monkeypatch.setattr(dry_run, 'PROGRESS_SECS', 0.0)  # every phase counts as long
    monkeypatch.setattr(dry_run, 'load_factor', lambda: 3.0)  # a loaded host, injected
    monkeypatch.setattr(dry_run, 'MAX_SEARCH_SECS', 5.0)
    assert dry_run.run(_make_bench, _params(), 0) == 0
    lines = capsys.readouterr().out.splitlines()

    def at(prefix):
        found = [i for i, line in enumerate(lines) if line.startswith(prefix)]
        assert len(found) == 1, (prefix, lines)
        return found[0]
    ops = layer_profile.from_model('trivial', 'imagenet', 16, 1001, 4).ops
    build = at('Dry run:          building the step: 2 tower(s) of trivial (roughly ')
    assert lines[build].endswith(' s) ...')
    assert lines[build] == ('Dry run:          building the step: 2 tower(s) of trivial '
                            '(roughly %s) ...' % dry_run._rough(
                                3.0 * dry_run.BUILD_SECS_PER_PROFILE_OP * ops * 2))
    graph = at('Graph:            ')
    n = int(lines[graph].split()[1])
    check = at('Dry run:          checking kernels and copies of %d ops (roughly ' % n)
    memory = at('Dry run:          estimating the peak memory of each device (Grappler) '
                '(roughly ')
    assert build < graph < check < at('Ops per device:') < at('Copies per step') < memory \
        < at('Peak memory per device (Grappler, ') < at('Predicted step:') \
        < at('Searching for the largest batch') < at('Largest batch per device')


def test_short_phases_are_not_announced_and_the_load_stretches_the_estimate(capsys,
                                                                            monkeypatch):
    monkeypatch.setattr(dry_run, 'load_factor', lambda: 1.0)
    dry_run.announce('nothing much', dry_run.PROGRESS_SECS / 2)
    assert capsys.readouterr().out == ''
    dry_run.announce('building', 125.0)
    assert capsys.readouterr().out == 'Dry run:          building (roughly 2 min) ...\n'
    monkeypatch.setattr(dry_run, 'load_factor', lambda: 4.0)  # load 8 on 2 cores
    dry_run.announce('nothing much', dry_run.PROGRESS_SECS / 2)
    assert capsys.readouterr().out == 'Dry run:          nothing much (roughly 4 s) ...\n'


def test_the_load_factor_is_the_load_per_core_at_least_one():
    assert dry_run.load_factor(cores=2, load=14.0) == 7.0
    assert dry_run.load_factor(cores=8, load=2.0) == 1.0

"""A dry run a person waits for (issue 40, item 5): a line before each phase expected to take
longer than progress.PROGRESS_SECS, saying what and roughly how long, and the report's lines as
soon as they are known; --plan_scaling announces its phases through the same code."""

from __future__ import annotations

import pytest

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.params import make_params
from tf_cnn_benchmarks.preflight import dry_run, progress, scaling_plan
from tf_cnn_benchmarks.speed_model import layer_profile


def _make_bench(q, gpus):
    return benchmark_cnn.BenchmarkCNN(q, gpus=gpus)


def _params():
    return make_params(model='trivial', image_size=16, batch_size=2, dry_run=True,
                       gpu_model='V100', num_gpus=2, variable_update='replicated',
                       use_nccl=True)


def test_every_long_phase_is_announced_before_it_runs(capsys, monkeypatch):
    monkeypatch.setattr(progress, 'PROGRESS_SECS', 0.0)  # every phase counts as long
    monkeypatch.setattr(progress, 'load_factor', lambda: 3.0)  # a loaded host, injected
    # Others measured at 2 cores of 2 CPUs: one build thread among them takes 1.5 x its CPU
    # at least, 3 x (the load average's stretch) at most.
    monkeypatch.setattr(progress, 'others_cores', lambda: (2.0, 2))
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
                            '(roughly %s) ...' % progress.span(
                                1.5 * progress.BUILD_SECS_PER_PROFILE_OP * ops * 2,
                                3.0 * progress.BUILD_SECS_PER_PROFILE_OP * ops * 2))
    graph = at('Graph:            ')
    n = int(lines[graph].split()[1])
    # Its cost per op is not known well enough for a figure ('roughly 6-8 s' for about 1 s).
    check = at('Dry run:          checking kernels and copies of %d ops ...' % n)
    assert lines[check] == 'Dry run:          checking kernels and copies of %d ops ...' % n
    memory = at('Dry run:          estimating the peak memory of each device (Grappler) '
                '(roughly ')
    assert build < graph < check < at('Ops per device:') < at('Copies per step') < memory \
        < at('Peak memory per device (Grappler, ') < at('Predicted step:') \
        < at('Searching for the largest batch') < at('Largest batch per device')


def test_plan_scaling_announces_its_build_through_the_same_code(capsys, monkeypatch):
    """--plan_scaling was silent for 6-18 s after 'Loading TensorFlow for the run': its build of
    a small configuration's step (to count its copies) now gets the dry run's line."""
    monkeypatch.setattr(progress, 'PROGRESS_SECS', 0.0)
    monkeypatch.setattr(progress, 'load_factor', lambda: 1.0)
    monkeypatch.setattr(progress, 'others_cores', lambda: None)
    p = make_params(model='trivial', image_size=16, batch_size=2, plan_scaling=True,
                    gpu_model='V100', variable_update='replicated')
    assert scaling_plan.run(_make_bench, p, 0) == 0
    lines = capsys.readouterr().out.splitlines()
    ops = layer_profile.from_model('trivial', 'imagenet', 16, 1001, 4).ops
    build = ('Scaling plan:     building the step of 1 host x 2 GPUs to count its copies: 2 '
             'tower(s) of trivial (roughly %s) ...'
             % progress.span(*[progress.BUILD_SECS_PER_PROFILE_OP * ops * 2] * 2))
    assert lines[0] == build, lines
    assert lines[1].startswith('Scaling plan:     trivial, batch 2 per device')


def test_short_phases_are_not_announced_and_the_load_stretches_the_estimate(capsys,
                                                                            monkeypatch):
    monkeypatch.setattr(progress, 'load_factor', lambda: 1.0)
    monkeypatch.setattr(progress, 'others_cores', lambda: None)  # not measured
    progress.announce('nothing much', progress.PROGRESS_SECS / 2)
    assert capsys.readouterr().out == ''
    progress.announce('building', 125.0)
    assert capsys.readouterr().out == 'Dry run:          building (roughly 2 min) ...\n'
    # Load 8 on 2 cores and the others not measured: a range from quiet to the load's stretch.
    monkeypatch.setattr(progress, 'load_factor', lambda: 4.0)
    progress.announce('nothing much', progress.PROGRESS_SECS / 2)
    assert capsys.readouterr().out == 'Dry run:          nothing much (roughly 1-4 s) ...\n'
    # Measured: the low end is the others' share's stretch (1.15), the high the load's.
    monkeypatch.setattr(progress, 'others_cores', lambda: (1.3, 2))
    progress.announce('building', 10.0)
    assert capsys.readouterr().out == 'Dry run:          building (roughly 12-40 s) ...\n'
    monkeypatch.setattr(progress, 'load_factor', lambda: 1.2)  # within a quarter: one figure
    progress.announce('building', 10.0)
    assert capsys.readouterr().out == 'Dry run:          building (roughly 12 s) ...\n'


def test_a_range_whose_ends_round_alike_is_one_figure():
    # The plan said 'roughly 3-3 s' and 'roughly 2-2 s': ends apart by more than a quarter
    # that round to the same whole second.
    assert progress.span(2.6, 3.4) == '3 s'
    assert progress.span(1.6, 2.2) == '2 s'
    assert progress.span(2.6, 4.0) == '3-4 s'
    assert progress.span(100.0, 130.0) == '2 min'
    assert progress.span(40.0, 180.0) == '40 s-3 min'


def test_the_kernel_and_copy_check_gets_a_line_without_a_figure(capsys, monkeypatch):
    """It said 'roughly 6-8 s' for a check of about 1 s (8 GPUs of resnet50) and 'roughly 16-64
    s' for one of 6 s (16 GPUs): its cost per op was 5 x too high and measured on one CPU only.
    Its rate now decides whether it gets a line, which gives no figure."""
    monkeypatch.setattr(progress, 'others_cores', lambda: None)
    monkeypatch.setattr(progress, 'load_factor', lambda: 1.0)
    what = 'checking kernels and copies of %d ops'
    progress.announce(what % 31099, progress.CHECK_SECS_PER_OP * 31099, rough=False)
    assert capsys.readouterr().out == ''  # about 1.2 s of CPU on a quiet host: no line
    monkeypatch.setattr(progress, 'load_factor', lambda: 3.0)
    progress.announce(what % 62147, progress.CHECK_SECS_PER_OP * 62147, rough=False)
    assert capsys.readouterr().out == ('Dry run:          checking kernels and copies of 62147 '
                                       'ops ...\n')
    # The rate is that measured (3.8-4.8e-5 s of CPU per op), not the 2e-4 it was.
    assert 3e-5 <= progress.CHECK_SECS_PER_OP <= 5e-5


def test_the_load_factor_is_the_load_per_core_at_least_one():
    assert progress.load_factor(cores=2, load=14.0) == 7.0
    assert progress.load_factor(cores=8, load=2.0) == 1.0


def test_the_estimate_stretches_by_the_measured_others_not_the_load_average():
    """The reported case: load average 4.9 on 2 cores stretched a build estimate 2.45 x (65 s
    for a 15.1 s build: the per-op cost was also 3 x too high); the others then used about
    1.3 cores: one build thread among them waits 1.15 x its CPU time at least, the load's
    2.45 x at most."""
    assert progress.stretch(1.3, 2) == pytest.approx(1.15)
    assert progress.stretch(0.2, 2) == 1.0  # a free core: no stretch
    assert progress.stretch(7.0, 4) == 2.0
    assert progress.estimate(10.0, (1.3, 2), 2.45) == (pytest.approx(11.5), pytest.approx(24.5))
    assert progress.estimate(10.0, None, 2.45) == (10.0, pytest.approx(24.5))
    assert progress.estimate(10.0, (1.9, 2), 1.0) == (pytest.approx(14.5), pytest.approx(14.5))
    # The reported build: 8 towers of resnet50's 446 placeholder ops at this module's cost
    # (8.9 s of CPU), on 2 CPUs at load 4.9 with the others at 1.3 cores: 10-22 s (15.1 s).
    cpu = progress.BUILD_SECS_PER_PROFILE_OP * 446 * 8
    low, high = progress.estimate(cpu, (1.3, 2), progress.load_factor(cores=2, load=4.9))
    assert progress.span(low, high) == '10-22 s' and low < 15.1 < high
    assert progress.span(50.0, 200.0) == '50 s-3 min'
    assert progress.span(10.0, 12.0) == '12 s'


def test_the_probe_measures_the_others_over_at_least_probe_secs(monkeypatch):
    from tf_cnn_benchmarks.metrics import host_load
    monkeypatch.setattr(progress, '_probe', {})
    assert progress.others_cores() is None  # no probe started
    loads = iter([{'others_cores': 0.7, 'cpus_allowed': 2}, {'others_cores': None,
                                                             'cpus_allowed': 2}])

    class Meter:
        def __init__(self, intra_threads):
            assert intra_threads == 1  # the phases are one thread

        def start(self):
            pass

        def restart(self):
            return next(loads)
    monkeypatch.setattr(host_load, 'Meter', Meter)
    slept = []
    monkeypatch.setattr(progress.time, 'sleep', slept.append)
    progress.start_probe()
    assert progress.others_cores() == (0.7, 2)
    assert slept and 0.0 < slept[0] <= progress.PROBE_SECS
    assert progress.others_cores() is None  # too short or unreadable: not measured

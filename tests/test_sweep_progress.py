"""tools/sweep/progress.py: the sweep's progress line, its estimate per configuration (costs
from the model table, seconds per FLOP and a fixed part from the runs that ended ok) and the
run's log it names. Injected clock, costs and outcomes: no run."""

from __future__ import annotations

import io

import pytest

from tf_cnn_benchmarks.models import model_catalog
from tf_cnn_benchmarks.tools.sweep import cli as sweep
from tf_cnn_benchmarks.tools.sweep import progress

TRIVIAL = 8517558 * 8  # trivial's forward FLOPs per image (ImageNet, 227 px) x batch 8
RESNET50 = 7715950592 * 8


def _ok(wall, elapsed, steps=10, warmup=5):
    return {'status': 'ok', 'wall_secs': wall,
            'result': {'elapsed_secs': elapsed, 'num_steps': steps,
                       'params': {'num_warmup_batches': warmup}}}


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def _bar(costs, total=None):
    clock, out = _Clock(), io.StringIO()
    bar = progress.Progress(total or len(costs), 0, costs, stream=out, clock=clock)
    return bar, clock, out


def test_costs_are_the_model_tables_flops_times_batch_and_devices():
    configs = [{'model': 'trivial', 'batch_size': 8, 'num_gpus': 1},
               {'model': 'resnet50', 'batch_size': 8, 'num_gpus': 2}]
    assert progress.step_costs(configs, ['--device=cpu']) == [
        model_catalog.row('trivial', 'imagenet').gflops * 1e9 * 8,
        model_catalog.row('resnet50', 'imagenet').gflops * 1e9 * 16]
    assert progress.step_costs(configs[:1], ['--data_name=cifar10']) == [
        pytest.approx(96256 * 8)]  # cifar10's trivial
    # --image_size scales the FLOPs by its area: 112 px of resnet50's 224 is a quarter.
    assert progress.step_costs(configs[1:], ['--image_size=112']) == [
        pytest.approx(7715950592 * 16 / 4)]


def test_the_estimate_is_unknown_until_a_run_ends_ok_and_a_failure_is_no_cost():
    """A trial: `ETA 0:00:00` after a run refused in 0.25 s, and `ETA 0:00:06` (the mean of
    a trivial run) before a 58.7-s resnet50 run."""
    bar, clock, out = _bar([RESNET50, TRIVIAL, RESNET50])
    bar.begin('a', '/o/runs/a/stdout.log')
    clock.now += 0.25
    bar.end({'status': 'failed', 'wall_secs': 0.25, 'result': None})
    bar.begin('b')
    clock.now += 6.0
    # trivial: 10 timed steps in 0.12 s (5 warm-up steps too), 6.0 s in all.
    bar.end(_ok(6.0, 0.12))
    bar.begin('c')
    lines = out.getvalue().splitlines()
    assert lines[0] == ('[....................] 1/3 a | elapsed 0:00:00 | ETA unknown | logs: '
                        '/o/runs/a/stdout.log')
    assert lines[1].endswith('] 2/3 b | elapsed 0:00:00 | ETA unknown')
    # Seconds per FLOP 0.12 / (10 TRIVIAL); the fixed part 6.0 - 15 steps at that rate = 5.82 s;
    # resnet50 left (906x trivial's FLOPs): 5.82 + 163.06 = 168.9 s, not 6 s.
    rate = 0.12 / (10 * TRIVIAL)
    assert bar.estimate.seconds([RESNET50]) == pytest.approx(5.82 + rate * RESNET50 * 15)
    assert lines[2].endswith('] 3/3 c | elapsed 0:00:06 | ETA 0:02:49')
    assert bar.estimate.seconds([TRIVIAL]) == pytest.approx(6.0)


def test_a_run_left_is_its_fixed_part_plus_its_cost_at_the_pooled_rate():
    est = progress.Estimate()
    est.add(TRIVIAL, _ok(6.0, 0.12))
    est.add(RESNET50, _ok(58.7, 33.5))
    est.add(RESNET50, {'status': 'stopped', 'wall_secs': 600.0, 'result': None})  # no cost
    rate = (0.12 + 33.5) / (10 * TRIVIAL + 10 * RESNET50)
    fixed = sorted([6.0 - 0.12 * 1.5, 58.7 - 33.5 * 1.5])
    median = sum(fixed) / 2
    assert est.seconds([RESNET50, TRIVIAL]) == pytest.approx(
        2 * median + rate * 15 * (RESNET50 + TRIVIAL))
    # A model without a row counts as the mean of the known costs left.
    assert est.seconds([None, RESNET50]) == pytest.approx(
        2 * (median + rate * 15 * RESNET50))


class _Runner:
    """Every run ok after 2 s, with 10 timed steps in 1 s."""

    def __call__(self, args, run_dir, interrupts, timeout_secs):
        import os
        os.makedirs(run_dir, exist_ok=True)
        outcome = _ok(2.0, 1.0)
        outcome['result'].update(images_per_sec=80.0, global_batch_size=8, step_times=[0.1])
        outcome.update(exit_status=0, error=None, started_utc='2026-01-01T00:00:00+00:00',
                       no_space=False)
        return outcome


def test_the_sweep_names_each_runs_log_on_its_progress_line(tmp_path, capsys):
    plan = {'axes': {'model': ['trivial', 'lenet'], 'batch_size': [8], 'num_gpus': [1],
                     'precision': ['fp32'], 'variable_update': ['parameter_server']},
            'repeats': 1, 'output_dir': str(tmp_path), 'extra_flags': ['--device=cpu']}
    assert sweep.run_sweep(plan, runner=_Runner()) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith('[')]
    assert len(lines) == 2
    assert lines[0].endswith('| ETA unknown | logs: %s/runs/trivial-bs8-gpus1-fp32-'
                             'parameter_server-r0/stdout.log' % tmp_path)
    assert ' | ETA 0:00:' in lines[1] and lines[1].endswith('lenet-bs8-gpus1-fp32-'
                                                            'parameter_server-r0/stdout.log')

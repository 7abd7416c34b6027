"""The latency line leaves out a first batch that carries the session's set-up (metrics/latency.py):
an evaluation's first batch, the first timed step of a forward-only run without warm-up steps.
Times are injected; nothing here is timed."""

import types

import pytest

from tf_cnn_benchmarks.lifecycle import figure_hooks
from tf_cnn_benchmarks.metrics import latency, utilisation

import helpers

# A user's trial (--forward_only --num_warmup_batches=0, 5 steps): the set-up step first.
SET_UP_FIRST = [0.05192, 0.0025, 0.0024, 0.0026, 0.0025]


def _peak(*args, **kwargs):
    return helpers.measurement({'flops_per_sec': 1e15, 'kernel': 'matmul'}, measured_now=True)


def _forward_only_lines(warmup, step_times):
    plan = helpers.stub_plan(training=False)
    plan.num_warmup_batches = warmup
    hook = figure_hooks.FiguresHook(plan, cpu_peak_fn=_peak)
    loop = types.SimpleNamespace(images_per_sec=100.0, step_times=step_times,
                                 num_steps=len(step_times))
    lines = hook.total_lines(loop)
    keys = {}
    hook.end(keys)
    return [line for line in lines if line.startswith('latency ')], keys['latency_ms']


def test_latency_ms_leaves_out_a_set_up_first_sample():
    lat = latency.latency_ms(SET_UP_FIRST, 8, first_sets_up=True)
    assert lat['count'] == 4 and lat['set_up_left_out'] is True
    assert lat['p99'] < 3.0  # ms: 51.92 with the set-up step in
    assert latency.format_latency(lat).endswith('over 4 batches after the first (set-up) batch')
    assert latency.latency_ms([0.05], 8, first_sets_up=True) is None
    # Always there, a bool (a user parsing the JSON: it was absent unless true).
    assert latency.latency_ms(SET_UP_FIRST, 8)['set_up_left_out'] is False


def test_forward_only_without_warmup_leaves_the_set_up_step_out_of_the_percentiles():
    # Before: 'p50 2.53, p90 33.47, p99 51.92 over 5 batches', the set-up step in p90 and p99.
    lines, lat = _forward_only_lines(0, SET_UP_FIRST)
    assert lines == ['latency per batch of 4 (ms): p50 2.50, p90 2.57, p99 2.60 over 4 batches '
                     'after the first (set-up) batch']
    assert lat['count'] == 4 and lat['set_up_left_out'] is True
    assert lat['p99'] == pytest.approx(2.597)


def test_forward_only_with_warmup_keeps_every_timed_step():
    lines, lat = _forward_only_lines(1, SET_UP_FIRST)
    assert lines[0].endswith(' over 5 batches') and lat['count'] == 5
    assert lat['set_up_left_out'] is False


def test_a_one_step_forward_only_run_without_warmup_has_no_latency_figure():
    lines, lat = _forward_only_lines(0, [0.04])
    assert lines == ['latency per batch of 4 (ms): no figure: the only batch is the first '
                     '(set-up) batch, left out; --num_warmup_batches=1 or --num_batches=2 '
                     'gives one']
    assert lat is None


@pytest.mark.parametrize('flags, hint', [
    (dict(eval=True, num_eval_batches=1, num_eval_epochs=None), '--num_eval_batches'),
    # --eval --num_batches=1: that flag set the count (a release tester followed the hint
    # '--num_eval_batches=2' and got '--num_batches has no effect').
    (dict(eval=True, num_eval_batches=None, num_eval_epochs=None), '--num_batches'),
    (dict(eval=False, num_eval_batches=None, num_eval_epochs=None), '--num_eval_batches')])
def test_a_one_batch_eval_has_no_latency_figure(capsys, flags, hint):
    # Before: 'latency per batch of 4 (ms): 40.00, 1 batch: too few for percentiles', the
    # set-up batch's time given as the latency.
    plan = helpers.stub_plan(training=False, **flags)
    plan.eval = types.SimpleNamespace(global_batch_size=4)
    keys = utilisation.eval_figures(plan, {'images_per_sec': 100.0, 'batch_times': [0.04]},
                                    cpu_peak_fn=_peak)
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == ('latency per batch of 4 (ms): no figure: the only batch is the first '
                       '(set-up) batch, left out; %s=2 or more gives one' % hint)
    assert keys['latency_ms'] is None

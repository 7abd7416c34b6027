"""The profiling outputs as a user's trial read them: the results' input.method without a
traced warm-up step. Traces are injected where the figures must be known; nothing is timed."""

import types

import tensorflow as tf
from tensorflow.core.framework import step_stats_pb2

from tf_cnn_benchmarks.lifecycle import figure_hooks
from tf_cnn_benchmarks.metrics import utilisation

import helpers

tf1 = tf.compat.v1

CPU = '/job:localhost/replica:0/task:0/device:CPU:0'


# --- The results' input.method without a traced warm-up step.

def _input_keys(warmup, traced):
    plan = helpers.stub_plan(training=False)
    plan.num_warmup_batches = warmup
    hook = figure_hooks.FiguresHook(plan, cpu_peak_fn=lambda *a, **k: helpers.measurement(
        {'flops_per_sec': 1e15, 'kernel': 'matmul'}, measured_now=True))
    if traced:
        stats = step_stats_pb2.StepStats()
        dev = stats.dev_stats.add(device=CPU)
        dev.node_stats.add(node_name='conv', timeline_label='conv = Conv2D()',
                           all_start_micros=10, all_end_rel_micros=50)
        hook.traced(warmup, 0.0001, tf1.RunMetadata(step_stats=stats))
    loop = types.SimpleNamespace(images_per_sec=100.0, step_times=[0.04] * 3, num_steps=3)
    lines = hook.total_lines(loop)
    keys = {}
    hook.end(keys)
    return lines[0], keys['input']


def test_input_method_says_why_there_is_no_figure_without_warmup():
    # A user's trial: --num_warmup_batches=0 gave input.method 'FULL_TRACE of the last warm-up
    # step; ...' beside null figures.
    line, inp = _input_keys(0, traced=False)
    assert inp['method'] == ('not measured: no warm-up step to trace: needs '
                             '--num_warmup_batches >= 1')
    assert line == 'compute images/sec: not measured (%s)' % utilisation.NO_WARMUP_TRACE
    assert inp['input_share'] is None and inp['compute_images_per_sec'] is None
    line, inp = _input_keys(2, traced=True)
    assert inp['method'] == utilisation.INPUT_METHOD and inp['input_share'] is not None

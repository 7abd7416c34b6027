"""The results JSON is strict JSON: a non-finite float is written as null, never as the NaN or
Infinity tokens JavaScript's JSON.parse and Python's json with parse_constant raising refuse
(lifecycle/results_log.py write_json). A user's finding: a forward-only run of diverged
weights wrote `"loss": NaN` for every step, `last_average_loss` and `losses`."""

from __future__ import annotations

import glob
import json
import math
import os

import numpy as np
import tensorflow as tf

from tf_cnn_benchmarks.lifecycle import results_log, run_hooks

import helpers


def _strict(text: str):
    def refuse(token):
        raise ValueError('non-finite token %s' % token)
    return json.loads(text, parse_constant=refuse)


def test_the_writer_writes_non_finite_floats_as_null(tmp_path):
    result = {'model': 'trivial', 'losses': [1.5, math.nan, math.inf],
              'last_average_loss': -math.inf,
              'steps': [{'step': 1, 'loss': np.float32('nan'), 'images_per_sec': 10.0}],
              'eval': {'top_1': np.float64('inf'), 'nested': {'deep': (math.nan, 2)}},
              'array': np.array([1.0, np.nan]), 'count': np.int64(3), 'ok': True}
    path = results_log.write_json(result, str(tmp_path))
    with open(path, encoding='utf-8') as f:
        text = f.read()
    assert 'NaN' not in text and 'Infinity' not in text
    written = _strict(text)
    assert written['losses'] == [1.5, None, None]
    assert written['last_average_loss'] is None
    assert written['steps'] == [{'step': 1, 'loss': None, 'images_per_sec': 10.0}]
    assert written['eval'] == {'top_1': None, 'nested': {'deep': [None, 2]}}
    assert (written['array'], written['count'], written['ok']) == ([1.0, None], 3, True)
    # The dict the run returns keeps its floats.
    assert math.isnan(result['losses'][1]) and math.isnan(result['steps'][0]['loss'])


class _DivergedWeights(run_hooks.RunHook):
    """Sets every trainable variable to NaN once they are initialised: a forward-only run of
    a checkpoint whose weights diverged."""

    def after_initialize(self, ctx):
        for var in ctx.info.mgr.trainable_variables(0):
            ctx.sess.run(var.assign(tf.fill(var.shape, np.nan)))


def test_a_forward_only_run_of_diverged_weights_writes_strict_json(tmp_path):
    log_dir = str(tmp_path / 'bl')
    result = helpers.tiny_bench(hooks=[_DivergedWeights()], forward_only=True, num_batches=2,
                                num_warmup_batches=1, benchmark_log_dir=log_dir).run()
    assert all(math.isnan(loss) for loss in result['losses'])  # nothing stops: not trained
    [path] = glob.glob(os.path.join(log_dir, '*.json'))
    with open(path, encoding='utf-8') as f:
        written = _strict(f.read())
    assert written['losses'] == [None, None]
    assert [step['loss'] for step in written['steps']] == [None, None]
    assert written['last_average_loss'] is None and written['num_steps'] == 2
    # A forward-only run with a warm-up step keeps every timed step in its latency, and says
    # so (the key was absent then: only true ever appeared).
    assert written['latency_ms']['set_up_left_out'] is False

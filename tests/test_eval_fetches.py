"""Evaluation builds its executors before the timer: the batch fetch list with the staging puts
and the one without them (the last batches read what is already staged) are both callables made
before the first timed batch, and no batch goes through session.run (a new executor in the loop)."""

from __future__ import annotations

import tensorflow as tf

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.lifecycle import eval_runner
from tf_cnn_benchmarks.params import make_params

tf1 = tf.compat.v1


def test_eval_batches_run_through_callables_made_before_the_timer(imagenet_dir, monkeypatch):
    p = make_params(model='trivial', data_dir=imagenet_dir, image_size=32, batch_size=8,
                    eval=True, num_eval_batches=3, batch_group_size=2)
    bench = benchmark_cnn.BenchmarkCNN(p, gpus=0)
    evaluator = eval_runner.Evaluator(bench.plan, bench.model, bench.dataset,
                                       bench.session_config)
    with tf1.Session(graph=evaluator.graph) as sess:
        sess.run(evaluator.init_ops)
        values = {name: sess.run(var) for name, var in evaluator.savable.items()}
    values['global_step'] = 7

    callables, runs = [], []
    make_callable, run = tf1.Session.make_callable, tf1.Session.run

    def recording_make_callable(self, fetches, *args, **kwargs):
        callables.append(fetches)
        return make_callable(self, fetches, *args, **kwargs)

    def recording_run(self, fetches, *args, **kwargs):
        runs.append(fetches)
        return run(self, fetches, *args, **kwargs)

    monkeypatch.setattr(tf1.Session, 'make_callable', recording_make_callable)
    monkeypatch.setattr(tf1.Session, 'run', recording_run)
    result = evaluator.evaluate(values=values)

    assert result['num_batches'] == 3 and result['num_examples'] == 24
    assert result['global_step'] == 7 and len(result['batch_times']) == 3
    pipeline = evaluator.pipeline
    assert pipeline.step_ops and pipeline.staging_depth == 2
    assert callables == [[evaluator.counts] + list(pipeline.step_ops), [evaluator.counts]]
    # The batches are not run by session.run (a second fetch list, a second executor).
    assert not [f for f in runs if f is evaluator.counts or (
        isinstance(f, list) and evaluator.counts in f)]

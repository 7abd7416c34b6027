"""The graph of an evaluation: the towers of training (tower_loop.build_towers,
phase_train=False) over the full-pass input (preprocessing.eval_pipeline_for), counting top-1
and top-5 hits over the scored slots.

The towers are built inside a one-host variable manager's scopes, as in training, so the
checkpoint names match: a checkpoint written by any --variable_update and any number of
devices evaluates on any number of devices.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import tensorflow as tf

from .. import preprocessing, variable_mgr
from . import tower_loop

tf1 = tf.compat.v1


class EvalGraph(NamedTuple):
    """The handles of build_eval_graph's graph.

    Attributes:
      graph: the tf.Graph.
      pipeline: its full-pass preprocessing.InputPipeline.
      mgr: its one-host variable manager.
      counts: int64 [3]: top-1 hits, top-5 hits and examples scored of one step (all devices).
      init_ops: the variable initialisers.
      post_init: the manager's post-init ops (replicated: tower 0's values broadcast).
      savable: {checkpoint name: variable}.
    """

    graph: tf.Graph
    pipeline: Any
    mgr: Any
    counts: tf.Tensor
    init_ops: list
    post_init: list
    savable: dict


def manager_params(p):
    """Params for the eval graph's variable manager: one-host modes only, no staged variables.
    Modes where each tower owns copies evaluate as replicated (its post-init op broadcasts the
    restored tower-0 values)."""
    mode = 'replicated' if p.variable_update in ('replicated', 'independent') else \
        'parameter_server'
    return p._replace(variable_update=mode, staged_vars=False, job_name='', ps_hosts=[],
                      worker_hosts=[])


def build_eval_graph(plan, model, dataset) -> EvalGraph:
    """Builds the evaluation of `plan.eval` into a new graph.

    Args:
      plan: the run's run_plan.RunPlan with its EvalPlan.
      model: the run's CNNModel.
      dataset: the run's input_data.dataset_info.Dataset.

    Raises:
      DataError: the subset's files are missing or corrupt.
    """
    p, devices = plan.params, list(plan.devices)
    graph = tf.Graph()
    with graph.as_default():
        tf1.set_random_seed(p.tf_random_seed)
        with tf1.device('/cpu:0'):
            tf1.train.get_or_create_global_step()
        pipeline = preprocessing.eval_pipeline_for(plan, dataset)
        batches = pipeline.build(devices)
        mgr = variable_mgr.make_variable_mgr(manager_params(p), devices)
        # No XLA scopes: the evaluator's towers are not compiled.
        outputs = tower_loop.build_towers(plan, model, batches, mgr, phase_train=False, jit=False)
        counts = []
        for i, (out, batch) in enumerate(zip(outputs, batches, strict=True)):
            with tf1.device(devices[i]):
                counts.append(count_correct(out.logits, batch.labels, batch.valid,
                                            plan.num_classes))
        with tf1.device('/cpu:0'):
            total = tf.add_n(counts)
        init_ops = [tf1.global_variables_initializer(), tf1.local_variables_initializer()]
        return EvalGraph(graph, pipeline, mgr, total, init_ops, mgr.post_init_ops(),
                         mgr.savable_variables())


def count_correct(logits, labels, valid, num_classes: int) -> tf.Tensor:
    """Top-1 hits, top-5 hits and scored examples of one batch, over its valid slots.

    Args:
      logits: [batch, num_classes] float.
      labels: [batch] int32.
      valid: [batch] bool (False: a padding slot), or None when every slot counts.
      num_classes: classes of the model; top-5 is top-min(5, num_classes).

    Returns:
      int64 [3]: (top-1 hits, top-5 hits, examples scored).
    """
    logits = tf.cast(logits, tf.float32)
    if valid is None:
        valid = tf.ones_like(labels, tf.bool)
    hits = [tf.logical_and(tf.nn.in_top_k(labels, logits, k), valid)
            for k in (1, min(5, num_classes))]
    return tf.stack([tf.reduce_sum(tf.cast(x, tf.int64)) for x in hits + [valid]])

"""GraphInfo: the handles of a built training or forward-only graph, typed."""

from __future__ import annotations

from typing import Any, NamedTuple

import tensorflow as tf


class GraphInfo(NamedTuple):
    """What builder.build_graph made; what the session, the loop and the hooks use.

    Attributes:
      graph: the tf.Graph of the step.
      train_op: the op of one step (the applied updates; forward-only: the logits, grouped).
      loss: scalar float32, the towers' mean total loss (cross entropy + weight decay).
      learning_rate: scalar float32 of the global step.
      global_step: the int64 global-step variable (a constant in a frozen graph).
      top_1, top_5: scalar float32, the towers' mean fraction of the batch in the top 1 / 5.
      pipeline: the preprocessing.InputPipeline feeding the towers.
      mgr: the variable_mgr.VariableMgr (None in a frozen graph).
      init_ops: the variable initialisers (in a frozen graph: its local variables' only).
      loss_parts: [2] float32, the towers' mean cross entropy and mean weight-decay term of
        the total loss (for the NaN message: training_loop.decay_advice); None when not built.
      applied_learning_rate: scalar float32 of a training graph that writes summaries (the
        chief's, with --train_dir and --summary_verbosity >= 1), the rate of the update that
        brought the global step to its value (learning_rate.applied_learning_rate: the
        summaries' `learning_rate`), else None.
      images_seen: the graph.images_seen.ImagesSeen of a training graph (the checkpointed
        count of training images the steps trained on, skipped updates included), else None.
    """

    graph: tf.Graph
    train_op: tf.Operation
    loss: tf.Tensor
    learning_rate: tf.Tensor
    global_step: Any
    top_1: tf.Tensor
    top_5: tf.Tensor
    pipeline: Any
    mgr: Any
    init_ops: list
    loss_parts: Any = None
    images_seen: Any = None
    applied_learning_rate: Any = None

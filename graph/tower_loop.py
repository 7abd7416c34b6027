"""The tower loop, written once: one tower per device batch, for training, forward-only runs,
evaluation and the gradient summaries.

    outputs = build_towers(plan, model, batches, mgr, phase_train=True)
    # outputs[i]: tower.TowerOutput of batches[i], built in mgr.tower_scope(i)

Each tower is built in its variable manager's scope (variable names, reuse, device), in the
XLA scope of its index (--xla_compile; `jit=False` leaves it out) and in the precision
gradient scope of the compute dtype (float32 convolution gradients where the dtype is
emulated).
"""

from __future__ import annotations

import contextlib

import tensorflow as tf

from ..runtime import xla_jit
from . import precision, tower

tf1 = tf.compat.v1


def build_towers(plan, model, batches, mgr, *, phase_train: bool,
                 jit: bool = True) -> list[tower.TowerOutput]:
    """Builds one tower per batch into the default graph.

    Args:
      plan: the run's run_plan.RunPlan (classes, data format, dtypes, weight decay, device).
      model: the run's CNNModel.
      batches: one preprocessing.Batch (or ScoredBatch) per tower: images [batch, h, w, 3]
        (NHWC) or [batch, 3, h, w] (NCHW) in the compute dtype, labels int32 [batch].
      mgr: anything with `tower_scope(i)` (a variable_mgr.VariableMgr, or `ReuseTower`).
      phase_train: training-mode layers (batch norm, dropout) and the weight-decay term.
      jit: build the towers in their XLA scopes (with --xla_compile).

    Returns:
      One tower.TowerOutput per batch, in order.
    """
    outputs = []
    for i, batch in enumerate(batches):
        with (mgr.tower_scope(i),
              xla_jit.tower_scope(plan.params, i) if jit else contextlib.nullcontext(),
              precision.gradient_scope(plan.compute_dtype, plan.params.device,
                                       plan.threads, plan.kernel_shapes)):
            outputs.append(tower.build_forward(plan, model, batch.images, batch.labels,
                                               phase_train=phase_train))
    return outputs


class ReuseTower:
    """A tower scope that re-enters the variables of an existing tower (reuse=True) on one
    device: a second forward pass over tower 0's weights (the gradient histograms).

    Args:
      scope: the variable scope of the tower's variables (their names' first component).
      device: the device to build on.
    """

    def __init__(self, scope: str, device: str):
        self.scope = scope
        self.device = device

    @contextlib.contextmanager
    def tower_scope(self, tower_index: int):
        del tower_index  # one tower
        with tf1.variable_scope(self.scope, reuse=True), tf1.device(self.device):
            yield


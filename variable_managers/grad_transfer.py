"""What `replicated` does to each device's gradient pieces around the all-reduce.

Two options, both acting on the pieces the all-reduce moves (a gradient, or with
--gradient_repacking / --agg_small_grads_max_bytes a packed piece), on the piece's own device:

* compaction (``--compact_gradient_transfer``, default on, with ``--use_fp16`` and more than one
  device): a float32 piece is cast to float16 before the all-reduce and back after it, halving the
  bytes moved at the cost of float16 rounding of the sums.
* deferral (``--variable_consistency=relaxed``): each piece goes through a StagingArea, so the
  all-reduce of step t sums the pieces of step t-1 and the gradients' computation overlaps the
  previous step's reduction. Before the first step every area holds one zero piece
  (`warmup_ops`, run once after variable initialisation or a restore), so step 1 applies zero
  gradients, step 2 applies step 1's, and so on: with a fixed batch the losses are
  L(w0), L(w0), L(w1), ...

`GradientTransfer.send` is called before the all-reduce, `receive` after it
(allreduce.all_reduce_gradients). When each option acts: transfer_rules.py.
"""

from __future__ import annotations

import tensorflow as tf
from tensorflow.python.ops import data_flow_ops

from .transfer_rules import compacts_gradients, defers_gradients  # noqa: F401 (re-exported)

tf1 = tf.compat.v1

_COMPACT_FROM = (tf.float32, tf.float64)


class GradientTransfer:
    """Compaction and deferral of the all-reduced pieces (see the module docstring).

    Args:
      compact: cast float32/float64 pieces to float16 for the all-reduce.
      defer: delay every piece by one step through a StagingArea.

    Attributes:
      warmup_ops: the puts of zero pieces, one per deferred piece and device; run them exactly
        once before the first step (more runs would defer by more steps).
    """

    def __init__(self, *, compact: bool = False, defer: bool = False):
        self.compact = compact
        self.defer = defer
        self.warmup_ops: list[tf.Operation] = []

    def __bool__(self) -> bool:
        return self.compact or self.defer

    def send(self, piece: tf.Tensor, device: str) -> tf.Tensor:
        """The tensor to all-reduce for `piece` (any shape, on `device`): cast to float16 when
        compacting, and the previous step's value when deferring (same shape)."""
        with tf1.device(device):
            if self.compact and piece.dtype in _COMPACT_FROM:
                piece = tf.cast(piece, tf.float16)
            if not self.defer:
                return piece
            area = data_flow_ops.StagingArea([piece.dtype], shapes=[piece.shape])
            put = area.put([piece])
            with tf.control_dependencies(None):  # run alone: no batch-norm update, no input
                self.warmup_ops.append(area.put([tf.zeros(piece.shape, piece.dtype)]))
            with tf.control_dependencies([put]):  # the put runs whenever the value is read
                return tf.identity(area.get()[0])

    @staticmethod
    def receive(total: tf.Tensor, dtype: tf.DType, device: str) -> tf.Tensor:
        """The all-reduced `total` back in the piece's own `dtype` (on `device`)."""
        if total.dtype == dtype:
            return total
        with tf1.device(device):
            return tf.cast(total, dtype)

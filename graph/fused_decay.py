"""Weight decay added inside the optimizer's update, fused with it by XLA (--fused_weight_decay).

The loss a run reports is the original's, cross entropy + weight_decay * sum(0.5 * |w|^2) over
every trainable variable outside batch norm (kernels, depthwise kernels, biases: `is_decayed`),
and so is the update: the gradient of that loss w.r.t. such a variable w is g + wd * w, with g
the gradient of the cross entropy. Built through the loss, TensorFlow computes it as a Mul
(wd * w) and an AddN (+ g) in the backward pass, then the optimizer's update op reads the sum:
three kernels and five passes over w-sized tensors (8 reads and writes of w's size). Here the
gradients are taken of the cross entropy alone, and each decayed variable's update adds wd * w
itself; for the big kernels (FUSE_MIN_ELEMENTS), inside one XLA cluster with the optimizer's op
(ResourceApplyGradientDescent, -Momentum, ...), which XLA compiles into one loop that reads g
and w and writes w. The values are the same (same
formula: every manager aggregates g first and w is the value the step read); only the rounding
of the last bit may differ, as with any change of kernels.

Folded and fused, the trivial model trains faster than with the decay through the loss, and
folded without XLA (the same three kernels in another place) slower; its [4096, 1001]
classifier's update is faster fused than as Mul + AddN + apply (docs/performance-notes.md,
"Measurements once in the code", has the figures).

Applies (`applies`) where the fold is exactly the original's update and was measured: training
on the CPU with sgd, momentum or rmsprop, float32 variables, weight decay > 0, no
--gradient_clip (the original clips g + wd * w per tower), no --staged_vars (the tower reads a
staged copy of w, not w), not a cluster task (the update runs on a parameter server).
Elsewhere the decay goes through the loss as in the original.
"""

from __future__ import annotations

import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2

from .. import params as params_lib
from ..variable_managers import transfer_rules

tf1 = tf.compat.v1

# The scope of the variables weight decay leaves out: batch norm's (gamma, beta), the original's
# rule (its filter_l2_loss_vars drops every name containing it). Every other trainable variable
# of a model (kernels, depthwise kernels, biases) is decayed, as in tower.py.
UNDECAYED_SCOPE = 'batchnorm'
# Optimizers whose update reads nothing but the variable, its slots and the gradient. Adam's also
# reads the beta powers that its finishing op advances: inside a cluster that read moves to the
# update's run time, where, with --variable_update=independent (one apply per tower sharing
# them), it races with another tower's advance.
FOLDABLE_OPTIMIZERS = params_lib.FOLDABLE_OPTIMIZERS
# Kernels from this many elements (16 MB of float32) get the XLA-fused update; smaller variables
# (biases among them) add the decay with TensorFlow's own ops. An XLA cluster costs a launch
# and runs its loop on one thread: resnet50's updates (up to 2.4M elements) are no faster fused
# than the three multi-threaded TensorFlow kernels, while the trivial model's 4.1M-element
# classifier is (docs/performance-notes.md, "Measurements once in the code").
FUSE_MIN_ELEMENTS = 4_000_000


def applies(p, devices) -> bool:
    """Whether a run with these params, training on `devices` (its towers' device names, e.g.
    ('/cpu:0',)), folds weight decay into its updates."""
    return bool(p.fused_weight_decay and p.weight_decay and p.optimizer in FOLDABLE_OPTIMIZERS
                and not p.forward_only and not p.eval
                and all('/cpu:' in d.lower() for d in devices) and p.gradient_clip is None
                and not p.staged_vars and not p.job_name
                and not (p.use_fp16 and p.fp16_vars)
                # Deferred gradients (relaxed replicated) carry their decay term with them.
                and not transfer_rules.defers_gradients(p))


def is_decayed(var) -> bool:
    """Whether weight decay applies to `var`, a trainable resource variable of a model: every
    one whose name has no 'batchnorm' in it (kernels, depthwise kernels, biases)."""
    return UNDECAYED_SCOPE not in var.op.name


def count_decayed(variables) -> int:
    """How many of `variables` (a tower's trainable variables) weight decay applies to, checked
    against the tensors the tower's decay term covers (tower.TowerOutput.num_decayed)."""
    return sum(1 for v in variables if is_decayed(v))


class _FoldedDecay:
    """Optimizer mixin: `_resource_apply_dense` adds weight_decay * w to a decayed variable's
    gradient (`is_decayed`), in one XLA cluster with the update op for FUSE_MIN_ELEMENTS and
    more, with TensorFlow's own ops below. `_weight_decay` is set by `with_folded_decay`."""

    _weight_decay = 0.0

    def _resource_apply_dense(self, grad, handle, *args, **kwargs):
        if not is_decayed(handle):
            return super()._resource_apply_dense(grad, handle, *args, **kwargs)
        if handle.shape.num_elements() < FUSE_MIN_ELEMENTS:
            decayed = grad + tf.cast(self._weight_decay, grad.dtype) * handle.read_value()
            return super()._resource_apply_dense(decayed, handle, *args, **kwargs)
        scope = b'tf_cnn_benchmarks_decay_' + handle.op.name.encode()
        attrs = {'_XlaCompile': attr_value_pb2.AttrValue(b=True),
                 '_XlaScope': attr_value_pb2.AttrValue(s=scope),
                 '_XlaSeparateCompiledGradients': attr_value_pb2.AttrValue(b=False)}
        # Graph._attr_scope is how tf.xla.experimental.jit_scope marks ops; a scope of its own
        # per kernel keeps each update free to run as soon as its gradient is ready.
        with tf1.get_default_graph()._attr_scope(attrs):
            decayed = grad + tf.cast(self._weight_decay, grad.dtype) * handle.read_value()
            return super()._resource_apply_dense(decayed, handle, *args, **kwargs)


def with_folded_decay(optimizer_class, weight_decay: float):
    """A subclass of the tf.compat.v1 optimizer class `optimizer_class` whose updates add
    `weight_decay` * w to each decayed variable's gradient (see the module docstring)."""
    return type('FoldedDecay' + optimizer_class.__name__, (_FoldedDecay, optimizer_class),
                {'_weight_decay': float(weight_decay)})

"""One tower: the forward pass, the loss with weight decay, and the gradients of one device."""

from __future__ import annotations

import collections

import tensorflow as tf

from ..models import fast_paths
from . import precision

tf1 = tf.compat.v1

TowerOutput = collections.namedtuple('TowerOutput', [
    'logits', 'base_loss', 'total_loss', 'update_ops', 'top_1', 'top_5', 'num_decayed',
    'decay_loss'])
TowerOutput.__doc__ = """What one tower's forward pass produced.

logits: [batch, num_classes] float32. base_loss: scalar float32 cross entropy. total_loss: base_loss
plus the weight-decay term. update_ops: batch-norm moving-average updates. top_1, top_5: scalar
float32 fraction of the batch whose label is in the top 1 / top 5 logits. num_decayed: how many
variables the weight-decay term of total_loss covers (every trainable one outside batch norm).
decay_loss: scalar float32, that term (total_loss - base_loss; 0 without decay)."""


def build_forward(plan, model, images, labels, *, phase_train: bool) -> TowerOutput:
    """Builds a tower's forward pass and loss in the current tower scope, with the run plan's
    classes, data format, dtypes and weight decay and the tower's `build_options`.

    Args:
      plan: the run's run_plan.RunPlan. Its params' weight_decay is the factor of the L2
        penalty 0.5 * sum(w^2) over every trainable variable of the model outside batch norm
        (kernels, depthwise kernels and biases; batch norm's gamma and beta are excluded), the
        original's rule (its filter_l2_loss_vars); with single_l2_loss_op
        (--single_l2_loss_op) that penalty is one L2 loss over all of them concatenated instead
        of one per variable (the same value up to rounding).
      model: the run's CNNModel.
      images: [batch, h, w, 3] (NHWC) or [batch, 3, h, w] (NCHW) in the plan's compute dtype,
        values in [-1, 1].
      labels: [batch] int32.
      phase_train: training-mode layers (batch norm, dropout) and the weight-decay term.

    Returns:
      TowerOutput.
    """
    p, num_classes = plan.params, plan.num_classes
    net = model.build_network(images, phase_train=phase_train, num_classes=num_classes,
                              data_format=plan.data_format, dtype=plan.compute_dtype,
                              variable_dtype=plan.variable_dtype,
                              options=build_options(plan, phase_train))
    base_loss = model.loss_function(net.logits, labels, net.aux_logits)
    total_loss, decay_loss = base_loss, tf.constant(0.0)
    if p.weight_decay and phase_train and net.decay_tensors:
        decayed = [tf.cast(t, tf.float32) for t in net.decay_tensors]
        if p.single_l2_loss_op:  # one L2 loss over every decayed variable, concatenated
            l2 = tf.nn.l2_loss(tf.concat([tf.reshape(t, [-1]) for t in decayed], 0))
        else:
            l2 = tf.add_n([tf.nn.l2_loss(t) for t in decayed])
        decay_loss = p.weight_decay * l2
        total_loss = base_loss + decay_loss
    top_1 = tf.reduce_mean(tf.cast(tf.nn.in_top_k(labels, net.logits, 1), tf.float32))
    top_5 = tf.reduce_mean(tf.cast(tf.nn.in_top_k(labels, net.logits, min(5, num_classes)),
                                   tf.float32))
    return TowerOutput(net.logits, base_loss, total_loss, net.update_ops, top_1, top_5,
                       len(net.decay_tensors), decay_loss)


def build_options(plan, phase_train: bool) -> fast_paths.BuildOptions:
    """The fast_paths.BuildOptions of a tower of this run: batch norm folded into the
    convolutions where precision.folds_batch_norm says so (each folded kernel computed once per
    session, except in a frozen graph), batch norm and pooling in float32 where
    precision.float32_norm_and_pool says so, and a training graph's sites in the forms of the
    plan's graph choices (plan.graph_choices, resolved before the graph; None: today's)."""
    dtype, device = plan.compute_dtype, plan.params.device
    # A frozen graph (--freeze_when_forward_only) has its kernels as constants, which
    # Grappler folds once; the per-session cache's variables would become constants too.
    once = not plan.params.freeze_when_forward_only
    choices = plan.graph_choices
    return fast_paths.BuildOptions(
        fold_batch_norm=precision.folds_batch_norm(dtype, device, phase_train), fold_once=once,
        float32_norm_and_pool=precision.float32_norm_and_pool(dtype, device),
        choose=choices.chooser(phase_train) if choices is not None else None)


def build_gradients(total_loss, variables, *, num_towers, sources=None, loss_scale=1.0,
                    gradient_clip=None, keep_non_finite=False):
    """Gradients of total_loss / num_towers, so summing over towers gives the average.

    Args:
      total_loss: scalar float32.
      variables: the trainable variables the tower reads.
      sources: the tensors the tower read for `variables` (staged copies), if not the
        variables themselves; the loss is differentiated by these.
      num_towers: towers whose gradients will be summed.
      loss_scale: the loss is multiplied by this before differentiation and the gradients
        divided by it after (mixed-precision loss scaling; 1 disables it). A Python float
        or a float32 scalar tensor (the automatic scale of precision.LossScaler).
      gradient_clip: if set, each gradient is clipped to [-gradient_clip, gradient_clip].
      keep_non_finite: clipping leaves Inf and NaN elements as they are, so that a later
        overflow check (automatic loss scaling) still sees them.

    Returns:
      A list of (gradient, variable) pairs, gradients float32 like the variables.
    """
    scaled = total_loss * (loss_scale / num_towers)
    grads = tf1.gradients(scaled, variables if sources is None else sources,
                          colocate_gradients_with_ops=True)
    pairs = []
    for grad, var in zip(grads, variables):
        if grad is None:
            raise ValueError('variable %s gets no gradient from the loss' % var.name)
        if not precision.is_unit_scale(loss_scale):
            grad = precision.unscale(grad, loss_scale)
        if gradient_clip is not None:
            clipped = tf.clip_by_value(grad, -gradient_clip, gradient_clip)
            grad = tf.where(tf.math.is_finite(grad), clipped, grad) if keep_non_finite else clipped
        pairs.append((grad, var))
    return pairs

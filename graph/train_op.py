"""The train op of one step, in one readable sequence:

    towers' losses --gradients (loss scale, clip)--> per-tower (gradient, variable) pairs
      --variable manager: aggregate, apply with the optimizer (decay folded in or in the loss)
      --> + the global step, the images seen, the manager's step ops (staged variables)
      --> train_op

The loss scaler (graph/precision.py) wraps the apply: automatic loss scaling skips the update
of a step whose gradients overflowed and adjusts the scale.
"""

from __future__ import annotations

import tensorflow as tf

from ..runtime import xla_jit
from . import fused_decay, learning_rate, precision, tower

tf1 = tf.compat.v1


def build_train_op(plan, mgr, outputs, global_step, lr, images_seen=None) -> tf.Operation:
    """Builds the gradients, their aggregation and the updates of the towers `outputs`.

    Args:
      plan: the run's run_plan.RunPlan (devices, params: optimizer, loss scaling, clipping,
        weight decay, XLA).
      mgr: the variable manager the towers were built with.
      outputs: the towers' tower.TowerOutput, one per device of `plan.devices`.
      global_step: the global-step variable (incremented by the apply).
      lr: scalar float32 learning rate.
      images_seen: the int64 images-seen variable (graph/images_seen.py), or None: each step
        adds the images one global step applies to it, after the update (which read the rate
        of the images seen before it); a step whose update automatic loss scaling skipped
        counts too, as the global step does. Only a task whose update advances the global
        step counts (VariableMgr.advances_global_step): in a synchronous ps cluster the chief,
        once per global step, not every worker.

    Returns:
      The grouped op named 'train_op'.

    Raises:
      ValueError: a trainable variable gets no gradient from the loss.
    """
    p, devices = plan.params, plan.devices
    scaler = precision.LossScaler.from_params(p, device=mgr.param_device)
    # With the fold, the towers differentiate the cross entropy and each decayed variable's
    # update (every trainable one outside batch norm) adds weight_decay * w
    # (graph/fused_decay.py); the reported loss keeps the decay term. The fold needs the
    # updates to decay exactly the variables the towers' decay terms cover.
    fold = fused_decay.applies(p, devices) and all(
        fused_decay.count_decayed(mgr.trainable_variables(i)) == out.num_decayed
        for i, out in enumerate(outputs))
    # 1. Gradients of each tower's loss, scaled by 1/towers (their sum is the mean).
    tower_grads = []
    for i, out in enumerate(outputs):
        with tf1.device(devices[i]), xla_jit.tower_scope(p, i):
            tower_grads.append(tower.build_gradients(
                out.base_loss if fold else out.total_loss, mgr.trainable_variables(i),
                num_towers=len(outputs),
                sources=mgr.gradient_sources(i), gradient_clip=p.gradient_clip,
                loss_scale=scaler.loss_scale if scaler else 1.0,
                keep_non_finite=bool(scaler and scaler.dynamic)))
    # 2. The optimizer, with the decay folded into its updates or not.
    optimizer = learning_rate.make_optimizer(p, lr, fold_weight_decay=fold)
    # 3. Batch-norm statistics updates (each tower's own, where towers own variables).
    update_ops = outputs[0].update_ops
    if mgr.each_tower_has_variables:
        update_ops = [op for out in outputs for op in out.update_ops]
    if fold:
        # The decay term of the reported loss reads the variables outside the gradients; the
        # updates must wait for it or the loss could see updated variables.
        update_ops = list(update_ops) + [out.total_loss for out in outputs]
    # 4. Aggregation by the manager, then its apply inside the loss scaler's check, after the
    # batch-norm updates. Through one group op: every op made in the block gets one control
    # input instead of all the updates (8 ResNet-50 towers: 848 updates on each of some 1,300
    # ops made 1.1 million control edges, a third of the dry run's build).
    with tf.control_dependencies([tf.group(*update_ops, name='update_ops')] if update_ops
                                 else []):
        # replicated's all-reduce, outside the loss scaler's condition: the scaler checks the
        # sums to apply (as the original's), and a deferred all-reduce's staging runs every
        # step.
        tower_grads = mgr.reduce_gradients(tower_grads)
        apply_fn = lambda grads: mgr.apply_gradients(grads, optimizer, global_step)
        apply_ops = (scaler.apply(tower_grads, apply_fn, global_step) if scaler
                     else apply_fn(tower_grads))
    counted = []
    if images_seen is not None and mgr.advances_global_step:
        with tf1.device(images_seen.device), tf.control_dependencies(apply_ops):
            counted.append(tf1.assign_add(images_seen, plan.images_per_global_step).op)
    return tf.group(*apply_ops, *counted, *mgr.step_ops(), name='train_op')

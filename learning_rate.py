"""Learning-rate schedules and optimizers.

Every epoch-based quantity uses the global batch: per-device batch x devices x workers, so
`steps_per_epoch = examples_per_epoch / global_batch`.

Precedence of the schedule flags:
  1. --piecewise_learning_rate_schedule "lr0;e1;lr1;...": lr0 until epoch e1, lr1 until e2, ...
  2. --init_learning_rate, decayed by --learning_rate_decay_factor every --num_epochs_per_decay
     epochs (staircase) when both are > 0.
  3. otherwise the model's own schedule (`CNNModel.get_learning_rate`).
Then --num_learning_rate_warmup_epochs ramps linearly from 0 to the scheduled rate (Goyal et al.
2017, section 2.2), and --minimum_learning_rate bounds the result from below.
"""

from __future__ import annotations

import tensorflow as tf

from . import params as params_lib

tf1 = tf.compat.v1


def get_learning_rate(p, global_step, *, model, examples_per_epoch, global_batch_size):
    """Builds the learning rate as a float32 scalar tensor of `global_step`.

    Args:
      p: Params.
      global_step: int64 scalar tensor.
      model: the CNNModel (its schedule is the default).
      examples_per_epoch: examples in one epoch of the training subset.
      global_batch_size: images per step over all devices and workers.
    """
    steps_per_epoch = examples_per_epoch / float(global_batch_size)
    step = tf.cast(global_step, tf.float32)
    if p.piecewise_learning_rate_schedule:
        rates, epochs = params_lib.parse_piecewise_schedule(p.piecewise_learning_rate_schedule)
        boundaries = [int(e * steps_per_epoch) for e in epochs]
        if boundaries:
            lr = tf1.train.piecewise_constant(
                global_step, [tf.cast(b, tf.int64) for b in boundaries], [float(r) for r in rates])
        else:  # one rate, no boundaries: a constant
            lr = tf.constant(rates[0], tf.float32)
    elif p.init_learning_rate is not None:
        lr = tf.constant(p.init_learning_rate, tf.float32)
        if p.num_epochs_per_decay > 0 and p.learning_rate_decay_factor > 0:
            decay_steps = max(1, int(p.num_epochs_per_decay * steps_per_epoch))
            exponent = tf.floor(step / decay_steps)
            lr = lr * tf.pow(tf.constant(p.learning_rate_decay_factor, tf.float32), exponent)
    else:
        lr = model.get_learning_rate(global_step, global_batch_size)
    lr = tf.cast(lr, tf.float32)
    if p.num_learning_rate_warmup_epochs > 0:
        warmup_steps = max(1, int(p.num_learning_rate_warmup_epochs * steps_per_epoch))
        lr = tf1.where(step < warmup_steps, lr * step / warmup_steps, lr)
    if p.minimum_learning_rate > 0:
        lr = tf.maximum(lr, p.minimum_learning_rate)
    return tf.identity(lr, name='learning_rate')


def make_optimizer(p, learning_rate):
    """Returns the tf.compat.v1.train optimizer named by --optimizer.

    sgd: plain gradient descent. momentum: heavy-ball momentum with Nesterov's correction
    (Sutskever et al. 2013). rmsprop: Tieleman & Hinton 2012. adam: Kingma & Ba 2015.

    Raises:
      ValueError: unknown optimizer name (validate_params normally catches it first).
    """
    if p.optimizer == 'sgd':
        return tf1.train.GradientDescentOptimizer(learning_rate)
    if p.optimizer == 'momentum':
        return tf1.train.MomentumOptimizer(learning_rate, p.momentum, use_nesterov=True)
    if p.optimizer == 'rmsprop':
        return tf1.train.RMSPropOptimizer(learning_rate, decay=p.rmsprop_decay,
                                          momentum=p.rmsprop_momentum, epsilon=p.rmsprop_epsilon)
    if p.optimizer == 'adam':
        return tf1.train.AdamOptimizer(learning_rate, beta1=p.adam_beta1, beta2=p.adam_beta2,
                                       epsilon=p.adam_epsilon)
    raise ValueError('unknown --optimizer=%r; valid: %s' % (p.optimizer,
                                                            ', '.join(params_lib.OPTIMIZERS)))

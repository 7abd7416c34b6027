"""Learning-rate schedules and optimizers.

Every epoch-based quantity converts epochs to global steps with the images one global step
applies (RunPlan.images_per_global_step: the global batch, per-device batch x devices x workers;
in an asynchronous cluster one worker's batch, since each worker's update is a global step):
`steps_per_epoch = examples_per_epoch / images_per_step`.

Precedence of the schedule flags:
  1. --piecewise_learning_rate_schedule "lr0;e1;lr1;...": lr0 until epoch e1, lr1 until e2, ...
  2. --init_learning_rate, decayed by --learning_rate_decay_factor every --num_epochs_per_decay
     epochs (staircase) when both are > 0.
  3. otherwise the model's own schedule (`CNNModel.default_schedule`, the original's: a
     constant rate for most models, warm-up and steps for the ImageNet ResNets, whose base
     rate --resnet_base_lr is per 256 images, scaled linearly with the batch), its epochs the
     run's examples per epoch as every other epoch here (the training records found in real
     data: on the full ImageNet the original's 1,281,167).
Then --num_learning_rate_warmup_epochs ramps linearly from 0 (Goyal et al. 2017, section 2.2):
with a schedule of the flags (1 or 2) as the original's, the rate of the update from global step
s < W (W = boundary_step(warm-up epochs)) is the schedule's FIRST rate (lr0, or
--init_learning_rate) x s / W, whatever the schedule says at s, and the schedule itself only
from W on (a piecewise boundary inside the warm-up changes nothing until it ends); with the
model's own schedule (3; the original ignored the flag there) the model's rate at s x s / W.
--minimum_learning_rate bounds the result from below, the ramp's too (the original's floor
bounded the decayed rate only, not its warm-up).

Epochs count from the images seen (graph/images_seen.py, checkpointed), not from the global
step: with I images seen before an update of B images, the change due at epoch e is used once
I + B > e x examples. A run that kept its global batch has I = global step x B, and then every
change happens at the global step `boundary_step(epoch)` = int(epoch x steps_per_epoch):
the update that global step `boundary_step(e)` applies (the step taking the global step from
there to one more) already uses the new rate. Piecewise epoch e, the k-th exponential decay
(epoch k x --num_epochs_per_decay) and the end of the warm-up all follow this rule, so a
piecewise schedule "0.4;1;0.2;2;0.1" and a decay by 0.5 every epoch give the same rate at every
step. Example: 1,000 examples, 96 images per step (10.4 steps per epoch): epoch 1 starts at
global step 10, epoch 2 at 20, epoch 3 at 31. A run resumed with another global batch goes
on from the images its checkpoint saw (`change_step`): trained at 8 images a step to step 20 on
200 examples (160 images, 0.8 epoch), resumed at 16, epoch 1 comes at global step 22 (the
update from image 192 reaches image 200), not at once (20 x 16 = 1.6 epochs).
"""

from __future__ import annotations

import math

import tensorflow as tf

from .. import cnn_util
from .. import params as params_lib
from ..params import original_flags
from . import fused_decay

tf1 = tf.compat.v1


def boundary_step(epoch: float, steps_per_epoch: float) -> int:
    """The global step at which a schedule change due at `epoch` takes effect: int(epoch x
    steps_per_epoch) (see the module docstring)."""
    return int(epoch * steps_per_epoch)


def get_learning_rate(p, global_step, *, model, examples_per_epoch, images_per_step,
                      images_seen=None):
    """Builds the learning rate as a float32 scalar tensor of the images seen.

    Args:
      p: Params.
      global_step: int64 scalar tensor: training steps so far (the rate is the one the next
        update uses).
      model: the CNNModel (its schedule is the default).
      examples_per_epoch: examples in one epoch of the training subset.
      images_per_step: images one global step applies (RunPlan.images_per_global_step); the
        model's default rate scales with it.
      images_seen: int64 scalar tensor, the training images the steps so far trained on,
        skipped ones (automatic loss scaling) included (graph/images_seen.py); None counts
        global_step x images_per_step (a run that never changed its global batch).

    With I images seen before an update of B images and E examples per epoch, the update uses
    the change due at epoch e once I + B > e x E: the update during which epoch e is reached
    uses the new rate. When I = global step x B this is the module docstring's
    `global step >= boundary_step(e)`, whatever B is from run to run.
    """
    steps_per_epoch = examples_per_epoch / float(images_per_step)
    step = tf.cast(global_step, tf.float64)
    seen = (step * float(images_per_step) if images_seen is None
            else tf.cast(images_seen, tf.float64))
    # Images seen once this update is applied, and the position in steps of this batch.
    after = seen + float(images_per_step)
    position = seen / float(images_per_step)
    if p.piecewise_learning_rate_schedule:
        rates, epochs = params_lib.parse_piecewise_schedule(p.piecewise_learning_rate_schedule)
        lr = tf.constant(rates[0], tf.float32)
        for epoch, rate in zip(epochs, rates[1:]):
            lr = tf1.where(after > epoch * examples_per_epoch, tf.constant(rate, tf.float32), lr)
    elif p.init_learning_rate is not None:
        lr = tf.constant(p.init_learning_rate, tf.float32)
        if p.num_epochs_per_decay > 0 and p.learning_rate_decay_factor > 0:
            # Decays so far: the k >= 1 with k x period x examples < images after the update.
            period_images = p.num_epochs_per_decay * examples_per_epoch
            exponent = tf.math.ceil(after / period_images) - 1.0
            lr = lr * tf.pow(tf.constant(p.learning_rate_decay_factor, tf.float32),
                             tf.cast(exponent, tf.float32))
    else:
        # The model's schedule counts global steps, as the original's did.
        lr = model.get_learning_rate(global_step, images_per_step, base_lr=p.resnet_base_lr,
                                     examples_per_epoch=examples_per_epoch)
    lr = tf.cast(lr, tf.float32)
    warmup_steps = boundary_step(p.num_learning_rate_warmup_epochs, steps_per_epoch)
    if warmup_steps > 0:  # less than one step of warm-up is none
        ramp = tf.cast(tf.minimum(position / warmup_steps, 1.0), tf.float32)
        in_warmup = after <= p.num_learning_rate_warmup_epochs * examples_per_epoch
        if p.piecewise_learning_rate_schedule or p.init_learning_rate is not None:
            # The original's: the first rate ramped, the schedule ignored until the end.
            ramped = tf.constant(initial_rate(p, model, images_per_step)[0], tf.float32) * ramp
        else:  # the model's own schedule, itself perhaps in its warm-up
            ramped = lr * ramp
        lr = tf1.where(in_warmup, ramped, lr)
    if p.minimum_learning_rate > 0:
        lr = tf.maximum(lr, p.minimum_learning_rate)
    return tf.identity(lr, name='learning_rate')


def applied_learning_rate(p, global_step, *, model, examples_per_epoch, images_per_step,
                          images_seen=None):
    """The rate of the update that brought the global step to its value N (what the
    `learning_rate` summary at N shows, as the original's, fetched with that update): the
    schedule of `get_learning_rate` (same arguments) at global step N - 1 with one global
    step's images taken off `images_seen`; at N = 0 the first update's. A float32 scalar
    named 'applied_learning_rate', run on summary steps only (no fetch in every step's run).
    """
    with tf1.name_scope('applied_learning_rate'):
        step = tf.maximum(tf.cast(global_step, tf.int64) - 1, 0)
        seen = (None if images_seen is None
                else tf.maximum(tf.cast(images_seen, tf.int64) - images_per_step, 0))
        lr = get_learning_rate(p, step, model=model, examples_per_epoch=examples_per_epoch,
                               images_per_step=images_per_step, images_seen=seen)
    return tf.identity(lr, name='applied_learning_rate')


def initial_rate(p, model, images_per_step: int) -> tuple[float, list[str]]:
    """The rate of the schedule before any change, warm-up or floor (get_learning_rate's
    precedence), and where it comes from, longest form first: (0.1, ['--init_learning_rate']),
    (0.003125, ["the model's default: 0.1 at a global batch of 128, scaled to 4", "the model's
    default", 'default']).

    Args:
      p: Params; model: the CNNModel (its default rate and batch, CNNModel.get_learning_rate);
      images_per_step: images one global step applies (RunPlan.images_per_global_step).
    """
    if p.piecewise_learning_rate_schedule:
        rates, _ = params_lib.parse_piecewise_schedule(p.piecewise_learning_rate_schedule)
        return rates[0], ['--piecewise_learning_rate_schedule', 'piecewise schedule']
    if p.init_learning_rate is not None:
        return p.init_learning_rate, ['--init_learning_rate']
    base_batch = getattr(model, 'base_lr_batch_size', None)
    rate = model.default_schedule(images_per_step, p.resnet_base_lr).rates[0]
    if p.resnet_base_lr is not None and base_batch:
        return (rate, ['--resnet_base_lr=%g per %d images, scaled to %d' % (
            p.resnet_base_lr, base_batch, images_per_step), '--resnet_base_lr'])
    if base_batch:
        return rate, ["the model's default: %g at a global batch of %d, scaled to %d" % (
            model.default_learning_rate, model.default_batch_size, images_per_step),
            "the model's default", 'default']
    return rate, ["the model's default", 'default']


def model_schedule_forms(spec) -> list[list[str]]:
    """The parts of a model's default schedule after its first rate (models/model.py
    DefaultSchedule), each as its forms for `describe_schedule`, longest first."""
    forms = []
    if spec.warmup_steps > 0:
        epochs = '%g epoch%s' % (spec.warmup_epochs, '' if spec.warmup_epochs == 1 else 's')
        steps = cnn_util.counted(spec.warmup_steps, 'step')
        forms.append(['warm-up from 0 over %s (%s)' % (epochs, steps),
                      'warm-up %s (%s)' % (epochs, steps),
                      'warm-up %s' % epochs])
    if spec.steps:
        ratios = {round(b / a, 12) for a, b in zip(spec.rates, spec.rates[1:])}
        every = ['x%g after epochs %s' % (ratios.pop(), ', '.join('%g' % e for e in spec.epochs))
                 ] if len(ratios) == 1 else []
        changes = '%d change%s' % (len(spec.steps), 's' if len(spec.steps) > 1 else '')
        forms.append(every + [
            ', '.join('%g after epoch %g' % (r, e) for r, e in zip(spec.rates[1:], spec.epochs)),
            '%s after epochs %s' % (', '.join('%g' % r for r in spec.rates[1:]),
                                    ', '.join('%g' % e for e in spec.epochs)),
            '%s to %g after epoch %g' % (changes, spec.rates[-1], spec.epochs[-1]), changes])
    if spec.decay is not None:
        forms.append(['x%g every %g epochs' % (spec.decay[0], spec.decay[2])])
    return forms


def _after_warmup(rates: list, epochs: list, warmup_epochs: float) -> tuple[list, list]:
    """A piecewise schedule's changes (rates[i] from epochs[i]) as its updates use them after
    a warm-up of `warmup_epochs`, which ramps the first rate and ignores the schedule until it
    ends: a change inside the warm-up comes at its end, where only the last such one holds.
    E.g. ([0.01, 0.001, 1e-4], [1, 1.5, 3]) with 2 warm-up epochs -> ([0.001, 1e-4], [2, 3])."""
    moved = [(r, max(e, warmup_epochs)) for r, e in zip(rates, epochs)]
    kept = [(r, e) for i, (r, e) in enumerate(moved) if i + 1 == len(moved) or moved[i + 1][1] != e]
    return [r for r, _ in kept], [e for _, e in kept]


def describe_schedule(p, model, images_per_step: int, examples_per_epoch: int,
                      width: int = 86) -> str:
    """The learning-rate schedule of a training run as resolved, in at most `width` characters
    (the header's `LR schedule:` line): the rate before any change and where it comes from
    (`initial_rate`), then the piecewise changes, the exponential decay (the flags', else the
    model's own: `model_schedule_forms`), the warm-up and the
    floor (saying so when no rate is above it), each only when set; shorter forms where the
    long ones do not fit. Examples:

        0.1 (--init_learning_rate), x0.5 every 2 epochs, floor 0.01
        0.005 (the model's default)
        0.008 (the model's default), warm-up 5 epochs, x0.1 after epochs 30, 60, 80, 90
        0.1 (--piecewise_learning_rate_schedule), 0.01 from epoch 1, 0.001 from epoch 2
        0.1 (--init_learning_rate), warm-up from 0 over 1 epoch (12500 steps)

    Args:
      p: Params; model: the CNNModel; images_per_step: RunPlan.images_per_global_step;
      examples_per_epoch: examples in an epoch of the training subset.
    """
    rate, sources = initial_rate(p, model, images_per_step)
    steps_per_epoch = examples_per_epoch / float(images_per_step)
    # Each part's forms, longest first.
    forms = [['%g (%s)' % (rate, source) for source in sources]]
    if p.piecewise_learning_rate_schedule:
        rates, epochs = params_lib.parse_piecewise_schedule(p.piecewise_learning_rate_schedule)
        later, epochs = _after_warmup(rates[1:], epochs, p.num_learning_rate_warmup_epochs)
        rates = [rates[0]] + later
        changes = '%d change%s' % (len(epochs), 's' if len(epochs) > 1 else '')
        forms.append([', '.join('%g from epoch %g' % (r, e) for r, e in zip(rates[1:], epochs)),
                      '%s to %g at epoch %g' % (changes, rates[-1], epochs[-1]), changes])
    elif schedule_flag(p) == '--num_epochs_per_decay':
        forms.append(['x%g every %g epoch%s' % (p.learning_rate_decay_factor,
                                                p.num_epochs_per_decay,
                                                '' if p.num_epochs_per_decay == 1 else 's')])
    elif p.init_learning_rate is None:
        forms.extend(model_schedule_forms(model.default_schedule(
            images_per_step, p.resnet_base_lr, examples_per_epoch)))
    if p.num_learning_rate_warmup_epochs > 0:
        steps = boundary_step(p.num_learning_rate_warmup_epochs, steps_per_epoch)
        epochs = '%g epoch%s' % (p.num_learning_rate_warmup_epochs,
                                 '' if p.num_learning_rate_warmup_epochs == 1 else 's')
        counted = cnn_util.counted(steps, 'step') + (': none' if not steps else '')
        forms.append(['warm-up from 0 over %s (%s)' % (epochs, counted),
                      'warm-up %s (%s)' % (epochs, counted), 'warm-up %s' % epochs])
    if p.minimum_learning_rate > 0:
        # Decay and warm-up only lower the rates: the largest is the first or a piecewise one.
        top = max(params_lib.parse_piecewise_schedule(p.piecewise_learning_rate_schedule)[0]
                  if p.piecewise_learning_rate_schedule else [rate])
        floor = 'floor %g' % p.minimum_learning_rate
        every = top <= p.minimum_learning_rate
        forms.append(['%s (--minimum_learning_rate)%s' % (
            floor, ': every update at %g' % p.minimum_learning_rate if every else ''),
            floor + (': every update at it' if every else ''),
            floor + (' (every update)' if every else '')])
    # Where the line is too long: the next form of the part it shortens most, one at a time.
    chosen = [0] * len(forms)
    while True:
        text = ', '.join(f[i] for f, i in zip(forms, chosen))
        shorter = [k for k, f in enumerate(forms) if chosen[k] + 1 < len(f)]
        if len(text) <= width or not shorter:
            break
        k = max(shorter, key=lambda k: len(forms[k][chosen[k]]) - len(forms[k][chosen[k] + 1]))
        chosen[k] += 1
    # Still too long: whole parts after the rate give way to '...' (the last ones, the warm-up
    # and the floor, kept longest); a number or a word is never cut.
    parts = [f[i] for f, i in zip(forms, chosen)]
    for drop in range(1, len(parts)):
        if len(text) <= width:
            break
        text = ', '.join([parts[0], '...'] + parts[1 + drop:])
    return text


def change_step(epoch: float, examples_per_epoch: int, images_per_step: int,
                start_step: int = 0, start_images: int | None = None) -> int | None:
    """The global step whose update first uses a change due at `epoch`, for a run that starts
    at global step `start_step` with `start_images` images seen (default start_step x
    images_per_step) and applies `images_per_step` images a step; None when an update before
    `start_step` used it already (start_images > epoch x examples).

    The smallest k >= 0 with start_images + (k + 1) x images_per_step > epoch x examples is
    floor((epoch x examples - start_images) / images_per_step); the step is start_step + k.
    Example: 200 examples, trained at 8 a step to step 20 (160 images seen), resumed at 16:
    epoch 1 at global step 20 + floor(40 / 16) = 22; from the start at 8: step 25.
    """
    if start_images is None:
        start_images = start_step * images_per_step
    threshold = epoch * examples_per_epoch
    if start_images > threshold:
        return None
    return start_step + int(math.floor((threshold - start_images) / images_per_step))


def next_changes(p, examples_per_epoch: int, images_per_step: int, start_step: int,
                 start_images: int | None = None) -> list[tuple[str, float, int]]:
    """The schedule's changes still ahead of a run starting at `start_step` (see
    `change_step`), as (what, epoch, global step), e.g. ('rate 0.01', 1.0, 22).

    Covers the boundaries of --piecewise_learning_rate_schedule, the next decay of
    --num_epochs_per_decay and the end of --num_learning_rate_warmup_epochs.
    """
    out = []

    def add(what, epoch):
        at = change_step(epoch, examples_per_epoch, images_per_step, start_step, start_images)
        if at is not None:
            out.append((what, epoch, at))

    if p.num_learning_rate_warmup_epochs > 0 and boundary_step(
            p.num_learning_rate_warmup_epochs, examples_per_epoch / images_per_step) > 0:
        add('end of the warm-up', p.num_learning_rate_warmup_epochs)
    if p.piecewise_learning_rate_schedule:
        rates, epochs = params_lib.parse_piecewise_schedule(p.piecewise_learning_rate_schedule)
        for epoch, rate in zip(epochs, rates[1:]):
            add('rate %g' % rate, epoch)
    elif (p.init_learning_rate is not None and p.num_epochs_per_decay > 0
          and p.learning_rate_decay_factor > 0):
        seen = start_images if start_images is not None else start_step * images_per_step
        period = p.num_epochs_per_decay
        k = max(1, int(math.floor(seen / (period * examples_per_epoch))) + 1)
        while change_step(k * period, examples_per_epoch, images_per_step, start_step,
                          start_images) is None:
            k += 1
        add('rate %g' % (p.init_learning_rate * p.learning_rate_decay_factor ** k), k * period)
    return out


def rate_flag(p) -> str:
    """The flag the run's learning rate comes from, by the precedence of the module docstring:
    '--piecewise_learning_rate_schedule', '--init_learning_rate', '--resnet_base_lr' (an
    ImageNet ResNet's default rate per 256 images; params/original_flags.IMAGENET_RESNET), or ''
    (the model's default rate)."""
    if p.piecewise_learning_rate_schedule:
        return '--piecewise_learning_rate_schedule'
    if p.init_learning_rate is not None:
        return '--init_learning_rate'
    if p.resnet_base_lr is not None and original_flags.IMAGENET_RESNET.match(p.model):
        return '--resnet_base_lr'
    return ''


def schedule_flag(p) -> str:
    """The flag of the run's own learning-rate schedule, whose changes come at epochs:
    '--piecewise_learning_rate_schedule', '--num_epochs_per_decay' (with --init_learning_rate),
    '--num_learning_rate_warmup_epochs', or '' (the model's default rate: no flag's change
    for `unreached_changes` to name)."""
    if p.piecewise_learning_rate_schedule:
        return '--piecewise_learning_rate_schedule'
    if (p.init_learning_rate is not None and p.num_epochs_per_decay > 0
            and p.learning_rate_decay_factor > 0):
        return '--num_epochs_per_decay'
    if p.num_learning_rate_warmup_epochs > 0:
        return '--num_learning_rate_warmup_epochs'
    return ''


def unreached_changes(p, steps_per_epoch: float, last_step: int, *,
                      start: tuple | None = None) -> list[str]:
    """The schedule changes that no update of a run ending at `last_step` uses.

    Args:
      p: Params of a training run.
      steps_per_epoch: global steps per epoch (examples / images per global step).
      last_step: the global step the run's last update starts from (its final global step
        minus one).
      start: for a resumed run, (examples_per_epoch, images_per_step, start_step,
        start_images): the changes' steps are `change_step`'s from there (the images seen
        decide, not the global step), and changes used before `start_step` are not named;
        None: `boundary_step`'s, from global step 0.

    Returns:
      One message per piecewise boundary, first exponential decay or warm-up end at a global
      step beyond `last_step`, e.g. '--piecewise_learning_rate_schedule: epoch 30 (global step
      300) is beyond this run (its last update is at global step 104); the rate stays 0.1'.
      A run whose every update is in the warm-up of a flags' schedule gets the warm-up's line
      only: the ramp uses the schedule's first rate whatever the schedule says.
    """
    def at(epoch):
        if start is None:
            return boundary_step(epoch, steps_per_epoch)
        return change_step(epoch, start[0], start[1], start[2], start[3])

    out = []
    reach = 'is beyond this run (its last update is at global step %d)' % last_step
    warmup_end = (at(p.num_learning_rate_warmup_epochs) if p.num_learning_rate_warmup_epochs > 0
                  else None)
    # Every update in the warm-up of a flags' schedule ramps its first rate whatever the
    # schedule says: the warm-up's line below says it all.
    ramped_only = (warmup_end is not None and warmup_end > last_step
                   and (p.piecewise_learning_rate_schedule or p.init_learning_rate is not None))
    if p.piecewise_learning_rate_schedule and not ramped_only:
        rates, epochs = params_lib.parse_piecewise_schedule(p.piecewise_learning_rate_schedule)
        for i, epoch in enumerate(epochs):
            step = at(epoch)
            if step is not None and step > last_step:
                kept = rates[i]
                out.append('--piecewise_learning_rate_schedule: epoch %g (global step %d) %s; '
                           'the rate stays %g' % (epoch, step, reach, kept))
                break  # the later boundaries are further away still
    elif (p.init_learning_rate is not None and p.num_epochs_per_decay > 0
          and p.learning_rate_decay_factor > 0 and not ramped_only):
        step = at(p.num_epochs_per_decay)
        if step is not None and step > last_step:
            out.append('--num_epochs_per_decay=%g: the first decay (global step %d) %s; the rate '
                       'stays %g' % (p.num_epochs_per_decay, step, reach, p.init_learning_rate))
    if warmup_end is not None:
        step = warmup_end
        if step > last_step:
            out.append('--num_learning_rate_warmup_epochs=%g: the warm-up ends at global step %d, '
                       'which %s; the rate never reaches its scheduled value'
                       % (p.num_learning_rate_warmup_epochs, step, reach))
    return out


def unused_first_rates(p, steps_per_epoch: float) -> list[str]:
    """One line when the first update of a fresh run already uses a later rate of
    --piecewise_learning_rate_schedule: a boundary epoch e with boundary_step(e) = 0 (e x
    steps per epoch < 1), so no update uses the rates before it; [] otherwise.

    Example: '--piecewise_learning_rate_schedule: epoch 1e-06 comes at global step 0 (an
    epoch is 10 steps), so no update uses the rate 0.001 before it; the first uses 0.1'.
    """
    if not p.piecewise_learning_rate_schedule:
        return []
    rates, epochs = params_lib.parse_piecewise_schedule(p.piecewise_learning_rate_schedule)
    at_zero = [i for i, e in enumerate(epochs) if boundary_step(e, steps_per_epoch) == 0]
    if not at_zero:
        return []
    last = at_zero[-1]
    unused = rates[:last + 1]
    return ['--piecewise_learning_rate_schedule: epoch %g comes at global step 0 (an epoch is '
            '%.6g steps), so no update uses the rate%s %s before it; the first uses %g' % (
                epochs[last], steps_per_epoch, 's' if len(unused) > 1 else '',
                ', '.join('%g' % r for r in unused), rates[last + 1])]


def make_optimizer(p, learning_rate, fold_weight_decay: bool = False):
    """Returns the tf.compat.v1.train optimizer named by --optimizer.

    sgd: plain gradient descent. momentum: heavy-ball momentum with Nesterov's correction
    (Sutskever et al. 2013). rmsprop: Tieleman & Hinton 2012. adam: Kingma & Ba 2015.
    With `fold_weight_decay`, each decayed variable's update (every trainable one outside batch
    norm) adds --weight_decay * w to its gradient
    (graph/fused_decay.py): for gradients taken of the loss without the weight-decay term.

    Raises:
      ValueError: unknown optimizer name (validate_params normally catches it first).
    """
    choices = {
        'sgd': (tf1.train.GradientDescentOptimizer, {}),
        'momentum': (tf1.train.MomentumOptimizer, dict(momentum=p.momentum, use_nesterov=True)),
        'rmsprop': (tf1.train.RMSPropOptimizer, dict(
            decay=p.rmsprop_decay, momentum=p.rmsprop_momentum, epsilon=p.rmsprop_epsilon)),
        'adam': (tf1.train.AdamOptimizer, dict(beta1=p.adam_beta1, beta2=p.adam_beta2,
                                               epsilon=p.adam_epsilon)),
    }
    if p.optimizer in choices:
        cls, kwargs = choices[p.optimizer]
        if fold_weight_decay:
            cls = fused_decay.with_folded_decay(cls, p.weight_decay)
        return cls(learning_rate, **kwargs)
    raise ValueError('unknown --optimizer=%r; valid: %s' % (p.optimizer,
                                                            ', '.join(params_lib.OPTIMIZERS)))

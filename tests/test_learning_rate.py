"""Learning-rate schedule values at given steps, for each schedule flag."""

import numpy as np
import pytest
import tensorflow as tf

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.graph import learning_rate
from tf_cnn_benchmarks.lifecycle import schedule_warnings
from tf_cnn_benchmarks.models import model_config
from tf_cnn_benchmarks.params import make_params

import helpers

tf1 = tf.compat.v1


def _rates(steps, *, examples_per_epoch=1000, images_per_step=100, **kwargs):
    """The learning rate at each of `steps` (10 steps per epoch by default)."""
    graph = tf.Graph()
    with graph.as_default():
        step = tf1.placeholder(tf.int64, [])
        lr = learning_rate.get_learning_rate(
            make_params(**kwargs), step, model=model_config.get_model('trivial'),
            examples_per_epoch=examples_per_epoch, images_per_step=images_per_step)
        with tf1.Session() as sess:
            return [float(sess.run(lr, {step: s})) for s in steps]


def test_piecewise_schedule_switches_at_epoch_boundaries():
    # 10 steps per epoch: the update from global step 10 (the first of epoch 1) uses 0.01.
    rates = _rates([0, 9, 10, 29, 30, 100],
                   piecewise_learning_rate_schedule='0.1;1;0.01;3;0.001')
    assert rates == pytest.approx([0.1, 0.1, 0.01, 0.01, 0.001, 0.001])


def test_exponential_decay_is_a_staircase():
    rates = _rates([0, 19, 20, 45], init_learning_rate=0.4, num_epochs_per_decay=2,
                   learning_rate_decay_factor=0.5)
    assert rates == pytest.approx([0.4, 0.4, 0.2, 0.1])


def test_warmup_ramps_linearly_then_minimum_bounds():
    rates = _rates([0, 5, 10, 20], init_learning_rate=0.2, num_learning_rate_warmup_epochs=1)
    assert rates == pytest.approx([0.0, 0.1, 0.2, 0.2])
    floor = _rates([0, 20], init_learning_rate=0.4, num_epochs_per_decay=1,
                   learning_rate_decay_factor=0.1, minimum_learning_rate=0.01)
    assert floor == pytest.approx([0.4, 0.01])


def _model_rates(name, dataset, steps, images_per_step, **kwargs):
    """The rate of `name`'s default schedule at each of `steps` (int64 global steps), an
    epoch being the dataset's published size (synthetic data's, the original's)."""
    graph = tf.Graph()
    with graph.as_default():
        step = tf1.placeholder(tf.int64, [])
        lr = learning_rate.get_learning_rate(
            make_params(model=name, **kwargs), step,
            model=model_config.get_model(name, dataset),
            examples_per_epoch={'imagenet': 1281167, 'cifar10': 50000}[dataset],
            images_per_step=images_per_step)
        with tf1.Session() as sess:
            return [float(sess.run(lr, {step: s})) for s in steps]


def test_a_constant_model_default_is_not_scaled_with_the_batch():
    # The original's base model returns its rate whatever the batch: vgg16 0.005 (at its
    # default batch 64), trivial 1e-4 here (0.005 in the original: docs/usage-and-flags.md).
    assert _model_rates('vgg16', 'imagenet', [0, 10 ** 6], 16) == pytest.approx([0.005] * 2)
    assert _model_rates('trivial', 'imagenet', [0, 7], 256) == pytest.approx([1e-4] * 2)
    assert _model_rates('trivial', 'cifar10', [0, 7], 256) == pytest.approx([1e-3] * 2)


def test_trivial_cifar10_default_rate_trains_at_a_small_batch():
    # At the original's 0.005 the loss of this run became NaN at step 20 (a CI user's smoke
    # test at batch 4); at its default 1e-3 it falls and stays finite.
    losses = helpers.tiny_losses(data_name='cifar10', image_size=32, batch_size=4,
                                 num_batches=40)
    assert np.isfinite(losses).all()
    assert losses[-5:].mean() < losses[:5].mean()


def _original_imagenet_resnet(step, batch, base_lr=0.128):
    """The original's ImageNet ResNet rate (its models/resnet_model.py), written out: base_lr
    per 256 images; linear warm-up over 5 epochs of 1,281,167 images; then x0.1 once the
    global step is past int(steps per epoch x e) for e in 30, 60, 80, 90."""
    per_epoch = 1281167 / batch
    rate = base_lr * batch / 256
    warmup = int(per_epoch * 5)
    if step < warmup:
        return rate * step / warmup
    return rate * 0.1 ** sum(step > int(per_epoch * e) for e in (30, 60, 80, 90))


@pytest.mark.parametrize('batch, kwargs', [(256, {}), (48, dict(resnet_base_lr=0.256))])
def test_imagenet_resnet_default_is_the_originals_warmup_and_steps(batch, kwargs):
    per_epoch = 1281167 / batch
    steps = [0, 1, 1000, int(per_epoch * 5) - 1, int(per_epoch * 5)]
    for e in (30, 60, 80, 90):
        steps += [int(per_epoch * e), int(per_epoch * e) + 1]
    steps.append(10 ** 7)
    expected = [_original_imagenet_resnet(s, batch, kwargs.get('resnet_base_lr', 0.128))
                for s in steps]
    assert _model_rates('resnet50', 'imagenet', steps, batch, **kwargs) == pytest.approx(
        expected, rel=1e-5, abs=1e-12)


@pytest.mark.parametrize('name, batch, epochs, values', [
    # The original's ResnetCifar10Model: int(50000 / batch) steps per epoch.
    ('resnet20', 128, (82, 123, 300), (0.1, 0.01, 0.001, 0.0002)),
    # Its DensenetCifar10Model: 50000 // batch steps per epoch.
    ('densenet40_k12', 64, (150, 225, 300), (0.1, 0.01, 0.001, 0.0001)),
])
def test_cifar_defaults_are_the_originals_steps_unscaled(name, batch, epochs, values):
    per_epoch = 50000 // batch
    steps = [0] + [s for e in epochs for s in (per_epoch * e, per_epoch * e + 1)]
    expected = [values[sum(s > per_epoch * e for e in epochs)] for s in steps]
    assert _model_rates(name, 'cifar10', steps, batch) == pytest.approx(expected)


def test_cifar_alexnet_default_is_the_originals_staircase_decay():
    # 0.1 x 0.1 ** floor(step / (100 x 50000 // batch)), not scaled with the batch.
    every = 100 * 50000 // 64
    steps = [0, every - 1, every, 2 * every + 5]
    assert _model_rates('alexnet', 'cifar10', steps, 64) == pytest.approx(
        [0.1, 0.1, 0.01, 0.001])


@pytest.mark.parametrize('name, slot', [('sgd', None), ('momentum', 'momentum'),
                                        ('rmsprop', 'rms'), ('adam', 'm')])
def test_optimizer_factory(name, slot):
    graph = tf.Graph()
    with graph.as_default():
        opt = learning_rate.make_optimizer(make_params(optimizer=name), 0.1)
        var = tf1.get_variable('w', [2], initializer=tf1.ones_initializer())
        opt.minimize(tf.reduce_sum(var * var), var_list=[var])
        assert (slot in opt.get_slot_names()) if slot else opt.get_slot_names() == []


def test_single_rate_schedule_is_a_constant():
    assert _rates([0, 50], piecewise_learning_rate_schedule='0.3') == pytest.approx([0.3, 0.3])


def test_piecewise_equals_the_exponential_decay_path_at_every_step():
    # 1,000 examples at 96 images per step: 10.42 steps per epoch, so epochs 1, 2, 3 start at
    # global steps int(10.42)=10, int(20.83)=20 and int(31.25)=31 (not 30: no drift).
    steps = list(range(0, 45))
    piecewise = _rates(steps, images_per_step=96,
                       piecewise_learning_rate_schedule='0.4;1;0.2;2;0.1;3;0.05;4;0.025')
    decay = _rates(steps, images_per_step=96, init_learning_rate=0.4, num_epochs_per_decay=1,
                   learning_rate_decay_factor=0.5)
    assert piecewise == pytest.approx(decay)
    expected = [0.4] * 10 + [0.2] * 10 + [0.1] * 11 + [0.05] * 10 + [0.025] * 4
    assert piecewise == pytest.approx(expected)
    assert [learning_rate.boundary_step(e, 1000 / 96) for e in (1, 2, 3, 4)] == [10, 20, 31, 41]


def test_warmup_hands_over_to_the_schedule_without_a_step_back():
    # Warm-up over epoch 0 (10 steps), then the schedule's second rate from step 10 on: the
    # rate never goes back to the first rate after the ramp.
    rates = _rates([0, 5, 9, 10, 11, 30], num_learning_rate_warmup_epochs=1,
                   piecewise_learning_rate_schedule='0.0004;1;0.0001')
    assert rates == pytest.approx([0.0, 0.0002, 0.00036, 0.0001, 0.0001, 0.0001])


def _original_warmup(step, first, warmup_steps, scheduled):
    """The original's get_learning_rate with --num_learning_rate_warmup_epochs and
    --init_learning_rate or a piecewise schedule, written out: the schedule's first rate x
    step / warm-up steps while step < warm-up steps, the schedule's rate `scheduled` after."""
    return first * step / warmup_steps if step < warmup_steps else scheduled


def test_warmup_ramps_the_first_rate_over_a_change_inside_it():
    """A user's finding (nu_optim57 2): with a piecewise boundary inside the warm-up the ramp
    multiplied the current rate and dipped (steps 4-5: 0.00133, 0.00167); the original ramps
    the schedule's first rate and applies the schedule from the warm-up's end."""
    # 512 examples at 8 a step: 64 steps an epoch; the warm-up is 6 steps, the boundaries
    # come at steps 4 and 8.
    schedule = dict(piecewise_learning_rate_schedule='0.004;0.0625;0.002;0.125;0.0005',
                    num_learning_rate_warmup_epochs=0.09375)
    steps = list(range(12))
    piecewise = [0.004 if s < 4 else 0.002 if s < 8 else 0.0005 for s in steps]
    expected = [_original_warmup(s, 0.004, 6, piecewise[s]) for s in steps]
    assert _rates(steps, examples_per_epoch=512, images_per_step=8, **schedule) == pytest.approx(
        expected, rel=1e-6)
    assert expected[4:6] == pytest.approx([0.004 * 4 / 6, 0.004 * 5 / 6])
    # --init_learning_rate with a decay inside the warm-up (every 2 of its 10 steps): the
    # ramp is of --init_learning_rate, the decayed rates come after.
    steps = list(range(14))
    decayed = [0.2 * 0.5 ** (s // 2) for s in steps]
    assert _rates(steps, init_learning_rate=0.2, num_epochs_per_decay=0.2,
                  learning_rate_decay_factor=0.5, num_learning_rate_warmup_epochs=1) == \
        pytest.approx([_original_warmup(s, 0.2, 10, decayed[s]) for s in steps], rel=1e-6)


def test_less_than_one_step_of_warmup_is_none():
    assert _rates([0, 1], init_learning_rate=0.2,
                  num_learning_rate_warmup_epochs=0.05) == pytest.approx([0.2, 0.2])


def test_changes_beyond_the_run_are_named():
    p = make_params(piecewise_learning_rate_schedule='0.1;1;0.01;30;0.001',
                    num_learning_rate_warmup_epochs=2)
    # 10 steps per epoch; the last update of the run starts from global step 14: every update
    # is in the warm-up, which ramps the first rate (0.1) whatever the schedule says, so the
    # warm-up's line is the only one (a user's trial: 'the rate stays 0.01' was untrue).
    assert learning_rate.unreached_changes(p, 10.0, 14) == [
        '--num_learning_rate_warmup_epochs=2: the warm-up ends at global step 20, which is '
        'beyond this run (its last update is at global step 14); the rate never reaches its '
        'scheduled value']
    # Past the warm-up the schedule's own rate holds until its next change.
    assert learning_rate.unreached_changes(p, 10.0, 25) == [
        '--piecewise_learning_rate_schedule: epoch 30 (global step 300) is beyond this run (its '
        'last update is at global step 25); the rate stays 0.01']
    assert learning_rate.unreached_changes(p, 10.0, 300) == []
    decay = make_params(init_learning_rate=0.4, num_epochs_per_decay=2,
                        learning_rate_decay_factor=0.5)
    assert learning_rate.unreached_changes(decay, 10.0, 19) == [
        '--num_epochs_per_decay=2: the first decay (global step 20) is beyond this run (its last '
        'update is at global step 19); the rate stays 0.4']
    assert learning_rate.unreached_changes(decay, 10.0, 20) == []


def test_only_a_schedule_of_the_flags_has_changes_to_name_and_a_hook_to_warn():
    schedules = {'piecewise_learning_rate_schedule': '0.1;1;0.01', 'num_epochs_per_decay': 2,
                 'num_learning_rate_warmup_epochs': 2}
    for name, value in schedules.items():
        given = {name: value, **({'init_learning_rate': 0.4, 'learning_rate_decay_factor': 0.5}
                                 if name == 'num_epochs_per_decay' else {})}
        p = make_params(**given)
        assert learning_rate.schedule_flag(p) == '--' + name
        assert learning_rate.unreached_changes(p, 10.0, 0) != []
        hooks = helpers.tiny_bench(**given).make_hooks()
        assert sum(isinstance(h, schedule_warnings.ScheduleWarningsHook) for h in hooks) == 1
    # The model's own rate: no flag, nothing that could be missed, no hook.
    assert learning_rate.schedule_flag(make_params()) == ''
    assert learning_rate.unreached_changes(make_params(), 10.0, 0) == []
    hooks = helpers.tiny_bench().make_hooks()
    assert not any(isinstance(h, schedule_warnings.ScheduleWarningsHook) for h in hooks)


@pytest.mark.parametrize('name, dataset, batch, text', [
    ('resnet50', 'imagenet', 16,
     '0.008 (default), warm-up 5 epochs (400364 steps), x0.1 after epochs 30, 60, 80, 90'),
    ('resnet20', 'cifar10', 128, "0.1 (the model's default), 0.01, 0.001, 0.0002 after epochs "
     '82, 123, 300'),
    ('alexnet', 'cifar10', 128, "0.1 (the model's default), x0.1 every 100 epochs"),
    ('vgg16', 'imagenet', 16, "0.005 (the model's default)"),
])
def test_the_header_line_says_the_models_default_schedule(name, dataset, batch, text):
    # A user's finding: resnet50's line said a constant 0.008 "scaled to 16", with no warm-up
    # and no steps; the line with its 'LR schedule: ' label stays under 100 characters.
    line = learning_rate.describe_schedule(make_params(model=name), model_config.get_model(
        name, dataset), batch, 1281167 if dataset == 'imagenet' else 50000)
    assert line == text
    assert len('LR schedule: ' + line) < 100


@pytest.mark.parametrize('schedule, expected', [
    # A user's finding: a change at epoch 1e-06 falls within the first step; nothing said so.
    ('0.001;0.000001;0.1', '--piecewise_learning_rate_schedule: epoch 1e-06 comes at global step '
     '0 (an epoch is 10 steps), so no update uses the rate 0.001 before it; the first uses 0.1'),
    ('0.3;0.05;0.2;0.08;0.1', '--piecewise_learning_rate_schedule: epoch 0.08 comes at global '
     'step 0 (an epoch is 10 steps), so no update uses the rates 0.3, 0.2 before it; the first '
     'uses 0.1'),
    ('0.3;0.1;0.2', None),  # epoch 0.1 is global step 1: step 0 uses 0.3
])
def test_a_piecewise_change_at_global_step_0_is_named_once(schedule, expected):
    p = make_params(piecewise_learning_rate_schedule=schedule)
    said = learning_rate.unused_first_rates(p, 1000 / 100)
    assert said == ([expected] if expected else [])
    # What the line says is what the first update gets (10 steps per epoch in _rates).
    first = _rates([0], piecewise_learning_rate_schedule=schedule)[0]
    assert first == pytest.approx(0.1 if expected else 0.3)


def test_an_epoch_is_the_records_found_for_the_models_schedule_too(imagenet_dir):
    # resnet50's warm-up of 5 epochs counted ImageNet's 1,281,167 images an epoch (3,202,917
    # steps at batch 2) while --num_epochs counted the 512 records found.
    bench = benchmark_cnn.BenchmarkCNN(make_params(
        model='resnet50', batch_size=2, image_size=32, data_dir=imagenet_dir, num_epochs=0.01,
        device='cpu'), gpus=0)
    assert bench.plan.examples_per_epoch == 512 and bench.plan.num_batches == 3
    lines = bench.info_lines()
    assert ('             an epoch is these 512 examples (--num_epochs, LR schedule; published: '
            '1281167)') in lines
    assert ('LR schedule: 0.001 (default), warm-up 5 epochs (1280 steps), x0.1 after epochs 30, '
            '60, 80, 90') in lines
    model = model_config.get_model('resnet50', 'imagenet')
    with tf.Graph().as_default():
        step = tf1.placeholder(tf.int64, [])
        lr = learning_rate.get_learning_rate(bench.params, step, model=model,
                                             examples_per_epoch=512, images_per_step=2)
        with tf1.Session() as sess:
            rates = [sess.run(lr, {step: s}) for s in (640, 1280, 7680, 7681)]
    peak = 0.128 * 2 / 256
    assert rates == pytest.approx([peak / 2, peak, peak, peak / 10])  # epoch 30: step 7680


def test_the_header_puts_a_change_inside_the_warm_up_at_its_end():
    """A user's trial: '0.1 (piecewise schedule), 0.01 from epoch 1, warm-up 2 epochs' while
    the warm-up ramps the first rate until epoch 2 and the schedule applies only after it."""
    def line(**flags):
        return learning_rate.describe_schedule(make_params(**flags), model_config.get_model(
            'trivial', 'imagenet'), 4, 40, width=200)
    assert line(piecewise_learning_rate_schedule='0.1;1;0.01;3;0.001',
                num_learning_rate_warmup_epochs=2) == (
        '0.1 (--piecewise_learning_rate_schedule), 0.01 from epoch 2, 0.001 from epoch 3, '
        'warm-up from 0 over 2 epochs (20 steps)')
    # Two changes inside it: only the later one is ever used, from the warm-up's end.
    assert line(piecewise_learning_rate_schedule='0.1;0.5;0.05;1;0.01;3;0.001',
                num_learning_rate_warmup_epochs=2).startswith(
        '0.1 (--piecewise_learning_rate_schedule), 0.01 from epoch 2, 0.001 from epoch 3, ')
    assert line(piecewise_learning_rate_schedule='0.1;1;0.01;3;0.001').startswith(
        '0.1 (--piecewise_learning_rate_schedule), 0.01 from epoch 1, 0.001 from epoch 3')

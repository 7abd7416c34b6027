"""The timed loop's stop on a non-finite loss and its advice (which flag to lower), with a fake
step function (no TensorFlow session)."""

import math

import pytest

from tf_cnn_benchmarks.lifecycle import training_loop

Spec = training_loop.LoopSpec


def _fake_steps(losses):
    it = iter(losses)
    return lambda: (next(it),)


def test_non_finite_loss_stops_with_step_and_hint():
    step = _fake_steps([5.0, 5.0, math.nan, 1.0])

    class WithRate:
        __call__ = staticmethod(step)
        learning_rate = staticmethod(lambda: 0.5)
    with pytest.raises(training_loop.NonFiniteLossError) as info:
        training_loop.run_loop(Spec(num_warmup=0, num_steps=4, images_per_step=1,
                                    display_every=1), WithRate(), log=lambda _: None)
    text = str(info.value)
    assert 'the loss became nan at step 3 (learning rate 0.5)' in text
    assert text.endswith('no images/sec are reported. Lower --init_learning_rate.')
    with pytest.raises(training_loop.NonFiniteLossError) as info:
        training_loop.run_loop(Spec(num_warmup=1, num_steps=1, images_per_step=1,
                                    display_every=1, nan_hint=' or X'),
                               _fake_steps([math.inf]), log=lambda _: None)
    assert str(info.value).startswith('the loss became inf at warm-up step 1; ')
    assert str(info.value).endswith('Lower --init_learning_rate or X.')


def test_a_nan_at_the_rate_floor_names_minimum_learning_rate():
    # The rate of the NaN step is --minimum_learning_rate's floor: lowering the schedule's
    # rates would change nothing, so the advice names the floor's flag.
    class AtFloor:
        __call__ = staticmethod(lambda: (math.nan,))
        learning_rate = staticmethod(lambda: 0.5)
    for floor, advice in ((0.5, 'Lower --minimum_learning_rate (the rate was at its floor, '
                                '0.5) or X.'),
                          (0.1, 'Lower --init_learning_rate or X.'),
                          (0.0, 'Lower --init_learning_rate or X.')):
        with pytest.raises(training_loop.NonFiniteLossError) as info:
            training_loop.run_loop(Spec(num_warmup=0, num_steps=1, images_per_step=1,
                                        display_every=1, nan_hint=' or X', rate_floor=floor),
                                   AtFloor(), log=lambda _: None)
        assert str(info.value).endswith(advice), (floor, str(info.value))
    from tf_cnn_benchmarks.lifecycle import timed_run
    from tf_cnn_benchmarks.params import make_params
    plan = type('Plan', (), dict(params=make_params(model='trivial', minimum_learning_rate=0.5),
                                 num_warmup_batches=0, num_batches=1, images_per_step=1,
                                 training=True, model='trivial', dataset='synthetic',
                                 images_per_global_step=1, cluster_role=''))
    assert timed_run.loop_spec(plan).rate_floor == 0.5


def test_the_nan_advice_names_the_flag_the_rate_came_from():
    from tf_cnn_benchmarks.lifecycle import timed_run
    from tf_cnn_benchmarks.params import make_params
    cases = [(dict(model='trivial'), 'Lower --init_learning_rate'),  # the model's default
             (dict(model='trivial', init_learning_rate=1.0), 'Lower --init_learning_rate'),
             (dict(model='trivial', piecewise_learning_rate_schedule='1;2;0.1'),
              'Lower the rates of --piecewise_learning_rate_schedule'),
             (dict(model='resnet50', resnet_base_lr=1.0), 'Lower --resnet_base_lr'),
             # --resnet_base_lr has no effect beside --init_learning_rate or on other models
             (dict(model='resnet50', resnet_base_lr=1.0, init_learning_rate=1.0),
              'Lower --init_learning_rate'),
             (dict(model='vgg16', resnet_base_lr=1.0), 'Lower --init_learning_rate')]
    for flags, advice in cases:
        assert timed_run.rate_advice(make_params(**flags)) == advice, flags
    with pytest.raises(training_loop.NonFiniteLossError) as info:
        training_loop.run_loop(Spec(num_warmup=0, num_steps=1, images_per_step=1,
                                    display_every=1, rate_advice='Lower --resnet_base_lr',
                                    nan_hint=' or X'),
                               _fake_steps([math.nan]), log=lambda _: None)
    assert str(info.value).endswith('are reported. Lower --resnet_base_lr or X.')


def test_a_dominating_weight_decay_is_named_instead_of_the_learning_rate():
    parts = [(6.9, 1e28), (math.nan, math.inf)]

    class DecaySteps:
        __call__ = staticmethod(_fake_steps([7.0, math.nan]))
        learning_rate = staticmethod(lambda: 6.25e-06)
        loss_parts = staticmethod(lambda: parts)
    with pytest.raises(training_loop.NonFiniteLossError) as info:
        training_loop.run_loop(Spec(num_warmup=0, num_steps=2, images_per_step=1,
                                    display_every=1, weight_decay=1e8), DecaySteps(),
                               log=lambda _: None)
    assert str(info.value) == (
        'the loss became nan at step 2 (learning rate 6.25e-06); the run is invalid and no '
        'images/sec are reported. The weight-decay term dominates the loss (1e+28 against a '
        'cross entropy of 6.9 the step before): lower --weight_decay (1e+08 now; an SGD update '
        'takes --weight_decay x the learning rate of each kernel and bias off it, and past 2 '
        'they grow every step; here 625).')
    # An infinite term beside a finite cross entropy, at the failing step itself.
    assert training_loop.decay_advice([(7.0, math.inf)], 1.0).startswith(
        'The weight-decay term dominates the loss (inf against a cross entropy of 7): ')
    # A small term, or no decay: the learning rate's advice stays.
    assert training_loop.decay_advice([(7.0, 0.01), (math.nan, 0.02)], 1e-4) is None
    assert training_loop.decay_advice([(7.0, math.inf)], 0.0) is None


def test_an_absurd_learning_rate_is_named_before_the_weight_decay():
    """A user's finding: --model=lenet --init_learning_rate=1e30 said 'lower --weight_decay
    (4e-05 now ...; here 4e+25)', the table's default decay, and never named the rate."""
    parts = [(4.478e26, math.inf)]
    lenet = 0.005  # lenet's default rate (at any batch)
    advice = training_loop.decay_advice(parts, 4e-5, 1e30, default_rate=lenet,
                                        rate_lowering='Lower --init_learning_rate')
    assert advice == (
        'The weight-decay term dominates the loss (inf against a cross entropy of 4.478e+26) '
        'because the learning rate is too high (1e+30, 2e+32 x the model\'s default at this '
        'batch, 0.005): lower --init_learning_rate; an SGD update takes the learning rate x '
        '--weight_decay (4e-05) of each kernel and bias off it, and past 2 they grow every '
        'step; here 4e+25.')
    # Through the loop: the rate's flag as the spec says it (here the floor's).
    floor = Spec(num_warmup=0, num_steps=1, images_per_step=1, display_every=1,
                 weight_decay=4e-5, rate_floor=1e30, default_rate=lenet)
    assert floor.rate_lowering(1e30) == ('Lower --minimum_learning_rate (the rate was at its '
                                         'floor, 1e+30)')

    class Blown:
        __call__ = staticmethod(_fake_steps([math.inf]))
        learning_rate = staticmethod(lambda: 1e30)
        loss_parts = staticmethod(lambda: parts)
    with pytest.raises(training_loop.NonFiniteLossError) as info:
        training_loop.run_loop(floor, Blown(), log=lambda _: None)
    assert ('too high (1e+30, 2e+32 x the model\'s default at this batch, 0.005): lower '
            '--minimum_learning_rate (the rate was at its floor, 1e+30); ') in str(info.value)
    # The decay further above its default than the rate above the model's: the decay first.
    assert training_loop.decay_advice(parts, 1.0, 1.0, default_rate=0.1).startswith(
        'The weight-decay term dominates the loss (inf against a cross entropy of 4.478e+26): '
        'lower --weight_decay (1 now;')
    # No reference rate known: as before, the decay.
    assert ': lower --weight_decay (' in training_loop.decay_advice(parts, 4e-5, 1e30)


class _Hooks:
    """A hook that records the timed steps it is handed and the phases after them."""

    def __init__(self):
        self.steps, self.phases = [], []

    def after_step(self, step, loss):
        self.steps.append((step, loss))

    def after_timed(self):
        self.phases.append('after_timed')


def _stopping_run(losses, warmup):
    spec = Spec(num_warmup=warmup, num_steps=len(losses) - warmup, images_per_step=4,
                display_every=1, stop_on_nonfinite=True)
    lines, hooks = [], _Hooks()
    result = training_loop.run_loop(spec, _fake_steps(losses), [hooks], log=lines.append)
    return result, lines, hooks


def test_a_nan_in_the_timed_part_stops_the_loop_and_keeps_the_steps_before_it():
    """One host's run (LoopSpec.stop_on_nonfinite): the loop ends before the NaN step, as a
    signal would after the step before it; the error is kept for the run to raise once its
    reports are written (a user's finding: such a run wrote no JSON and no record)."""
    result, lines, hooks = _stopping_run([7.0, 6.0, 5.0, math.nan, 4.0], warmup=1)
    assert isinstance(result.error, training_loop.NonFiniteLossError)
    assert str(result.error) == ('the loss became nan at step 3; the run is invalid and only '
                                 'the timed steps before it are reported, as a partial run. '
                                 'Lower --init_learning_rate.')
    assert result.stopped_by_error == 'the non-finite loss (nan) at step 3'
    # The NaN step is neither timed nor handed to the hooks.
    assert result.num_steps == 2 and result.losses == [6.0, 5.0] and len(result.step_times) == 2
    assert hooks.steps == [(1, 6.0), (2, 5.0)] and hooks.phases == ['after_timed']
    assert result.stopped_early and not result.stopped_in_warmup
    assert result.images_per_sec > 0
    total = lines.index('-' * 64)
    assert lines[total + 1].startswith('total images/sec: ')
    assert lines[-1] == 'Stopped by the non-finite loss (nan) at step 3 after 2 timed steps'


def test_a_nan_before_any_timed_step_times_nothing():
    # In the warm-up: as a signal there (no timed part, no total block).
    result, lines, hooks = _stopping_run([7.0, math.inf, 6.0], warmup=2)
    assert result.stopped_in_warmup and result.stopped_early and result.nothing_timed
    assert result.warmup_losses == [7.0] and result.num_steps == 0
    assert result.stopped_by_error == 'the non-finite loss (inf) at warm-up step 2'
    assert str(result.error).startswith('the loss became inf at warm-up step 2; ')
    assert hooks.phases == [] and 'Done warm up' not in lines
    assert lines[-1] == ('Stopped by the non-finite loss (inf) at warm-up step 2: nothing was '
                         'timed')
    # At the first timed step: the timed part began, but no step finished: no total block.
    result, lines, hooks = _stopping_run([7.0, math.nan, 6.0], warmup=1)
    assert 'the run is invalid and no images/sec are reported. ' in str(result.error)
    assert result.nothing_timed and not result.stopped_in_warmup and hooks.steps == []
    assert hooks.phases == ['after_timed']
    assert not any(line.startswith('total images/sec') for line in lines)
    assert lines[-1] == 'Stopped by the non-finite loss (nan) at step 1: nothing was timed'

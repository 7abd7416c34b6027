"""Users' findings, the original tf_cnn_benchmarks run side by side with this one: flags of the
learning rate and the optimizers that were silently ignored or refused where the original
ran.

* --num_epochs_per_decay and --learning_rate_decay_factor act only together and with
  --init_learning_rate (graph/learning_rate.py); given without the rest they were ignored (the
  losses of a run without them), where the original refuses them: refused here too, before
  TensorFlow loads (params/schedule_spec.check_decay_flags).
* The flags of another optimizer (--optimizer=sgd --momentum=0.5, adam with --rmsprop_decay)
  and --single_l2_loss_op with --weight_decay=0 did nothing and said nothing: one warning each
  (preflight/ineffective_flags.py).
* --optimizer=adam --adam_beta1=1.0 ran into a NaN whose advice was to lower the learning
  rate, and --rmsprop_decay=1.5 was accepted: each hyper-parameter outside its range is refused
  (params/optimizer_ranges.py, with the source of each range).
"""

from __future__ import annotations

import pytest
from absl import flags

from tf_cnn_benchmarks import flag_parsing, params
from tf_cnn_benchmarks.params import ParamsError, make_params, schedule_spec, validate_params
from tf_cnn_benchmarks.preflight import ineffective_flags

import helpers

TINY = ['--device=cpu', '--model=trivial', '--batch_size=2', '--num_batches=1',
        '--num_warmup_batches=0', '--noresults_db']


def _refusal(**kwargs) -> str:
    with pytest.raises(ParamsError) as info:
        validate_params(make_params(**kwargs))
    return str(info.value)


@pytest.mark.parametrize('kwargs, text', [
    (dict(num_epochs_per_decay=0.0001, learning_rate_decay_factor=0.1),
     '--num_epochs_per_decay=0.0001 and --learning_rate_decay_factor=0.1 need '
     '--init_learning_rate: the decay multiplies --init_learning_rate by '
     '--learning_rate_decay_factor every --num_epochs_per_decay epochs and needs all three; add '
     '--init_learning_rate, or drop them.'),
    (dict(init_learning_rate=0.1, learning_rate_decay_factor=0.1),
     '--learning_rate_decay_factor=0.1 needs --num_epochs_per_decay > 0 (0 epochs is no '
     'period): '),
    (dict(init_learning_rate=0.1, num_epochs_per_decay=0.0001),
     '--num_epochs_per_decay=0.0001 needs --learning_rate_decay_factor > 0 (a factor of 0 is '
     'no decay): '),
    (dict(num_epochs_per_decay=2),
     'add --init_learning_rate and set --learning_rate_decay_factor above 0, or drop it.'),
    # A user's finding: given as 0, it was told to 'add --num_epochs_per_decay'.
    (dict(init_learning_rate=0.1, num_epochs_per_decay=0.0, learning_rate_decay_factor=0.5),
     'needs all three; set --num_epochs_per_decay above 0, or drop it.'),
    (dict(piecewise_learning_rate_schedule='0.1;1;0.01', learning_rate_decay_factor=0.5),
     '--learning_rate_decay_factor=0.5 decays --init_learning_rate, which '
     '--piecewise_learning_rate_schedule excludes; write the lower rates into the schedule'),
])
def test_a_decay_flag_without_the_rest_is_refused_naming_what_is_missing(kwargs, text):
    message = _refusal(**kwargs)
    assert text in message and '\n' not in message


@pytest.mark.parametrize('kwargs', [
    dict(init_learning_rate=0.1, num_epochs_per_decay=2, learning_rate_decay_factor=0.5),
    dict(init_learning_rate=0.0, num_epochs_per_decay=2, learning_rate_decay_factor=0.5),
    dict(minimum_learning_rate=0.01),  # the floor of any rate here (docs: Learning-rate schedule)
    dict(init_learning_rate=0.1, num_learning_rate_warmup_epochs=1),
])
def test_the_decay_with_its_rate_and_the_floor_alone_are_accepted(kwargs):
    validate_params(make_params(**kwargs))


@pytest.mark.cli
def test_the_command_refuses_a_lone_decay_flag_before_tensorflow_loads():
    done = helpers.run_command(*TINY, '--learning_rate_decay_factor=0.1')
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        'error: --learning_rate_decay_factor=0.1 needs --init_learning_rate and '
        '--num_epochs_per_decay > 0 (0 epochs is no period): the decay multiplies '
        '--init_learning_rate by --learning_rate_decay_factor every --num_epochs_per_decay '
        'epochs and needs all three; add --init_learning_rate and set --num_epochs_per_decay '
        'above 0, or drop it.']
    assert 'Loading TensorFlow' not in done.stdout


@pytest.mark.parametrize('kwargs, expected', [
    (dict(init_learning_rate=0.1, num_epochs_per_decay=2, learning_rate_decay_factor=1.5),
     ['--learning_rate_decay_factor=1.5 is above 1: the rate grows x1.5 every 2 epochs instead '
      'of decaying']),
    (dict(init_learning_rate=0.1, num_epochs_per_decay=1, learning_rate_decay_factor=1.0), []),
    (dict(init_learning_rate=0.1, num_epochs_per_decay=1, learning_rate_decay_factor=0.5), []),
    (dict(init_learning_rate=0.1, num_epochs_per_decay=1, learning_rate_decay_factor=2.0,
          forward_only=True), []),  # nothing trained: the no-effect line says it
])
def test_a_growing_decay_factor_is_accepted_with_one_warning(kwargs, expected):
    # A user's finding: --learning_rate_decay_factor=1.5 was accepted silently (the original
    # accepts it too: not refused).
    p = make_params(**kwargs)
    validate_params(p)
    assert schedule_spec.decay_warnings(p) == expected


@pytest.mark.parametrize('kwargs, expected', [
    (dict(init_learning_rate=0.0),
     ["--init_learning_rate=0: every update's learning rate is 0, so no update changes the "
      'weights (the loss changes only with the batches)']),
    (dict(piecewise_learning_rate_schedule='0;1;0.0'),
     ['--piecewise_learning_rate_schedule=0;1;0.0: every rate is 0, so no update changes the '
      'weights (the loss changes only with the batches)']),
    (dict(init_learning_rate=0.0, num_epochs_per_decay=1, learning_rate_decay_factor=0.5,
          num_learning_rate_warmup_epochs=1), None),  # the same line: decay keeps 0
    (dict(piecewise_learning_rate_schedule='0;1;0.001'), []),
    (dict(init_learning_rate=0.0, minimum_learning_rate=0.001), []),  # the floor is the rate
    (dict(init_learning_rate=0.0, forward_only=True), []),  # nothing trained
    (dict(init_learning_rate=1e-30), []),
])
def test_a_zero_rate_is_accepted_with_one_warning(kwargs, expected):
    """A user's finding (nu_optim57 6): --init_learning_rate=0 was accepted silently, and
    every update was a no-op."""
    p = make_params(**kwargs)
    validate_params(p)
    if expected is None:
        expected = schedule_spec.zero_rate_warnings(make_params(init_learning_rate=0.0))
    assert schedule_spec.zero_rate_warnings(p) == expected


def test_the_command_warns_once_for_a_zero_rate_and_runs():
    done = helpers.run_command(*TINY, '--init_learning_rate=0')
    assert done.returncode == 0, done.stderr
    lines = [x for x in (done.stdout + done.stderr).splitlines() if 'init_learning_rate=0' in x]
    assert lines == ["warning: --init_learning_rate=0: every update's learning rate is 0, so "
                     'no update changes the weights (the loss changes only with the batches)']


def warnings_of(*args: str) -> list[str]:
    """The 'no effect' lines the command prints for `args`."""
    fv = flags.FlagValues()
    p = flag_parsing.parse_flags(['tf_cnn_benchmarks', '--device=cpu'] + list(args), fv)
    given = frozenset(n for n in params.SPEC_BY_NAME if fv[n].present)
    return ineffective_flags.messages(p, 0, None, given)


@pytest.mark.parametrize('args, expected', [
    (['--optimizer=sgd', '--momentum=0.5'],
     ['--momentum has no effect with --optimizer=sgd (only --optimizer=momentum reads it)']),
    (['--optimizer=adam', '--momentum=0.5', '--rmsprop_decay=0.5'],
     ['--momentum has no effect with --optimizer=adam (only --optimizer=momentum reads it)',
      '--rmsprop_decay has no effect with --optimizer=adam (only --optimizer=rmsprop reads it)']),
    (['--rmsprop_decay=0.5', '--adam_beta1=0.5'],
     ['--rmsprop_decay has no effect with --optimizer=sgd (only --optimizer=rmsprop reads it)',
      '--adam_beta1 has no effect with --optimizer=sgd (only --optimizer=adam reads it)']),
    (['--optimizer=rmsprop', '--momentum=0.5', '--rmsprop_momentum=0.5'],
     ['--momentum has no effect with --optimizer=rmsprop (only --optimizer=momentum reads it)']),
    (['--single_l2_loss_op', '--weight_decay=0'],
     ['--single_l2_loss_op has no effect with --weight_decay=0 (there is no weight-decay term '
      'to compute)']),
    # Their own optimizer's, at the default, or where a mode's rule says it already: silent.
    (['--optimizer=momentum', '--momentum=0.5'], []),
    (['--optimizer=adam', '--adam_beta1=0.5', '--adam_beta2=0.9', '--adam_epsilon=1e-6'], []),
    # Typed at the default value: given all the same (a user's finding: silent).
    (['--optimizer=sgd', '--momentum=0.9'],
     ['--momentum has no effect with --optimizer=sgd (only --optimizer=momentum reads it)']),
    (['--optimizer=rmsprop', '--adam_beta1=0.9', '--rmsprop_momentum=0.9'],
     ['--adam_beta1 has no effect with --optimizer=rmsprop (only --optimizer=adam reads it)']),
    (['--single_l2_loss_op', '--weight_decay=0.01'], []),
    (['--forward_only', '--momentum=0.5'],
     ['--momentum has no effect with --forward_only (no gradients, no updates)']),
])
def test_another_optimizers_flags_warn_once_each(args, expected):
    assert warnings_of(*args) == expected


def test_each_optimizer_reads_its_own_flags_only():
    """OPTIMIZER_OWN_FLAGS is make_optimizer's truth: changing a flag of another optimizer
    leaves an optimizer's hyper-parameters as they were; its own flags change them."""
    import tensorflow as tf

    from tf_cnn_benchmarks.graph import learning_rate

    def hyper(p):
        opt = learning_rate.make_optimizer(p, 0.1)
        return {k: v for k, v in vars(opt).items()
                if k in ('_momentum', '_decay', '_epsilon', '_beta1', '_beta2')}

    names = [n for own in ineffective_flags.OPTIMIZER_OWN_FLAGS.values() for n in own]
    with tf.Graph().as_default():
        for optimizer in params.OPTIMIZERS:
            p = make_params(optimizer=optimizer)
            own = ineffective_flags.OPTIMIZER_OWN_FLAGS.get(optimizer, ())
            for name in names:
                changed = hyper(p._replace(**{name: 0.25})) != hyper(p)
                assert changed == (name in own), (optimizer, name)


@pytest.mark.parametrize('kwargs, text', [
    (dict(optimizer='adam', adam_beta1=1.0), '--adam_beta1 must be in [0, 1): Adam\'s decay '
     'rate of the first moment (Kingma & Ba 2015, Algorithm 1); at 1 its bias correction 1 - '
     'beta1^t is 0. Received: adam_beta1=1.0'),
    (dict(adam_beta2=1.0), '--adam_beta2 must be in [0, 1): '),
    (dict(adam_beta1=-0.1), '--adam_beta1 must be in [0, 1): '),
    (dict(adam_epsilon=0.0), '--adam_epsilon must be > 0: '),
    (dict(optimizer='rmsprop', rmsprop_decay=1.5), '--rmsprop_decay must be in [0, 1]: the '
     'weight of the old mean square in RMSProp\'s moving average (Tieleman & Hinton 2012); '
     'above 1 the new gradient\'s weight 1 - decay is negative. Received: rmsprop_decay=1.5'),
    (dict(rmsprop_decay=-0.5), '--rmsprop_decay must be in [0, 1]: '),
    (dict(rmsprop_epsilon=0.0), '--rmsprop_epsilon must be > 0: '),
    (dict(rmsprop_epsilon=-1.0), '--rmsprop_epsilon must be > 0: '),
    (dict(momentum=-0.5), '--momentum must be >= 0'),
    (dict(optimizer='momentum', momentum=1.5), '--momentum must be in [0, 1): the heavy-ball '
     'velocity v = momentum x v + gradient (Polyak 1964; Sutskever et al. 2013) forgets old '
     'gradients only when momentum < 1; at 1 or above it never decays and the steps grow '
     'without bound. Received: momentum=1.5'),
    (dict(optimizer='momentum', momentum=1.0), '--momentum must be in [0, 1): '),
    (dict(optimizer='rmsprop', rmsprop_momentum=1.5), '--rmsprop_momentum must be in [0, 1): '
     'RMSProp\'s momentum accumulates'),
])
def test_a_hyper_parameter_outside_its_range_is_refused(kwargs, text):
    message = _refusal(**kwargs)
    assert message.startswith(text) and '\n' not in message


@pytest.mark.parametrize('kwargs, reason', [
    (dict(optimizer='adam', adam_beta1=-0.1), 'a negative beta1 flips the sign'),
    (dict(optimizer='adam', adam_beta2=-0.1), 'a negative beta2 can make it negative'),
    (dict(optimizer='rmsprop', rmsprop_decay=-0.5), 'cannot be negative'),
])
def test_a_value_below_the_range_gets_the_lower_bounds_reason(kwargs, reason):
    # A user's finding: --adam_beta1=-0.1 was refused because "at 1 its bias correction is 0".
    message = _refusal(**kwargs)
    assert reason in message and 'at 1' not in message and 'above 1' not in message


def test_an_impossible_value_of_an_unread_flag_is_refused_and_says_it_is_unread():
    assert _refusal(optimizer='sgd', adam_beta1=1.0).endswith(
        'Received: adam_beta1=1.0 (--optimizer=sgd does not read it, but the value is '
        'impossible for --optimizer=adam)')
    assert not _refusal(optimizer='adam', adam_beta1=1.0).endswith(')')


@pytest.mark.parametrize('kwargs', [
    dict(adam_beta1=0.0, adam_beta2=0.0), dict(adam_beta1=0.999999, adam_beta2=0.999999),
    dict(adam_epsilon=1e-12), dict(rmsprop_decay=0.0), dict(rmsprop_decay=1.0),
    dict(rmsprop_epsilon=1e-10), dict(momentum=0.0), dict(momentum=0.999999),
    dict(optimizer='rmsprop', rmsprop_momentum=0.999999),
])
def test_the_edges_of_the_ranges_are_accepted(kwargs):
    validate_params(make_params(**kwargs))


@pytest.mark.parametrize('optimizer, kwargs, grad', [
    ('adam', dict(adam_beta1=1.0), 1.0),  # lr / (1 - beta1^t) = lr / 0
    ('adam', dict(adam_epsilon=0.0), 0.0),  # m / (sqrt(v) + 0) = 0 / 0
    ('rmsprop', dict(rmsprop_decay=1.5), 10.0),  # ms = 1.5 x 1 - 0.5 x 100 < 0, its sqrt NaN
    ('rmsprop', dict(rmsprop_decay=0.0, rmsprop_epsilon=0.0), 0.0),  # g / sqrt(0 + 0) = 0 / 0
])
def test_the_values_just_outside_the_ranges_make_the_update_non_finite(optimizer, kwargs, grad):
    """What optimizer_ranges.py says of each edge, on TF1's optimizers: one update of a weight
    whose gradient is `grad`."""
    import numpy as np
    import tensorflow as tf

    from tf_cnn_benchmarks.graph import learning_rate

    p = make_params(optimizer=optimizer, **kwargs)
    with tf.Graph().as_default():
        w = tf.compat.v1.get_variable('w', [], initializer=tf.compat.v1.ones_initializer(),
                                      use_resource=True)
        opt = learning_rate.make_optimizer(p, 0.1)
        update = opt.apply_gradients([(tf.constant(grad), w)])
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            sess.run(update)
            assert not np.isfinite(sess.run(w)), kwargs

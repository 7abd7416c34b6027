"""Users' findings, the original tf_cnn_benchmarks run side by side with this one: flags of the
learning rate and the optimizers that were silently ignored or refused where the original
ran.

* --num_epochs_per_decay and --learning_rate_decay_factor act only together and with
  --init_learning_rate (graph/learning_rate.py); given without the rest they were ignored (the
  losses of a run without them), where the original refuses them: refused here too, before
  TensorFlow loads (params/schedule_spec.check_decay_flags).
"""

from __future__ import annotations

import pytest

from tf_cnn_benchmarks.params import ParamsError, make_params, validate_params

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
     '--learning_rate_decay_factor=0.1 needs --num_epochs_per_decay: '),
    (dict(init_learning_rate=0.1, num_epochs_per_decay=0.0001),
     '--num_epochs_per_decay=0.0001 needs --learning_rate_decay_factor: '),
    (dict(num_epochs_per_decay=2),
     'add --init_learning_rate and --learning_rate_decay_factor, or drop it.'),
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
        '--num_epochs_per_decay: the decay multiplies --init_learning_rate by '
        '--learning_rate_decay_factor every --num_epochs_per_decay epochs and needs all three; '
        'add --init_learning_rate and --num_epochs_per_decay, or drop it.']
    assert 'Loading TensorFlow' not in done.stdout

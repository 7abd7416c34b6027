"""The piecewise learning-rate schedule's language (--piecewise_learning_rate_schedule), and
the exponential decay's flags that go together (`check_decay_flags`)."""

from __future__ import annotations

import math

from .errors import ParamsError


def is_number(text) -> bool:
    """True where float(text) reads `text` as a number ('1e-3', 'inf'), False otherwise."""
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return True


def parse_piecewise_schedule(text: str) -> tuple[list[float], list[float]]:
    """Parses a piecewise-constant learning-rate schedule.

    Grammar: ``lr0;epoch1;lr1;epoch2;lr2;...`` with an odd number of items, increasing epochs.
    ``"0.1;30;0.01;60;0.001"`` means 0.1 for epochs [0, 30), 0.01 for [30, 60), then 0.001.

    Returns:
      (rates, boundary_epochs): len(rates) == len(boundary_epochs) + 1.

    Raises:
      ParamsError: the text does not follow the grammar.
    """
    items = text.split(';')
    bad = [x for x in items if not is_number(x)]
    if bad:
        raise ParamsError('--piecewise_learning_rate_schedule must be "lr0;epoch1;lr1;...", '
                          'numbers only: %r is not a number. Received: %r' % (bad[0], text))
    values = [float(x) for x in items]
    if len(values) % 2 == 0:
        raise ParamsError('--piecewise_learning_rate_schedule must be "lr0;epoch1;lr1;...", an '
                          'odd number of numbers. Received: %r' % text)
    rates, epochs = values[0::2], values[1::2]
    if any(not math.isfinite(r) or r < 0 for r in rates):
        raise ParamsError('--piecewise_learning_rate_schedule rates must be finite and >= 0. '
                          'Received: %r' % text)
    if any(b <= a for a, b in zip(epochs, epochs[1:])) or any(e <= 0 for e in epochs):
        raise ParamsError('--piecewise_learning_rate_schedule epochs must be positive and '
                          'increasing. Received: %r' % text)
    return rates, epochs


# The exponential decay's flags: the rate, and how often and by how much it decays.
DECAY_FLAGS = ('init_learning_rate', 'num_epochs_per_decay', 'learning_rate_decay_factor')


def check_decay_flags(p) -> None:
    """The exponential decay's three flags go together, as in the original: a
    --num_epochs_per_decay or --learning_rate_decay_factor above 0 needs the other one and
    --init_learning_rate, the rate they decay (graph/learning_rate.get_learning_rate decays
    only with all three, so either alone was ignored without a word). --minimum_learning_rate
    is not one of them: here it bounds any rate, the model's default too (the original refused
    it without the decay; docs/usage-and-flags.md, Learning-rate schedule).

    Raises:
      ParamsError: one line naming the decay flags given, those missing and the fix.
    """
    given = [n for n in DECAY_FLAGS[1:] if getattr(p, n)]
    if not given:
        return
    shown = ' and '.join('--%s=%g' % (n, getattr(p, n)) for n in given)
    if p.piecewise_learning_rate_schedule:
        raise ParamsError('%s %s --init_learning_rate, which --piecewise_learning_rate_schedule '
                          'excludes; write the lower rates into the schedule ("0.1;30;0.01;60;'
                          '0.001") or drop %s.' % (shown, 'decays' if len(given) == 1 else 'decay',
                                                  'it' if len(given) == 1 else 'them'))
    missing = [n for n in DECAY_FLAGS
               if (getattr(p, n) is None if n == 'init_learning_rate' else not getattr(p, n))]
    if missing:
        # 0, the default of the other two, is no period and no factor: they must be > 0.
        wanted = ' and '.join('--' + n if n == 'init_learning_rate' else '--%s > 0 (%s)' % (
            n, ZERO_MEANS[n]) for n in missing)
        numeric = [n for n in missing if n != 'init_learning_rate']
        added = ' and '.join(
            (['add --init_learning_rate'] if 'init_learning_rate' in missing else [])
            + (['set %s above 0' % ' and '.join('--' + n for n in numeric)] if numeric else []))
        raise ParamsError('%s %s %s: the decay multiplies --init_learning_rate by '
                          '--learning_rate_decay_factor every --num_epochs_per_decay epochs '
                          'and needs all three; %s, or drop %s.'
                          % (shown, 'needs' if len(given) == 1 else 'need', wanted, added,
                             'it' if len(given) == 1 else 'them'))


# What 0 (the default) of each numeric decay flag means: the decay is off.
ZERO_MEANS = {'num_epochs_per_decay': '0 epochs is no period',
              'learning_rate_decay_factor': 'a factor of 0 is no decay'}


def decay_warnings(p) -> list[str]:
    """One line when the exponential decay of a training run makes the rate grow: a
    --learning_rate_decay_factor above 1 with the other two decay flags (the original accepts
    it too, so it is not refused). Example: '--learning_rate_decay_factor=1.5 is above 1: the
    rate grows x1.5 every 2 epochs instead of decaying'."""
    if (p.forward_only or p.eval or p.init_learning_rate is None
            or not p.num_epochs_per_decay > 0 or not p.learning_rate_decay_factor > 1):
        return []
    return ['--learning_rate_decay_factor=%g is above 1: the rate grows x%g every %g epoch%s '
            'instead of decaying' % (p.learning_rate_decay_factor, p.learning_rate_decay_factor,
                                     p.num_epochs_per_decay,
                                     '' if p.num_epochs_per_decay == 1 else 's')]


def zero_rate_warnings(p) -> list[str]:
    """One line when every update of a training run has a learning rate of 0, so that no update
    changes the trainable weights (accepted: the original runs it too): --init_learning_rate=0
    (its decay and warm-up keep 0) or a --piecewise_learning_rate_schedule whose rates are all
    0, without a --minimum_learning_rate above 0 (which would be the rate). Example:
    '--init_learning_rate=0: every update's learning rate is 0, so no update changes the
    weights (the loss changes only with the batches)'."""
    if p.forward_only or p.eval or p.minimum_learning_rate > 0:
        return []
    if p.piecewise_learning_rate_schedule:
        rates = [float(r) for r in p.piecewise_learning_rate_schedule.split(';')[::2]]
        if any(rates):
            return []
        flag = '--piecewise_learning_rate_schedule=%s: every rate is 0' % (
            p.piecewise_learning_rate_schedule)
    elif p.init_learning_rate == 0:
        flag = '--init_learning_rate=0: every update\'s learning rate is 0'
    else:
        return []
    return ['%s, so no update changes the weights (the loss changes only with the batches)'
            % flag]

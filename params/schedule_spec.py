"""The piecewise learning-rate schedule's language (--piecewise_learning_rate_schedule)."""

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

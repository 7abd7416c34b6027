"""The gates' tolerance, one rule for each gate that takes it: `--fail_on_slower=PCT` of a
run's `--baseline` (params.check_ranges) and of `tf_cnn_sweep compare A B` (tools/sweep/gate.py).

PCT is the percent slower allowed, in [0, 100): a run cannot be 100% (or more) slower than
another (its images/sec would be 0 or below), so a gate of 100 or more could never fail, and
one that cannot fail passes every regression it was set up to catch. 0 fails on any slowdown
beyond the noise.

`not_finite` is the one rule of the tools' other number flags too (tf_cnn_results'
--min_change, tf_cnn_sweep's --run_timeout_secs, tf_cnn_cluster's --timeout_secs and
--kill_grace_secs): Python reads 'nan', 'inf', '-inf' and '1e400' as floats, and such a value
is refused for what it is (a run's own flags: params.check_ranges), not for a range it happens
to fail.
"""

from __future__ import annotations

import math

FLAG = 'fail_on_slower'


def problem(value, text: str | None = None) -> str | None:
    """Why `value` (percent) is no tolerance of a gate, or None.

    Args:
      value: the percent, a number.
      text: the value as given, for the message ('150'); default `value` itself.

    Returns:
      '--fail_on_slower=150: must be >= 0 and below 100 (percent slower allowed; a run cannot
      be 100% slower, so the gate could never fail)'; for nan, inf or -inf
      '--fail_on_slower=nan: takes a finite number (percent slower allowed, >= 0 and below
      100), e.g. 5; nan is none' (`not_finite`); or None.
    """
    if value is None or 0 <= value < 100:
        return None
    if not math.isfinite(value):
        return '--%s=%s: %s' % (FLAG, text if text is not None else value, not_finite(
            value, 'percent slower allowed, >= 0 and below 100', text))
    return ('--%s=%s: must be >= 0 and below 100 (percent slower allowed; a run cannot be 100%% '
            'slower, so the gate could never fail)'
            % (FLAG, text if text is not None else '%g' % value))


def not_finite(value: float, what: str, text: str | None = None,
               example: str = '5') -> str | None:
    """Why a number flag's `value` is refused as no finite number, or None for a finite one.

    Args:
      value: the flag's value as Python read it (float('nan'), float('inf'), 1e400 -> inf).
      what: the flag's unit and range, for the message ('percent, >= 0 and below 100').
      text: the value as given ('1e400'); default `value` itself ('inf').
      example: a value the flag takes.

    Returns:
      'takes a finite number (percent, >= 0 and below 100), e.g. 5; inf is none' (the caller
      puts the flag before it), or None.
    """
    if math.isfinite(value):
        return None
    shown = '%r' % value
    if text is not None and text.strip().lower() != shown:  # '1e400 (read as inf)'
        shown = '%s (read as %s)' % (text, shown)
    return 'takes a finite number (%s), e.g. %s; %s is none' % (what, example, shown)

"""The gates' tolerance, one rule for each gate that takes it: `--fail_on_slower=PCT` of a
run's `--baseline` (params.check_ranges) and of `tf_cnn_sweep compare A B` (tools/sweep/gate.py).

PCT is the percent slower allowed, in [0, 100): a run cannot be 100% (or more) slower than
another (its images/sec would be 0 or below), so a gate of 100 or more could never fail, and
one that cannot fail passes every regression it was set up to catch. 0 fails on any slowdown
beyond the noise.
"""

from __future__ import annotations

FLAG = 'fail_on_slower'


def problem(value, text: str | None = None) -> str | None:
    """Why `value` (percent) is no tolerance of a gate, or None.

    Args:
      value: the percent, a number.
      text: the value as given, for the message ('150'); default `value` itself.

    Returns:
      '--fail_on_slower=150: must be >= 0 and below 100 (percent slower allowed; a run cannot
      be 100% slower, so the gate could never fail)', or None.
    """
    if value is None or 0 <= value < 100:
        return None
    return ('--%s=%s: must be >= 0 and below 100 (percent slower allowed; a run cannot be 100%% '
            'slower, so the gate could never fail)'
            % (FLAG, text if text is not None else '%g' % value))

"""`--recent_runs=N` of `tf_cnn_results history`, `regressions` and `html`: the last runs of
each series where the change-point search also looks for a step at the level of their own
splits (history/regressions.py find_steps), so that a year of history does not make the
nightly gate blind.

Why a window: the search picks a step among every split of a series, so its level is alpha
corrected for their number (Tarone, history/tarone.py): 0.00085 at about 60 runs, 0.00013 at
400, 6.9e-05 at 730. A 5% step against 8% run-to-run noise then needs dozens of runs after it
to reach that level, and the gate says `not judged` on most nights. Searched again among the
splits of the last 30 runs only (the runs before them, back to the last step found, are the
before part), the level is about 0.05/28 = 0.0018 however long the series. The whole series
is still searched first, so an older step is reported as before.
"""

from __future__ import annotations

import argparse

from tf_cnn_benchmarks.history import regressions

HELP = ('the last runs of each series where a step is also searched for at the level of their '
        'own splits, the runs before them its baseline, so that a long series\' correction for '
        'its many possible step points does not hide a recent step; older steps are found by '
        'the search of the whole series, as with 0 (the whole series only) (default %(default)d)')


def runs(text: str) -> int:
    """--recent_runs' value: a whole number >= 0.

    Raises:
      argparse.ArgumentTypeError: anything else (the parser's one-line usage error).
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError('takes a whole number of runs >= 0, e.g. 30 (0: the '
                                         'whole series only). Received: %r' % text) from None
    if value < 0:
        raise argparse.ArgumentTypeError('must be >= 0 (0: the whole series only). Received: '
                                         '%d' % value)
    return value


def add_flag(parser) -> None:
    """Adds --recent_runs (default regressions.DEFAULT_RECENT_RUNS) to `parser`."""
    parser.add_argument('--recent_runs', type=runs, default=regressions.DEFAULT_RECENT_RUNS,
                        metavar='N', help=HELP)

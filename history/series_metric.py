"""The figure a series of runs is followed by (`tf_cnn_results history` and `regressions`
--metric): images/sec (higher is better, the default) or a per-batch latency percentile of
forward-only runs and evaluations (milliseconds, lower is better).

The regression search (history/regressions.py) is written for a figure where a regression is
a fall. A latency is searched as its reciprocal, batches per millisecond, a rate like
images/sec: the Mann-Whitney test ranks the reciprocals in exactly the reverse order, so its
p-value of "the reciprocal fell" is its p-value of "the latency rose", and the least-squares
fit on the logarithms is the same fit. --min_change is a rise of the latency: a rise of m
percent is a fall of its reciprocal by 100 m / (100 + m) percent (`search_pct`). What is
shown (medians, the change in percent and its sign) is of the latency itself (`change`).
"""

from __future__ import annotations

import statistics
from typing import NamedTuple

from .. import cnn_util


class Metric(NamedTuple):
    """A figure of a database row (a column of history/records.py ROW_FIELDS).

    Attributes:
      column: the row's column, 'images_per_sec', 'latency_p99_ms'.
      label: its name in tables and lines, 'images/sec', 'latency p99 ms'.
      higher_is_better: True for images/sec; False for a latency (its rise is a regression).
      fmt: the format of one value in a table, '%.2f'.
      worse: the word of a change for the worse: 'slower' (images/sec fell), 'higher'
        (the latency rose).
      step: the words of a step for the worse: 'step down' (images/sec), 'step up' (latency).
    """
    column: str
    label: str
    higher_is_better: bool
    fmt: str
    worse: str
    step: str

    def oriented(self, values) -> list[float]:
        """`values` as a rate where a regression is a fall: images/sec unchanged, a latency's
        reciprocal (batches per ms). Raises ZeroDivisionError on a latency of 0 (never
        stored: a latency is a positive time)."""
        values = [float(v) for v in values]
        return values if self.higher_is_better else [1.0 / v for v in values]

    def search_pct(self, min_change_pct: float) -> float:
        """--min_change (percent of the median before) as the search's percent fall of the
        oriented values: unchanged for images/sec, 100 m / (100 + m) for a latency's rise of
        m percent (5 -> 4.76: latency 5% higher is its reciprocal 4.76% lower)."""
        if self.higher_is_better:
            return min_change_pct
        return 100.0 * min_change_pct / (100.0 + min_change_pct)

    def change(self, before: list[dict], after: list[dict], ratio: float) -> float:
        """The change of a step as a fraction of the median before: images/sec `ratio` - 1
        (the search's median after / median before); for a latency, of the latency's own
        medians (+0.2: 20% higher, a regression; -0.2: an improvement)."""
        if self.higher_is_better:
            return ratio - 1.0
        return (statistics.median(r[self.column] for r in after)
                / statistics.median(r[self.column] for r in before) - 1.0)

    def medians(self, before: list[dict], after: list[dict]) -> tuple[float, float]:
        """The figure's medians before and after a step (images/sec, or ms)."""
        return tuple(statistics.median(r[self.column] for r in rows) for rows in (before, after))

    def moved(self, before: list[dict], after: list[dict]) -> str:
        """The medians of the figure before -> after a step with their run counts: '1000.0 (6
        runs) -> 800.0 (6 runs)' (images/sec), '10.000 (6 runs) -> 12.000 (6 runs)' (ms)."""
        value = '%.1f (%s)' if self.higher_is_better else '%.3f (%s)'
        return '%s -> %s' % tuple(value % (statistics.median(r[self.column] for r in rows),
                                           cnn_util.counted(len(rows), 'run'))
                                  for rows in (before, after))


IMAGES_PER_SEC = Metric('images_per_sec', 'images/sec', True, '%.2f', 'slower', 'step down')
METRICS = {m.column: m for m in (
    IMAGES_PER_SEC,
    Metric('latency_p50_ms', 'latency p50 ms', False, '%.3f', 'higher', 'step up'),
    Metric('latency_p90_ms', 'latency p90 ms', False, '%.3f', 'higher', 'step up'),
    Metric('latency_p99_ms', 'latency p99 ms', False, '%.3f', 'higher', 'step up'))}
HELP = ('the figure to follow: %s (default images_per_sec; a latency is per batch, of '
        'forward-only runs and evaluations, and its rise is a regression)'
        % ', '.join(METRICS))


def metric_of(name: str) -> Metric:
    """The Metric of a --metric value.

    Raises:
      ValueError: an unknown name; the message lists the valid ones.
    """
    if name not in METRICS:
        raise ValueError('--metric=%s is no figure the database follows; give one of %s'
                         % (name, ', '.join(METRICS)))
    return METRICS[name]


def measured(rows: list[dict], metric: Metric) -> tuple[list[dict], str | None]:
    """The rows that recorded `metric` (a finite positive value), and the line that says how
    many were left out ('left out 3 of 10 runs: no latency p99 ms recorded (a training run
    measures no latency; a run too short for percentiles, or recorded before schema 7 for
    p90, has none)'), None when none was."""
    kept = [r for r in rows if isinstance(r.get(metric.column), (int, float))
            and r[metric.column] > 0]
    missing = len(rows) - len(kept)
    if not missing:
        return kept, None
    why = (' (a training run measures no latency; a run too short for percentiles, or for '
           'p90 one recorded before the database kept it, has none)'
           if not metric.higher_is_better else '')
    return kept, 'left out %d of %d runs: no %s recorded%s' % (missing, len(rows),
                                                               metric.label, why)

"""Where a configuration's images/sec stepped down beyond the noise: a change-point search over
each series of runs, tested with the Mann-Whitney test of `tf_cnn_sweep compare`.

A series is the runs of one configuration (history/records.py CONFIG_FIELDS) on one host, in
the order they finished. Its values are the runs' images/sec: one run is one sample, as one
repeat is in `compare` (the steps of a run are not independent samples of the run-to-run
noise).

The search is binary segmentation: a segment's candidate splits divide it
into a before and an after part of at least `min_segment` runs each (3: the fewest with which
the one-sided exact test can reach p <= 0.05, metrics/significance.py) whose medians differ by
more than --min_change percent. Least squares locates the change among them (the split that
best fits two levels to log images/sec), and `significance.judge(before,
after)`, the one-sided Mann-Whitney U test, decides whether it is one: slower (or faster) at
the corrected level below. When no split counts, a stretch is looked for the same way: runs
in the middle of the segment that differ from those around them (a regression fixed later,
which no single split shows: the runs after the fix dilute every split's after part), located
by the best fit of one level inside and one outside and tested inside against outside. Then
the parts are searched again. Steps up are found too (a fixed regression must not hide a
later one), but only steps down are reported.

A segment has many splits, so the search could pick one by chance: the level the test is
held to is corrected for their number by Tarone's modified Bonferroni method for discrete
tests (R. E. Tarone, "A modified Bonferroni method for discrete data", Biometrics 46(2),
1990). With K the smallest number such that at most K of the splits could reach p <= alpha /
K at all (their smallest possible p-value, significance.min_p_value), the test is held to
alpha / K and the other splits cannot count; a Bonferroni bound holds for whichever split is
picked. The split search and the stretch search are two such families, each at alpha: a flat
series is flagged slower with probability at most about 2 alpha, whatever its length, and
measured far below (tests/test_results_regressions.py measures it).

A split the corrected level leaves out can still hold a step: with 4 or 5 runs before a step
and 3 after (7 or 8 runs in the segment: 3|4, 4|3, 3|5, 5|3; in no other segment length) the
exact test's smallest p-value, 1/35 or 1/56, is above the level of 0.025 or 0.0167, so a clean
50% step down there can never be found. Such a series is not judged, not passed
(`untestable_step`): when the runs after the last step found (the whole series when none was)
hold a split with at least `min_segment` runs on each side whose after part's median is more
than --min_change below the before part's and whose smallest possible p-value is above the
level that segment is tested at, the gate cannot tell a step from noise there; the runs to
add after the latest before that split's test can reach its level are counted
(`more_runs`: 1 for 4|3, 5|3 and 3|5; 2 for 3|4). A series whose every possible step down the test
can reach is judged; one whose runs do not move by more than --min_change anywhere has no
possible step to judge.

A test that can reach its level may still be unable to see a step of --min_change: the rule
of the other two gates (a run's --baseline, `tf_cnn_sweep compare --fail_on_slower`) holds
here too. Such a split (a possible step down there, as above) is not judged either when
after runs all --min_change below the before part's median would not reach the level
(significance.p_at_slowdown of the before part with that many runs after, above the level):
3 runs then 3 runs 6% slower, one of the 3 before 6% below the others, cannot tell a 5%
step from noise (p 0.35 at best, against 0.05), so the test's `same` there is no pass. Its
`more_runs` counts the runs after it with which such a step could reach the level; None when
no number can: before parts of few runs, one of them below the point, keep the p-value above
it however many runs follow (1/6 at best for 3 runs, one below). With --min_change=0 the rule
is the one above.

Sources: L. Y. Vostrikova, "Detecting 'disorder' in multidimensional random processes",
Soviet Math. Doklady 24, 1981 (binary segmentation); D. V. Hinkley, "Inference about the
change-point in a sequence of random variables", Biometrika 57(1), 1970 (the least-squares
change point).
"""

from __future__ import annotations

import math
import statistics
from typing import NamedTuple

from .. import cnn_util
from ..metrics import significance
from . import records, series_metric, step_notes
from .tarone import corrected_level

DEFAULT_MIN_CHANGE_PCT = 5.0

#: --recent_runs: the last runs of a series where a step is also searched for at the level of
#: their own splits (docs/results-database.md): 30 runs, ten nights of 3 repeats.
DEFAULT_RECENT_RUNS = 30


class Step(NamedTuple):
    """A change in one series.

    Attributes:
      index: position in the series of the first run after the change.
      direction: 'slower' or 'faster'.
      judgement: significance.Judgement of the after part against the before part (ratio:
        median after / median before).
      level: the corrected significance level the split was tested at.
      start, end: the segment that was split: values[start:index] against
        values[index:end].
    """
    index: int
    direction: str
    judgement: significance.Judgement
    level: float
    start: int
    end: int


def _located(values: list[float], start: int, end: int, splits: list[int]) -> int:
    """The split of values[start:end] (among `splits`) that least-squares puts the change at:
    the one maximising n_before n_after / n (mean log before - mean log after)^2, i.e. the
    best fit of two constant levels to log images/sec (Hinkley 1970)."""
    sums = _log_sums(values[start:end])
    n = end - start

    def fit(k):
        a = k - start
        gap = sums[a] / a - (sums[n] - sums[a]) / (n - a)
        return a * (n - a) / n * gap * gap

    return max(splits, key=fit)


def _best_split(values: list[float], start: int, end: int, min_change: float,
                min_segment: int, alpha: float, first: int = 0) -> Step | None:
    """The step in values[start:end], or None: among the splits (from `first` on) whose
    medians moved by more than `min_change` (a fraction) and whose test could reach the
    corrected level, the one least squares locates (`_located`), when the Mann-Whitney test
    says it moved."""
    splits = list(range(max(start + min_segment, first), end - min_segment + 1))
    if not splits:
        return None
    level = corrected_level([(k - start, end - k) for k in splits], alpha)
    moved = []
    for k in splits:
        if significance.min_p_value(k - start, end - k) > level:
            continue
        before = statistics.median(values[start:k])
        ratio = statistics.median(values[k:end]) / before if before else math.inf
        if abs(ratio - 1.0) > min_change:
            moved.append(k)
    if not moved:
        return None
    k = _located(values, start, end, moved)
    j = significance.judge(values[start:k], values[k:end], alpha=level)
    if j.verdict == 'slower' and j.ratio < 1.0 - min_change:
        return Step(k, 'slower', j, level, start, end)
    if j.verdict == 'faster' and j.ratio > 1.0 + min_change:
        return Step(k, 'faster', j, level, start, end)
    return None


def _log_sums(values: list[float]) -> list[float]:
    """Prefix sums of log images/sec (of the values themselves when one is not positive)."""
    logs = [math.log(v) for v in values] if all(v > 0 for v in values) else list(values)
    sums = [0.0]
    for x in logs:
        sums.append(sums[-1] + x)
    return sums


def _best_stretch(values: list[float], start: int, end: int, min_change: float,
                  min_segment: int, alpha: float) -> list[Step]:
    """A stretch inside values[start:end] that differs from the runs around it (a regression
    later fixed, which no single split of the segment shows): [its down step, its up step]
    (or up, then down), else [].

    Least squares locates the stretch (the best fit of one level inside and one outside,
    runs before and after it both at least `min_segment` long); the Mann-Whitney test of
    the stretch against the runs around it, at Tarone's level over every such stretch, and
    the move of its median by more than `min_change` decide it.
    """
    n, m = end - start, min_segment
    pairs = [(a, b) for a in range(m, n - 2 * m + 1) for b in range(a + m, n - m + 1)]
    level = corrected_level([(n - (b - a), b - a) for a, b in pairs], alpha)
    reachable = {c for c in range(m, n - 2 * m + 1)
                 if significance.min_p_value(n - c, c) <= level}
    pairs = [(a, b) for a, b in pairs if b - a in reachable]
    if not pairs:
        return []
    sums = _log_sums(values[start:end])

    def fit(pair):
        a, b = pair
        inside, count = sums[b] - sums[a], b - a
        gap = inside / count - (sums[n] - inside) / (n - count)
        return count * (n - count) / n * gap * gap

    a, b = max(pairs, key=fit)
    a, b = start + a, start + b
    j = significance.judge(values[start:a] + values[b:end], values[a:b], alpha=level)
    if j.verdict == 'slower' and j.ratio < 1.0 - min_change:
        down, up = a, b
        back = j._replace(ratio=1.0 / j.ratio, p_slower=j.p_faster, p_faster=j.p_slower,
                          verdict='faster')
        return [Step(down, 'slower', j, level, start, b), Step(up, 'faster', back, level, a,
                                                                end)]
    if j.verdict == 'faster' and j.ratio > 1.0 + min_change:
        back = j._replace(ratio=1.0 / j.ratio, p_slower=j.p_faster, p_faster=j.p_slower,
                          verdict='slower')
        return [Step(a, 'faster', j, level, start, b), Step(b, 'slower', back, level, a, end)]
    return []


def find_steps(values: list[float], min_change_pct: float = DEFAULT_MIN_CHANGE_PCT,
               alpha: float = significance.ALPHA, min_segment: int | None = None,
               recent_runs: int = 0) -> list[Step]:
    """Every step of a series (see the module docstring), in series order.

    Args:
      values: images/sec of each run, oldest first.
      min_change_pct: the smallest change in percent of the before part's median that counts.
      alpha: the family-wise significance level of each segment's search.
      min_segment: the fewest runs on each side of a step; default: the fewest with which the
        test can reach `alpha` (significance.min_repeats: 3 at 0.05).
      recent_runs: then, in the runs after the last step found, the splits whose after part
        lies in the last `recent_runs` runs are searched again at the level of their own
        number (`recent_splits`; the runs before them are the before part), so that a long
        series' correction does not hide a recent step; 0: the whole series only.

    Returns:
      Steps ordered by index.
    """
    values = [float(v) for v in values]
    min_segment = min_segment or significance.min_repeats(alpha)
    steps, todo = [], [(0, len(values))]
    while todo:
        start, end = todo.pop()
        step = _best_split(values, start, end, min_change_pct / 100.0, min_segment, alpha)
        found = [step] if step is not None else _best_stretch(
            values, start, end, min_change_pct / 100.0, min_segment, alpha)
        bounds = [start] + [s.index for s in found] + [end]
        steps += found
        if found:
            todo += list(zip(bounds, bounds[1:]))
    while recent_runs:  # the latest runs at their own level: a recent step, then the next
        start = max((s.index for s in steps), default=0)
        if len(values) - recent_runs <= start + min_segment:
            break  # the window holds every split of the latest runs: searched above
        step = _best_split(values, start, len(values), min_change_pct / 100.0, min_segment,
                           alpha, first=len(values) - recent_runs)
        if step is None:
            break
        steps.append(step)
    return sorted(steps, key=lambda s: s.index)


def recent_splits(n: int, min_segment: int, recent_runs: int = 0) -> list[tuple[int, int]]:
    """(runs before, runs after) of the splits of a segment of n runs (the end of the series)
    that the search tests together: min_segment runs on each side, and with `recent_runs` the
    after part in the last `recent_runs` runs (0: every split)."""
    low = max(min_segment, n - recent_runs) if recent_runs else min_segment
    return [(k, n - k) for k in range(low, n - min_segment + 1)]


class Untestable(NamedTuple):
    """A possible step down in a series' latest runs that the test cannot judge (the module
    docstring's rule).

    Attributes:
      index: position in the series of the first run after the possible step.
      start, end: the segment it splits: the runs after the last step found (0 when none was)
        to the end of the series.
      ratio: median of values[index:end] / median of values[start:index] (below 1 - the
        minimum change).
      smallest_p: the exact test's smallest p-value with those counts (significance
        .min_p_value); above `level` when the runs are too few (`too_few_runs`).
      level: the corrected level the segment is tested at (`corrected_level`).
      more_runs: the runs to add after the latest before a step of min_change_pct here could
        reach its level (`runs_to_reach`; None: no number of runs can, the runs before it
        spread wider than min_change_pct, or a `min_segment` below 3).
      p_at_change: the p-value of after runs all min_change_pct below the before part's
        median (significance.p_at_slowdown), above `level` when the runs are not too few:
        the test could not have caught a step of min_change_pct there.
      min_change_pct: --min_change, percent.
      splits: the number of splits the level is corrected for (its possible step points).
      alpha: the level before the correction.
    """
    index: int
    start: int
    end: int
    ratio: float
    smallest_p: float
    level: float
    more_runs: int | None
    p_at_change: float = 1.0
    min_change_pct: float = DEFAULT_MIN_CHANGE_PCT
    splits: int = 1
    alpha: float = significance.ALPHA

    @property
    def too_few_runs(self) -> bool:
        """No p-value at all reaches the level with these counts (else: too wide a spread
        before the split for a step of min_change_pct to reach it)."""
        return self.smallest_p > self.level


def _reaches(before_values, before: int, after: int, level: float,
             min_change_pct: float) -> bool:
    """Whether a split of `before` and `after` runs can reach `level`: at all (the exact
    test's smallest p-value), and, given the before part's values, for after runs all
    min_change_pct below its median (significance.p_at_slowdown)."""
    if significance.min_p_value(before, after) > level:
        return False
    return (before_values is None
            or significance.p_at_slowdown(before_values, after, min_change_pct) <= level)


def runs_to_reach(before: int, after: int, min_segment: int | None = None,
                  alpha: float = significance.ALPHA, most: int = 1000, *,
                  before_values=None, min_change_pct: float = 0.0,
                  recent_runs: int = 0) -> int | None:
    """The runs to add after the latest before a split of `before` and `after` runs (the end
    of its segment the end of the series) can reach the corrected level of its longer segment:
    0 when it can now; the smallest count up to 16, then the first of 32, 64, ... up to
    `most`; None when none can (`before` below 3 at 0.05; or, with `before_values`, the runs
    before the split spread so that a step of min_change_pct never reaches it).

    Args:
      before, after: the runs on each side of the split.
      min_segment, alpha: as `find_steps`.
      most: the most runs to add.
      before_values: the before part's images/sec: a step of `min_change_pct` percent must
        reach the level too (`_reaches`); None: any step (the smallest p-value).
      min_change_pct: --min_change, percent.
      recent_runs: as `find_steps`: while the after part lies in the last `recent_runs` runs,
        the level of those splits; later the whole segment's.
    """
    min_segment = min_segment or significance.min_repeats(alpha)
    counts = list(range(min(most, 16) + 1)) + [2 ** k for k in range(5, 64) if 2 ** k <= most]
    for more in counts:
        n = before + after + more
        window = recent_runs if recent_runs and after + more <= recent_runs else 0
        level = corrected_level(recent_splits(n, min_segment, window), alpha)
        if _reaches(before_values, before, after + more, level, min_change_pct):
            return more
    return None


#: The step the power rule asks about at --min_change=0 (percent): just below the median.
ANY_STEP_PCT = 1e-6


def untestable_step(values: list[float], steps: list[Step],
                    min_change_pct: float = DEFAULT_MIN_CHANGE_PCT,
                    alpha: float = significance.ALPHA, min_segment: int | None = None,
                    recent_runs: int = 0) -> Untestable | None:
    """The possible step down in the runs after the last of `steps` (`find_steps` of the same
    values and settings) that the test cannot judge, or None (the module docstring's rules):
    a split whose after part's median is more than min_change_pct below its before part's,
    where the test cannot reach its level at all, or not for a step of min_change_pct
    against the before part's spread (`_reaches`).

    Of several such splits, the one least squares locates (`_located`) is returned: the
    likeliest place of a step, as for a step found.

    Args:
      values: images/sec of each run, oldest first.
      steps: the steps found in them (`find_steps`).
      min_change_pct, alpha, min_segment, recent_runs: as `find_steps` (with recent_runs,
        only the splits whose after part lies in the last recent_runs runs, at their level).

    Returns:
      Untestable, or None: every possible step down there can reach its level, or none
      moved by more than min_change_pct.
    """
    values = [float(v) for v in values]
    # --min_change=0 (any step counts): the power asked is a step just below the median, not
    # p_at_slowdown's 0 (below the lowest run), so 0 judges no more than 0.001 does.
    asked = min_change_pct or ANY_STEP_PCT
    min_segment = min_segment or significance.min_repeats(alpha)
    start, end = max((s.index for s in steps), default=0), len(values)
    sizes = recent_splits(end - start, min_segment, recent_runs)
    if not sizes:
        return None
    level = corrected_level(sizes, alpha)
    possible = []
    for before_runs, after_runs in sizes:
        k = start + before_runs
        before = statistics.median(values[start:k])
        if not before or (statistics.median(values[k:end]) / before
                           >= 1.0 - min_change_pct / 100.0):
            continue
        if not _reaches(values[start:k], before_runs, after_runs, level, asked):
            possible.append(k)
    if not possible:
        return None
    k = _located(values, start, end, possible)
    return Untestable(k, start, end, statistics.median(values[k:end])
                      / statistics.median(values[start:k]),
                      significance.min_p_value(k - start, end - k), level,
                      runs_to_reach(k - start, end - k, min_segment, alpha,
                                    before_values=values[start:k], min_change_pct=asked,
                                    recent_runs=recent_runs),
                      significance.p_at_slowdown(values[start:k], end - k, asked),
                      min_change_pct, len(sizes), alpha)


class Regression(NamedTuple):
    """A step down found in a series.

    Attributes:
      config_key, hostname: the series.
      step: the Step (direction 'slower').
      before, after: the runs (row dicts) of the split segment before and after the step.
      first_slower: the first run after the step (after[0]); last_before: before[-1].
      changes: what differs between last_before and first_slower (records.changes).
      still_slower: the series' latest run lies in a stretch that is still slower than the
        runs before the step by more than --min_change (no later step has recovered it).
      metric: the figure searched (history/series_metric.py; a latency's step is a rise).
    """
    config_key: str
    hostname: str
    step: Step
    before: list
    after: list
    first_slower: dict
    last_before: dict
    changes: list
    still_slower: bool
    metric: series_metric.Metric = series_metric.IMAGES_PER_SEC


def min_runs(alpha: float = significance.ALPHA) -> int:
    """The fewest runs a series needs for any step to be found: 2 x min_segment (6 at 0.05)."""
    return 2 * significance.min_repeats(alpha)


def series_of(rows: list[dict]) -> dict[tuple[str, str], list[dict]]:
    """{(config_key, hostname): runs oldest first} of rows (store.select_runs order kept)."""
    out: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        out.setdefault((row['config_key'], row['hostname']), []).append(row)
    return out


def _still_slower(values: list[float], steps: list[Step], step: Step,
                  min_change: float) -> bool:
    """The latest stretch (after the last step) is slower than the stretch before `step`."""
    bounds = [0] + [s.index for s in steps] + [len(values)]
    position = bounds.index(step.index)
    before = values[bounds[position - 1]:step.index]
    latest = values[bounds[-2]:]
    return statistics.median(latest) < (1.0 - min_change) * statistics.median(before)


class Unjudged(NamedTuple):
    """A series the gate cannot judge: its latest runs hold a possible step down the test
    cannot reach its level at (`untestable_step`).

    Attributes:
      config_key, hostname: the series.
      step: the Untestable.
      before, after: the runs of its segment before and after the possible step.
      first_after: after[0]; last_before: before[-1].
      changes: what differs between last_before and first_after (records.changes).
      metric: the figure searched (history/series_metric.py).
    """
    config_key: str
    hostname: str
    step: Untestable
    before: list
    after: list
    first_after: dict
    last_before: dict
    changes: list
    metric: series_metric.Metric = series_metric.IMAGES_PER_SEC


class Search(NamedTuple):
    """Every series of some runs, searched (`search`).

    Attributes:
      found: the steps down (Regression), ordered by series and run.
      searched: the number of series.
      short: the number of series too short for any step (fewer than `min_runs`).
      unjudged: the series whose latest runs hold a possible step down the test cannot judge
        (Unjudged), in series order.
    """
    found: list
    searched: int
    short: int
    unjudged: list


def search(rows: list[dict], min_change_pct: float = DEFAULT_MIN_CHANGE_PCT,
           alpha: float = significance.ALPHA,
           metric: series_metric.Metric = series_metric.IMAGES_PER_SEC,
           recent_runs: int = DEFAULT_RECENT_RUNS) -> Search:
    """The steps down of every series in `rows`, and the series it cannot judge.

    Args:
      rows: runs (store rows: config_key, hostname, images_per_sec, ...), oldest first.
      min_change_pct: --min_change, percent.
      alpha: the family-wise significance level of each segment's search.
      metric: the figure searched (every row has it: series_metric.measured); for a latency
        a step up is the regression, searched as its reciprocal's step down (series_metric).
      recent_runs: --recent_runs (`find_steps`; 0: the whole series only).

    Returns:
      Search.
    """
    found, unjudged, short = [], [], 0
    groups = series_of(rows)
    need = min_runs(alpha)
    for (key, host), runs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or '')):
        if len(runs) < need:
            short += 1
            continue
        values = metric.oriented(r[metric.column] for r in runs)
        pct = metric.search_pct(min_change_pct)
        steps = find_steps(values, pct, alpha, recent_runs=recent_runs)
        for step in steps:
            if step.direction != 'slower':
                continue
            before, after = runs[step.start:step.index], runs[step.index:step.end]
            found.append(Regression(
                key, host, step, before, after, after[0], before[-1],
                records.changes(before[-1], after[0]),
                _still_slower(values, steps, step, pct / 100.0), metric))
        possible = untestable_step(values, steps, pct, alpha, recent_runs=recent_runs)
        if possible is not None:
            before, after = runs[possible.start:possible.index], runs[possible.index:]
            unjudged.append(Unjudged(key, host, possible._replace(
                min_change_pct=min_change_pct), before, after, after[0], before[-1],
                records.changes(before[-1], after[0]), metric))
    return Search(found, len(groups), short, unjudged)


def find_regressions(rows: list[dict], min_change_pct: float = DEFAULT_MIN_CHANGE_PCT,
                     alpha: float = significance.ALPHA,
                     metric: series_metric.Metric = series_metric.IMAGES_PER_SEC,
                     recent_runs: int = DEFAULT_RECENT_RUNS
                     ) -> tuple[list[Regression], int, int]:
    """The steps down of every series in `rows` (`search` without the series it cannot
    judge; of `metric` and with `recent_runs`, as `search`).

    Returns:
      (regressions ordered by series and run, the number of series searched, the number of
      series too short for any step: fewer than 2 x min_segment runs).
    """
    return tuple(search(rows, min_change_pct, alpha, metric, recent_runs)[:3])


def summary(regression: Regression) -> dict[str, str]:
    """The fields the command and the page show of a regression, as text, in order:
    configuration, host, first slower run, label, images/sec, change, p, still slower, what
    changed."""
    j = regression.step.judgement
    return {
        **_series_fields(regression.first_slower, regression.hostname, 'first slower run',
                         regression.before, regression.after, regression.metric),
        'change': '%+.1f%%' % (100.0 * regression.metric.change(regression.before,
                                                                 regression.after, j.ratio)),
        'p': '%.2g (level %.2g)' % (j.p_slower, regression.step.level),
        'still slower': 'yes' if regression.still_slower else 'no (recovered later)',
        'what changed': step_notes.what_changed(regression.changes, regression.before,
                                                regression.after),
    }


def _series_fields(first: dict, hostname: str | None, first_key: str, before: list,
                   after: list, metric=series_metric.IMAGES_PER_SEC) -> dict[str, str]:
    """The fields a step's summary opens with: configuration, host, `first_key` (the first
    run after the step, '#12 2026-12-01 02:00:00'), label, the medians' images/sec (or the
    `metric`'s, its label the key: 'latency p99 ms') before -> after with their run counts."""
    return {
        'configuration': records.describe_config(first),
        'host': hostname or '?',
        first_key: '#%d %s' % (first['id'], first['run_utc'][:19].replace('T', ' ')),
        'label': first.get('label') or '-',
        metric.label: metric.moved(before, after),
    }


why_unjudged = step_notes.why_unjudged
unjudged_note = step_notes.unjudged_note


def unjudged_summary(u: Unjudged) -> dict[str, str]:
    """The fields the command shows of a series it cannot judge, as text, in order:
    configuration, host, first run after, label, images/sec, change, p, why, more runs, what
    changed."""
    step = u.step
    if step.too_few_runs:
        p = 'at least 1/%d = %.2g with %d and %d runs, above the level %.2g' % (
            round(1.0 / step.smallest_p), step.smallest_p, len(u.before), len(u.after),
            step.level)
    else:
        p = 'at best %.2g for a %g%% step with %d and %d runs, above the level %s' % (
            step.p_at_change, step.min_change_pct, len(u.before), len(u.after),
            step_notes.level_text(step))
    return {
        **_series_fields(u.first_after, u.hostname, 'first run after', u.before, u.after,
                         u.metric),
        'change': '%+.1f%%' % (100.0 * u.metric.change(u.before, u.after, step.ratio)),
        'p': p,
        'why': why_unjudged(step),
        'more runs': (cnn_util.counted(step.more_runs, 'more run') if step.more_runs is not None
                      else 'no number of runs: ' + step_notes.never_reason(
                          u.before, step.min_change_pct, u.metric)),
        'what changed': step_notes.what_changed(u.changes, u.before, u.after),
    }

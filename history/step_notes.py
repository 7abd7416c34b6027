"""What a step's verdict says beyond its figures (history/regressions.py `summary` and
`unjudged_summary`, the `what changed` and `judgeable after` lines of `tf_cnn_results
regressions`, its --json, the `html` page).

What changed: the flags and environment of the last run before the step against the first
after it (records.changes), and the host load each run recorded (records.run_state: other
processes' share of the run's cores, less its own cluster's tasks, and the hypervisor's
steal). With --include_unclean_runs a series may hold runs that shared the host; where the
runs after a step shared it more than those before, the likely cause is named with its
figures: 'the later runs shared the host more: others used 54-70% of the cores, before
48-50%'. The rule: the median share of the runs after the step exceeds the median of those
before it by at least LOAD_RISE (5 points, the default --min_change: others taking 5% more of
a run's cores can take about 5% of its speed); runs whose load was not measured are left out
of the figures (counted when some were).

Why no number of runs judges a possible step down (regressions.runs_to_reach is None): the
power rule asks whether runs after it all --min_change below the median of the runs before
it could reach the level. Each run before it that already lies below that point counts
against every run after, so however many follow, p stays above a floor (1/6 for one low run
of 3), while the level the series is tested at falls as it grows (regressions
.corrected_level: more splits); runs_to_reach tries up to 1000 more runs. `never_reason`
names those low runs.

Why a possible step down is not judged (`why_unjudged`): too few runs for the test; or runs
before it spread too wide for a step of --min_change to reach the level; or the level itself,
alpha corrected for the splits the test was picked among (history/tarone.py), when a step of
--min_change could have reached alpha but not that level: the correction for a long series'
possible step points is then the cause (--recent_runs bounds their number).
"""

from __future__ import annotations

import statistics

from . import records, series_metric

#: The least rise of the after part's median share (others of the cores, steal of the CPUs'
#: time) over the before part's that a verdict names as a likely cause: 5 points.
LOAD_RISE = 0.05

NOTHING = 'nothing recorded (the same flags and environment)'

# (RunState attribute, what the later runs did more, how the figures read)
_LOADS = (
    ('outside_fraction', 'shared the host more', 'others used %s of the cores, before %s'),
    ('steal_fraction', 'lost more to steal', "the hypervisor took %s of the CPUs' time, "
                                             'before %s'),
)


def _span(values: list[float]) -> str:
    """'54-70%', or '50%' when they round alike."""
    low, high = '%.0f' % (100 * min(values)), '%.0f%%' % (100 * max(values))
    return high if low + '%' == high else '%s-%s' % (low, high)


def load_rise(before: list[dict], after: list[dict]) -> list[str]:
    """How much more load the runs after a step recorded than those before it (the module
    docstring's rule), one text per kind: ['the later runs shared the host more: others used
    54-70% of the cores, before 48-50%', "the later runs lost more to steal: the hypervisor
    took 7-9% of the CPUs' time, before 0% (2 of 3 later runs measured)"] (the measured
    count where some runs had no figure); [] when neither rose by LOAD_RISE, or a side has no
    measured run.

    Args:
      before, after: database rows (store.select_runs; their figures_json holds the load).
    """
    states = [[records.run_state(r) for r in rows] for rows in (before, after)]
    out = []
    for field, more, figures in _LOADS:
        was, now = ([getattr(s, field) for s in side if getattr(s, field) is not None]
                    for side in states)
        if not (was and now and statistics.median(now) - statistics.median(was) >= LOAD_RISE):
            continue
        unmeasured = ['%d of %d %s runs measured' % (len(got), len(rows), when)
                      for got, rows, when in ((now, after, 'later'), (was, before, 'earlier'))
                      if len(got) < len(rows)]
        out.append('the later runs %s: %s%s' % (more, figures % (_span(now), _span(was)),
                                               ' (%s)' % '; '.join(unmeasured)
                                               if unmeasured else ''))
    return out


def what_changed(changes: list[str], before: list[dict], after: list[dict]) -> str:
    """The `what changed` of a step: the flags and environment that changed ('; '-joined
    records.changes of its last run before and first after), then the load the later runs
    recorded more of, 'a likely cause' when nothing else changed ('the same flags and
    environment; the later runs shared the host more: others used 54-70% of the cores, before
    48-50% (a likely cause)'), else 'another possible cause'; NOTHING when neither."""
    load = '; '.join(load_rise(before, after))
    recorded = '; '.join(changes)
    if not load:
        return recorded or NOTHING
    if recorded:
        return '%s; %s (another possible cause)' % (recorded, load)
    return 'the same flags and environment; %s (a likely cause)' % load


def never_reason(before: list[dict], min_change_pct: float,
                 metric: series_metric.Metric = series_metric.IMAGES_PER_SEC) -> str:
    """Why no number of runs after a possible step down judges it (the module docstring):
    '1 of the 3 runs before it (#3) lies more than 5% below their median (1000.0): runs after
    it 5% slower keep p above the level however many follow'; with --min_change=0 the point
    is their median itself; where none lies below it, the runs before it are too few ('2 runs
    before it are too few for any count after them to reach the level'). For a latency (a
    rise is the regression: history/series_metric.py) the runs that count against it lie
    above the median: '... lies more than 5% above their median (10.000): runs after it 5%
    higher keep p ...'.

    Args:
      before: the database rows of the runs before the possible step (their 'id' and the
        metric's column, 'images_per_sec' by default).
      min_change_pct: --min_change, percent (0: any step).
      metric: the figure the series follows (series_metric.METRICS).
    """
    values = [r[metric.column] for r in before]
    median = statistics.median(values)
    sign = 1.0 if metric.higher_is_better else -1.0
    point = median * (1.0 - sign * min_change_pct / 100.0)
    low = ['#%d' % r['id'] for r in before
           if sign * r[metric.column] < sign * point]
    if not low:
        return '%d runs before it are too few for any count after them to reach the level' % (
            len(before))
    side = 'below' if metric.higher_is_better else 'above'
    where = ('more than %g%% %s their median' % (min_change_pct, side) if min_change_pct
             else '%s their median' % side)
    worse = ('%g%% %s' % (min_change_pct, metric.worse) if min_change_pct
             else 'just %s it' % side)
    shown = ('%.1f' if metric.higher_is_better else '%.3f') % median
    return ('%d of the %d runs before it (%s) %s %s (%s): runs after it %s keep p above the '
            'level however many follow' % (len(low), len(before), ', '.join(low),
                                           'lies' if len(low) == 1 else 'lie', where, shown,
                                           worse))


def corrected_cause(step) -> bool:
    """Whether the correction for the possible step points is why a step of --min_change
    could not be caught (`step`: a regressions.Untestable of runs not too few): it could
    have reached the uncorrected level, alpha, not the corrected one."""
    return step.level < step.alpha and step.p_at_change <= step.alpha


def level_text(step) -> str:
    """The level of an Untestable, '0.00014 (0.05 corrected for 360 possible step points)'
    when the correction is why it is not judged (`corrected_cause`), else '0.0071'."""
    if not corrected_cause(step):
        return '%.2g' % step.level
    return '%.2g (%g corrected for %d possible step points)' % (step.level, step.alpha,
                                                               step.splits)


def why_unjudged(step) -> str:
    """Why the test cannot judge a possible step down (`step`: a regressions.Untestable):
    'too few runs for the test'; 'the runs before it spread too wide for the test to catch a
    5% step'; or, when a 5% step could have reached alpha there (`corrected_cause`), 'the
    level corrected for 360 possible step points (0.00014) is too strict to catch a 5% step
    against the spread of the runs before it; at 0.05 it could'."""
    if step.too_few_runs:
        return 'too few runs for the test'
    if corrected_cause(step):
        return ('the level corrected for %d possible step points (%.2g) is too strict to '
                'catch a %g%% step against the spread of the runs before it; at %g it could'
                % (step.splits, step.level, step.min_change_pct, step.alpha))
    return ('the runs before it spread too wide for the test to catch a %g%% step'
            % step.min_change_pct)


def unjudged_note(unjudged: list) -> str:
    """What the series not judged (regressions.Unjudged) have in common, for a summary: 'too
    few runs on a side of a possible step down for the test', 'runs spread too wide before a
    possible step down for the test to catch --min_change', 'a level corrected for many
    possible step points, too strict to catch --min_change at a possible step down', joined
    by 'or' ('step up' for a latency)."""
    def reason(u):
        return ('few' if u.step.too_few_runs else 'level' if corrected_cause(u.step)
                else 'spread')
    reasons = {reason(u) for u in unjudged}
    # A latency's regression is a rise: 'a possible step up' (history/series_metric.py).
    step = unjudged[0].metric.step if unjudged else series_metric.IMAGES_PER_SEC.step
    texts = {'few': 'too few runs on a side of a possible %s for the test' % step,
             'spread': 'runs spread too wide before a possible %s for the test to catch '
                       '--min_change' % step,
             'level': 'a level corrected for many possible step points, too strict to catch '
                      '--min_change at a possible %s' % step}
    return ' or '.join(texts[r] for r in ('few', 'spread', 'level') if r in reasons)

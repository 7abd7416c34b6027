"""The statistics of `tf_cnn_sweep compare` and its regression gate (`--fail_on_slower=PCT`).

For each configuration in both sweeps, the images/sec of A's repeats and of B's are compared by
a one-sided Mann-Whitney U test (metrics/significance.py, scipy.stats.mannwhitneyu):

  slower   B's repeats are lower than A's with p <= 0.05
  faster   B's repeats are higher than A's with p <= 0.05
  same     neither test reaches p <= 0.05: the difference is within the noise
  ?        too few repeats for the test ever to reach p <= 0.05 (2 + 2 repeats: the smallest
           possible p is 1/6): the notes column says so; sweep with --repeats >= 3; or, in a
           gate, `same` where a slowdown of --fail_on_slower could not have been caught (`judge`)

With `--fail_on_slower=PCT`, compare exits 1 (significance.REGRESSION) when a configuration is
`slower` and its B/A ratio of the medians is below 1 - PCT/100, and prints which
configurations failed; 0 when it passed. A gate that could not judge a configuration both
sweeps ran (`?`: too few runs on a side for the test; or no successful, or no clean, run on a
side) exits 3 (significance.NOT_JUDGED: neither a pass nor a regression), its line `gate: NOT
JUDGED: ...` naming each one with its runs per side, unless `--allow_unjudged` (then it passes
on the judged ones and still names them; it needs --fail_on_slower); a gate that judged
nothing exits 3 even so, on one line naming each configuration and why, with what to do. A
regression found beside configurations not judged exits 1 (its line names both).
A CI job keeps a baseline sweep as an artifact and runs the same sweep, then the compare, as
its gate (docs/campaigns.md: "A regression gate in CI").
"""

from __future__ import annotations

# Absolute: `python -m tools.sweep` in a checkout makes `tools` a top-level package (see
# cli.unknown_model); the statistics sit with the lifecycle, which --baseline uses too.
from tf_cnn_benchmarks import cnn_util
from tf_cnn_benchmarks.metrics import clean_runs
from tf_cnn_benchmarks.metrics import significance as regression
from tf_cnn_benchmarks.params import gate_tolerance

from .. import command_parser
from . import results

OPTION = '--fail_on_slower'
INCLUDE = clean_runs.INCLUDE_FLAG  # keep runs that shared the host or stopped early
ALLOW_UNJUDGED = '--allow_unjudged'  # pass on the judged configurations, naming the others
JSON = '--json'  # one JSON object instead of the text


# A sweep does not rerun a run recorded ok in its folder: a clean rerun goes into a new one.
QUIET_RERUN = 'run the sweep again on a quiet host with a new --output_dir and compare that'


class UsageError(ValueError):
    """A bad `compare` argument; the message is the `error:` line's text."""


def parse_args(argv: list[str]) -> tuple[list[str], float | None]:
    """(the sweep paths, the --fail_on_slower percent or None); `parse_options` with
    --include_unclean_runs too.

    Raises:
      UsageError: see parse_options.
    """
    paths, pct = parse_options(argv)[:2]
    return paths, pct


def parse_options(argv: list[str]) -> tuple[list[str], float | None, bool, bool, bool]:
    """(the sweep paths, the --fail_on_slower percent or None, --include_unclean_runs given,
    --allow_unjudged given, --json given).

    The options take the forms of every command's (tools/command_parser.py): the percent
    after '=' or as the next argument (`--fail_on_slower=10`, `--fail_on_slower 10`); a
    boolean as `--NAME`, `--noNAME`, `--NAME=true` or `=false`. A flag given twice takes its
    last value.

    Raises:
      UsageError: a malformed --fail_on_slower (no number, or no value at the end) or one
        outside [0, 100) (params/gate_tolerance.py, the rule of a run's --baseline too), a
        boolean with a value that is no boolean, --allow_unjudged without --fail_on_slower,
        or another option.
    """
    paths, pct = [], None
    switches = {INCLUDE: False, ALLOW_UNJUDGED: False, JSON: False}
    args = iter(argv)
    for arg in args:
        if arg == OPTION or arg.startswith(OPTION + '='):
            if arg == OPTION:  # the space form: the next argument is the value
                text = next(args, None)
                if text is None or text.startswith('--'):
                    raise UsageError('%s needs a number (percent) after it or after =, e.g. '
                                     '%s=5%s' % (OPTION, OPTION, '' if text is None else
                                                 '; the next argument is %s' % text))
            else:
                text = arg.partition('=')[2]
            try:
                pct = float(text)
            except ValueError:
                raise UsageError('%s=%s: takes a number (percent), e.g. %s=5'
                                 % (OPTION, text, OPTION)) from None
            problem = gate_tolerance.problem(pct, text)
            if problem:
                raise UsageError(problem)
            continue
        for switch in switches:
            try:
                value = command_parser.boolean_value(arg, switch[2:])
            except ValueError as e:
                raise UsageError(str(e)) from None
            if value is not None:
                switches[switch] = value
                break
        else:
            if arg.startswith('--'):
                raise UsageError('unknown option %s (compare takes %s=PCT); its other options '
                                 'are %s, %s and %s' % (arg, OPTION, INCLUDE, ALLOW_UNJUDGED,
                                                        JSON))
            paths.append(arg)
    if switches[ALLOW_UNJUDGED] and pct is None:
        raise UsageError('%s needs %s=PCT: it passes the gate on the configurations it judged, '
                         'and without a gate compare only reports' % (ALLOW_UNJUDGED, OPTION))
    return paths, pct, switches[INCLUDE], switches[ALLOW_UNJUDGED], switches[JSON]


#: The start of a `?` reason for a gate's `same` the test could not have told from a slowdown.
WEAK = 'the test could not have caught'


def judge(a: results.Stats, b: results.Stats,
          fail_pct: float | None = None) -> regression.Judgement:
    """B against A over the repeats' images/sec (see the module docstring). A gate's `same`
    passes only where the test could have caught a slowdown of `fail_pct` percent with B's
    repeats against A's (significance.p_at_slowdown <= 0.05, the rule of a run's --baseline,
    metrics/baseline.py); else `?`, its reason naming the p-value at that slowdown and the
    repeats of B that would reach it (significance.samples_to_detect)."""
    j = regression.judge(a.values, b.values, fail_pct)
    if fail_pct is None or j.verdict != 'same':
        return j
    p = regression.p_at_slowdown(a.values, b.n, fail_pct)
    if p <= regression.ALPHA:
        return j
    enough = regression.samples_to_detect(a.values, b.n, fail_pct)
    return j._replace(verdict='?', reason='%s a %g%% slowdown with %d+%d repeats (p=%.3g at '
                      '%g%% slower, A spread %.1f%%): %s' % (
                          WEAK, fail_pct, a.n, b.n, p, fail_pct, 100 * a.noise,
                          'B with %d repeats could' % enough if enough else
                          'no count of B repeats can against this A; repeat A on a quiet host'))


def p_cell(j: regression.Judgement) -> str:
    """The p-value of the test in the direction of the ratio; '-' where it was not computed
    (too few repeats for the test), a `?` of a test that could not have caught the gate's
    slowdown keeps its p-value."""
    if j.p_slower is None or j.p_faster is None:
        return '-'
    return '%.3g' % (j.p_slower if j.ratio <= 1 else j.p_faster)


def notes(j: regression.Judgement, fail_pct: float | None) -> str:
    """Why a verdict is `?`; for a gate, 'FAILED: 50.0% slower (> 5%)' or, for a slower
    configuration within the tolerance, 'within 5%'."""
    if j.verdict == '?':
        return j.reason
    if j.failed:
        return 'FAILED: %.1f%% slower (> %g%%)' % (100 * (1 - j.ratio), fail_pct)
    if fail_pct is not None and j.verdict == 'slower':
        return '%.1f%% slower, within %g%%' % (100 * (1 - j.ratio), fail_pct)
    return ''


def unjudged_advice(why: set) -> str:
    """What to do about configurations the gate could not judge, for the reasons `why` (a
    subset of {'few', 'weak', 'failed', 'left out'}: compare.Comparison.unjudged_why)."""
    steps = []
    if 'weak' in why:
        steps.append('more repeats, or less spread, as the notes say (a quiet host)')
    if 'few' in why:
        steps.append('give each side %d or more successful runs (the same sweep again '
                     'with --repeats=%d or more adds the missing ones)'
                     % ((regression.min_repeats(),) * 2))
    if 'failed' in why:
        steps.append('fix the failed runs and rerun them (--retry_failed)')
    if 'left out' in why:
        steps.append(QUIET_RERUN + ' (%s keeps the unclean ones)' % INCLUDE)
    return ', '.join(steps)


def gate_lines(failed: list[str], fail_pct: float, compared: int, judged: int,
               left_out: list[str] = (), unmeasured: int = 0, unjudged: list[str] = (),
               unjudged_why: set = frozenset(), allow_unjudged: bool = False) -> list[str]:
    """The gate's summary after the table: `compared` configurations in both sweeps, `judged`
    of them with enough repeats for the test (a gate that judged none: `gate: NOT JUDGED`).

    Args:
      left_out: when nothing was compared because a side's every successful run of the
        configurations both sweeps ran was left out as unclean, per such side its count, name
        and reasons ('the 3 matching runs of B (3 shared the host (others used > 25% of the
        cores))', `left_out_parts`): the line then says so and how to keep them.
      unmeasured: runs compared whose host load could not be measured: a passed gate then
        says that a quiet host is not established for them.
      unjudged: the configurations both sweeps ran that could not be judged, each with its
        runs per side and why (compare.Comparison.unjudged); any of them makes the gate NOT
        JUDGED (exit status 3; beside a slower one it FAILED, 1), named, unless
        `allow_unjudged` (a passed or failed line then names them as not judged).
      unjudged_why: their reasons, for the advice (`unjudged_advice`).
    """
    if not compared and left_out:
        return ['gate: NOT JUDGED: nothing was compared: every one of %s was left out as unclean; '
                '%s keeps them, or %s' % (' and of '.join(left_out), INCLUDE, QUIET_RERUN)]
    if not compared:
        return ['gate: NOT JUDGED: nothing was compared (no configuration has successful runs in '
                'both A and B); check that both sweeps ran and that A and B are sweep folders']
    if not judged:  # every one of them is unjudged: one line, the reasons vary
        return ['gate: NOT JUDGED: nothing could be judged: %s. To judge them: %s'
                % ('; '.join(unjudged), unjudged_advice(unjudged_why))]
    total = judged + len(unjudged)
    if unjudged and not allow_unjudged:
        unsure = ('%d of %s could not be judged: %s. To judge them: %s; '
                  'or %s passes the gate on the %d judged'
                  % (len(unjudged), cnn_util.counted(total, 'configuration'),
                     '; '.join(unjudged), unjudged_advice(unjudged_why), ALLOW_UNJUDGED, judged))
    else:
        unsure = ''
    # With --allow_unjudged the configurations not judged are named all the same, on a failed
    # line too (it named them only on a passed one).
    allowed = ('; not judged (%s): %s' % (ALLOW_UNJUDGED, '; '.join(unjudged))
               if unjudged and allow_unjudged else '')
    if failed:
        return ['gate: FAILED: %d of %s slower than A by more than %g%% '
                'beyond the noise: %s%s' % (len(failed), cnn_util.counted(total, 'configuration'),
                                            fail_pct, '; '.join(failed),
                                            '; and ' + unsure if unsure else allowed)]
    if unsure:
        return ['gate: NOT JUDGED: ' + unsure]
    quiet = ('; the host load of %d run%s was not measured: a quiet host is not established'
             % (unmeasured, '' if unmeasured == 1 else 's') if unmeasured else '')
    return ['gate: passed: no configuration of %d slower than A by more than %g%% beyond the '
            'noise%s%s' % (judged, fail_pct, quiet, allowed)]


def exit_status(failed: list, fail_pct: float | None, judged: int, unjudged: list,
                allow_unjudged: bool = False) -> int:
    """The gate's exit status (metrics/significance.py): REGRESSION (1) when a configuration
    failed; NOT_JUDGED (3) when nothing was judged, or a configuration both sweeps ran was not
    and `allow_unjudged` is off; else PASSED (0), as without a gate (`fail_pct` None)."""
    if fail_pct is None:
        return regression.PASSED
    if failed:
        return regression.REGRESSION
    if not judged or (unjudged and not allow_unjudged):
        return regression.NOT_JUDGED
    return regression.PASSED


def left_out_parts(sides: list[tuple[str, list]]) -> list[str]:
    """Per side whose runs were left out: 'the 3 matching runs of B (3 shared the host (others
    used > 25% of the cores))'; the second side's part begins 'the 2 of A'.

    Args:
      sides: (side name, [metrics/clean_runs.RunState of each run of that side left out]).
    """
    parts = []
    for side, states in sides:
        if states:
            parts.append('the %d %sof %s (%s)' % (
                len(states), '' if parts else 'matching runs ', side,
                ', '.join(clean_runs.reason_lines(states))))
    return parts

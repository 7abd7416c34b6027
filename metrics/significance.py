"""Is B slower than A beyond the noise? The statistics of the regression gates.

Used by `tf_cnn_sweep compare A B --fail_on_slower=PCT` (samples: the images/sec of each
configuration's repeats) and by `tf_cnn_benchmarks --baseline=RESULTS.json` (samples: the
per-step images/sec of the stored run and of this one).

The test is scipy's one-sided Mann-Whitney U (`scipy.stats.mannwhitneyu`, exact for small
samples without ties, else the normal approximation): B is called slower when the test of "B's
rates tend to be lower than A's" gives p <= ALPHA (0.05), faster when the opposite test does,
else the same. A gate fails when B is slower by that test *and* the ratio of the medians
(the totals, for --baseline) is below 1 - PCT/100.

The exact test's smallest possible p-value for n_a and n_b samples is 1 / C(n_a + n_b, n_a):
with 2 repeats on each side it is 1/6 = 0.17, so no verdict can be reached (`?`); 3 repeats on
each side reach 1/20 = 0.05. A test that can reach 0.05 may still be unable to see a slowdown
of a given size against a spread-out A: `p_at_slowdown` is the most n_b samples that much
below A's median can show, and --baseline passes a run only when it is <= 0.05 at
--fail_on_slower (`samples_to_detect`: how many would do).

No TensorFlow and no project imports: tools/sweep/gate.py (the sweep's gate) and
metrics/baseline.py (--baseline) share it.
"""

from __future__ import annotations

import math
import statistics
from typing import NamedTuple

ALPHA = 0.05

# The largest integer a float holds has 1024 bits (sys.float_info.max_exp): one more overflows.
_FLOAT_BITS = 1024

# The exit statuses of every regression gate (--baseline, `tf_cnn_sweep compare
# --fail_on_slower`, `tf_cnn_results regressions --fail_on_regression`), one meaning each so
# that a CI job can tell them apart: the gate passed; it found a regression (the gate's
# failure); a usage error (2, every command's); it could judge nothing, or not everything it
# was asked to (a first night's too few runs, a busy host, runs that failed: no verdict is
# not a pass, nor a regression).
PASSED = 0
REGRESSION = 1
USAGE = 2
NOT_JUDGED = 3
DATABASE = 4  # `regressions` only: the results database cannot be used
INTERNAL = 70  # a failure no rule foresaw, a bug (EX_SOFTWARE of sysexits.h): no verdict

#: The gates' verdicts by exit status, as their --json objects name them ('gate': {'verdict'}).
VERDICTS = {PASSED: 'passed', REGRESSION: 'regression', USAGE: 'usage error',
            NOT_JUDGED: 'not judged', DATABASE: 'database error', INTERNAL: 'internal error'}


def refusal_json(message: str, status: int) -> dict:
    """A gate's --json object when it refused to judge (a usage error, a database that
    cannot be used): {'error': the `error:` line's text, 'gate': {'verdict' ('usage error',
    'database error'), 'line': the `error:` line}, 'exit_status'}, so that the file a CI job
    saves from stdout is JSON on every exit status; the `error:` line still goes to stderr.

    Raises:
      KeyError: a status without a verdict (not in VERDICTS).
    """
    return {'error': message, 'gate': {'verdict': VERDICTS[status], 'line': 'error: ' + message},
            'exit_status': status}


class Judgement(NamedTuple):
    """B against A.

    Attributes:
      ratio: median(B) / median(A) (or the given ratio), e.g. 0.85 for 15% slower.
      p_slower: one-sided Mann-Whitney p-value of "B lower than A" (None: too few samples).
      p_faster: the same for "B higher than A".
      verdict: 'slower', 'faster', 'same' or '?'.
      reason: why the verdict is '?' ('' otherwise).
      failed: True when a gate with `fail_pct` fails (slower by the test and by more than
        fail_pct percent).
    """
    ratio: float
    p_slower: float | None
    p_faster: float | None
    verdict: str
    reason: str
    failed: bool


def min_p_value(n_a: int, n_b: int) -> float:
    """The smallest one-sided p-value the exact Mann-Whitney test can give: 1 / C(n_a+n_b, n_a).

    Exact where C fits a float; 0.0, its true limit, where it does not (from about 1,030
    runs when the sides are even: C(1030, 515) > 2**1024, so 1 / C is below every positive
    float but the smallest subnormals; a float division of that integer would raise
    OverflowError).

    Args:
      n_a, n_b: the sample counts (below 1 on either side: 1.0, no test).

    Returns:
      The p-value, in [0, 1].
    """
    if n_a < 1 or n_b < 1:
        return 1.0
    ways = math.comb(n_a + n_b, n_a)
    return 1.0 / ways if ways.bit_length() <= _FLOAT_BITS else 0.0


def min_repeats(alpha: float = ALPHA) -> int:
    """The fewest samples per side (equal sides) for which p <= alpha is possible."""
    n = 1
    while min_p_value(n, n) > alpha:
        n += 1
    return n


def judge(a_values, b_values, fail_pct: float | None = None, *, ratio: float | None = None,
          alpha: float = ALPHA) -> Judgement:
    """Compares the samples of B with those of A (see the module docstring).

    Args:
      a_values, b_values: rates (images/sec; higher is better) of A and of B.
      fail_pct: the gate's tolerance in percent (None: no gate, `failed` is False).
      ratio: B/A to judge the tolerance by (default: the ratio of the medians).
      alpha: the significance level.

    Returns:
      Judgement.

    Raises:
      ValueError: a side has no samples.
    """
    a = [float(v) for v in a_values]
    b = [float(v) for v in b_values]
    if not a or not b:
        raise ValueError('judge needs samples on both sides. Received: %d and %d' % (len(a),
                                                                                   len(b)))
    if ratio is None:
        median_a = statistics.median(a)
        ratio = statistics.median(b) / median_a if median_a else math.inf
    if min_p_value(len(a), len(b)) > alpha:
        reason = ('n=%d+%d: the Mann-Whitney test cannot reach p<=%g with fewer than %d '
                  'repeats per side' % (len(a), len(b), alpha, min_repeats(alpha)))
        return Judgement(ratio, None, None, '?', reason, False)
    from scipy import stats
    if len(set(a + b)) == 1:  # all equal: no difference to test
        p_slower = p_faster = 1.0
    else:
        p_slower = float(stats.mannwhitneyu(b, a, alternative='less').pvalue)
        p_faster = float(stats.mannwhitneyu(b, a, alternative='greater').pvalue)
    verdict = ('slower' if p_slower <= alpha else 'faster' if p_faster <= alpha else 'same')
    failed = (fail_pct is not None and verdict == 'slower'
              and ratio < 1.0 - fail_pct / 100.0)
    return Judgement(ratio, p_slower, p_faster, verdict, '', failed)


def p_at_slowdown(a_values, n_b: int, slowdown_pct: float) -> float:
    """The one-sided p-value of "B lower than A" (`judge`'s test) for a B of `n_b` samples that
    all lie `slowdown_pct` percent below A's median: the strongest evidence a slowdown of that
    size can give with n_b samples against these A. The samples are a hair apart (a relative
    1e-9), as distinct measurements are, so the test is the exact one wherever `judge` would
    use it on real samples. With slowdown_pct 0 (any slowdown), they lie below A's lowest:
    the smallest p-value the test can give with these counts.

    Args:
      a_values: A's rates (images/sec; higher is better), at least one.
      n_b: B's sample count, at least one.
      slowdown_pct: percent below A's median.

    Returns:
      The p-value (1.0 when A's median is not positive).
    """
    from scipy import stats
    a = [float(v) for v in a_values]
    point = statistics.median(a) * (1.0 - slowdown_pct / 100.0) if slowdown_pct else min(a)
    if point <= 0:
        return 1.0
    b = [point * (1.0 - 1e-9 * (i + 1)) for i in range(n_b)]
    return float(stats.mannwhitneyu(b, a, alternative='less').pvalue)


def samples_to_detect(a_values, n_b: int, slowdown_pct: float, alpha: float = ALPHA,
                      most: int = 4096) -> int | None:
    """A count of B samples, above n_b, with which a slowdown of `slowdown_pct` percent could
    reach p <= alpha against these A (`p_at_slowdown`): the smallest up to 16, then the
    first of 32, 64, ... up to `most`; None when none up to `most` can (A's spread is wider
    than the slowdown, or A has too few samples)."""
    counts = list(range(n_b + 1, 17)) + [2 ** k for k in range(5, 64) if 2 ** k <= most]
    return next((n for n in counts if n > n_b and p_at_slowdown(a_values, n, slowdown_pct)
                 <= alpha), None)


def describe(j: Judgement) -> str:
    """'B/A 0.850, Mann-Whitney p=0.012 (slower)' or 'B/A 1.290, ? (n=2+2: ...)'."""
    if j.verdict == '?':
        return 'B/A %.3f, ? (%s)' % (j.ratio, j.reason)
    p = j.p_slower if j.ratio <= 1 else j.p_faster
    return 'B/A %.3f, Mann-Whitney p=%.3g (%s)' % (j.ratio, p, j.verdict)

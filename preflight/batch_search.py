"""The one search for the largest per-device batch that fits: the dry run's report
(preflight/dry_run.py) and the memory check's advice before a run (preflight/memory_check.py)
both call `search_batch` with a probe that builds the graph at a batch and estimates it.
"""

from __future__ import annotations

import math
import time

#: Graph builds the search makes at most (each a build and an estimate: about 1-10 s).
MAX_BUILDS = 8


def _tolerance(lo: int) -> int:
    """How close the bracket must close: 1/32 of the batch found to fit."""
    return max(1, lo // 32)


def narrowed(lo: int, hi: int) -> bool:
    """Whether the bracket (lo fits, hi does not) is as close as the search closes it: within
    1/32 of lo (the docs' promise)."""
    return hi - lo <= _tolerance(lo)


def why_stopped(builds: int, max_builds: int, max_secs: float) -> str:
    """Which budget ended a search that stopped before its answer was found: 'its 8 graph
    builds ran out' when it made `max_builds`, else 'its 60 s ran out after 2 graph builds'
    (the next build would not have finished within `max_secs`)."""
    if builds >= max_builds:
        return 'its %d graph builds ran out' % max_builds
    return 'its %.0f s ran out after %d graph build%s' % (max_secs, builds,
                                                          '' if builds == 1 else 's')


def _crossing(points: dict) -> float | None:
    """The batch where the estimate / memory ratio reaches 1, on the line through the two
    probed points nearest that crossing (memory grows about linearly with the batch: the
    activations per image, plus what does not grow), None without two points or a rising
    line."""
    if len(points) < 2:
        return None
    fits = sorted((b for b, r in points.items() if r <= 1), reverse=True)
    over = sorted(b for b, r in points.items() if r > 1)
    pair = (fits[:1] + over[:1]) if fits and over else sorted(
        points, key=lambda b: abs(points[b] - 1))[:2]
    (b0, r0), (b1, r1) = sorted((b, points[b]) for b in pair)
    if b1 == b0 or r1 <= r0:
        return None
    return b0 + (1.0 - r0) * (b1 - b0) / (r1 - r0)


def _next_guess(lo, hi, guess, points) -> int:
    """The next batch to probe: where the line through the probed ratios crosses 1 (just
    below it, so that a fit and the batch `tolerance` above it close the bracket), else the
    bracket's middle, doubling or halving."""
    crossing = _crossing(points)
    if crossing is not None:
        target = math.floor(crossing)
        if lo is not None and hi is not None:
            tol = _tolerance(lo)
            target = min(max(target, lo + 1), hi - 1)
            if target - lo < tol:  # a miss closes the bracket from above
                target = min(hi - 1, lo + tol)
            elif hi - target <= tol and target > lo + 1:  # a fit closes it from below
                target = max(lo + 1, hi - tol)
            return target
        if lo is not None:
            return max(lo + 1, target)
        return max(1, min(target, hi - 1))
    if lo is not None and hi is not None:
        return (lo + hi) // 2
    if hi is None:
        return max(guess, 2 * lo) if guess <= lo else guess
    return max(1, hi // 2) if guess >= hi else guess


def search_batch(probe, batch: int, ratio: float, deadline: float, limit: int | None = None,
                 max_builds: int = MAX_BUILDS) -> tuple[int | None, int | None, int]:
    """The largest per-device batch whose estimate fits, by graph builds.

    The first guess is extrapolated from `ratio` (estimate / memory at `batch`). A probe that
    returns its ratio (a float; it fits at 1 or less) lets the search aim at the crossing of
    the line through two probed ratios (secant steps: the estimate grows about linearly with
    the batch); a probe that returns only True or False gets doubling or halving until the
    answer is bracketed, then bisection. Either way the search stops when the bracket is
    within 1/32 of the batch (`narrowed`), after `max_builds` builds, or at `deadline`
    (time.monotonic()): the caller says which (`why_stopped`) when the bracket is wider.

    Args:
      probe: batch -> its estimate / memory ratio (float), or True when it fits.
      limit: no batch above this is tried (real-data graphs grow with the batch: their
        per-image ops); when `limit` fits, the answer is (limit, None).

    Returns:
      (largest batch found to fit or None, smallest found not to fit or None, builds).
    """
    lo, hi = (batch, None) if ratio <= 1 else (None, batch)
    guess = max(1, int(batch / ratio)) if ratio > 0 else 2 * batch
    points: dict = {}
    builds = 0
    last = 0.0
    while builds < max_builds and time.monotonic() + last < deadline:
        if limit is not None and lo is not None and lo >= limit:
            break
        if lo is not None and hi is not None and narrowed(lo, hi):
            break
        if hi == 1 and lo is None:
            break
        if builds:
            guess = _next_guess(lo, hi, guess, points)
        elif lo is not None and hi is None:
            guess = max(guess, 2 * lo) if guess <= lo else guess
        elif hi is not None and lo is None:
            guess = max(1, hi // 2) if guess >= hi else guess
        if limit is not None:
            guess = min(guess, limit)
        start = time.monotonic()
        found = probe(guess)
        last = time.monotonic() - start  # the next probe is not started if it cannot finish
        builds += 1
        if isinstance(found, bool):
            fits = found
        else:
            points[guess] = float(found)
            fits = points[guess] <= 1
        if fits:
            lo = guess if lo is None else max(lo, guess)
            guess = 2 * guess if hi is None else (lo + hi) // 2
        else:
            hi = guess if hi is None else min(hi, guess)
            guess = max(1, guess // 2) if lo is None else (lo + hi) // 2
    return lo, hi, builds

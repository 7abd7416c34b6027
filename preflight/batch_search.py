"""The one search for the largest per-device batch that fits: the dry run's report
(preflight/dry_run.py) and the memory check's advice before a run (preflight/memory_check.py)
both call `search_batch` with a probe that builds the graph at a batch and estimates it.
"""

from __future__ import annotations

import time

#: Graph builds the search makes at most (each a build and an estimate: about 1-10 s).
MAX_BUILDS = 8


def search_batch(probe, batch: int, ratio: float, deadline: float, limit: int | None = None,
                 max_builds: int = MAX_BUILDS) -> tuple[int | None, int | None, int]:
    """The largest per-device batch whose estimate fits, by graph builds.

    The first guess is extrapolated from `ratio` (estimate / memory at `batch`); then doubling
    or halving until the answer is bracketed, then bisection to 1/32 of the batch; at most
    `max_builds` builds, until `deadline` (time.monotonic()).

    Args:
      probe: batch -> True when the graph built at that batch fits.
      limit: no batch above this is tried (real-data graphs grow with the batch: their
        per-image ops); when `limit` fits, the answer is (limit, None).

    Returns:
      (largest batch found to fit or None, smallest found not to fit or None, builds).
    """
    lo, hi = (batch, None) if ratio <= 1 else (None, batch)
    guess = max(1, int(batch / ratio)) if ratio > 0 else 2 * batch
    builds = 0
    last = 0.0
    while builds < max_builds and time.monotonic() + last < deadline:
        if limit is not None and lo is not None and lo >= limit:
            break
        if lo is not None and hi is not None:
            if hi - lo <= max(1, lo // 32):
                break
            if not lo < guess < hi:
                guess = (lo + hi) // 2
        elif hi is None:
            guess = max(guess, 2 * lo) if guess <= lo else guess
        else:
            if hi == 1:
                break
            guess = max(1, hi // 2) if guess >= hi else guess
        if limit is not None:
            guess = min(guess, limit)
        start = time.monotonic()
        fits = probe(guess)
        last = time.monotonic() - start  # the next probe is not started if it cannot finish
        builds += 1
        if fits:
            lo = guess
            guess = 2 * guess if hi is None else (lo + hi) // 2
        else:
            hi = guess
            guess = max(1, guess // 2) if lo is None else (lo + hi) // 2
    return lo, hi, builds

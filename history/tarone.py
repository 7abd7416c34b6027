"""Tarone's modified Bonferroni level for a family of exact Mann-Whitney tests: the level the
regression search (history/regressions.py) holds a segment's splits to.

R. E. Tarone, "A modified Bonferroni method for discrete data", Biometrics 46(2), 1990: with K
the smallest number such that at most K of the tests could reach p <= alpha / K at all (their
smallest possible p-value, significance.min_p_value), the tests are held to alpha / K and the
others cannot count; a Bonferroni bound holds for whichever test is picked.
"""

from __future__ import annotations

import bisect
import collections
import itertools

from ..metrics import significance


def corrected_level(sizes: list[tuple[int, int]], alpha: float = significance.ALPHA) -> float:
    """Tarone's level for a family of exact Mann-Whitney tests of (n_before, n_after) samples:
    alpha / K for the smallest K with at most K tests able to reach alpha / K at all."""
    if not sizes:
        return alpha
    counts = collections.Counter(sizes)
    smallest = sorted((significance.min_p_value(a, b), c) for (a, b), c in counts.items())
    values = [p for p, _ in smallest]
    reach = list(itertools.accumulate(c for _, c in smallest))

    def able(k):  # how many tests can reach alpha / k
        i = bisect.bisect_right(values, alpha / k)
        return reach[i - 1] if i else 0

    low, high = 1, len(sizes)  # able(k) - k falls as k grows: the first k where able(k) <= k
    while low < high:
        middle = (low + high) // 2
        if able(middle) <= middle:
            high = middle
        else:
            low = middle + 1
    return alpha / low

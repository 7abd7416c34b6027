"""Pure planning helpers of the gradient all-reduce (no graph ops): how gradients are cut into
packs and groups, the ring schedule, and the device groups of hierarchical all-reduce.

Used by allreduce.py; unit-tested without sessions.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple, Sequence

import tensorflow as tf


class PackPlan(NamedTuple):
    """How some gradients become the pieces that are all-reduced.

    The gradients `indices` are flattened and concatenated in that order into one vector of
    sum(piece_sizes) elements, which is split into pieces of `piece_sizes` elements. A plan with
    one index and one piece stands for the gradient itself, all-reduced in its own shape.
    """

    indices: tuple[int, ...]
    piece_sizes: tuple[int, ...]


def split_sizes(total: int, parts: int) -> list[int]:
    """Splits `total` elements into `parts` near-equal sizes, the larger ones first.

    Example: split_sizes(10, 3) == [4, 3, 3]; split_sizes(2, 3) == [1, 1, 0].
    """
    base, extra = divmod(total, parts)
    return [base + 1] * extra + [base] * (parts - extra)


def make_pack_plans(num_elements: Sequence[int], dtypes: Sequence, num_packs: int
                    ) -> list[PackPlan]:
    """Plans `--gradient_repacking`: all gradients of one dtype concatenated, cut into packs.

    Args:
      num_elements: element count of each gradient.
      dtypes: dtype of each gradient (gradients of different dtypes never share a pack).
      num_packs: packs per dtype (>= 1); fewer when a dtype has fewer elements than that.

    Returns:
      One plan per dtype, in order of first appearance.
    """
    by_dtype: dict = {}
    for j, dtype in enumerate(dtypes):
        by_dtype.setdefault(dtype, []).append(j)
    plans = []
    for indices in by_dtype.values():
        total = sum(num_elements[j] for j in indices)
        plans.append(PackPlan(tuple(indices),
                              tuple(split_sizes(total, max(1, min(num_packs, total))))))
    return plans


def make_small_grad_plans(num_elements: Sequence[int], num_bytes: Sequence[int], dtypes: Sequence,
                          max_bytes: int, max_group: int) -> list[PackPlan]:
    """Plans `--agg_small_grads_max_bytes`: gradients under max_bytes merged in groups.

    Gradients of fewer than `max_bytes` bytes are gathered, in order and per dtype, into groups of
    at most `max_group`; every group becomes one concatenated piece. Other gradients stay alone.

    Returns:
      Plans ordered by their first gradient index.
    """
    plans, open_groups = [], {}
    for j, dtype in enumerate(dtypes):
        if num_bytes[j] >= max_bytes:
            plans.append([j])
            continue
        group = open_groups.get(dtype)
        if group is None or len(group) >= max_group:
            group = open_groups[dtype] = []
            plans.append(group)
        group.append(j)
    return [PackPlan(tuple(g), (sum(num_elements[j] for j in g),)) for g in plans]


def pack_segments(sizes: Sequence[int], piece_sizes: Sequence[int]
                  ) -> list[list[tuple[int, int]]]:
    """Where the concatenation of gradients of `sizes` elements falls in pieces of `piece_sizes`.

    Returns:
      For each piece, its (gradient position k, element count) segments in order; a gradient
      spans consecutive pieces, and a gradient of 0 elements gets one empty segment.
      Example: pack_segments([3, 4], [4, 3]) == [[(0, 3), (1, 1)], [(1, 3)]].
    """
    ends = list(itertools.accumulate(piece_sizes))
    segments: list[list[tuple[int, int]]] = [[] for _ in piece_sizes]
    p, start = 0, 0
    for k, size in enumerate(sizes):
        stop = start + size
        while p < len(ends) - 1 and ends[p] <= start:
            p += 1
        if size == 0:
            segments[p].append((k, 0))
        while start < stop:
            while ends[p] <= start:
                p += 1
            end = min(stop, ends[p])
            segments[p].append((k, end - start))
            start = end
    return segments


def ring_schedule(num_devices: int) -> tuple[list[list[tuple[int, int, int]]],
                                             list[list[tuple[int, int, int]]]]:
    """The transfers of a ring all-reduce over devices 0..n-1, each sending to the next.

    The tensor is cut into n chunks. In reduce-scatter step s, device i sends its partial sum of
    chunk (i - s) mod n to device i+1, which adds its own; after n-1 steps device i holds the full
    sum of chunk (i + 1) mod n. In all-gather step s, device i passes chunk (i + 1 - s) mod n on.

    Returns:
      (reduce_scatter_steps, all_gather_steps): n-1 steps each, every step a list of
      (source, destination, chunk) triples, one per device.
    """
    n = num_devices
    reduce_steps = [[(i, (i + 1) % n, (i - s) % n) for i in range(n)] for s in range(n - 1)]
    gather_steps = [[(i, (i + 1) % n, (i + 1 - s) % n) for i in range(n)] for s in range(n - 1)]
    return reduce_steps, gather_steps


def _task_of(device: str) -> tuple:
    spec = tf.DeviceSpec.from_string(device)
    return (spec.job, spec.replica, spec.task)


def device_groups(devices: Sequence[str]) -> list[list[int]]:
    """Groups device positions for a hierarchical all-reduce.

    One group per host task (job, replica, task) when the devices span several tasks; otherwise
    the first ceil(n/2) devices and the rest (two groups of 4 for 8 devices).
    """
    tasks: dict = {}
    for i, device in enumerate(devices):
        tasks.setdefault(_task_of(device), []).append(i)
    if len(tasks) > 1:
        return list(tasks.values())
    half = (len(devices) + 1) // 2
    return [g for g in (list(range(half)), list(range(half, len(devices)))) if g]

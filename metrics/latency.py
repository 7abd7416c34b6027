"""Per-batch latency percentiles of inference runs (--forward_only and --eval).

Each timed step of a forward-only run (each batch of an evaluation) is one latency sample: the
wall time of its session.run, in milliseconds. The percentiles are numpy's default (linear
interpolation between the closest ranks), over the timed steps only (warm-up excluded). A first
sample that carries the session's set-up (an evaluation's first batch; the first timed step of a
forward-only run with --num_warmup_batches=0) is left out too, and the line says so; when it is
the only one there is no figure (set_up_only_line). With --batch_size=1 they are the usual
per-image latency.
"""

from __future__ import annotations

import numpy as np

PERCENTILES = (50, 90, 99)
#: The fewest timed batches the percentiles are given for.
MIN_SAMPLES = 2


def latency_ms(step_times, batch_size: int, *, first_sets_up: bool = False) -> dict | None:
    """Percentiles of per-batch latency.

    Args:
      step_times: wall seconds of each timed step (batch).
      batch_size: images per step over all devices (the batch the latency is of).
      first_sets_up: the first time carries the session's set-up (kernels chosen, memory
        allocated): left out (a user's trial: p90 33.47 ms with it, 2.48 ms without).

    Returns:
      {'p50', 'p90', 'p99' (milliseconds; None with fewer than MIN_SAMPLES steps: percentiles
      of one value would pass it off as a distribution), 'mean' (ms: with one step, its
      time), 'count' (steps), 'batch_size', 'set_up_left_out' (`first_sets_up`: whether the
      first time was left out; always there, a bool)}, or None without steps (with
      first_sets_up: without a step after the first).
    """
    times = np.asarray([t for t in step_times or [] if t is not None], dtype=np.float64) * 1e3
    if first_sets_up:
        times = times[1:]
    if times.size == 0:
        return None
    out = {'p%d' % q: float(np.percentile(times, q)) if times.size >= MIN_SAMPLES else None
           for q in PERCENTILES}
    out.update({'mean': float(times.mean()), 'count': int(times.size),
                'batch_size': int(batch_size), 'set_up_left_out': bool(first_sets_up)})
    return out


def set_up_only_line(batch_size: int, more: str) -> str:
    """The latency line when the only timed batch was the set-up one (latency_ms gave None):
    'latency per batch of 8 (ms): no figure: the only batch is the first (set-up) batch, left
    out; --num_eval_batches=2 or more gives one' (`more`: the flags that give a figure)."""
    return ('latency per batch of %d (ms): no figure: the only batch is the first (set-up) '
            'batch, left out; %s gives one' % (batch_size, more))


def format_latency(lat: dict) -> str:
    """'latency per batch of 16 (ms): p50 12.31, p90 13.05, p99 14.00 over 100 batches', then
    ' after the first (set-up) batch' when lat['set_up_left_out'] (an evaluation's); with
    fewer than MIN_SAMPLES batches the one time, without percentiles: 'latency per batch of
    2 (ms): 2.62, 1 batch after the first (set-up) batch: too few for percentiles'."""
    after = ' after the first (set-up) batch' if lat.get('set_up_left_out') else ''
    if lat['p50'] is None:
        return 'latency per batch of %d (ms): %.2f, %d batch%s%s: too few for percentiles' % (
            lat['batch_size'], lat['mean'], lat['count'], '' if lat['count'] == 1 else 'es',
            after)
    return 'latency per batch of %d (ms): p50 %.2f, p90 %.2f, p99 %.2f over %d batch%s%s' % (
        lat['batch_size'], lat['p50'], lat['p90'], lat['p99'], lat['count'],
        '' if lat['count'] == 1 else 'es', after)

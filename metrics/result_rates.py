"""The one rule for a results JSON's images/sec figures, for every reader that trusts them: the
--baseline gate (metrics/baseline.py load, before TensorFlow loads) and `tf_cnn_results
ingest` (history/records.py from_result).

A result's 'images_per_sec' (its total: images of the timed steps over the wall seconds of the
timed loop, lifecycle/training_loop.py) is a finite number above 0; its per-step records
('steps': images/sec of each timed step) are too, or null (a step of no measurable time);
and the total is no faster than its fastest step allows. The timed loop's seconds hold every
timed step's, so one process's total cannot exceed its fastest step's rate; a cluster's
worker may count every worker's steps (the cluster's rate as it sees it), so its bound is the
fastest step times the workers. A total
above that bound contradicts the steps the gate's test reads (Mann-Whitney over the steps):
the file was edited or damaged.

No TensorFlow and no project imports: plain dicts in, text out.
"""

from __future__ import annotations

import json
import math

# Float rounding between a run's total and its steps' rates: 1%.
_ROUNDING = 1.01
# The least share of its slowest step's rate a run's total can be (the loop's moments between
# its steps are a few percent of a step at most)...
_SLOWEST_SHARE = 0.75
# ... plus those moments themselves, for steps of a millisecond or less, where the loop's
# Python between two steps (its hooks, the step line) is as long as a step: 5 ms a step, far
# beyond them (a trivial model's 2-step run at 4,931 images/sec, steps of 0.8 ms, was
# refused by the 0.75 alone).
_LOOP_SECS = 0.005


def figure(value) -> float | None:
    """A positive finite number (int or float, not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value > 0 else None


def problem(result: dict) -> str | None:
    """What is wrong with a result's images/sec figures, or None when nothing is.

    Args:
      result: a run's result dict (its results JSON).

    Returns:
      None, or a phrase to follow the file's name: 'its images_per_sec is "fast", not a
      positive finite number', 'its step 3's images_per_sec is null, ...', 'its
      images_per_sec (5000.00) is above its fastest step's (560.40 images/sec): ...'.
    """
    total = figure(result.get('images_per_sec'))
    if total is None:
        return ('its images_per_sec is %s, not a positive finite number'
                % json.dumps(result.get('images_per_sec'), allow_nan=True))
    steps = result.get('steps')
    if not isinstance(steps, list):
        return None
    rates = []
    for i, step in enumerate(steps):
        value = step.get('images_per_sec') if isinstance(step, dict) else step
        if value is None and isinstance(step, dict):
            continue  # a step of no measurable time (lifecycle/results_log.py step_records)
        rate = figure(value)
        if rate is None:
            return ("its step %d's images_per_sec is %s, not a positive finite number"
                    % (i + 1, json.dumps(value, allow_nan=True)))
        rates.append(rate)
    workers = result.get('num_workers')
    workers = workers if isinstance(workers, int) and workers > 1 else 1
    if rates and total > max(rates) * workers * _ROUNDING:
        return ('its images_per_sec (%s) is above what its steps allow (its fastest step: '
                '%s images/sec%s), so its figures contradict each other'
                % (_rate(total), _rate(max(rates)),
                   ', times its %d workers' % workers if workers > 1 else ''))
    # The timed loop's seconds are its steps' and little more: its total is at least its
    # slowest step's rate, less the loop's own moments between steps (a quarter and 5 ms a
    # step are far beyond them); a cluster worker's steps count the global batch, its total
    # its own.
    floor = _floor(min(rates), workers, result.get('global_batch_size')) if rates else 0.0
    if total < floor:
        return ('its images_per_sec (%s) is below what its steps allow (%s: %g of its slowest '
                'step\'s %s images/sec%s%s), so its figures contradict each other'
                % (_rate(total), _rate(floor), _SLOWEST_SHARE, _rate(min(rates)),
                   ', %g ms a step for the loop' % (_LOOP_SECS * 1e3)
                   if _batch(result.get('global_batch_size')) else '',
                   ', over its %d workers' % workers if workers > 1 else ''))
    return None


def _batch(value) -> int | None:
    """A result's global_batch_size when it is a positive int, else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _floor(slowest: float, workers: int, global_batch) -> float:
    """The least total images/sec a run whose slowest step ran at `slowest` images/sec can have:
    that step's seconds (the global batch over its rate) over _SLOWEST_SHARE, plus _LOOP_SECS,
    for each step, counting the worker's own share of the batch; without a global batch
    (an older file), `slowest` times _SLOWEST_SHARE over the workers."""
    batch = _batch(global_batch)
    if batch is None:
        return slowest * _SLOWEST_SHARE / workers
    return batch / workers / (batch / slowest / _SLOWEST_SHARE + _LOOP_SECS)


def _rate(value: float) -> str:
    """images/sec as the run printed it (%.2f), or in 3 significant digits where that would
    be unreadable (1e+300, 1e-300 in an edited file)."""
    return '%.2f' % value if 0.01 <= value < 1e9 else '%.3g' % value

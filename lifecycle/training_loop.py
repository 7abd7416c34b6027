"""The timed loop: warm-up steps, timed steps, the step lines and the final images/sec.

Output follows the original tf_cnn_benchmarks so existing log parsers keep working:

    Step\tImg/sec\ttotal_loss
    1\timages/sec: 212.3 +/- 0.0 (jitter = 0.0)\t7.105
    10\timages/sec: 210.8 +/- 1.2 (jitter = 2.0)\t7.088
    ----------------------------------------------------------------
    total images/sec: 210.52
    ----------------------------------------------------------------

A step line is printed after timed step 1 and every --display_every steps; its numbers are those
of `cnn_util.ImageRateStats` over the timed steps so far. `total images/sec` is the images of all
timed steps divided by the wall time of the whole timed loop (bookkeeping included), less the
time the run hooks spend between steps on checkpoints, summaries and evaluations during training
(a line before the total says how much, when it is more than 1%).
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Callable

from .. import cnn_util

DASHES = '-' * 64


class NonFiniteLossError(cnn_util.BenchmarkError):
    """The loss became NaN or Inf; the run is invalid."""


@dataclasses.dataclass
class LoopResult:
    """What the timed loop measured.

    Attributes:
      images_per_sec: images of the timed steps / wall seconds of the timed loop.
      step_times: wall seconds of each timed step.
      losses: loss of each timed step (None entries in forward-only runs).
      warmup_losses: loss of each warm-up step.
      extras: per timed step, the extra values the step function returned (e.g. accuracy).
      num_steps: timed steps run (fewer than asked when stopped early).
      elapsed_secs: wall seconds of the timed loop, without hook_secs.
      hook_secs: wall seconds spent in `after_step` and `should_stop` between timed steps
        (checkpoints, summaries, evaluations during training).
      stopped_early: True when `should_stop` ended the loop.
    """

    images_per_sec: float = 0.0
    step_times: list = dataclasses.field(default_factory=list)
    losses: list = dataclasses.field(default_factory=list)
    warmup_losses: list = dataclasses.field(default_factory=list)
    extras: list = dataclasses.field(default_factory=list)
    num_steps: int = 0
    elapsed_secs: float = 0.0
    hook_secs: float = 0.0
    stopped_early: bool = False


def _check_finite(loss, step, lr_fn, hint):
    if loss is not None and not math.isfinite(loss):
        lr = lr_fn() if lr_fn else None
        raise NonFiniteLossError(
            'the loss became %s at %s%s; the run is invalid and no images/sec are reported. '
            'Lower --init_learning_rate%s.' % (
                loss, step, ' (learning rate %g)' % lr if lr is not None else '', hint))


def run_loop(step_fn: Callable[[], tuple], *, num_warmup: int, num_steps: int,
             images_per_step: int, display_every: int, show_loss: bool = True,
             learning_rate_fn: Callable[[], float] | None = None,
             nan_hint: str = '',
             should_stop: Callable[[], bool] | None = None,
             after_step: Callable[[int, float], None] | None = None,
             extra_format: Callable[[tuple], str] | None = None,
             extra_columns: tuple[str, ...] = (),
             loss_name: str = 'total_loss', ewma_alpha: float | None = None,
             sample_step: Callable[[], tuple] | None = None,
             total_lines: Callable[[LoopResult], list[str]] | None = None,
             log: Callable[[str], None] = cnn_util.log_fn) -> LoopResult:
    """Runs warm-up steps, then times `num_steps` steps and prints the step lines.

    Args:
      step_fn: runs one step; returns (loss, *extras) with loss a Python float or None.
      num_warmup: untimed steps run first.
      num_steps: timed steps.
      images_per_step: images one step processes over all devices and workers.
      display_every: print a step line every this many timed steps (and after step 1).
      show_loss: False prints step lines without the loss column (forward-only).
      learning_rate_fn: returns the current learning rate, for the NaN message.
      nan_hint: appended to the NaN message's advice, e.g. ' or use loss scaling (...)'.
      should_stop: checked after every timed step; True ends the loop early (signals, target
        accuracy reached).
      after_step: called with (timed step number, loss) after each timed step (checkpoints, eval).
      extra_format: formats a step's extras for the step line (training accuracy columns).
      extra_columns: header names of those columns, e.g. ('top_1_accuracy', 'top_5_accuracy').
      loss_name: header of the loss column (--loss_type_to_report: total_loss or base_loss).
      ewma_alpha: --display_perf_ewma: the step lines' mean images/sec as an exponentially
        weighted moving average (cnn_util.ImageRateStats); the total is unchanged.
      sample_step: runs the last warm-up step instead of `step_fn` (a traced step: see
        metrics/utilisation.py); never a timed one.
      total_lines: lines printed after `total images/sec` inside the total block.

    Returns:
      LoopResult.

    Raises:
      NonFiniteLossError: a loss was NaN or Inf.
    """
    result = LoopResult()
    if num_warmup:
        log('Running warm up')
        for step in range(num_warmup):
            out = (sample_step if sample_step and step == num_warmup - 1 else step_fn)()
            _check_finite(out[0], 'warm-up step %d' % (step + 1), learning_rate_fn, nan_hint)
            result.warmup_losses.append(out[0])
        log('Done warm up')
    log('\t'.join(('Step', 'Img/sec') + ((loss_name,) if show_loss else ()) + extra_columns))
    stats = cnn_util.ImageRateStats(images_per_step, ewma_alpha)
    clock = time.perf_counter
    loop_start = clock()
    for step in range(1, num_steps + 1):
        start = clock()
        out = step_fn()
        seconds = clock() - start
        stats.add(seconds)
        loss = out[0]
        _check_finite(loss, 'step %d' % step, learning_rate_fn, nan_hint)
        result.losses.append(loss)
        if len(out) > 1:
            result.extras.append(out[1:])
        result.num_steps = step
        if step == 1 or step % display_every == 0:
            extra = extra_format(out[1:]) if extra_format else ''
            log(cnn_util.format_step_line(step, stats, loss if show_loss else None, extra))
        hooks_start = clock()
        if after_step is not None:
            after_step(step, loss)
        stop = should_stop is not None and should_stop()
        result.hook_secs += clock() - hooks_start
        if stop:
            result.stopped_early = True
            break
    result.elapsed_secs = clock() - loop_start - result.hook_secs
    result.step_times = stats.step_times
    result.images_per_sec = (images_per_step * result.num_steps / result.elapsed_secs
                             if result.num_steps else 0.0)
    if result.hook_secs > 0.01 * result.elapsed_secs and result.hook_secs > 0.1:
        log('%.1f s between steps went to checkpoints, summaries and evaluations (not counted '
            'in total images/sec)' % result.hook_secs)
    log(DASHES)
    log('total images/sec: %.2f' % result.images_per_sec)
    for line in (total_lines(result) if total_lines else ()):
        log(line)
    log(DASHES)
    return result

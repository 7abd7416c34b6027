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
(a line before the total says how much, when it is more than 1%). The timed loop ends with the
last timed step: the hooks' work after it (a checkpoint, summary or the final evaluation due
there) is after the timed part, neither in the total nor in that line (LoopResult
after_last_secs). A cluster worker's line
keeps the original's meaning, the cluster's rate as this worker sees it, and its own figure
follows it (cluster/coordination.py, ClusterStatsHook.total_figure).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import time
from typing import Callable

from .. import cnn_util
from .. import params as params_lib
from .phase_runner import PhaseRunner

DASHES = '-' * 64
#: Why a run (or a cluster's worker) has no images/sec: the stop came before its first timed
#: step finished, in the warm-up or at the first timed step (a cluster's chief stopping).
#: The total line says it, and the chief's line for such a worker (cluster/coordination.py).
NOTHING_TIMED = 'nothing timed: stopped before the first timed step'
# The reference a --weight_decay is measured against when the NaN message weighs it with the
# learning rate (decay_advice): the table's default.
DEFAULT_WEIGHT_DECAY = params_lib.SPEC_BY_NAME['weight_decay'].default


class NonFiniteLossError(cnn_util.BenchmarkError):
    """The loss became NaN or Inf; the run is invalid.

    Attributes:
      result: None when raised by the loop itself (LoopSpec.stop_on_nonfinite False); raised
        by a run that stopped on it and wrote its reports (phase_runner.PhaseRunner.run), that
        run's result dict (its 'stopped_by_error' says which loss at which step).
    """

    result: dict | None = None


@dataclasses.dataclass
class LoopResult:
    """What the timed loop measured.

    Attributes:
      images_per_sec: images of the timed steps / wall seconds of the timed loop.
      step_times: wall seconds of each timed step.
      losses: loss of each timed step, as its line prints it (None where the step function
        gives none).
      warmup_losses: loss of each warm-up step.
      extras: per timed step, the extra values the step function returned (e.g. accuracy).
      num_steps: timed steps run (fewer than asked when stopped early).
      elapsed_secs: wall seconds of the timed loop, from the first timed step's start to the
        last one's end (its step line included), without hook_secs.
      hook_secs: wall seconds spent in `after_step` and `should_stop` between timed steps
        (checkpoints, summaries, evaluations during training), each followed by another
        timed step.
      after_last_secs: wall seconds spent in `after_step` and `should_stop` after the last
        timed step (a checkpoint or summary due there, the final evaluation): after the timed
        part, in neither elapsed_secs nor hook_secs.
      stopped_early: True when `should_stop` ended the loop before its last step, or a step's
        cnn_util.StopRequested (a cluster's chief stopped; that step is not counted). A stop
        asked for after the last step (a signal during it) ends nothing early.
      stopped_in_warmup: True when `should_stop` (a signal) ended the warm-up, or the work at
        its end (`before_timed`: an evaluation due there), or a non-finite loss of a warm-up
        step did (`error`): no step was timed, and images_per_sec is no measurement (0.0).
      error: the NonFiniteLossError that stopped the loop (LoopSpec.stop_on_nonfinite), its
        step neither timed nor handed to `after_step`; None otherwise. The loop's caller
        raises it once the reports are written (phase_runner.PhaseRunner.run).
      stopped_by_error: with `error`, what stopped the loop, as result['stopped_by_error']
        says it: 'the non-finite loss (nan) at step 3', '... at warm-up step 2'.

    `nothing_timed` holds for those and for a loop stopped at its first timed step (a
    cluster's chief stopped): no images/sec either.
    """

    images_per_sec: float = 0.0
    step_times: list = dataclasses.field(default_factory=list)
    losses: list = dataclasses.field(default_factory=list)
    warmup_losses: list = dataclasses.field(default_factory=list)
    extras: list = dataclasses.field(default_factory=list)
    num_steps: int = 0
    elapsed_secs: float = 0.0
    hook_secs: float = 0.0
    after_last_secs: float = 0.0
    stopped_early: bool = False
    stopped_in_warmup: bool = False
    error: NonFiniteLossError | None = None
    stopped_by_error: str | None = None

    @property
    def nothing_timed(self) -> bool:
        """No timed step finished: images_per_sec (0.0) is no measurement."""
        return self.num_steps == 0


@dataclasses.dataclass(frozen=True)
class LoopSpec:
    """What the timed loop runs and shows (made from a run plan by timed_run.loop_spec).

    Attributes:
      num_warmup: untimed steps run first.
      num_steps: timed steps.
      images_per_step: images one step processes over all devices and workers.
      display_every: a step line every this many timed steps (and after step 1).
      show_loss: False prints step lines without the loss column (a step function that
        gives no loss).
      check_loss: False: a non-finite loss stops nothing (forward-only: nothing is trained).
      stop_on_nonfinite: how a non-finite loss stops the loop: False raises
        NonFiniteLossError at once (the hooks then get `abort`: a cluster's worker, whose
        peers learn of the failure so); True ends the loop before that step as a signal
        would after it (the steps before it kept: their total block, or none when no timed
        step finished), with LoopResult.error set, for the caller to write the reports and
        then raise it (one host's run: timed_run.loop_spec).
      loss_name: header of the loss column (--loss_type_to_report: total_loss or base_loss).
      extra_columns: header names of the columns of a step's extra values, e.g.
        ('top_1_accuracy', 'top_5_accuracy'); each printed as %.3f.
      ewma_alpha: --display_perf_ewma: the step lines' mean images/sec as an exponentially
        weighted moving average (cnn_util.ImageRateStats); the total is unchanged.
      rate_advice: the NaN message's advice on the learning rate, naming the flag the rate
        came from (timed_run.rate_advice), e.g. 'Lower --resnet_base_lr'.
      nan_hint: appended to the NaN message's advice, e.g. ' or use loss scaling (...)'.
      weight_decay: --weight_decay of a training run (0: none), named by the NaN message when
        its term dominates the loss (decay_advice).
      rate_floor: --minimum_learning_rate of a training run (0: none); when the rate of the
        NaN step is at that floor, the message names it instead of `rate_advice` (lowering
        the schedule's rates would not lower it).
      default_rate: the model's default learning rate at this run's batch (its catalogue
        rate scaled linearly with the batch), the reference decay_advice measures the rate of
        the NaN step against; 0: unknown.
      left_out: the work between steps the timed part's estimate leaves out, e.g. 'summaries
        every step and checkpoints every 50 steps' (timed_run.left_out_of_estimate); the
        estimate's line adds it (`left_out_text`); '': none scheduled.
    """

    num_warmup: int
    num_steps: int
    images_per_step: int
    display_every: int
    show_loss: bool = True
    check_loss: bool = True
    stop_on_nonfinite: bool = False
    loss_name: str = 'total_loss'
    extra_columns: tuple[str, ...] = ()
    ewma_alpha: float | None = None
    rate_advice: str = 'Lower --init_learning_rate'
    nan_hint: str = ''
    weight_decay: float = 0.0
    rate_floor: float = 0.0
    default_rate: float = 0.0
    left_out: str = ''

    def left_out_text(self) -> str:
        """', plus summaries every step and checkpoints every 50 steps (not in the
        estimate)', the end of the timed part's estimate line; '' when nothing is left out."""
        return ', plus %s (not in the estimate)' % self.left_out if self.left_out else ''

    def rate_lowering(self, learning_rate: float | None) -> str:
        """'Lower FLAG' for the flag the rate at `learning_rate` (None: unknown) came from:
        --minimum_learning_rate when the rate was at that floor, else `rate_advice`."""
        if (learning_rate is not None and self.rate_floor > 0
                and learning_rate <= self.rate_floor * (1 + 1e-6)):
            return 'Lower --minimum_learning_rate (the rate was at its floor, %g)' % self.rate_floor
        return self.rate_advice

    def nan_advice(self, learning_rate: float | None) -> str:
        """The NaN message's advice on the rate at `learning_rate` (None: unknown)."""
        return self.rate_lowering(learning_rate) + self.nan_hint


def decay_advice(parts: list[tuple[float, float]], weight_decay: float,
                 learning_rate: float | None = None, *, default_rate: float = 0.0,
                 rate_lowering: str = 'Lower --init_learning_rate') -> str | None:
    """The NaN message's advice when the weight-decay term dominates the loss, else None.

    The decay term is weight_decay * 0.5 * sum(w^2) over the kernels and biases (every trainable
    variable outside batch norm, graph/tower.py); plain SGD's update multiplies each of them by
    (1 - learning_rate * weight_decay) besides the gradient's step, so past learning_rate *
    weight_decay = 2 they grow every step
    whatever the data, and the loss with them. Either factor can be what blew up: the advice
    names first the one further above its reference, the learning rate against the model's
    default at this batch (`default_rate`), --weight_decay against its default
    (DEFAULT_WEIGHT_DECAY); a tie, or an unknown rate or reference, names --weight_decay.

    Args:
      parts: (cross entropy, weight-decay term) of the last steps, oldest first, the failing
        step last (Step.loss_parts).
      weight_decay: --weight_decay.
      learning_rate: the learning rate at the failing step, if known.
      default_rate: the model's default learning rate at this batch (LoopSpec.default_rate);
        0: unknown.
      rate_lowering: the advice that lowers the rate (LoopSpec.rate_lowering), e.g. 'Lower
        --init_learning_rate'.

    Returns:
      'The weight-decay term dominates the loss (...): lower --weight_decay (...)', or '...
      because the learning rate is too high (...): lower --init_learning_rate; ...', when, at
      the failing step, the term is not finite while the cross entropy is, or it is larger
      than the cross entropy there or at the step before; None otherwise.
    """
    if not weight_decay or not parts:
        return None
    base, decay = parts[-1]
    if math.isfinite(base) and not math.isfinite(decay):
        where = '%s against a cross entropy of %.4g' % (decay, base)
    else:
        finite = [(b, d) for b, d in parts if math.isfinite(b) and math.isfinite(d)]
        if not finite or finite[-1][1] <= abs(finite[-1][0]):
            return None
        base, decay = finite[-1]
        where = '%.4g against a cross entropy of %.4g%s' % (
            decay, base, ' the step before' if finite[-1] != parts[-1] else '')
    product = ('; here %.4g' % (weight_decay * learning_rate)) if learning_rate else ''
    if (learning_rate and default_rate > 0
            and learning_rate / default_rate > weight_decay / DEFAULT_WEIGHT_DECAY):
        return ('The weight-decay term dominates the loss (%s) because the learning rate is too '
                'high (%g, %.3g x the model\'s default at this batch, %g): %s%s; an SGD update '
                'takes the learning rate x --weight_decay (%g) of each kernel and bias off it, and '
                'past 2 they grow every step%s.' % (
                    where, learning_rate, learning_rate / default_rate, default_rate,
                    rate_lowering[:1].lower(), rate_lowering[1:], weight_decay, product))
    return ('The weight-decay term dominates the loss (%s): lower --weight_decay (%g now; an SGD '
            'update takes --weight_decay x the learning rate of each kernel and bias off it, and '
            'past 2 they grow every step%s).' % (where, weight_decay, product))


def _check_finite(loss, step, lr_fn, spec: LoopSpec, parts_fn, result: LoopResult,
                  timed_before: int = 0) -> bool:
    """True when `loss` stops the loop (a non-finite loss with spec.check_loss): its
    NonFiniteLossError is raised at once, or, with spec.stop_on_nonfinite, kept in
    result.error (and result.stopped_by_error) for the caller to raise after the reports;
    `timed_before`: the timed steps that finished before it (the error line says they are
    reported)."""
    if not spec.check_loss or loss is None or math.isfinite(loss):
        return False
    lr = lr_fn() if lr_fn else None
    advice = decay_advice(parts_fn() if parts_fn else [], spec.weight_decay, lr,
                          default_rate=spec.default_rate,
                          rate_lowering=spec.rate_lowering(lr))
    # A loop that stops on it in the timed part reports the timed steps before it (marked
    # partial); in the warm-up, or raising at once (a cluster worker's), it reports none.
    verdict = ('only the timed steps before it are reported, as a partial run'
               if spec.stop_on_nonfinite and timed_before else
               'no images/sec are reported')
    error = NonFiniteLossError(
        'the loss became %s at %s%s; the run is invalid and %s. %s'
        % (loss, step, ' (learning rate %g)' % lr if lr is not None else '', verdict,
           advice or '%s.' % spec.nan_advice(lr)))
    if not spec.stop_on_nonfinite:
        raise error
    result.error = error
    result.stopped_by_error = 'the non-finite loss (%s) at %s' % (loss, step)
    result.stopped_early = True
    return True


#: A step's or batch's time as the estimate lines give it (written once, in cnn_util).
format_step_secs = cnn_util.format_step_secs


def format_duration(seconds: float) -> str:
    """0.4 -> '0.4 s', 75 -> '1 min 15 s', 4000 -> '1 h 7 min'; below what rounds to
    0.1 s as `format_step_secs` (0.074 -> '74.0 ms', 0.0035 -> '3.50 ms'), not '0.1 s' or
    '0.0 s'; rounded before the unit is chosen (59.6 -> '1 min 0 s', 3599.6 -> '1 h 0 min',
    not '60 s' or '60 min 0 s')."""
    if seconds < 0.095:
        return format_step_secs(seconds)
    if seconds < 9.95:
        return '%.1f s' % seconds
    whole = int(round(seconds))
    if whole < 60:
        return '%d s' % whole
    if whole < 3600:
        return '%d min %d s' % divmod(whole, 60)
    return '%d h %d min' % divmod(int(round(seconds / 60)), 60)


def timed_part_line(steps: int, step_secs: float, warmup_steps: int) -> str:
    """'Timed part: 100 steps after 5 warm-up steps, about 3 min 20 s (2.00 s a step in the
    warm-up)': what the timed loop will take, its steps x the measured step time (the median
    warm-up step after the first; hooks' work not counted), after the warm-up steps run
    (`warmup_steps`, --num_warmup_batches or its default: 5 on a CPU here, 10 in the
    original)."""
    return 'Timed part: %d step%s after %d warm-up steps, about %s (%s a step in the ' \
        'warm-up)' % (steps, '' if steps == 1 else 's', warmup_steps,
                      format_duration(steps * step_secs), format_step_secs(step_secs))


def set_up_bound_line(steps: int, step_secs: float) -> str:
    """'Timed part: 80 steps, at most 22 s (270 ms the only warm-up step, set-up included)':
    the timed part's bound from a warm-up of one step, which also set up the executor (the
    steps after it are usually much faster: the first timed step's line follows,
    `rest_line`)."""
    return 'Timed part: %d step%s, at most %s (%s the only warm-up step, set-up included)' % (
        steps, '' if steps == 1 else 's', format_duration(steps * step_secs),
        format_step_secs(step_secs))


def rest_line(count: int, first_secs: float, unit: str = 'step',
              units: str = 'steps', set_up: bool = True, set_up_secs: float | None = None
              ) -> str:
    """'Timed part: 99 more steps, about 3 min 18 s (2.00 s the first step, set-up included)':
    what the rest of a timed part will take, from its first step's time: without warm-up an
    over-estimate (the first step also sets up the executor); after a warm-up of one step
    (`set_up` False: 'Timed part: 79 more steps, about 1.5 s (19.0 ms the first timed step)'),
    a step without set-up; from the second step of a run without warm-up (`set_up_secs`, the
    first step's time; `count` the steps after the first, as a forward-only run's latency line
    and an evaluation's Timed part count them: 'Timed part: 99 steps after the first, about
    1.6 s (16.3 ms the second step; the first took 310 ms, set-up included)')."""
    if set_up_secs is not None:  # `count` after the first: those the latency line covers
        return 'Timed part: %d %s after the first, about %s (%s the second %s; the first ' \
            'took %s, set-up included)' % (count, unit if count == 1 else units,
                                           format_duration(count * first_secs),
                                           format_step_secs(first_secs), unit,
                                           format_step_secs(set_up_secs))
    if not set_up:
        return 'Timed part: %d more %s, about %s (%s the first timed %s)' % (
            count, unit if count == 1 else units, format_duration(count * first_secs),
            format_step_secs(first_secs), unit)
    return 'Timed part: %d more %s, about %s (%s the first %s, set-up included)' % (
        count, unit if count == 1 else units, format_duration(count * first_secs),
        format_step_secs(first_secs), unit)


def _warmup(spec: LoopSpec, step_fn, phases: PhaseRunner, lr_fn, log,
            result: LoopResult) -> float:
    """The warm-up steps; returns the step time to expect of the timed ones: the median of the
    warm-up steps after the first, which sets up the executor (the first when it is the only
    one: then a bound, set_up_bound_line). The median, not the least: on a busy host the
    fastest warm-up step said 'about 14 s' of a timed part that took 33.5 s."""
    times = []
    log('Running warm up')
    for call in range(1, spec.num_warmup + 1):
        start = time.perf_counter()
        try:
            out = phases.run_step(step_fn, call, time.perf_counter)
        except cnn_util.StopRequested:  # a cluster's chief stopped: this step did not finish
            result.stopped_early = result.stopped_in_warmup = True
            log('Stopped in the warm-up after %d of %d warm-up steps: nothing was timed'
                % (call - 1, spec.num_warmup))
            break
        times.append(time.perf_counter() - start)
        if _check_finite(out[0], 'warm-up step %d' % call, lr_fn, spec,
                         getattr(step_fn, 'loss_parts', None), result):
            result.stopped_in_warmup = True  # nothing timed: its line follows (_stopped_line)
            break
        result.warmup_losses.append(out[0])
        if phases.should_stop():  # a signal: stop after this step
            result.stopped_early = result.stopped_in_warmup = True
            log('Stopped in the warm-up after %d of %d warm-up steps: nothing was timed'
                % (call, spec.num_warmup))
            break
    else:
        log('Done warm up')
    return statistics.median(times[1:]) if len(times) > 1 else (times[0] if times else 0.0)


def run_loop(spec: LoopSpec, step_fn, hooks=(), *,
             log: Callable[[str], None] = cnn_util.log_fn) -> LoopResult:
    """Runs the warm-up steps, then times `spec.num_steps` steps and prints the step lines and
    the total block.

    The phases between the steps are the runner's (lifecycle/phase_runner.py): per step the
    hooks (lifecycle/run_hooks.py) are asked whether to trace it (`wants_trace`,
    then `traced` with the trace); after each timed step they get `after_step` and
    `should_stop`; `before_timed` and `after_timed` bracket the timed steps; in the total
    block the first hook's `total_figure` replaces the figure of `total images/sec` (a cluster
    worker's: the cluster's rate as it sees it, the original's figure there) and adds the lines
    after it, then each adds its `total_lines`, in the hooks' order. After the
    warm-up (or the first timed step, without one) a line says how long the timed part will
    take; after a warm-up of one step, which set up the executor, that line is a bound and the
    first timed step's line gives the estimate. `should_stop` is also asked after each warm-up
    step: when it says stop (a signal), the loop returns at once, nothing timed
    (LoopResult.stopped_in_warmup), without the timed part's line, the timed phases or a total
    block. A step that raises cnn_util.StopRequested (a cluster's chief stopped) ends the loop
    the same way, before that step: in the warm-up as above, in the timed part as after
    `should_stop` (the step is not counted, nor its time). Without warm-up steps
    (--num_warmup_batches=0) `Running warm up` and `Done warm up` are still printed, one after
    the other, as the original does. Stopped so at the first timed step,
    the loop timed nothing: its total block is the one line `total images/sec: none
    (NOTHING_TIMED)`, without the hooks' lines (their figures are those of the timed steps).

    Args:
      spec: the LoopSpec.
      step_fn: runs one step: () -> (loss or None, *extra values); with a trace,
        `step_fn.traced()` -> ((loss, *extras), RunMetadata). Its `learning_rate()`, when it has
        one, gives the NaN message's learning rate; its `loss_parts()`, when it has one, the
        (cross entropy, weight-decay term) of the last steps (decay_advice).
      hooks: RunHooks, or the run's PhaseRunner (which calls them).
      log: where the lines go.

    Returns:
      LoopResult.

    A non-finite loss (of a training step: LoopSpec.check_loss) raises NonFiniteLossError at
    once, or, with LoopSpec.stop_on_nonfinite, ends the loop before that step (not counted,
    nor handed to the hooks): in the warm-up as a signal there does, in the timed part with
    the total block of the timed steps before it (none when there were none), then the line
    `Stopped by the non-finite loss (nan) at step 3 after 2 timed steps` (`...: nothing was
    timed`); the LoopResult's `error` holds it.

    Raises:
      NonFiniteLossError: a loss was NaN or Inf (without LoopSpec.stop_on_nonfinite).
    """
    phases = hooks if isinstance(hooks, PhaseRunner) else PhaseRunner(hooks)
    result = LoopResult()
    lr_fn = getattr(step_fn, 'learning_rate', None)
    if spec.num_warmup:
        expected = _warmup(spec, step_fn, phases, lr_fn, log, result)
        if result.stopped_in_warmup:
            _stopped_line(result, log)
            return result
        log((timed_part_line(spec.num_steps, expected, spec.num_warmup) if spec.num_warmup > 1
             else set_up_bound_line(spec.num_steps, expected)) + spec.left_out_text())
    else:  # the original prints both with no warm-up step too (scripts wait for the second)
        log('Running warm up')
        log('Done warm up')
    stats = cnn_util.ImageRateStats(spec.images_per_step, spec.ewma_alpha)
    clock = time.perf_counter
    # Before the table's header: what the warm-up's end prints (the busy-host warning, an
    # evaluation or checkpoint due there) stays out of the step table a parser reads.
    phases.before_timed()
    log('\t'.join(('Step', 'Img/sec') + ((spec.loss_name,) if spec.show_loss else ())
                  + spec.extra_columns))
    if spec.num_warmup and phases.should_stop():  # a signal in the warm-up's end (its
        result.stopped_early = result.stopped_in_warmup = True  # evaluation): no timed step
        phases.after_timed()
        return result
    loop_start = clock()
    loop_end = None
    hooks_start = hooks_secs = None  # the last timed step's hooks: when they began, how long
    for step in range(1, spec.num_steps + 1):
        start = clock()
        try:
            out = phases.run_step(step_fn, spec.num_warmup + step, clock)
        except cnn_util.StopRequested:  # a cluster's chief stopped: this step is not counted
            result.stopped_early = True
            loop_end = start  # its wait is not the timed steps' time
            if hooks_start is not None:  # the step before was the last timed one
                loop_end = hooks_start
                result.hook_secs -= hooks_secs
                result.after_last_secs = hooks_secs
            break
        seconds = clock() - start
        loss = out[0]
        if _check_finite(loss, 'step %d' % step, lr_fn, spec,
                         getattr(step_fn, 'loss_parts', None), result, timed_before=step - 1):
            # Not counted (its update made the run invalid): the timed part ends before it.
            loop_end = start
            if hooks_start is not None:  # the step before was the last timed one
                loop_end = hooks_start
                result.hook_secs -= hooks_secs
                result.after_last_secs = hooks_secs
            break
        stats.add(seconds)
        result.losses.append(loss)
        if len(out) > 1:
            result.extras.append(out[1:])
        result.num_steps = step
        if step == 1 or step % spec.display_every == 0:
            extra = '\t'.join('%.3f' % v for v in out[1:]) if spec.extra_columns else ''
            log(cnn_util.format_step_line(step, stats, loss if spec.show_loss else None, extra))
        if spec.num_warmup == 1 and step == 1 and spec.num_steps > 1:
            # No warm-up step without set-up: the first timed step gives the estimate.
            log(rest_line(spec.num_steps - 1, seconds, set_up=False) + spec.left_out_text())
        elif not spec.num_warmup and spec.num_steps == 2 and step == 1:
            # one step left: the first, set-up included, says it
            log(rest_line(1, seconds) + spec.left_out_text())
        elif not spec.num_warmup and spec.num_steps > 2 and step == 2:
            # Without warm-up the first step carries the set-up (often many steps' time): the
            # second gives the estimate, as an evaluation's.
            log(rest_line(spec.num_steps - 1, seconds, set_up_secs=stats.step_times[0])
                + spec.left_out_text())
        hooks_start = clock()
        phases.after_step(step, loss, seconds)
        stop = phases.should_stop()
        hooks_secs = clock() - hooks_start
        if stop or step == spec.num_steps:  # after the last timed step: not between steps
            loop_end, result.after_last_secs = hooks_start, hooks_secs
        else:
            result.hook_secs += hooks_secs
        if stop:
            result.stopped_early = step < spec.num_steps
            break
    result.elapsed_secs = (clock() if loop_end is None else loop_end) - loop_start \
        - result.hook_secs
    phases.after_timed()
    result.step_times = stats.step_times
    result.images_per_sec = (spec.images_per_step * result.num_steps / result.elapsed_secs
                             if result.num_steps else 0.0)
    if not spec.num_warmup:
        _set_up_line(result, spec.images_per_step, log)
    if result.error is None or result.num_steps:  # a non-finite loss at the first timed
        _total_block(result, phases, log)           # step: no timed step, no total block
    _stopped_line(result, log)
    return result


def _stopped_line(result: LoopResult, log) -> None:
    """After a loop a non-finite loss stopped (result.error): 'Stopped by the non-finite
    loss (nan) at step 3 after 2 timed steps', or '...: nothing was timed'."""
    if result.error is None:
        return
    log('Stopped by %s%s' % (result.stopped_by_error,
                             ' after %s' % cnn_util.counted(result.num_steps, 'timed step')
                             if result.num_steps else ': nothing was timed'))


def set_up_ratio(times) -> float | None:
    """How many times the others' median the first of `times` (seconds of the steps or
    batches of a timed part without warm-up) took, where over twice it: the set-up a total
    line's figure keeps is worth a note (`_set_up_line`, eval_runner.set_up_note); else None
    (fewer than two times, or a first one like the others)."""
    if len(times) < 2:
        return None
    median = statistics.median(times[1:])
    if not median or times[0] <= 2 * median:
        return None
    return times[0] / median


def _set_up_line(result: LoopResult, images_per_step: int, log) -> None:
    """Before the total of a run without warm-up steps: the first timed step carries the
    session's set-up (kernels chosen, memory allocated), as in the original; where it took over
    twice the others' median, one line says so and gives the figure without it."""
    times = result.step_times
    ratio = None if result.nothing_timed else set_up_ratio(times)
    if ratio is None or result.elapsed_secs <= times[0]:
        return
    log('note: the first timed step took %s, %.0fx the others\' median: with '
        '--num_warmup_batches=0 the set-up is in the total line\'s images/sec (%.2f without '
        'that step); 1 or more warm-up steps leave it out' % (
            format_step_secs(times[0]), ratio,
            images_per_step * (len(times) - 1) / (result.elapsed_secs - times[0])))


def _total_block(result: LoopResult, phases: PhaseRunner, log) -> None:
    # Said whatever its share (0.03 s too), once it reads as at least 0.01 s: a tiny run's
    # 0.16 ms of loop overhead read '0.01 s between steps went to checkpoints ...'.
    if result.hook_secs >= 0.005 and result.hook_secs > 0.01 * result.elapsed_secs:
        log('%s between steps went to checkpoints, summaries and evaluations (not counted '
            'in the total line\'s images/sec)' % ('%.1f s' % result.hook_secs
                                                   if result.hook_secs >= 1
                                                   else '%.2f s' % result.hook_secs))
    log(DASHES)
    if result.nothing_timed:  # a cluster's chief stopped at the first timed step: no figure
        log('total images/sec: none (%s)' % NOTHING_TIMED)
        log(DASHES)
        return
    given = phases.total_figure(result)
    if given is None:
        log('total images/sec: %.2f' % result.images_per_sec)
    else:
        figure, lines = given
        log('total images/sec: %.2f' % figure)
        for line in lines:
            log(line)
    for line in phases.total_lines(result):
        log(line)
    log(DASHES)

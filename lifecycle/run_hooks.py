"""Extension points of a run: features that act around the timed loop are hooks.

Checkpoints, summaries, traces, eval during training, signal handling, results logs and cluster
synchronisation each live in their own module as a `RunHook`; `lifecycle/wiring.py` and
`cluster/coordination.py` choose the ones a run needs. A run calls the hooks phase by phase;
within a phase the order of the hooks carries no meaning:

    after_initialize(ctx)   the variables were just initialised or restored; the variable
                            manager's post-init ops (broadcasts, copies) and the input
                            pipeline's warm-up come next. On a cluster's chief this is before
                            the other workers may start; on the others, after the chief's
                            "ready". (Test seams set values here.)
    begin(ctx)              before the warm-up steps
    wants_trace(call)       before each step (call counts warm-up and timed steps from 1):
                            True runs it with a full trace, then
    traced(call, wall_secs, trace)  hands the trace (RunMetadata) to each hook that asked
    before_timed()          right before the first timed step (after the warm-up)
    after_step(step, loss)  after each timed step (step counts from 1 in this run)
    should_stop()           after each timed step; any True ends the loop early (also
                            after each warm-up step, and after before_timed when there are
                            warm-up steps: a True there ends the run before any timed step)
    after_timed()           right after the last timed step, before the total block
    total_figure(loop)      the figure the `total images/sec` line prints instead of the
                            loop's own, with the lines right after it (a cluster worker's:
                            the cluster's rate as it sees it, then its own); the first
                            hook that gives one wins, None keeps the loop's
    total_lines(loop)       the lines each hook adds to the total block after `total
                            images/sec` (in the hooks' order: the one phase where it counts)
    after_loop(result)      work after the timed steps, before `end` (the profiling files
                            of the step traced in the loop); never another training step
    end(result)             finish: save, gather, close; add keys to the result dict
    report(result)          write what reports on the run (results JSON, plot): the result
                            is complete, every hook's `end` has run
    release()               give back what the run holds (cluster done tokens, signal
                            handlers); nothing may use the session's peers after this
    abort()                 instead of after_loop..release, when the loop raised (non-finite
                            loss, data error): release what begin took, save nothing

The phase runner (lifecycle/phase_runner.py) calls every phase, from one place.
A hook that raises `cnn_util.BenchmarkError` ends the run with that message; a hook that
writes one of the run's outputs (`RunHook.output`: the checkpoint, the results JSON, the
trace, ...) and fails in after_loop, end or report does not stop the others: every other
hook's phases run, and the run then ends with one line naming the outputs written and those
not (phase_runner.OutputsNotWritten). The run, not a
hook, turns a SIGTERM (SIGHUP) recorded in result['stopped_by_signal'] into exit status 143
(129) once every phase has run; the command, a SIGINT into 130 (signals.exit_status).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # types only: this module loads no TensorFlow
    import tensorflow as tf

    from ..graph.graph_info import GraphInfo
    from ..run_plan import RunPlan


@dataclasses.dataclass
class TimedSteps:
    """The timed steps' own clock, as the step lines count it: `secs` is the sum of the wall
    seconds of each timed step so far (the loop adds one as it hands the step to after_step),
    without the hooks' work between steps (checkpoints, evaluations, summaries). A hook's
    rate over timed steps divides by its change (lifecycle/summaries.py images_per_sec)."""

    secs: float = 0.0


@dataclasses.dataclass
class RunContext:
    """What a hook may use: the session (a tf.compat.v1.Session, or the cluster's or the
    traced session), the built graph (graph.graph_info.GraphInfo), the run's plan
    (run_plan.RunPlan: resolved batch sizes, devices, steps, modes) and the timed steps'
    clock (TimedSteps)."""

    sess: tf.compat.v1.Session
    info: GraphInfo
    plan: RunPlan
    timed: TimedSteps = dataclasses.field(default_factory=TimedSteps)


class RunHook:
    """Base hook: every method does nothing (see the module docstring for the phases).

    Attributes:
      output: what the hook writes for the user, as the error line of a finished run names it
        ('the checkpoint', 'the results JSON'), or None (it writes none). Its
        cnn_util.BenchmarkError (or OSError) in after_loop, end or report is then collected,
        not raised at once: the other hooks still write theirs (phase_runner.PhaseRunner
        .finish).
      output_flag: the flag that places that output ('--train_dir'), for the fix the line
        gives.
    """

    output: str | None = None
    output_flag: str | None = None

    def written(self, result: dict) -> list[str]:
        """What this hook wrote, each as the error line of a run one of whose outputs failed
        lists it ('the results JSON /bl/tf_cnn_benchmarks_trivial_...json'); [] when nothing
        (or when it writes no output)."""
        return []

    def after_initialize(self, ctx: RunContext) -> None:
        """Called once the variables are initialised or restored, before post-init ops."""

    def begin(self, ctx: RunContext) -> None:
        """Called once before the warm-up steps."""

    def wants_trace(self, call: int) -> bool:
        """True to run step `call` (1-based over warm-up and timed steps) with a full trace."""
        return False

    def traced(self, call: int, wall_secs: float, trace) -> None:
        """The trace of step `call` this hook asked for: its wall seconds (tracing included) and
        its tf.compat.v1.RunMetadata (`step_stats`; `partition_graphs` when a hook asking for
        the step has a true `wants_partition_graphs`)."""

    def before_timed(self) -> None:
        """Called right before the first timed step."""

    def after_step(self, step: int, loss: float | None) -> None:
        """Called after timed step `step` (1-based) with its loss (a forward-only step's too:
        its forward pass's; None only from a step function that gives none)."""

    def should_stop(self) -> bool:
        """Return True to end the timed loop after the current step."""
        return False

    def after_timed(self) -> None:
        """Called right after the last timed step (also when stopped early), before the total
        block."""

    def total_figure(self, loop) -> tuple[float, list[str]] | None:
        """(images/sec, lines): the figure the `total images/sec` line prints instead of
        `loop.images_per_sec` (loop: the LoopResult) and the lines that follow it at once;
        None keeps the loop's figure. Called only when a step was timed."""
        return None

    def total_lines(self, loop) -> list[str]:
        """Lines for the total block, after `total images/sec` (loop: the LoopResult)."""
        return []

    def after_loop(self, result: dict) -> None:
        """Called once after the timed loop, before any hook's `end`."""

    def end(self, result: dict) -> None:
        """Called once after every `after_loop`; may add keys to the result dict."""

    def report(self, result: dict) -> None:
        """Called once after every `end`, with the complete result."""

    def release(self) -> None:
        """Called once after every `report`."""

    def abort(self) -> None:
        """Called instead of the phases after the loop when the run fails; must not raise."""


class GlobalStepCounter:
    """The global step around each timed step, for hooks that act every N global steps.

    `begin(ctx)` reads the global step before the warm-up steps; `advance(step)` after timed
    step `step` returns (before, now): the global step after the previous timed step (for the
    first timed step: before the warm-up steps) and after this one. A hook due at every
    multiple of N uses `crossed(before, now, N)`, so a multiple reached during the warm-up
    steps is acted on after the first timed step (a hook that acts at the warm-up's end calls
    `warmed_up` in before_timed instead, as evaluations and checkpoints do), and one passed
    over by an asynchronous cluster's shared global step (it grows by about the number of
    workers per timed step of the chief) is not missed.

    On one host and in synchronous clusters `now` is `plan.global_step_after(start, step)`;
    in an asynchronous cluster (`plan.asynchronous`) it is read from the session (one scalar
    read per timed step).
    """

    def __init__(self, plan):
        self.plan = plan
        self._ctx = None
        self.start = 0
        self._last = 0

    def begin(self, ctx: RunContext) -> int:
        """Reads the global step before the warm-up steps; returns it. (Forward-only runs
        count timed steps instead: they start from 0.)"""
        self._ctx = ctx
        self.start = int(ctx.sess.run(ctx.info.global_step))
        self._last = self.start if self.plan.training else 0
        return self.start

    def warmed_up(self) -> tuple[int, int]:
        """(global step before the warm-up steps, after them), for a hook that acts at the
        warm-up's end (before_timed); the next `advance` then counts from the warm-up's end.
        One host and synchronous clusters only (each warm-up step adds one)."""
        end = self.start + self.plan.num_warmup_batches if self.plan.training else 0
        self._last = end
        return self.start, end

    def advance(self, step: int) -> tuple[int, int]:
        """(global step after the previous timed step, global step after timed step `step`)."""
        if self.plan.asynchronous:
            now = int(self._ctx.sess.run(self._ctx.info.global_step))
        else:
            now = self.plan.global_step_after(self.start, step)
        before, self._last = self._last, now
        return before, now


def crossed(before: int, now: int, every: int | None) -> bool:
    """True when a multiple of `every` lies in (before, now]; False when `every` is 0/None."""
    return bool(every) and now // every > before // every

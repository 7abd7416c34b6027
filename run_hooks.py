"""Extension points of a run: features that act around the timed loop are hooks.

Checkpoints, summaries, traces, eval during training, signal handling, results logs and cluster
synchronisation each live in their own module as a `RunHook`; `BenchmarkCNN.make_hooks` lists
the ones a run needs. Call order for every hook:

    begin(ctx)              after the session is created and variables are initialised or
                            restored, before the warm-up steps
    after_step(step, loss)  after each timed step (step counts from 1 in this run)
    should_stop()           after each timed step; any True ends the loop early
    end(result)             after the loop; may add keys to the result dict
    abort()                 instead of end, when the loop raised (non-finite loss, data error):
                            release what begin took (signal handlers, files), save nothing

A hook that raises `cnn_util.BenchmarkError` ends the run with that message.
"""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass
class RunContext:
    """What a hook may use: the session, the built graph (benchmark_cnn.GraphInfo), and the
    BenchmarkCNN (params, model, dataset, batch sizes)."""

    sess: Any
    info: Any
    bench: Any


class RunHook:
    """Base hook: every method does nothing."""

    def begin(self, ctx: RunContext) -> None:
        """Called once before the warm-up steps."""

    def after_step(self, step: int, loss: float | None) -> None:
        """Called after timed step `step` (1-based) with its loss (None when forward-only)."""

    def should_stop(self) -> bool:
        """Return True to end the timed loop after the current step."""
        return False

    def end(self, result: dict) -> None:
        """Called once after the loop with the run's result dict (may add keys)."""

    def abort(self) -> None:
        """Called instead of `end` when the run fails; must not raise."""


def combine_after_step(hooks):
    """One after_step callback calling every hook in order; None when there are no hooks."""
    if not hooks:
        return None

    def after_step(step, loss):
        for hook in hooks:
            hook.after_step(step, loss)
    return after_step


def combine_should_stop(hooks):
    """One should_stop callback, True when any hook says so; None when there are no hooks."""
    if not hooks:
        return None
    return lambda: any([hook.should_stop() for hook in hooks])

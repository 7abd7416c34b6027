"""The learning-rate schedule's changes a training run never reaches, and the piecewise rates
no update uses (a boundary at global step 0), warned about once the variables are restored
(phase `begin`: the restored global step and images seen decide)."""

from __future__ import annotations

from .. import cnn_util
from ..graph import learning_rate
from . import run_hooks


class ScheduleWarningsHook(run_hooks.RunHook):
    """Warns (one `warning:` line each, graph/learning_rate.unreached_changes) about every
    piecewise boundary, first exponential decay or warm-up end beyond the run's last update.
    A resumed run counts them from the checkpoint's images seen (graph/images_seen.py).

    Args:
      plan: the run_plan.RunPlan of a chief's training run whose flags give a schedule
        (graph/learning_rate.schedule_flag: unreached_changes reads the flags' schedule only).
    """

    def __init__(self, plan):
        self.plan = plan

    def begin(self, ctx):
        plan = self.plan
        restored = int(ctx.sess.run(ctx.info.global_step))  # 0: a fresh start
        start = None
        if restored and ctx.info.images_seen is not None:
            start = (plan.examples_per_epoch, plan.images_per_global_step, restored,
                     int(ctx.sess.run(ctx.info.images_seen.variable)))
        for message in learning_rate.unreached_changes(
                plan.params, plan.steps_per_epoch, plan.last_update_step(restored), start=start):
            cnn_util.warn(message)
        if not restored:  # a resumed run's first update was long ago
            for message in learning_rate.unused_first_rates(plan.params, plan.steps_per_epoch):
                cnn_util.warn(message)

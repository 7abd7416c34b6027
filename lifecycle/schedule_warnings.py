"""The learning-rate schedule's changes a training run never reaches, and the piecewise rates
no update uses (a boundary at global step 0), warned about once the variables are restored
(phase `begin`: the restored global step and images seen decide); and the evaluations
--eval_during_training_at_specified_steps (or _epochs) lists outside the run's global steps
(`unreached_evaluations`: eval_during_training.EvalDuringTrainingHook warns in its `begin`,
where the evaluation schedule is resolved)."""

from __future__ import annotations

from .. import cnn_util
from ..graph import learning_rate
from . import run_hooks


def _and(items) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else '%s and %s' % (', '.join(items[:-1]), items[-1])


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


def unreached_evaluations(flag: str, points, start: int, end: int) -> str | None:
    """The warning for the evaluations a training run never reaches, or None.

    Args:
      flag: the flag that lists them ('eval_during_training_at_specified_steps').
      points: (as given, its global step) for each value of the flag ('30', 30; an epoch's
        '2.5', 25).
      start: the global step the run begins at (0, or a resumed checkpoint's).
      end: its last global step (start + warm-up + timed steps).

    Returns:
      e.g. '--eval_during_training_at_specified_steps: 30 is after this run's last global
      step, 11, and 0 before its first, 1: no evaluation runs there (the final evaluation
      runs after global step 11)'; None when every point is reached.
    """
    def named(value, step):
        return value if str(value) == str(step) else '%s (global step %d)' % (value, step)
    late = [named(v, g) for v, g in points if g > end]
    early = [named(v, g) for v, g in points if g <= start]
    if not late and not early:
        return None
    def verb(items):
        return 'is' if len(items) == 1 else 'are'
    resumed = ' (it resumes from global step %d)' % start if start else ''
    parts = []
    if late:
        parts.append('%s %s after this run\'s last global step, %d' % (_and(late), verb(late),
                                                                       end))
    if early and late:
        parts.append('%s before its first, %d%s' % (_and(early), start + 1, resumed))
    elif early:
        parts.append('%s %s before this run\'s first global step, %d%s' % (
            _and(early), verb(early), start + 1, resumed))
    return ('--%s: %s: no evaluation runs there (the final evaluation runs after global step '
            '%d)' % (flag, ', and '.join(parts), end))

"""Evaluations inside a training run (--eval_during_training_*): `EvalDuringTrainingHook`.

After the timed steps whose global step is a multiple of --eval_during_training_every_n_steps,
crosses a multiple of --eval_during_training_every_n_epochs (epochs of the global batch:
per-device batch x devices x workers), or is listed in --eval_during_training_at_specified_steps
(or --eval_during_training_at_specified_epochs; an epoch's step is rounded up, as the
original's: original_flags.epoch_step), and after the last timed step (the original's final
evaluation: `Running final evaluation at global_step N`, after the original's `Done with
training`; the others' line is `Running evaluation at global_step N`, and `Resuming training`
follows those training goes on after), the hook evaluates the current weights with eval_runner's
Evaluator; those due in the warm-up steps become one at the warm-up's end, before the first
timed step (on schedule when the last warm-up step is the one due; a warning before the run
when that drops any, or with --ml_perf moves one: `warmup_warning`). The current weights are
copied in memory (no checkpoint needed). With --stop_at_top_1_accuracy the training stops
once a complete evaluation reaches it.

A first SIGINT, SIGTERM or SIGHUP (signals.py) during an evaluation stops it after its current
batch (the run's SignalHook's catcher, connected in wiring.py: `watch`): a line before its
accuracy says it is partial (`Stopped by SIGINT after 12 of 100 batches of the evaluation at
global step 40: ...`), its result dict has `partial` True, it never satisfies
--stop_at_top_1_accuracy, and the run then stops as on any signal (after the step: final
checkpoint, results; exit 128 + N). One that came before an evaluation began stops it after
its first batch, except the final evaluation after a signal in the last timed step: that run
is complete (signals.py), and its final evaluation runs whole. With --ml_perf a partial
evaluation logs eval_stop but no eval_accuracy (mlperf_log.MlPerfHook.eval_finished).
"""

from __future__ import annotations

import math

from .. import cnn_util
from ..params import EVAL_DURING_TRAINING_FLAGS, original_flags
from . import run_hooks, schedule_warnings
from . import summaries as summaries_lib
from .eval_runner import DURING_TRAINING_FIGURE, Evaluator, log_eval, running_line

#: The original's lines around the evaluations of a training run: after one that training
#: resumes from, and once the training steps are over (before the final evaluation).
RESUMING = 'Resuming training'
DONE = 'Done with training'


def _flag_value(value) -> str:
    """A flag's value as given on a command line: 1 for 1.0, lists' strings as they are."""
    return '%g' % value if isinstance(value, float) else str(value)


class EvalDuringTrainingHook(run_hooks.RunHook):
    """Evaluates the training weights at chosen global steps (see the module docstring).

    Args:
      plan: the training run's run_plan.RunPlan.
      model, dataset: the run's CNNModel and dataset (the evaluator builds its own graph).
      config: the tf.compat.v1.ConfigProto of the evaluations' sessions (the run's).
    """

    def __init__(self, plan, model, dataset, config=None):
        p = plan.params
        self.plan = plan
        self.config = config
        self._model_and_dataset = (model, dataset)
        self.p = p
        self.at_steps = {int(s) for s in p.eval_during_training_at_specified_steps}
        self.at_steps.update(original_flags.specified_epoch_steps(  # --..._specified_epochs
            p.eval_during_training_at_specified_epochs, plan.examples_per_epoch,
            plan.images_per_global_step))
        self.every_steps = p.eval_during_training_every_n_steps or 0
        epochs = p.eval_during_training_every_n_epochs or 0
        self.every_epoch_steps = epochs * plan.steps_per_epoch if epochs else 0.0
        self.evals: list[dict] = []
        self.reached = False
        self.evaluator = None
        self._ctx = None
        self.counter = run_hooks.GlobalStepCounter(plan)
        self._summaries = None
        # Told of each evaluation (mlperf_log.MlPerfHook): eval_started(global_step) before it,
        # eval_finished(global_step, result, more_steps) after it.
        self.listeners: list = []
        self.catcher = None  # the run's signals.SignalCatcher (`watch`), or None
        self._evaluating = None  # (global step, final) of the evaluation running, or None
        self._whole = False  # the evaluation running ignores the signal (`_should_stop`)
        self._done_said = False  # `Done with training` printed

    def watch(self, catcher) -> None:
        """Stops each evaluation after its current batch once `catcher` (the run's
        signals.SignalCatcher: SignalHook's) has received a first signal, and gives its
        warning's text while one runs (`first_line`)."""
        self.catcher = catcher
        catcher.first_line = self.first_line

    def first_line(self, name: str) -> str | None:
        """The first signal's warning while an evaluation runs ('received SIGINT: stopping
        the evaluation at global step 40 after its current batch, then stopping the run and
        saving (send it again to abort at once)'), else None (signals.py's default text)."""
        if self._evaluating is None:
            return None
        return ('received %s: stopping the evaluation at global step %d after its current '
                'batch, then stopping the run, summarising and saving (send it again to abort '
                'at once)' % (name, self._evaluating[0]))

    def _should_stop(self) -> bool:
        """Evaluator.evaluate's `should_stop`: whether the evaluation stops after the batch
        that just ran (a first signal came; not for a final evaluation begun after a signal in
        the last timed step: that run is complete, signals.py)."""
        catcher = self.catcher
        if catcher is None or catcher.received is None or self._whole:
            return False
        if self._evaluating is not None and self._evaluating[1]:
            catcher.cut_short = True  # the final evaluation stops: the run is not complete
        return True

    def begin(self, ctx):
        self._ctx = ctx
        self.evaluator = Evaluator(self.plan, *self._model_and_dataset, self.config,
                                   figure=DURING_TRAINING_FIGURE)
        self._savable = ctx.info.mgr.savable_variables()
        start = self.counter.begin(ctx)
        self._summaries = summaries_lib.EvalSummaryWriter(self.p)
        for line in [self.warmup_warning(start)] + self.unreached_warnings(start):
            if line:
                cnn_util.warn(line)

    def unreached_warnings(self, start: int) -> list:
        """The warnings (schedule_warnings.unreached_evaluations) for the steps or epochs
        --eval_during_training_at_specified_* lists outside a run that begins at global step
        `start`; [] where the steps are not this task's to count (an asynchronous cluster)."""
        plan, p = self.plan, self.p
        if plan.asynchronous:
            return []
        end = start + plan.num_warmup_batches + plan.num_batches
        given = {'eval_during_training_at_specified_steps': [
            (v, int(v)) for v in p.eval_during_training_at_specified_steps],
            'eval_during_training_at_specified_epochs': [
            (v, original_flags.specified_epoch_steps([v], plan.examples_per_epoch,
                                                     plan.images_per_global_step)[0])
            for v in p.eval_during_training_at_specified_epochs]}
        return [schedule_warnings.unreached_evaluations(flag, points, start, end)
                for flag, points in given.items() if points]

    def warmup_warning(self, start: int) -> str | None:
        """The warning for evaluations the schedule puts inside the warm-up steps of a run that
        begins at global step `start`, or None: the warm-up steps train, but evaluations run
        between them only at their end (`before_timed`), so all those due in the warm-up
        become one evaluation of the weights at its end. None when that is the only one due,
        at the warm-up's last step (on schedule), or one due earlier in a run without
        --ml_perf (only late); with --ml_perf a late one is logged at the wrong epoch_num,
        which MLPerf's results read. None where the steps are not this task's to count (a
        forward-only run, an asynchronous cluster)."""
        warmup = self.plan.num_warmup_batches
        if not warmup or not self.plan.training or self.plan.asynchronous:
            return None
        end = start + warmup
        due = [g for g in range(start + 1, end + 1) if self.due(g)]
        if due in ([], [end]) or (len(due) == 1 and not original_flags.ml_perf_wanted(self.p)):
            return None
        per_epoch = self.plan.steps_per_epoch or 1.0
        flags = ' '.join('--%s=%s' % (name, ','.join(_flag_value(v) for v in (
            value if isinstance(value, (list, tuple)) else [value]))) for name, value in (
            (name, getattr(self.p, name)) for name in EVAL_DURING_TRAINING_FLAGS) if value)
        fix = 'give --num_warmup_batches=%d or fewer to evaluate on schedule' % (due[0] - start)
        if len(due) == 1:
            return ('--ml_perf: the evaluation %s schedules at global step %d (epoch %.2f) falls '
                    'inside the %d warm-up steps (--num_warmup_batches=%d): it runs at their '
                    'end, global step %d, and is logged at epoch_num %s; %s' % (
                        flags, due[0], due[0] / per_epoch, warmup, warmup, end,
                        round(end / per_epoch, 6), fix))
        dropped = len(due) - 1
        return ('the %d warm-up steps (--num_warmup_batches=%d) train to epoch %.2f, past %d '
                'evaluations %s schedules (the first at global step %d, epoch %.2f): %d of them '
                '%s not run (one evaluation at the warm-up\'s end, global step %d, stands for '
                'them); %s' % (warmup, warmup, end / per_epoch, len(due), flags, due[0],
                               due[0] / per_epoch, dropped, 'is' if dropped == 1 else 'are',
                               end, fix))

    def due(self, global_step: int, before: int | None = None) -> bool:
        """Whether to evaluate after the step that took the global step from `before` (default:
        global_step - 1) to `global_step`: an evaluation due at any global step in between (the
        warm-up steps' included) runs now."""
        before = global_step - 1 if before is None else before
        if any(before < s <= global_step for s in self.at_steps):
            return True
        if run_hooks.crossed(before, global_step, self.every_steps):
            return True
        if self.every_epoch_steps:  # the first step at or past a multiple: epoch_step's rule
            return (math.floor(round(global_step / self.every_epoch_steps, 9))
                    > math.floor(round(before / self.every_epoch_steps, 9)))
        return False

    def before_timed(self):
        """Evaluations due in the warm-up steps: one, of the weights after the last warm-up
        step (so one due at that step falls on schedule: a warm-up of one whole epoch and an
        evaluation every epoch give epoch 1.0, not 1 + 1/steps per epoch). Not where the
        steps are not this task's to count (a forward-only run, an asynchronous cluster)."""
        if (not self.plan.num_warmup_batches or not self.plan.training
                or self.plan.asynchronous):
            return
        start, end = self.counter.warmed_up()
        if self.due(end, start):
            self._evaluate(end, more_steps=self.plan.num_batches > 0)

    def after_step(self, step, loss):
        del loss
        before, global_step = self.counter.advance(step)
        # The last timed step is always evaluated: the original's final evaluation (once, when
        # the schedule has one due there too), so the weights a run ends with are scored, and
        # with --ml_perf every MLPerf block ends with its evaluation.
        final = step == self.plan.num_batches
        if final or self.due(global_step, before):
            self._evaluate(global_step, more_steps=not final, final=final)

    def _evaluate(self, global_step: int, more_steps: bool, final: bool = False) -> None:
        """Evaluates the current weights (those after `global_step`), tells the listeners;
        `more_steps`: timed steps follow; `final`: after the last timed step (its
        `running_line` says so)."""
        for listener in self.listeners:
            listener.eval_started(global_step)
        if final:
            self._say_done()
        cnn_util.log_fn(running_line(global_step, final))
        values = self._ctx.sess.run(self._savable)
        self._whole = final and self.catcher is not None and self.catcher.received is not None
        self._evaluating = (global_step, final)
        try:
            r = self.evaluator.evaluate(values=values, should_stop=self._should_stop)
        finally:
            self._evaluating = None
        if r.get('partial'):
            cnn_util.log_fn(partial_line(r, self.catcher.name if self.catcher else None))
        log_eval(r, synthetic_note=not self.evals)
        self._summaries.write(r)
        self.evals.append(r)
        target = self.p.stop_at_top_1_accuracy
        if target is not None and not r.get('partial') and r['top_1'] >= target:
            self.reached = True
            cnn_util.log_fn('Stopping: eval top-1 accuracy %.4f reached --stop_at_top_1_accuracy='
                            '%g at global step %d' % (r['top_1'], target, global_step))
        resumes = more_steps and not self.reached and not r.get('partial')
        if resumes and (self.catcher is None or self.catcher.received is None):
            cnn_util.log_fn(RESUMING)  # not when a signal stops the run after this step
        for listener in self.listeners:
            listener.eval_finished(global_step, r, resumes)

    def _say_done(self) -> None:
        if not self._done_said:
            self._done_said = True
            cnn_util.log_fn(DONE)

    def after_timed(self):
        """`Done with training` after the timed steps when no final evaluation said it (a
        stop by --stop_at_top_1_accuracy or a signal), as the original's after its loop."""
        self._say_done()

    def should_stop(self):
        return self.reached

    def end(self, result):
        self._summaries.close(announce=' of the evaluations')
        result['evals'] = self.evals
        result['eval'] = self.evals[-1] if self.evals else None
        result['stopped_at_top_1_accuracy'] = self.reached


def partial_line(r: dict, signal_name: str | None) -> str:
    """The line before a stopped evaluation's accuracy: 'Stopped by SIGINT after 12 of 100
    batches of the evaluation at global step 40: the accuracy below is partial, over the 96
    examples scored' (`r`: Evaluator.evaluate's dict, `partial` True)."""
    return ('Stopped by %s after %d of %d batches of the evaluation at global step %d: the '
            'accuracy below is partial, over the %d examples scored' % (
                signal_name or 'a signal', r['num_batches'], r['planned_batches'],
                r['global_step'], r['num_examples']))

"""What a signal does to an --eval run, and the lines that say so (eval_runner.run_eval).

The first SIGINT (Ctrl-C), SIGTERM or SIGHUP of an --eval run stops it at once where nothing
is running, else after the current batch:

  - during an evaluation: the evaluation stops after its current batch; its accuracy line is
    that of the batches scored so far, after a line saying it is partial (`Stopped by SIGINT
    after 12 of 3000 batches of the evaluation of model.ckpt-4: ...`), the results JSON's
    `eval` says `partial: true` with `planned_batches`, and the command exits 128 + N (130
    for SIGINT). A signal during the last batch stops nothing: the evaluation is complete,
    so a single --eval finishes as if none had come (exit 0), saying so; an
    --eval_interval_secs loop stops after it (it never ends otherwise).
  - while an --eval_interval_secs loop waits for a checkpoint: the loop stops now, and its
    last line says how many evaluations it made (`Stopped by SIGINT while waiting for a
    checkpoint newer than model.ckpt-601: 2 evaluations done, the last of global step 601`,
    or `... no checkpoint was evaluated`).

A second signal aborts at once, as in a training run (signals.py).
"""

from __future__ import annotations

import os

from .. import cnn_util


class EvalStop:
    """The state an --eval run is in when a signal comes, for its warning and its last line.

    Args:
      catcher: the run's signals.SignalCatcher (its `received` is the signal, or None).
      single: True for one evaluation (no --eval_interval_secs).

    Attributes:
      evaluating: the checkpoint being evaluated, or None while nothing is (set by run_eval).
      evals: the evaluations done (eval_runner.Evaluator.evaluate's dicts).
    """

    def __init__(self, catcher, single: bool):
        self.catcher = catcher
        self.single = single
        self.evaluating: str | None = None
        self.evals: list[dict] = []
        catcher.first_line = self.first_line

    def should_stop(self) -> bool:
        """Whether the current evaluation stops after the batch that just ran."""
        return self.catcher.received is not None

    def first_line(self, name: str) -> str:
        """The first signal's warning, by what the run is doing when it comes."""
        if self.evaluating is not None:
            return ('received %s: stopping the evaluation of %s after the current batch, then '
                    'printing the accuracy of the batches scored so far (send it again to '
                    'abort at once)' % (name, os.path.basename(self.evaluating)))
        return 'received %s: stopping now (no evaluation is running): %s' % (
            name, self.summary())

    def summary(self) -> str:
        """'2 evaluations done, the last of global step 601', or 'no checkpoint was
        evaluated'."""
        if not self.evals:
            return 'no checkpoint was evaluated'
        count = len(self.evals)
        return '%d evaluation%s done, the last of global step %d' % (
            count, '' if count == 1 else 's', self.evals[-1]['global_step'])

    def late(self, r: dict) -> bool:
        """Whether the signal came during the last batch of a single evaluation, `r`: it stopped
        nothing (the run finishes as if none had come)."""
        return self.single and self.catcher.received is not None and not r.get('partial')

    def partial_line(self, r: dict) -> str | None:
        """The line before a stopped evaluation's accuracy: 'Stopped by SIGINT after 12 of
        3000 batches of the evaluation of model.ckpt-4: the accuracy below is partial, over
        the 96 examples scored'; None for a complete evaluation."""
        if not r.get('partial'):
            return None
        return ('Stopped by %s after %d of %d batches of the evaluation of %s: the accuracy '
                'below is partial, over the %d examples scored' % (
                    self.catcher.name, r['num_batches'], r['planned_batches'],
                    os.path.basename(r['checkpoint_path'] or 'the weights'), r['num_examples']))

    def stop_line(self, waiting_for: str | None) -> str | None:
        """The run's last line after a signal: while an --eval_interval_secs loop waited
        (`waiting_for`: what it waited for), 'Stopped by SIGINT while waiting for a first
        checkpoint: no checkpoint was evaluated'; after an evaluation the signal ended, the
        loop's stop; None without a signal, or when the evaluation's own line said it."""
        name = self.catcher.name
        if name is None:
            return None
        if waiting_for is not None:
            return 'Stopped by %s while waiting for %s: %s' % (name, waiting_for, self.summary())
        last = self.evals[-1] if self.evals else None
        if last is not None and last.get('partial'):
            return None  # partial_line said it
        if self.single and last is not None:
            return ('Received %s during the last batch: the evaluation is complete, not stopped '
                    'by it' % name)
        return 'Stopped by %s after the evaluation: %s' % (name, self.summary())

    def log_stop(self, waiting_for: str | None) -> None:
        line = self.stop_line(waiting_for)
        if line:
            cnn_util.log_fn(line)

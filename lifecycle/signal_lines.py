"""The lines a run prints when a signal reaches it after its timed steps, or when the reader of
its output went away (lifecycle/signals.py's SignalCatcher and SignalHook; a second signal's
abort line: signal_abort.py).

Both are stderr lines: after the timed steps the user is waiting for the command to end, and
a reader that went away took stdout with it (its lost lines are not copied to stderr).
"""

from __future__ import annotations

import signal


def late_warning(name: str) -> str:
    """The warning (without 'warning: ') of a first signal `name` ('SIGINT', 'SIGTERM',
    'SIGHUP') that came after the timed steps: the run is complete and recorded so, measures
    nothing more, and then ends as the signal asks (128 + N: `late_ending`)."""
    return ('received %s after the timed steps: the run is complete and is recorded as '
            'complete; it writes its results, measures nothing more (a CPU peak it lacks is '
            'left to the next run), then %s (send it again to stop at once, its results '
            'written first)' % (name, late_ending(name)))


def late_ending(name: str) -> str:
    """How a command ends after a signal `name` reached its complete run: 'ends by SIGINT
    (exit status 130), so a shell loop running it stops too' for SIGINT (console.py
    end_interrupted), 'exits with status 143' for SIGTERM, 'exits with status 129' for
    SIGHUP."""
    status = 128 + signal.Signals[name]
    if name == 'SIGINT':
        return 'ends by SIGINT (exit status %d), so a shell loop running it stops too' % status
    return 'exits with status %d' % status


def reader_gone(result: dict, planned: int | None, stream: str, written: list[str]) -> str:
    """The one stderr line (without 'warning: ') of a run stopped because the reader of its
    output went away (`tf_cnn_benchmarks ... | head -32`): what stopped it, after which step,
    what was saved and written, and what the exit status is.

    Args:
      result: the run's result dict ('num_steps', 'stopped_in_warmup', 'checkpoint_path').
      planned: the run's timed steps (--num_batches), or None where unknown.
      stream: the stream whose reader went away: 'stdout' or 'stderr'.
      written: what the run's reports wrote ('the results JSON /bl/x.json', 'the record in
        the results database /r.sqlite (run 7)': their hooks' `written`).

    Returns:
      e.g. 'the reader of stdout went away (SIGPIPE): the run stopped after timed step 3 of
      20, as a first Ctrl-C stops it; kept: the checkpoint /t/model.ckpt-8, the results JSON
      /bl/x.json and the record in the results database /r.sqlite (run 7); exit status 141'.
    """
    if result.get('stopped_in_warmup'):
        when = 'in the warm-up (nothing was timed)'
    else:
        steps = result.get('num_steps') or 0
        when = 'after timed step %d%s' % (steps, ' of %d' % planned if planned else '')
    kept = (['the checkpoint %s' % result['checkpoint_path']]
            if result.get('checkpoint_path') else []) + list(written)
    if not kept:
        what = 'nothing was written (no --train_dir, results JSON or results database)'
    elif len(kept) == 1:
        what = 'kept: ' + kept[0]
    else:
        what = 'kept: %s and %s' % (', '.join(kept[:-1]), kept[-1])
    return ('the reader of %s went away (SIGPIPE): the run stopped %s, as a first Ctrl-C stops '
            'it; %s; exit status %d' % (stream, when, what, 128 + signal.SIGPIPE))

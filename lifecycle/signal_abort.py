"""A second signal's abort (lifecycle/signals.py): what it writes first, and its one line.

The abort ends the process at once (exit status 128 + N) after one `error:` line that says
what the run kept: 'without saving'; or the checkpoint saved before it and what may be
missing; or what a salvage wrote (SignalHook.salvage: the results JSON and the database's
record of the figures known once the timed loop has ended); or what the run's own report
phase had written when the signal came (the abort waits a moment for it to end). Where the
results are on disk but not (yet) in the results database (its write waits for another
process's lock: lifecycle/results_db.py), the line says where they are and the `tf_cnn_results
ingest` that records them.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import NamedTuple

from ..runtime import dir_hold

#: Seconds a second signal's abort waits for the results to be written (SignalHook.salvage).
SALVAGE_SECS = 10.0

#: What the abort line adds when a closer failed (the MLPerf log is the one closer today).
NOT_CLOSED = ('; the MLPerf log (stdout) is left without run_stop, so the compliance checker '
              'will refuse it')


class Whereabouts(NamedTuple):
    """Where a run's results are when a second signal aborts it (SignalHook.whereabouts).

    Attributes:
      written: the outputs written ('the results JSON /bl/x.json', 'the record in the results
        database /r.sqlite (run 3)').
      salvaged: True when a salvage wrote them (the figures of the timed steps, before the
        run's own reports), False when the run's own report phase did.
      unrecorded: where results not (yet) in the results database are, with the ingest that
        records them (RecordHook.unrecorded), or None.
    """
    written: list
    salvaged: bool
    unrecorded: str | None


def _salvaged(salvage, signum: int) -> str | None:
    """What `salvage(signum)` wrote, run in a thread of its own for at most SALVAGE_SECS (a
    database locked by another process must not hold the abort); None when it wrote nothing,
    failed or took longer."""
    if salvage is None:
        return None
    kept: list = []

    def write():
        try:
            kept.append(salvage(signum))
        except Exception:  # noqa: BLE001 - nothing may stop the abort
            kept.append(None)
    thread = threading.Thread(target=write, name='signal-salvage', daemon=True)
    thread.start()
    thread.join(SALVAGE_SECS)
    return kept[0] if kept else None


def _closed(closers) -> bool:
    """Whether every one of `closers` (SignalCatcher.closers) returned True within
    SALVAGE_SECS, each run in a thread of its own (the main thread may hold the stream)."""
    done: list = []

    def close():
        for closer in closers:
            try:
                done.append(bool(closer()))
            except Exception:  # noqa: BLE001 - nothing may stop the abort
                done.append(False)
    if not closers:
        return True
    thread = threading.Thread(target=close, name='signal-close', daemon=True)
    thread.start()
    thread.join(SALVAGE_SECS)
    return len(done) == len(closers) and all(done)


def _whereabouts(kept) -> Whereabouts | None:
    """`kept()` (SignalCatcher.kept), or None without it or when it fails."""
    try:
        return kept() if kept is not None else None
    except Exception:  # noqa: BLE001 - nothing may stop the abort
        return None


def _listing(items: list) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return items[0] if len(items) == 1 else '%s and %s' % (', '.join(items[:-1]), items[-1])


def describe(wrote: str | None, saved: str | None, later: dict,
             where: Whereabouts | None = None) -> str:
    """What the abort line says the run kept (after 'aborting at once, ').

    Args:
      wrote: what a salvage wrote, or None.
      saved: the checkpoint saved before the signal ('the checkpoint /t/model.ckpt-3'), or
        None.
      later: {'salvage': outputs written after a salvage, 'saved': outputs written after the
        final checkpoint} (SignalCatcher.later).
      where: where the results are now (`Whereabouts`), or None.
    """
    written, by_salvage, unrecorded = where if where is not None else ([], False, None)
    if wrote is None and by_salvage and written:  # a salvage still writing the record
        wrote = ' and '.join(written)
    parts = []
    if wrote is not None:
        parts.append('after writing %s, with the figures of its timed steps' % wrote)
    elif written and not by_salvage:  # the run's own report phase wrote them
        parts.append('after writing %s' % _listing(([saved] if saved else []) + written))
    elif unrecorded and saved and not by_salvage:
        parts.append('after %s was saved' % saved)
    if unrecorded:
        parts.append(unrecorded)
    if parts and (wrote is not None or by_salvage) and later['salvage']:
        parts.append('%s may be missing' % ' and '.join(later['salvage']))
    if parts:
        return '; '.join(parts)
    if saved is None:
        return 'without saving'
    what = 'after %s was saved' % saved
    if later['saved']:
        what += '; what the run writes after it (%s) may be missing' % ', '.join(later['saved'])
    return what


def abort(signum: int, saved: str | None = None, salvage=None, closers=(),
          later: dict | None = None, kept=None) -> None:
    """Ends the process now: one error line, exit status 128 + signum (130, 143, 129); the line
    says what the run kept (`describe`: 'without saving', or with `saved` what was saved
    before and what may be missing, or what `salvage` (see SignalCatcher) wrote first, or
    what `kept()` finds written and where results not yet recorded are), and NOT_CLOSED when
    one of `closers` (the MLPerf log's run_stop aborted) could not close what it keeps open.
    `later`: what the run writes after a salvage ('salvage') and after its final checkpoint
    ('saved'), each a list of names, so the line names only outputs the run has (None: the
    generic lists)."""
    wrote = _salvaged(salvage, signum)
    where = _whereabouts(kept)
    closed = _closed(closers)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - nothing may stop the abort
        pass
    later = later or {'salvage': ['the final checkpoint', 'the plot'],
                      'saved': ['results JSON', 'plot', 'the results database\'s record']}
    what = describe(wrote, saved, later, where)
    try:
        os.write(2, ('error: received %s again: aborting at once, %s%s\n'
                     % (signal.Signals(signum).name, what, '' if closed else NOT_CLOSED)
                     ).encode())
    except OSError:  # stderr on a full disk or closed: the exit status says it
        pass
    dir_hold.release_all()  # the --train_dir is free for the next run
    os._exit(128 + signum)

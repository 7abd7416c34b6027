"""SIGINT and SIGTERM: finish the current step, save, print the summary so far, then exit.

While a training run's timed loop (or an eval loop) runs, the first SIGINT (Ctrl-C) or SIGTERM
only sets a flag: the current step finishes, the loop ends as if it had reached its last step
(the `total images/sec` line covers the steps run), the hooks' phases after the loop run (final
checkpoint, results JSON with 'stopped_by_signal', plot), and then:

  - SIGINT: `run()` returns normally (result['stopped_by_signal'] == 'SIGINT'); the command
    then exits with status 130 (128 + 2, what a shell reports for a process ended by Ctrl-C:
    `exit_status`), so a script tells an interrupted run from a finished one;
  - SIGTERM: `Terminated` (a SystemExit with code 143 = 128 + 15, the status shells report for a
    process ended by SIGTERM) is raised after everything was saved; the command exits 143.

On a cluster's worker (the chief or another) the hooks after the loop also tell the other
workers to stop after their current step (cluster/coordination.py, ClusterStopHook); they exit
0, the ps tasks too.

A second signal of either kind aborts at once, without saving, even in the middle of a long step
(the same signal again within ECHO_SECS is one signal delivered twice, and is not counted)
(exit status 130 for SIGINT, 143 for SIGTERM, after one `error:` line). Once the final
checkpoint is written (by SignalHook's `end`, after the checkpoint hook's), the line no longer
says "without saving": it names the checkpoint and says that what is written after it
(results JSON, plot, the results database's record) may be missing. Python runs a signal
handler only between bytecodes of the main thread, so not while a step runs inside TensorFlow:
the catcher therefore also watches the signals from a thread (`signal.set_wakeup_fd`), which says
at once that the first one was received and ends the process (`os._exit`) on the second.

Signals arriving before the hooks begin (graph building, session set-up,
restore) keep their default effect; one arriving during the warm-up steps stops the run after the
current warm-up step: nothing is timed (no timed part's estimate, no timed step, no images/sec:
result['stopped_in_warmup'], 'images_per_sec' None, not recorded in the results database), the
phases after the loop run as above and the exit status is the same. Handlers can only be
installed from the main thread; in other threads the hook does nothing.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time

from .. import cnn_util
from ..runtime import dir_hold
from . import run_hooks

SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: A signal of the same kind read within this many seconds of the last one counted is the same
#: signal delivered twice, not a second one: GNU timeout(1) without --foreground sends its
#: signal to the command and then to the command's process group (coreutils timeout.c,
#: `cleanup`), so `timeout -s INT 20 tf_cnn_benchmarks ...` delivers SIGINT twice within
#: microseconds, and 2 of 8 such runs aborted without saving. A person pressing Ctrl-C twice
#: on purpose is slower than this.
ECHO_SECS = 0.05


def exit_status(result: dict) -> int | None:
    """The command's exit status for a run stopped by a signal after its clean stop: 130 for
    SIGINT, 143 for SIGTERM (128 + the signal's number); None when no signal stopped it (or
    `result` is not a run's result dict)."""
    name = result.get('stopped_by_signal') if isinstance(result, dict) else None
    return 128 + signal.Signals[name] if name in ('SIGINT', 'SIGTERM') else None


class Terminated(SystemExit):
    """Raised after a run stopped by SIGTERM finished saving; exit status 128 + SIGTERM."""

    def __init__(self):
        super().__init__(128 + signal.SIGTERM)


class HandlerSwap:
    """While entered, SIGINT and SIGTERM call the subclass's `_handle(signum, frame)` (main
    thread only: elsewhere nothing is installed); leaving restores the handlers that were there
    before. The base of the project's small signal catchers (a serving ps task's, the sweep's)."""

    def __init__(self):
        self._previous: dict = {}

    def _handle(self, signum, frame):
        raise NotImplementedError

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for signum in SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc):
        for signum, previous in self._previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        self._previous = {}
        return False


class SignalCatcher:
    """Turns SIGINT/SIGTERM into a flag while installed (also a context manager).

    Args:
      what: what finishes before stopping, for the message ('the current step').
      is_stale: optional () -> bool; True makes the handlers act as the previous ones (the run
        that installed them is gone).

    Attributes:
      received: the first signal number received, or None.
      saved: what the run has saved when a second signal aborts it ('the checkpoint
        /x/model.ckpt-3'), or None while nothing is: the abort's line then says 'without
        saving'.
    """

    def __init__(self, what: str = 'the current step', is_stale=None, saves: bool = True):
        self.what = what
        self.saves = saves
        self.received: int | None = None
        self.saved: str | None = None
        self._is_stale = is_stale
        self._previous: dict = {}
        self._watcher: _Watcher | None = None
        self._lock = threading.Lock()
        self._seen = 0  # signals the watcher thread saw
        self._last = (0, 0.0)  # the last one counted: (signum, time.monotonic())

    @property
    def name(self) -> str | None:
        """'SIGINT' or 'SIGTERM' once a signal was received, else None."""
        return signal.Signals(self.received).name if self.received is not None else None

    def install(self) -> None:
        """Installs the handlers (main thread only; elsewhere does nothing)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in SIGNALS:
            self._previous[signum] = signal.signal(signum, self._handle)
        if self._watcher is None:
            self._watcher = _Watcher.start(self._watched)

    def uninstall(self) -> None:
        """Restores the handlers that were there before `install`."""
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        for signum, previous in self._previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        self._previous = {}

    def __enter__(self):
        self.install()
        return self

    def __exit__(self, *exc):
        self.uninstall()
        return False

    def _stale(self) -> bool:
        return self._is_stale is not None and self._is_stale()

    def _handle(self, signum, frame):
        """The Python-level handler (main thread, between bytecodes)."""
        if self._stale() or (self.received is not None and self._watcher is None):
            previous = self._previous.get(signum)
            self.uninstall()
            if callable(previous):
                previous(signum, frame)
            else:
                _default_action(signum)
            return
        self._first(signum)  # at once when the main thread runs Python; the watcher counts

    def _watched(self, signum: int) -> None:
        """Called by the watcher thread as soon as a signal arrives."""
        if self._stale():
            return  # the Python-level handler acts as the previous one
        now = time.monotonic()
        if (self._seen and signum == self._last[0]
                and now - self._last[1] < ECHO_SECS):
            return  # the same signal delivered twice (timeout(1) without --foreground)
        self._seen += 1
        self._last = (signum, now)
        if self._seen == 1:
            self._first(signum)
        else:
            _abort(signum, self.saved)

    def _first(self, signum: int) -> None:
        """Records the first signal (seen by the handler, the watcher or both) and says so once."""
        with self._lock:
            if self.received is not None:
                return
            self.received = signum
        then = 'then saving and summarising' if self.saves else 'then summarising'
        cnn_util.warn('received %s: stopping after %s, %s (send it again to abort at once)'
                      % (signal.Signals(signum).name, self.what, then))

    def exit_if_terminated(self) -> None:
        """Raises Terminated when the signal received was SIGTERM."""
        if self.received == signal.SIGTERM:
            raise Terminated()


def _abort(signum: int, saved: str | None = None) -> None:
    """Ends the process now: one error line, exit status 128 + signum (130, 143); the line
    says 'without saving', or with `saved` what was saved before and what may be missing."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - nothing may stop the abort
        pass
    if saved is None:
        what = 'without saving'
    else:
        what = ('after %s was saved; what the run writes after it (results JSON, plot, the '
                'results database\'s record) may be missing' % saved)
    try:
        os.write(2, ('error: received %s again: aborting at once, %s\n'
                     % (signal.Signals(signum).name, what)).encode())
    except OSError:  # stderr on a full disk or closed: the exit status says it
        pass
    dir_hold.release_all()  # the --train_dir is free for the next run
    os._exit(128 + signum)


class _Watcher:
    """A daemon thread that reads the signal numbers Python's C-level handler writes to the
    wakeup fd, so SIGINT/SIGTERM are seen while the main thread is inside TensorFlow."""

    def __init__(self, on_signal, reader, writer, previous_fd):
        self._on_signal = on_signal
        self._reader, self._writer = reader, writer
        self._previous_fd = previous_fd
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name='signal-watcher', daemon=True)

    @classmethod
    def start(cls, on_signal):
        """Returns a running watcher, or None where the wakeup fd cannot be set."""
        reader, writer = socket.socketpair()
        writer.setblocking(False)
        try:
            previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        except (ValueError, OSError):
            reader.close()
            writer.close()
            return None
        watcher = cls(on_signal, reader, writer, previous_fd)
        watcher._thread.start()
        return watcher

    def stop(self) -> None:
        """Gives the wakeup fd back and ends the thread (it sees end of file)."""
        self._stopped = True
        try:
            signal.set_wakeup_fd(self._previous_fd)
        except ValueError:  # not the main thread: the fd stays set (and read, unheeded)
            return
        self._writer.close()

    def _run(self):
        try:
            while True:
                data = self._reader.recv(64)
                if not data:
                    return
                for signum in data:
                    if signum in SIGNALS and not self._stopped:
                        self._on_signal(signum)
        finally:
            self._reader.close()


def _default_action(signum):
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated()


class SignalHook(run_hooks.RunHook):
    """Stops the timed loop on SIGINT/SIGTERM and records which (phase `end`:
    result['stopped_by_signal'] = 'SIGINT', 'SIGTERM' or None). The run raises `Terminated` for
    SIGTERM once every phase has run (benchmark_cnn), so saving and reporting come first.

    If the run dies before `release` (a non-finite loss), the handlers stay installed but act as
    the defaults once the run's session is closed.
    """

    def __init__(self):
        self._sess = None
        # A run that ended by an exception never calls `end`: once its session is closed, the
        # handlers act as the previous ones.
        self.catcher = SignalCatcher(is_stale=lambda: getattr(self._sess, '_closed', False))

    def begin(self, ctx):
        self._sess = ctx.sess
        self.catcher.install()

    def should_stop(self):
        return self.catcher.received is not None

    def abort(self):
        self.catcher.uninstall()

    def end(self, result):
        # After the checkpoint hook (wiring adds this one last): its final save has run.
        if result.get('checkpoint_path'):
            self.catcher.saved = 'the checkpoint %s' % result['checkpoint_path']
        result['stopped_by_signal'] = self.catcher.name
        if self.catcher.received is not None and result.get('stopped_in_warmup'):
            cnn_util.log_fn('Stopped by %s in the warm-up: no images/sec (nothing timed; not '
                            'recorded in the results database)' % self.catcher.name)
        elif self.catcher.received is not None:
            cnn_util.log_fn('Stopped by %s after %d timed steps' % (self.catcher.name,
                                                                     result.get('num_steps', 0)))

    def release(self):
        self.catcher.uninstall()

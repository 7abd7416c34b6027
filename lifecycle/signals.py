"""SIGINT and SIGTERM: finish the current step, save, print the summary so far, then exit.

While a training run's timed loop (or an eval loop) runs, the first SIGINT (Ctrl-C) or SIGTERM
only sets a flag: the current step finishes, the loop ends as if it had reached its last step
(the `total images/sec` line covers the steps run), the hooks' phases after the loop run (final
checkpoint, results JSON with 'stopped_by_signal', plot), and then:

  - SIGINT: `run()` returns normally (result['stopped_by_signal'] == 'SIGINT'); the command
    exits with status 0;
  - SIGTERM: `Terminated` (a SystemExit with code 143 = 128 + 15, the status shells report for a
    process ended by SIGTERM) is raised after everything was saved; the command exits 143.

A second signal of either kind aborts at once (KeyboardInterrupt for SIGINT, exit 143 for
SIGTERM), without saving. Signals arriving before the hooks begin (graph building, session set-up,
restore) keep their default effect; one arriving during the warm-up steps stops the run after the
first timed step. Handlers can only be installed from the main thread; in other threads the hook
does nothing.
"""

from __future__ import annotations

import signal
import threading

from .. import cnn_util
from . import run_hooks

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Terminated(SystemExit):
    """Raised after a run stopped by SIGTERM finished saving; exit status 128 + SIGTERM."""

    def __init__(self):
        super().__init__(128 + signal.SIGTERM)


class SignalCatcher:
    """Turns SIGINT/SIGTERM into a flag while installed (also a context manager).

    Args:
      what: what finishes before stopping, for the message ('the current step').
      is_stale: optional () -> bool; True makes the handlers act as the previous ones (the run
        that installed them is gone).

    Attributes:
      received: the first signal number received, or None.
    """

    def __init__(self, what: str = 'the current step', is_stale=None):
        self.what = what
        self.received: int | None = None
        self._is_stale = is_stale
        self._previous: dict = {}

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

    def uninstall(self) -> None:
        """Restores the handlers that were there before `install`."""
        for signum, previous in self._previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        self._previous = {}

    def __enter__(self):
        self.install()
        return self

    def __exit__(self, *exc):
        self.uninstall()
        return False

    def _handle(self, signum, frame):
        if self.received is not None or (self._is_stale is not None and self._is_stale()):
            previous = self._previous.get(signum)
            self.uninstall()
            if callable(previous):
                previous(signum, frame)
            else:
                _default_action(signum)
            return
        self.received = signum
        cnn_util.warn('received %s: stopping after %s, then saving and summarising (send it '
                      'again to abort at once)' % (signal.Signals(signum).name, self.what))

    def exit_if_terminated(self) -> None:
        """Raises Terminated when the signal received was SIGTERM."""
        if self.received == signal.SIGTERM:
            raise Terminated()


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
        result['stopped_by_signal'] = self.catcher.name
        if self.catcher.received is not None:
            cnn_util.log_fn('Stopped by %s after %d timed steps' % (self.catcher.name,
                                                                     result.get('num_steps', 0)))

    def release(self):
        self.catcher.uninstall()

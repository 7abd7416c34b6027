"""SIGINT, SIGTERM and SIGHUP: finish the current step, save, print the summary so far, exit.

While a training run's timed loop (or an eval loop) runs, the first SIGINT (Ctrl-C), SIGTERM or
SIGHUP (the terminal or SSH session closed) only sets a flag: the current step finishes, the
loop ends as if it had reached its last step (the `total images/sec` line covers the steps
run), the hooks' phases after the loop run (final checkpoint, results JSON with
'stopped_by_signal', plot), and then:

  - SIGINT: `run()` returns normally (result['stopped_by_signal'] == 'SIGINT'); the command
    then exits with status 130 (128 + 2, what a shell reports for a process ended by Ctrl-C:
    `exit_status`), so a script tells an interrupted run from a finished one;
  - SIGTERM: `Terminated` (a SystemExit with code 143 = 128 + 15, the status shells report for a
    process ended by SIGTERM) is raised after everything was saved; the command exits 143;
  - SIGHUP: as SIGTERM, with exit status 129 (128 + 1).

A signal the process ignores from its start stays ignored (`handled_signals`): SIGHUP under
`nohup`, SIGINT in a job a script started with `cmd &`, any of them after `trap
'' INT`. The console commands then end a run stopped by SIGINT by SIGINT itself
(console.end_interrupted), so a shell loop running them stops as well.

A signal that arrives during the last timed step or after it (during the total block's
figures, the final checkpoint or the reports) stops nothing: the run is complete and is
recorded so (result['stopped_by_signal'] None), saying so (after the last step: in one
`warning:` line); but the run measures nothing more (no CPU peak for its utilisation figure:
the next run measures it, hardware/calibration.py `defer`), its result says
result['late_signal'] = the signal's name, and the command ends as that signal asks: by SIGINT
(130), or with 143 or 129 (`exit_status`), as a stopped run does. The one rule, whenever the
signal comes: the exit status is the signal's; whether the run completed is in its record.

During an evaluation inside a training run (eval_during_training.py) the first signal stops
the evaluation after its current batch (its accuracy then partial, and said so), then the run
as above; a final evaluation stopped so makes the run stopped, not complete
(SignalCatcher.cut_short), though the signal came after the last step began.

On a cluster's worker (the chief or another) the hooks after the loop also tell the other
workers to stop after their current step (cluster/coordination.py, ClusterStopHook); they exit
0, the ps tasks too.

A second signal of either kind aborts at once, without saving, even in the middle of a long step
(the same signal again within ECHO_SECS is one signal delivered twice, and is not counted)
(exit status 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP, after one `error:` line). Once
the timed loop has ended, its figures are known: a second signal in the phases after it, before
the reports (the final checkpoint's save, say), first writes the results JSON and the results
database's record of what is known (result['aborted_by_signal'] names the signal; no
checkpoint_path), then exits (SignalHook.salvage; at most SALVAGE_SECS). At any point, an
--ml_perf log is closed first (block_stop, run_stop aborted: SignalHook's closers), or the
error line says it is left open. Once the final
checkpoint is written (by SignalHook's `end`, after the checkpoint hook's), the line no longer
says "without saving": it names the checkpoint and says that what is written after it
(results JSON, plot, the results database's record) may be missing. A second signal during the
run's own reports (after `end`) waits a moment for them (SignalHook.whereabouts), and the line
names what they wrote; results on disk but not yet in the results database (its write waits
for another process's lock) are named with the `tf_cnn_results ingest` that records them
(lifecycle/signal_abort.py: the abort and its line). Python runs a signal
handler only between bytecodes of the main thread, so not while a step runs inside TensorFlow:
the catcher therefore also watches the signals from a thread (`signal.set_wakeup_fd`), which says
at once that the first one was received and ends the process (`os._exit`) on the second.

A reader of the output that goes away (`tf_cnn_benchmarks ... | head -40`, `| grep -m1 'total
images/sec'`) stops the run as a first signal does, quietly (no line: the reader is gone),
named 'SIGPIPE': Python ignores the signal itself, so the print that met the closed pipe tells
the catcher instead (runtime/output_streams.watch_reader, while the catcher is installed); the
run's stdout is then lost, the current step finishes, the checkpoint, results JSON and
database record are written (result['stopped_by_signal'] 'SIGPIPE', unless the timed loop had
ended: then the run is complete) and the command exits 141 (128 + SIGPIPE: `exit_status`,
output_streams.report_loss). A run stopped so says so on stderr in one line once its reports
are written (SignalHook.report: signal_lines.reader_gone; the lines stdout lost are not
copied there). A later SIGINT, SIGTERM or SIGHUP is the run's first signal as
far as aborting goes: the second one aborts.

Signals arriving before the hooks begin (TensorFlow's import, graph building, session set-up,
restore) end the command at once with one `error: interrupted by SIGTERM` line and exit status
128 + N (`CommandSignals`, installed by the command: SIGINT raises KeyboardInterrupt, as by
default; the others `Interrupted`); one arriving during the warm-up steps stops the run after the
current warm-up step: nothing is timed (no timed part's estimate, no timed step, no images/sec:
result['stopped_in_warmup'], 'images_per_sec' None, not recorded in the results database), the
phases after the loop run as above and the exit status is the same. Handlers can only be
installed from the main thread; in other threads the hook does nothing.
"""

from __future__ import annotations

import os  # noqa: F401 (the abort's os._exit: signal_abort.py; tests stub it here)
import signal
import socket
import threading
import time

from .. import cnn_util
from ..hardware import calibration
from ..runtime import dir_hold, output_streams  # noqa: F401 (dir_hold: as os)
from . import results_log, run_hooks, signal_lines
from .signal_abort import NOT_CLOSED, SALVAGE_SECS, Whereabouts  # noqa: F401 (re-exported)
from .signal_abort import abort as _abort

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: The names of SIGNALS, as result['stopped_by_signal'] holds them.
SIGNAL_NAMES = tuple(signal.Signals(s).name for s in SIGNALS)
#: result['stopped_by_signal'] of a run whose reader of stdout (or stderr) went away.
READER_GONE = signal.SIGPIPE.name
#: A signal of the same kind read within this many seconds of the last one counted is the same
#: signal delivered twice, not a second one: GNU timeout(1) without --foreground sends its
#: signal to the command and then to the command's process group (coreutils timeout.c,
#: `cleanup`), so `timeout -s INT 20 tf_cnn_benchmarks ...` delivers SIGINT twice within
#: microseconds, and 2 of 8 such runs aborted without saving. A person pressing Ctrl-C twice
#: on purpose is slower than this.
ECHO_SECS = 0.05


def handled_signals() -> tuple:
    """SIGNALS less those this process ignores (SIG_IGN): a disposition inherited at its start,
    as nothing in a command sets one before its handlers. `nohup tf_cnn_benchmarks ... &`
    ignores SIGHUP (a closed terminal must not stop the run); a shell script's `cmd &` (and
    `trap '' INT TERM`) ignores SIGINT (SIGTERM): a Ctrl-C meant for the foreground (a later
    `tail -f`) must not stop the background run. Each stays ignored."""
    return tuple(s for s in SIGNALS if signal.getsignal(s) != signal.SIG_IGN)


def _signal_of(result) -> str | None:
    """The signal that stopped the run, or that reached it after its timed steps
    ('late_signal'), or None."""
    if not isinstance(result, dict):
        return None
    return result.get('stopped_by_signal') or result.get('late_signal')


def exit_status(result: dict) -> int | None:
    """The command's exit status for a run stopped by a signal after its clean stop, or
    reached by one after its timed steps (complete, 'late_signal'): 130 for SIGINT (the
    console command then ends by SIGINT: console.end_interrupted), 143 for SIGTERM, 129 for
    SIGHUP, 141 for a reader that went away (READER_GONE) (128 + the signal's number); None
    when no signal came (or `result` is not a run's result dict)."""
    name = _signal_of(result)
    return 128 + signal.Signals[name] if name in SIGNAL_NAMES + (READER_GONE,) else None


class Terminated(SystemExit):
    """Raised after a run stopped by SIGTERM (or SIGHUP) finished saving; exit status 128 + N
    (143, 129)."""

    def __init__(self, signum: int = signal.SIGTERM):
        super().__init__(128 + signum)


def raise_if_terminated(result: dict) -> None:
    """Raises Terminated when SIGTERM or SIGHUP stopped the run, or reached it after its timed
    steps (its result dict says so); SIGINT's run returns (the command exits 130:
    `exit_status`)."""
    name = _signal_of(result)
    if name in SIGNAL_NAMES and name != 'SIGINT':
        raise Terminated(signal.Signals[name])


class Interrupted(BaseException):
    """SIGTERM or SIGHUP before a run's own handlers were installed (TensorFlow's import, the
    graph's building): raised by `CommandSignals`, as Python raises KeyboardInterrupt for
    SIGINT. `signum` is the signal's number; the command exits 128 + signum."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class HandlerSwap:
    """While entered, SIGINT, SIGTERM and SIGHUP (`handled_signals`) call the subclass's
    `_handle(signum, frame)` (main thread only: elsewhere nothing is installed); leaving
    restores the handlers that were there before. The base of the project's small signal
    catchers (a serving ps task's, the sweep's, the command's)."""

    def __init__(self):
        self._previous: dict = {}

    def _handle(self, signum, frame):
        raise NotImplementedError

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for signum in handled_signals():
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc):
        for signum, previous in self._previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        self._previous = {}
        return False


class CommandSignals(HandlerSwap):
    """The command's handlers while no run's own are installed (a context manager): SIGINT
    raises KeyboardInterrupt (Python's default), SIGTERM and SIGHUP `Interrupted`, so that
    each ends the command with one line and 128 + N instead of SIGTERM's silent death."""

    def _handle(self, signum, frame):
        del frame
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Interrupted(signum)


class SignalCatcher:
    """Turns SIGINT/SIGTERM/SIGHUP (`handled_signals`) into a flag while installed (also a
    context manager).

    Args:
      what: what finishes before stopping, for the message ('the current step').
      is_stale: optional () -> bool; True makes the handlers act as the previous ones (the run
        that installed them is gone).

    Attributes:
      received: the first signal number received, or None.
      saved: what the run has saved when a second signal aborts it ('the checkpoint
        /x/model.ckpt-3'), or None while nothing is: the abort's line then says 'without
        saving'.
      timed_done: True once the timed loop has ended (SignalHook.after_timed): a first
        signal from then on stops nothing (`late`).
      late: True when the first signal came after the timed loop had ended.
      salvage: (signum of the second signal) -> a description of what it wrote, or None:
        called by a second signal's abort before the process exits (SignalHook.salvage), or
        None.
      kept: None, or () -> signal_abort.Whereabouts: what the reports wrote and where results
        not yet recorded are, for the abort's line (SignalHook.whereabouts).
      first_line: None, or (signal name) -> the text of the first signal's warning (without
        'warning: '), or None for the default text, for a caller whose stop depends on what
        it is doing when the signal comes (an --eval loop: mid-evaluation, or waiting:
        eval_stop.EvalStop.first_line; an evaluation during training:
        eval_during_training.EvalDuringTrainingHook.first_line).
      cut_short: True when the first signal stopped work after the last timed step had
        begun (a partial final evaluation during training): the run is then not complete,
        though the signal came in its last step (SignalHook.after_timed).
    """

    def __init__(self, what: str = 'the current step', is_stale=None, saves: bool = True):
        self.what = what
        self.saves = saves
        self.received: int | None = None
        self.saved: str | None = None
        self.timed_done = False
        self.late = False
        self.salvage = None
        self.kept = None
        self.first_line = None
        self.cut_short = False
        # What the run writes after a salvage and after its final checkpoint (SignalHook's
        # `later`: {'salvage': [...], 'saved': [...]}), for the abort's line; None: unknown.
        self.later: dict | None = None
        # Callables a second signal's abort calls before it exits, each returning whether it
        # closed what it keeps open (SignalHook's `closers`: the MLPerf log's run_stop).
        self.closers: list = []
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
        """Installs the handlers (main thread only; elsewhere does nothing), and watches for a
        reader of the output that goes away (`reader_gone`)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in handled_signals():
            self._previous[signum] = signal.signal(signum, self._handle)
        if self._watcher is None:
            self._watcher = _Watcher.start(self._watched)
        output_streams.watch_reader(self.reader_gone)

    def uninstall(self) -> None:
        """Restores the handlers that were there before `install`."""
        output_streams.unwatch_reader(self.reader_gone)
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        for signum, previous in self._previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        self._previous = {}
        calibration.defer(None)

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
            _abort(signum, self.saved, self.salvage, self.closers, self.later, self.kept)

    def reader_gone(self) -> None:
        """The reader of stdout (or stderr) went away (output_streams.watch_reader): a first
        SIGPIPE (READER_GONE), said nowhere; the run stops after the current step."""
        if not self._stale():
            self._first(signal.SIGPIPE, quiet=True)

    def _first(self, signum: int, quiet: bool = False) -> None:
        """Records the first signal (seen by the handler, the watcher or both) and says so once
        (unless `quiet`)."""
        with self._lock:
            if self.received is not None:
                return
            self.received = signum
            self.late = self.timed_done
        name = signal.Signals(signum).name
        # The user asked the command to end: no figure is measured from here on (a CPU peak
        # costs seconds: the next run measures it).
        calibration.defer('not measured: the run received %s (the next run on this host '
                          'measures it)' % name)
        if quiet:
            return
        if self.late:
            cnn_util.warn(signal_lines.late_warning(name))
            return
        line = self.first_line(name) if self.first_line is not None else None
        if line is not None:
            cnn_util.warn(line)
            return
        then = 'then summarising and saving' if self.saves else 'then summarising'
        cnn_util.warn('received %s: stopping after %s, %s (send it again to abort at once)'
                      % (name, self.what, then))

    def exit_if_terminated(self) -> None:
        """Raises Terminated when the signal received was SIGTERM or SIGHUP."""
        if self.received in (signal.SIGTERM, signal.SIGHUP):
            raise Terminated(self.received)


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
    raise Terminated(signum)


class SignalHook(run_hooks.RunHook):
    """Stops the timed loop on SIGINT/SIGTERM/SIGHUP and records which (phase `end`:
    result['stopped_by_signal'] = 'SIGINT', 'SIGTERM', 'SIGHUP' or None). The run raises
    `Terminated` for SIGTERM and SIGHUP once every phase has run (benchmark_cnn), so saving and
    reporting come first. A signal after the timed loop stops nothing (the module docstring).

    Args:
      reporters: the hooks whose `report` writes what a second signal after the timed loop
        keeps (`salvage`): the results JSON's and the results database's
        (lifecycle/wiring.py).
      closers: callables a second signal's abort calls before it exits, at any point of the
        run, each returning whether it closed what it keeps open (mlperf_log.MlPerfHook's
        `close_on_abort`: block_stop and run_stop aborted); the abort line says when one
        could not (NOT_CLOSED).
      later: None, or the run's outputs the abort line may call missing: {'salvage': those
        written after a salvage ('the final checkpoint', 'the plot'), 'saved': those written
        after the final checkpoint ('results JSON', 'plot', 'the results database\'s
        record')} (wiring.py: only the run's own).

    If the run dies before `release` (bad data), the handlers stay installed but act as
    the defaults once the run's session is closed.
    """

    def __init__(self, reporters=(), closers=(), later: dict | None = None):
        self._sess = None
        self._planned = None  # the run's timed steps (its plan's num_batches)
        self._step = 0  # the timed steps run so far
        self.reporters = list(reporters)
        self._result: dict | None = None
        self._known = threading.Event()  # set once `after_loop` has the result
        self._claim = threading.Lock()
        self._reporting = False  # the report phase begins (or a salvage wrote the reports)
        self._salvaging = False  # a salvage claimed the reports
        self._salvaged: dict | None = None  # the result it writes
        self._reported = threading.Event()  # the run's own report phase has ended
        # A run that ended by an exception never calls `end`: once its session is closed, the
        # handlers act as the previous ones.
        self.catcher = SignalCatcher(is_stale=lambda: getattr(self._sess, '_closed', False))
        self.catcher.closers = list(closers)
        self.catcher.later = later
        self.catcher.kept = self.whereabouts

    def begin(self, ctx):
        self._sess = ctx.sess
        self._planned = getattr(ctx.plan, 'num_batches', None)
        self.catcher.install()

    def after_step(self, step, loss):
        del loss
        self._step = step

    def should_stop(self):
        return self.catcher.received is not None

    def after_timed(self):
        self.catcher.timed_done = True
        # From here on a second signal writes the figures: those of the total block and the
        # lines after it, which `after_loop` hands over (salvage waits for them).
        self.catcher.salvage = self.salvage
        if (self.catcher.received is not None and self._planned
                and self._step >= self._planned and not self.catcher.cut_short):
            # came during the last step: stopped nothing (not even its final evaluation)
            self.catcher.late = True

    def after_loop(self, result):
        # The figures are known from here on: a second signal writes them before it exits.
        self._result = result
        self._known.set()
        self.catcher.salvage = self.salvage

    def abort(self):
        self.catcher.uninstall()

    def _signal_name(self) -> str | None:
        """The signal that stopped the run: the first one, unless it came after the timed loop."""
        return None if self.catcher.late else self.catcher.name

    def salvage(self, signum: int) -> str | None:
        """Writes the reports of the result known so far (the reporters' `report`: results
        JSON, results database) when the report phase has not begun; returns what it wrote
        ('the results JSON /x.json and the record in the results database /r.sqlite (run 3)':
        each hook's `written`; nothing for --noresults_db's), else None. Called by
        a second signal's abort (in a thread, while the main thread may be saving); the main
        thread's `end` then waits for the exit instead of reporting a second time."""
        # A signal between the timed loop's end and `after_loop` (the total block's lines):
        # the main thread hands the result over within moments.
        if not self._known.wait(SALVAGE_SECS / 2):
            return None
        with self._claim:
            if self._reporting or self._result is None:
                return None  # the run's own report phase writes them (`whereabouts`)
            self._reporting = self._salvaging = True
            result = self._salvaged = dict(self._result)
        result['stopped_by_signal'] = self._signal_name()
        result['aborted_by_signal'] = signal.Signals(signum).name
        result.setdefault('checkpoint_path', None)
        if results_log.timed_nothing(result):  # no figures to keep
            return None
        written = []
        for hook in self.reporters:
            try:
                hook.report(result)
                written += hook.written(result)  # nothing when it wrote nothing
            except Exception:  # noqa: BLE001 - each report on its own; the abort goes on
                continue
        return ' and '.join(written) if written else None

    def end(self, result):
        # After the checkpoint hook (wiring adds this one last): its final save has run.
        with self._claim:
            salvaged = self._reporting
            self._reporting = True
        if salvaged:  # a second signal wrote the reports and is ending the process
            threading.Event().wait(SALVAGE_SECS * 2)
        if result.get('checkpoint_path'):
            self.catcher.saved = 'the checkpoint %s' % result['checkpoint_path']
        name = result['stopped_by_signal'] = self._signal_name()
        if self.catcher.late:
            result['late_signal'] = self.catcher.name  # the exit status (`exit_status`)
            cnn_util.log_fn('Received %s at the end of the timed steps: the run is complete, not '
                            'stopped by it; the command %s' % (
                                self.catcher.name, signal_lines.late_ending(self.catcher.name)))
        elif name is not None and result.get('stopped_in_warmup'):
            cnn_util.log_fn('Stopped by %s in the warm-up: no images/sec (nothing timed; not '
                            'recorded in the results database)' % name)
        elif name is not None:
            steps = result.get('num_steps', 0)
            cnn_util.log_fn('Stopped by %s after %d timed step%s' % (
                name, steps, '' if steps == 1 else 's'))

    def report(self, result):
        # After the reporters' (wiring adds this hook last): what they wrote is known.
        if result.get('stopped_by_signal') == READER_GONE:
            gone = [s.name for s in output_streams.guarded() if s.reader_gone] or ['stdout']
            written = [w for hook in self.reporters for w in hook.written(result)]
            cnn_util.warn(signal_lines.reader_gone(result, self._planned, gone[0], written))
        self._reported.set()

    def whereabouts(self) -> Whereabouts | None:
        """For a second signal's abort line: what the reporters have written (each `written`),
        whether a salvage wrote it, and where results not yet in the results database are
        (a reporter's `unrecorded`: results_db.RecordHook); None before the result is known.
        While the run's own report phase is under way, waits up to SALVAGE_SECS / 2 for it
        to end (the database's write may wait for another process's lock)."""
        if self._result is None:
            return None
        if self._reporting and not self._salvaging:
            self._reported.wait(SALVAGE_SECS / 2)
        result = self._salvaged if self._salvaging else self._result
        written, unrecorded = [], None
        for hook in self.reporters:
            written += hook.written(result)
            unrecorded = unrecorded or getattr(hook, 'unrecorded', lambda: None)()
        return Whereabouts(written, self._salvaging, unrecorded)

    def release(self):
        self.catcher.uninstall()

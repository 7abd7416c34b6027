"""stdout and stderr that cannot be written do not stop a command: its output is lost, not
its work; a character they cannot encode is written escaped.

A write to stdout or stderr can fail: the file it goes to is on a full disk (ENOSPC), it is
/dev/full, the storage failed (EIO), or the descriptor was closed when the command started
(`>&-`, `2>&-`). Python then raises OSError from whichever print met it (a traceback in the
middle of a run, before its checkpoint and results were saved), or, for a descriptor closed
from the start, has `sys.stdout` None (an AttributeError at the first flush).

`install()` (console.py: every command, before it imports its module) replaces `sys.stdout`
and `sys.stderr` by `GuardedStream`s. A write that fails is counted as lost, not raised; the
descriptor then points at /dev/null, so nothing (Python's flush at exit included) meets the
error again, and later writes to that stream are counted as lost too. A descriptor closed at
start (0, 1 or 2) is opened on /dev/null first, so that no file the command opens later (a
checkpoint, the results database) takes its number and receives output meant for the
terminal; writes to such a stream are lost the same way. A reader that went away
(BrokenPipeError: `| head`, `| grep -m1`) ends a command with exit status 141
(READER_GONE_STATUS), quietly: raised from the print that met it (console.finish), unless a
run is watching for it (`watch_reader`: lifecycle/signals.py, while a run's stop handlers are
installed); the stream is then lost as above, the watcher told, and the run stops as a signal
stops it (after the current step, its checkpoint and results saved), then exits 141 with no
line (`report_loss`).

A stream whose encoding cannot write a character the command prints (`PYTHONIOENCODING=ascii`,
a terminal set to ASCII: a non-ASCII --train_dir, a label 'café', the sweep report's '±') writes
it as a backslash escape ('caf\\xe9'), as Python's own stderr does, instead of raising
UnicodeEncodeError: `install()` reconfigures Python's streams with errors='backslashreplace',
and a GuardedStream escapes the text itself for an inner stream that cannot be reconfigured.

When the command ends, `loss_line()` is the one line saying what was lost (console.finish
prints it on the stream that still works, stderr first) and the exit status becomes
OUTPUT_LOST_STATUS (74, EX_IOERR of sysexits.h) where the command itself would have exited 0.

Only the standard library is imported (console.py loads this before anything else).
The command's own entry (console.py) installs it; library callers' streams are left alone.
"""

from __future__ import annotations

import errno
import io
import os
import sys

#: The exit status of a command that did its work but lost part of its stdout or stderr.
OUTPUT_LOST_STATUS = 74

#: The exit status of a command whose reader went away: 128 + SIGPIPE, as a shell reports a
#: tool killed by SIGPIPE.
READER_GONE_STATUS = 141

#: The callables told when a reader went away (`watch_reader`), in the order added.
_reader_watchers: list = []

#: What a shell writes for each stream, for the message: the flags that closed it.
_CLOSED_SPELLING = {1: '>&-', 2: '2>&-'}


class GuardedStream(io.TextIOBase):
    """A text stream (`sys.stdout` or `sys.stderr`) whose failed writes are lost, not raised.

    Args:
      inner: the stream written to (Python's own sys.stdout or sys.stderr), or None when the
        descriptor was closed at start (every write is then lost).
      fd: its file descriptor (1 or 2), pointed at /dev/null after the first failure.
      name: 'stdout' or 'stderr', for the message.

    Attributes:
      reason: None while nothing was lost; else why ('No space left on device', 'it was
        closed (>&-)').
      lost_lines: the lines (newlines, or 1 for text without one) lost so far.
      reader_gone: True when the stream was lost because its reader went away while a run
        watched for it (`watch_reader`): no loss line, exit status 141.
    """

    def __init__(self, inner, fd: int, name: str):
        super().__init__()
        self.inner = inner
        self.fd = fd
        self.name = name
        self.reason: str | None = None
        self.reader_gone = False
        self._lost_newlines = 0
        self._partial = False  # the last text lost did not end its line

    @property
    def lost_lines(self) -> int:
        return self._lost_newlines + self._partial

    def _lose(self, text: str) -> None:
        if text:
            self._lost_newlines += text.count('\n')
            self._partial = not text.endswith('\n')

    def _failed(self, error: OSError) -> None:
        """Records the first failure and points the descriptor at /dev/null, so that the text
        still in `inner`'s buffer and Python's flush at exit go nowhere instead of failing.
        EBADF (the descriptor is not open for writing) is a closed stream, said as one closed
        at start is: a launcher script that runs Python with `2>&-` can leave its own file,
        opened for reading, on the number (pyenv's shims do), and the line said 'Bad file
        descriptor' for stderr but 'it was closed (>&-)' for stdout."""
        self.reason = (_closed_reason(self.fd) if error.errno == errno.EBADF
                       else error.strerror or str(error))
        _point_at_devnull(self.fd)
        try:
            self.inner.flush()
        except (OSError, ValueError):
            pass

    def write(self, text: str) -> int:
        if self.reason is None and self.inner is None:
            self.reason = _closed_reason(self.fd)
        if self.reason is not None:
            self._lose(text)
            return len(text)
        try:
            try:
                self.inner.write(text)
            except UnicodeEncodeError:  # nothing was written: the encoding failed first
                self.inner.write(escaped(text, self.encoding))
            return len(text)
        except BrokenPipeError as e:
            if not _reader_watchers:
                raise
            self._reader_went_away(e)
            self._lose(text)
            return len(text)
        except OSError as e:
            self._failed(e)
            self._lose(text)
            return len(text)

    def flush(self) -> None:
        if self.reason is not None or self.inner is None:
            return
        try:
            self.inner.flush()
        except BrokenPipeError as e:
            if not _reader_watchers:
                raise
            self._reader_went_away(e)
            self._lost_newlines += 1  # the buffered text: at least a line
        except OSError as e:
            self._failed(e)
            self._lost_newlines += 1  # the buffered text: at least a line

    def _reader_went_away(self, error: BrokenPipeError) -> None:
        """Loses the stream as `_failed` does, then tells the watchers (`watch_reader`)."""
        self.reader_gone = True
        self._failed(error)
        for watcher in list(_reader_watchers):
            watcher()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.inner is not None and self.reason is None and self.inner.isatty()

    def fileno(self) -> int:
        return self.fd

    @property
    def encoding(self) -> str:
        return getattr(self.inner, 'encoding', None) or 'utf-8'

    @property
    def errors(self) -> str:
        """'backslashreplace': a character the encoding cannot write is escaped (`write`)."""
        return 'backslashreplace'

    @property
    def buffer(self):
        """The binary stream under `inner` (None for a stream closed at start)."""
        return getattr(self.inner, 'buffer', None)


def escaped(text: str, encoding: str) -> str:
    """`text` with each character `encoding` cannot write as a backslash escape: 'caf\\xe9'
    for 'café' in 'ascii', '\\xb1' for '±'; `text` itself where every character fits."""
    return text.encode(encoding, 'backslashreplace').decode(encoding, 'replace')


def _escaping(stream):
    """`stream` (Python's sys.stdout or sys.stderr) reconfigured to write a character its
    encoding cannot write as a backslash escape (errors='backslashreplace'); a stream that
    cannot be reconfigured is returned as it is (GuardedStream.write escapes for it)."""
    if getattr(stream, 'errors', None) == 'strict' and hasattr(stream, 'reconfigure'):
        try:
            stream.reconfigure(errors='backslashreplace')
        except (OSError, ValueError):  # a closed or failing stream: its writes are lost anyway
            pass
    return stream


def watch_reader(watcher) -> None:
    """From now on, a reader of stdout or stderr that goes away (BrokenPipeError) loses that
    stream quietly, as a full disk's does, and calls `watcher()` (each time a stream's first
    write or flush fails so), instead of raising from the print that met it. Until
    `unwatch_reader(watcher)`.

    Args:
      watcher: a callable without arguments (lifecycle/signals.SignalCatcher's: the run stops
        after its current step); called from the thread that printed.
    """
    _reader_watchers.append(watcher)


def unwatch_reader(watcher) -> None:
    """Undoes `watch_reader(watcher)` (nothing when it is not watching)."""
    if watcher in _reader_watchers:
        _reader_watchers.remove(watcher)


def _closed_reason(fd: int) -> str:
    """'it was closed (>&-)', 'it was closed (2>&-)': the reason of a stream that was closed."""
    return 'it was closed (%s)' % _CLOSED_SPELLING.get(fd, 'closed')


def _point_at_devnull(fd: int) -> None:
    """Makes `fd` an open descriptor on /dev/null (write-only; read-only for 0)."""
    try:
        null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
    except OSError:
        return
    if null != fd:
        os.dup2(null, fd)
        os.close(null)


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def install() -> None:
    """Guards `sys.stdout` and `sys.stderr` (once per process; a second call does nothing),
    each writing what its encoding cannot as backslash escapes.

    Descriptors 0, 1 and 2 that are closed are opened on /dev/null first (the module
    docstring). A stream that is not Python's own (a test's redirection) is guarded as it is.
    """
    closed = [fd for fd in (0, 1, 2) if not _is_open(fd)]
    for fd in closed:
        _point_at_devnull(fd)
    for fd, name in ((1, 'stdout'), (2, 'stderr')):
        stream = getattr(sys, name)
        if isinstance(stream, GuardedStream):
            continue
        inner = None if (fd in closed or stream is None) else _escaping(stream)
        setattr(sys, name, GuardedStream(inner, fd, name))


def guarded() -> list[GuardedStream]:
    """sys.stdout and sys.stderr where `install` guarded them."""
    return [s for s in (sys.stdout, sys.stderr) if isinstance(s, GuardedStream)]


def loss_line() -> str | None:
    """The one line saying which output was lost and why, or None when nothing was: e.g.
    'error: 12 lines of this command's output to stdout were lost: No space left on device;
    the command went on to its end regardless (its files, checkpoint and results were
    written as usual); give stdout a file on a disk with space, or >/dev/null'."""
    lost = [s for s in guarded() if s.reason is not None and not s.reader_gone]
    if not lost:
        return None
    parts = ['%d line%s to %s (%s)' % (s.lost_lines, '' if s.lost_lines == 1 else 's', s.name,
                                       s.reason) for s in lost]
    return ('error: part of this command\'s output was lost: %s could not be written; the '
            'command went on to its end regardless (the files it writes were written as '
            'usual); give %s a file on a disk with space, a terminal or /dev/null'
            % (' and '.join(parts), ' and '.join(s.name for s in lost)))


def report_loss(status):
    """Prints `loss_line()` (if any output was lost) on stderr, or on stdout where stderr is
    the stream that failed, and returns the command's exit status: in place of 0 (or None),
    READER_GONE_STATUS (141) when a reader went away while a run watched for it (quietly:
    that is no loss to report), else OUTPUT_LOST_STATUS (74) when output was lost; `status`
    otherwise."""
    if status in (0, None) and any(s.reader_gone for s in guarded()):
        status = READER_GONE_STATUS
    line = loss_line()
    if line is None:
        return status
    for stream in (sys.stderr, sys.stdout):
        if isinstance(stream, GuardedStream) and stream.reason is None:
            try:
                stream.write(line + '\n')
                stream.flush()
            except OSError:
                continue
            if stream.reason is None:
                break
    return OUTPUT_LOST_STATUS if status in (0, None) else status

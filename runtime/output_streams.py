"""stdout and stderr that cannot be written do not stop a command: its output is lost, not
its work.

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
(BrokenPipeError) is not handled here: it still ends the command with exit status 141
(console.finish).

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
    """

    def __init__(self, inner, fd: int, name: str):
        super().__init__()
        self.inner = inner
        self.fd = fd
        self.name = name
        self.reason: str | None = None
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
            return self.inner.write(text)
        except BrokenPipeError:
            raise
        except OSError as e:
            self._failed(e)
            self._lose(text)
            return len(text)

    def flush(self) -> None:
        if self.reason is not None or self.inner is None:
            return
        try:
            self.inner.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            self._failed(e)
            self._lost_newlines += 1  # the buffered text: at least a line

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
        return getattr(self.inner, 'errors', None) or 'strict'

    @property
    def buffer(self):
        """The binary stream under `inner` (None for a stream closed at start)."""
        return getattr(self.inner, 'buffer', None)


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
    """Guards `sys.stdout` and `sys.stderr` (once per process; a second call does nothing).

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
        inner = None if (fd in closed or stream is None) else stream
        setattr(sys, name, GuardedStream(inner, fd, name))


def guarded() -> list[GuardedStream]:
    """sys.stdout and sys.stderr where `install` guarded them."""
    return [s for s in (sys.stdout, sys.stderr) if isinstance(s, GuardedStream)]


def loss_line() -> str | None:
    """The one line saying which output was lost and why, or None when nothing was: e.g.
    'error: 12 lines of this command's output to stdout were lost: No space left on device;
    the command went on to its end regardless (its files, checkpoint and results were
    written as usual); give stdout a file on a disk with space, or >/dev/null'."""
    lost = [s for s in guarded() if s.reason is not None]
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
    the stream that failed, and returns the command's exit status: OUTPUT_LOST_STATUS in
    place of 0 (or None) when output was lost, `status` otherwise."""
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

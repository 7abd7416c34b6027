"""The calibration record's file (hardware/calibration.py): its read-modify-write under an
exclusive lock (`locked`) and its replacement by a rename (`replace`).

Several processes of one host store figures in the record at once (the jobs of a scheduler, a
sweep's runs, `--calibrate` beside a run): each reads the record, changes its entries and
writes it back. Without a lock the later writer replaced the entries the earlier one had just
added (two processes storing 200 distinct figures each left 226 of the 400). So each
read-modify-write holds an exclusive flock(2) on `<record>.lock` beside the record; the
rename keeps a reader, which takes no lock, from ever seeing half a file. The lock file stays
(removing it would let the next writer lock a new file while another still holds the old).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import tempfile
import time

from . import user_dirs

LOCK_SUFFIX = '.lock'
#: Seconds a writer waits for another process's lock before giving up (its figures are then
#: used by its run and not kept, as on a folder that cannot be written).
LOCK_WAIT_SECS = 30.0
_POLL_SECS = 0.01


def _check_home(path: str) -> None:
    """Raises OSError when `path` lies under a home folder that does not exist (never made)."""
    home = user_dirs.absent_home(path)
    if home:
        raise OSError('the calibration record %s %s' % (path, user_dirs.absent_home_text(home)))


@contextlib.contextmanager
def locked(path: str, wait_secs: float | None = None):
    """Holds an exclusive lock on `<path>.lock` (made, with the record's folder, when missing)
    while inside: one read-modify-write of the record at a time on this host.

    Args:
      path: the record's file.
      wait_secs: how long to wait for another process's lock (default LOCK_WAIT_SECS).

    Raises:
      OSError: the lock file cannot be made or opened (a folder that cannot be written, or
        under a home folder that does not exist: nothing is made), or another process held
        the lock for `wait_secs`; IsADirectoryError: `path` is a folder.
    """
    _check_home(path)
    if os.path.isdir(path):  # no record can be written there: no lock file made beside it
        raise IsADirectoryError(errno.EISDIR, 'the calibration record is a folder', path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fd = os.open(path + LOCK_SUFFIX, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)  # less umask
    try:
        deadline = time.monotonic() + (LOCK_WAIT_SECS if wait_secs is None else wait_secs)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise OSError('the calibration record %s stayed locked by another process'
                                  % path) from None
                time.sleep(_POLL_SECS)
        yield
    finally:
        os.close(fd)  # releases the lock


def replace(path: str, document: dict) -> None:
    """Writes `document` as the record's JSON into a temporary file beside `path`, then renames
    it over `path` (atomic: a reader sees the old record or the new one); where `path` is a
    symbolic link, beside its target and over it (the link stays). The record's mode is 0666
    less the umask, as open() gives and as the run's other outputs have (mkstemp's 0600 kept
    a group sharing the cache folder out; the record holds nothing private: figures of the
    CPU). The lock file beside it is made with the same mode.

    Raises:
      OSError: the write failed (a full disk, ...; the temporary file is removed), or `path`
        is under a home folder that does not exist (before anything is made).
    """
    _check_home(path)
    path = os.path.realpath(path)  # a symbolic link's target is replaced, the link stays
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix='.calibration_', suffix='.tmp')
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # mkstemp's 0600 -> what open() gives, as other outputs
        with os.fdopen(fd, 'w', encoding='utf-8') as f:
            json.dump(document, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise

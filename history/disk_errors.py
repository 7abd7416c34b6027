"""What SQLite's words for a failed write mean for the results database (history/store.py),
and leaving nothing behind when its first write fails.

On a full disk (or failing storage) SQLite reports `disk I/O error` (SQLITE_IOERR: the -wal or
-shm file could not grow) or `database or disk is full` (SQLITE_FULL), and rolls the
transaction back by itself; a COMMIT or ROLLBACK after that fails with `cannot commit - no
transaction is active`, words that say nothing of the disk. `disk_problem` says what happened
(the disk holding the file is full, told by SQLite's code or by the space left there, or
the storage failed) and what to do; `rollback_quietly` ends a transaction without hiding
the error that ended it.

A run's first write into a database that was not there makes the file (and its -wal and -shm
files) before it fails; `remove_unused_file` removes them when they hold no run, so a full
disk is not left with a database of no runs.
"""

from __future__ import annotations

import os
import sqlite3
from urllib.parse import quote

#: Free bytes (for this user) below which a folder's disk counts as full: SQLite's write of
#: one run needs a few pages and the -wal and -shm files.
LOW_SPACE_BYTES = 1 << 20

#: SQLite's words of an I/O failure, and of a transaction an I/O failure rolled back.
_IO_WORDS = ('disk I/O error', 'database or disk is full', 'no transaction is active')


def existing_folder(path: str) -> str:
    """The nearest folder of `path` (its own, or a parent's) that exists."""
    folder = os.path.dirname(os.path.abspath(path))
    while not os.path.isdir(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    return folder


def free_bytes(folder: str) -> int | None:
    """Bytes this user may still write on the file system of `folder` (statvfs f_bavail x
    f_frsize), or None when it cannot be told."""
    try:
        info = os.statvfs(folder)
    except OSError:
        return None
    return info.f_bavail * info.f_frsize


def disk_problem(path: str, error: sqlite3.Error) -> str | None:
    """What an SQLite error on the results database `path` means when it is an I/O failure,
    with the fix; None for any other error.

    Returns:
      'the results database /d/r.sqlite cannot be used: the disk holding /d is full
      (disk I/O error); free space there, or give --results_db=PATH on another disk' when
      SQLite says so (SQLITE_FULL) or under LOW_SPACE_BYTES are free there; else 'the storage
      holding /d failed to read or write it (disk I/O error): check that disk, or give
      --results_db=PATH on a local disk that works'.
    """
    text = str(error)
    name = getattr(error, 'sqlite_errorname', '') or ''
    if not (name.startswith(('SQLITE_IOERR', 'SQLITE_FULL')) or any(w in text for w in _IO_WORDS)):
        return None
    folder = existing_folder(path)
    free = free_bytes(folder)
    full = (name == 'SQLITE_FULL' or 'disk is full' in text
            or (free is not None and free < LOW_SPACE_BYTES))
    if 'no transaction is active' in text:
        text = 'SQLite: %s: an I/O error ended the transaction' % text
    if full:
        return ('the results database %s cannot be used: the disk holding %s is full (%s); '
                'free space there, or give --results_db=PATH on another disk'
                % (path, folder, text))
    return ('the results database %s cannot be used: the storage holding %s failed to read or '
            'write it (%s); check that disk, or give --results_db=PATH on a local disk that '
            'works' % (path, folder, text))


def rollback_quietly(conn: sqlite3.Connection) -> None:
    """ROLLBACK, where SQLite has not rolled back already: after an I/O error it has, and the
    ROLLBACK's own error ('cannot rollback - no transaction is active') would hide the one
    being raised."""
    if conn.in_transaction:
        try:
            conn.execute('ROLLBACK')
        except sqlite3.Error:
            pass


def _count_runs(uri: str) -> int | None:
    """The runs of the database at the SQLite `uri` (0 without a runs table), or None when it
    cannot be read."""
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None)
        try:
            return conn.execute('SELECT COUNT(*) FROM runs').fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError as e:
        return 0 if 'no such table' in str(e) else None
    except sqlite3.Error:
        return None


def remove_unused_file(path: str) -> bool:
    """Removes the database file `path` with its -wal, -shm and -journal files when it holds
    no run (no runs table, or an empty one): for a file that a first write which then failed
    made. A file that cannot be read (locked by a writer, damaged) is left as it is.

    It is read as SQLite reads it (its -wal too; read-write: as the last connection it leaves
    no -wal or -shm behind, where a read-only one leaves both). On a full disk that read fails
    (the -shm file cannot grow: SQLITE_IOERR_SHMSIZE); where the -wal is then empty or absent
    the file alone holds everything, and it is read as it is (`immutable`).

    Returns:
      True when the file was removed.
    """
    where = quote(os.fsencode(os.path.abspath(path)))
    runs = _count_runs('file:%s?mode=rw' % where)
    wal = path + '-wal'
    if runs is None and (not os.path.exists(wal) or os.path.getsize(wal) == 0):
        runs = _count_runs('file:%s?mode=ro&immutable=1' % where)
    if runs is None or runs:
        return False
    for tail in ('-wal', '-shm', '-journal', ''):
        try:
            os.remove(path + tail)
        except FileNotFoundError:
            pass
        except OSError:
            return False
    return True

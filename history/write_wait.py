"""The results database's write lock taken (history/store.py `transaction`), and a wait for
it said in one line.

Several runs of one host record at once, and `tf_cnn_results ingest` writes too: each write
is one transaction that takes SQLite's write lock (`BEGIN IMMEDIATE`) and waits up to
store.BUSY_TIMEOUT_SECS while another process holds it. A run then sat after its total block
for up to a minute without a word, as if hung. So a wait that lasts past NOTE_AFTER_SECS is
said in one line on stdout, where the project's other waits are said (`Waiting for the chief
...`, `Waiting for a first checkpoint ...`):

    Waiting for the results database /r/results.sqlite: another process holds its lock (up to 60 s)

A write that gets the lock sooner prints nothing.
"""

from __future__ import annotations

import sqlite3

from .. import cnn_util

#: Seconds of waiting for the lock before the wait is said.
NOTE_AFTER_SECS = 2.0


def _set_timeout(conn: sqlite3.Connection, secs: float) -> None:
    conn.execute('PRAGMA busy_timeout = %d' % max(0, int(secs * 1000)))


def waiting_line(path: str, timeout_secs: float) -> str:
    """'Waiting for the results database PATH: another process holds its lock (up to 60 s)'."""
    return ('Waiting for the results database %s: another process holds its lock (up to %g s)'
            % (path, timeout_secs))


def begin_immediate(conn: sqlite3.Connection, path: str, timeout_secs: float) -> None:
    """Begins a write transaction on `conn` (`BEGIN IMMEDIATE`), waiting up to `timeout_secs`
    in all for another process's lock; once the wait passes NOTE_AFTER_SECS, `waiting_line`
    is printed (cnn_util.log_fn). The connection's busy timeout is `timeout_secs` again after.

    Raises:
      sqlite3.Error: as `BEGIN IMMEDIATE` does ('database is locked' after `timeout_secs`).
    """
    first = min(NOTE_AFTER_SECS, timeout_secs)
    _set_timeout(conn, first)
    try:
        conn.execute('BEGIN IMMEDIATE')
        return
    except sqlite3.OperationalError as e:
        if 'locked' not in str(e) or timeout_secs <= first:
            raise
    finally:
        _set_timeout(conn, timeout_secs)
    cnn_util.log_fn(waiting_line(path, timeout_secs))
    _set_timeout(conn, timeout_secs - first)
    try:
        conn.execute('BEGIN IMMEDIATE')
    finally:
        _set_timeout(conn, timeout_secs)

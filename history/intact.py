"""Damage in a results database that no query would read: an index page overwritten, say.

SQLite reports a damaged page only when a query reads it, so a file whose damaged pages are
those of an index the commands never use was read, listed and written to as if sound.
`damage` runs SQLite's `PRAGMA quick_check` (every page's structure, index pages included:
not the slower integrity_check's match of each index to its table) when the file is opened
(history/store.py), and says what it found. Its cost, measured on a database of 10,000 runs
(90 MB) on a shared 2-core Intel Xeon (warm page cache, load average 6): 0.05 s, where
recording one run there takes 0.02 s; once per command or run.
"""

from __future__ import annotations

import shlex
import sqlite3

#: How many of quick_check's findings the message names.
FINDINGS = 3


def damage(conn: sqlite3.Connection, path: str) -> str | None:
    """Why the database open in `conn` (the file `path`) must be neither read nor written:
    'PATH is a damaged SQLite database (PRAGMA quick_check: On tree page 3 cell 1: Offset
    21882 out of range 4070..4092; ...); it was left untouched: ...', with the way out; None
    when quick_check finds nothing.

    Raises:
      sqlite3.Error: the check itself failed (a page it cannot read at all: the caller's
        `_problem` says so as for any query).
    """
    found = [row[0] for row in conn.execute('PRAGMA quick_check(%d)' % FINDINGS)]
    if found == ['ok']:
        return None
    lines = [line.strip() for finding in found for line in finding.splitlines()]
    text = '; '.join(line for line in lines if line and not line.startswith('***'))
    return ('%s is a damaged SQLite database (PRAGMA quick_check: %s); it was left untouched: '
            'move it away (a new database is made in its place) or choose another '
            '--results_db=PATH; `sqlite3 %s .recover` may save its runs'
            % (path, text, shlex.quote(path)))

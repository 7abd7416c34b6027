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

import os
import shlex
import sqlite3

#: How many of quick_check's findings the message names.
FINDINGS = 3
#: SQLite's file header: the page size (2 bytes, big-endian; 1 means 65536) at offset 16, the
#: database's size in pages (4 bytes) at 28, valid when the change counter at 24 equals the
#: version-valid-for number at 92 (https://www.sqlite.org/fileformat.html, 1.3).
_HEADER_BYTES = 100


def way_out(path: str) -> str:
    """The fix of every damaged database's message: 'it was left untouched: move it away (a
    new database is made in its place) or choose another --results_db=PATH; `sqlite3 PATH
    .recover` may save its runs'."""
    return ('it was left untouched: move it away (a new database is made in its place) or '
            'choose another --results_db=PATH; `sqlite3 %s .recover` may save its runs'
            % shlex.quote(path))


def truncation(path: str) -> str | None:
    """'cut short: 92,160 of the 184,320 bytes its header gives' when the file at `path` is
    shorter than the size its SQLite header records (a copy, download or disk that stopped
    early), else None (no header, no size in it, or a file that cannot be read)."""
    try:
        with open(path, 'rb') as f:
            header = f.read(_HEADER_BYTES)
        size = os.path.getsize(path)
    except OSError:
        return None
    if len(header) < _HEADER_BYTES or not header.startswith(b'SQLite format 3\0'):
        return None
    if header[24:28] != header[92:96]:  # the size field is not kept by whoever wrote last
        return None
    page_size = int.from_bytes(header[16:18], 'big')
    page_size = 65536 if page_size == 1 else page_size
    expected = page_size * int.from_bytes(header[28:32], 'big')
    if not expected or size >= expected:
        return None
    return 'cut short: {:,} of the {:,} bytes its header gives'.format(size, expected)


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
    return '%s is a damaged SQLite database (PRAGMA quick_check: %s); %s' % (
        path, text, way_out(path))

"""The results database: one SQLite file (the standard library's sqlite3), its schema and
migrations, writes and queries.

Where: --results_db=PATH, else TF_CNN_RESULTS_DB (read as the flag is: `variable_value`),
else `$XDG_DATA_HOME/tf_cnn_benchmarks/results.sqlite` (`~/.local/share`): `default_path()`.
Ours when its SQLite header's application_id is APPLICATION_ID ('tcnb'); user_version is the
schema version.

Several runs on one host may write at once: the file is in WAL mode (readers never wait for
a writer), every write is one transaction (`BEGIN IMMEDIATE`: writers queue), and a writer
waits up to BUSY_TIMEOUT_SECS for the lock before giving up (saying so after a moment:
history/write_wait.py). A row's content_key is unique,
so writing a run that is already there adds nothing (ingest is idempotent). WAL needs the
file on a local disk (not NFS): copy results between hosts as sweep folders or run JSONs
and ingest them.

A file that is not a results database of this program (another program's SQLite file, any
other file, a damaged database, a newer schema) is never written to: `StoreError` says what
it is and how to go on, and the file stays as it was. A full disk or failing storage is said
so, with the fix, not in SQLite's words (history/disk_errors.py). Damage is looked for at
each opening, index pages included (history/intact.py: 0.05 s for 10,000 runs).

Schema history and migrations: history/schema.py (`MIGRATIONS`; a file is brought to
SCHEMA_VERSION when opened).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time

from .. import package_info
from ..cnn_util import BenchmarkError
from ..runtime import file_systems
from . import disk_errors, intact, records, store_paths, upgrades, write_wait
from .schema import (  # noqa: F401 (re-exported: the schema and its migrations)
    ADDED_COLUMNS,
    ADDED_IN,
    MIGRATIONS,
    SCHEMA_VERSION,
)
from .store_paths import (  # noqa: F401 (re-exported: where the database is)
    FILE_NAME,
    PATH_VARIABLE,
    data_folder,
    default_origin,
    default_path,
    home_problem,
    read_only_reason,
    resolve_path,
    variable_value,
    write_problem,
)

APPLICATION_ID = 0x74636E62  # 'tcnb' in ASCII
BUSY_TIMEOUT_SECS = 60.0
class StoreError(BenchmarkError):
    """The results database cannot be used (not ours, damaged, newer, locked, unwritable);
    the message is one line naming the file and the way out (exit status 1)."""


class NewerSchemaError(StoreError):
    """A results database of a newer schema than SCHEMA_VERSION; `version` is its schema."""

    def __init__(self, message: str, version: int):
        super().__init__(message)
        self.version = version


def missing_error(path: str) -> StoreError:
    """The error of a database that is not there: where runs record it and how to load runs
    into it, or, under a home folder that does not exist (never made) or where it cannot be
    made (read-only storage: runs there are not recorded, and warn), that reason and the
    places to give instead; a loop of symbolic links (file_systems.link_loop) named so."""
    loop = file_systems.link_loop(path)
    if loop:
        return StoreError('no results database at %s: it is %s; give another --results_db=PATH'
                          % (path, loop))
    home = home_problem(path) or (write_problem(path) or (None,))[0]  # read-only too
    if home:
        return StoreError('no results database at %s: it %s, so runs do not record there; '
                          'give --results_db=PATH or set $%s' % (path, home, PATH_VARIABLE))
    return StoreError('no results database at %s (runs record there unless --noresults_db; '
                      '`tf_cnn_results ingest DIR` loads sweep folders and run JSONs)' % path)


def _problem(path: str, error: sqlite3.Error) -> StoreError:
    text = str(error)
    if isinstance(error, sqlite3.OperationalError) and 'locked' in text:
        return StoreError('the results database %s stayed locked by another process for %g s '
                          '(%s); try again, or give this run --results_db=OTHER_PATH'
                          % (path, BUSY_TIMEOUT_SECS, text))
    disk = disk_errors.disk_problem(path, error)  # a full disk, failing storage
    if disk:
        return StoreError(disk)
    if isinstance(error, sqlite3.DatabaseError) and ('not a database' in text
                                                     or 'malformed' in text):
        if 'not a database' in text:  # no SQLite file at all: nothing to recover
            return StoreError('%s is not an SQLite database (%s); it was left untouched: move '
                              'it away (a new database is made in its place) or choose another '
                              '--results_db=PATH' % (path, text))
        cut = intact.truncation(path)
        return StoreError('%s is a damaged SQLite database (%s%s); %s' % (
            path, cut + ': ' if cut else '', text, intact.way_out(path)))
    read_only = read_only_reason(path)
    if read_only:
        return StoreError('the results database %s cannot be written: %s (%s); the read-only '
                          'commands (list, show, history, regressions, html) read it, writes '
                          'need another --results_db=PATH' % (path, read_only, text))
    return StoreError('the results database %s cannot be used: %s' % (path, text))


def _check_identity(conn: sqlite3.Connection, path: str) -> int:
    """The file's schema version (0: a new, empty file).

    Raises:
      StoreError: another program's database, or a newer schema than this one knows.
    """
    # One read transaction: another process creating the schema commits between the reads
    # otherwise (application_id 0 read before its commit, its tables after: 'another program').
    # A failed read ends it with a quiet ROLLBACK: a COMMIT in a `finally` raised 'cannot
    # commit - no transaction is active' over the I/O error that ended it (a full disk).
    conn.execute('BEGIN')
    try:
        app_id = conn.execute('PRAGMA application_id').fetchone()[0]
        version = conn.execute('PRAGMA user_version').fetchone()[0]
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    except BaseException:
        disk_errors.rollback_quietly(conn)
        raise
    conn.execute('COMMIT')
    if app_id == 0 and not tables:
        return 0
    if app_id != APPLICATION_ID:
        raise StoreError('%s is an SQLite database of another program (application_id %#x, '
                         'tables: %s), not a tf_cnn_benchmarks results database; it was left '
                         'untouched: choose another --results_db=PATH'
                         % (path, app_id, ', '.join(tables) or 'none'))
    if version > SCHEMA_VERSION:
        raise NewerSchemaError('%s has schema version %d, newer than this tf_cnn_benchmarks '
                               '(%s) knows (%d); it was left untouched: upgrade '
                               'tf_cnn_benchmarks, or choose another --results_db=PATH'
                               % (path, version, package_info.VERSION, SCHEMA_VERSION), version)
    return version


def _check_intact(conn: sqlite3.Connection, path: str, version: int) -> None:
    """Raises StoreError when the file (schema `version`; 0: new, nothing to check) is
    damaged (history/intact.py)."""
    problem = intact.damage(conn, path) if version else None
    if problem:
        raise StoreError(problem)


def _wal(conn: sqlite3.Connection) -> None:
    """Switches the file to WAL (kept in the file); retries while another opener holds it."""
    deadline = time.monotonic() + BUSY_TIMEOUT_SECS
    while True:
        try:
            conn.execute('PRAGMA journal_mode=WAL').fetchone()
            return
        except sqlite3.OperationalError as e:
            if 'locked' not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _migrate(conn: sqlite3.Connection, target: int) -> int:
    """Brings the schema to `target` in one transaction (a concurrent opener waits, then
    finds it done); returns the version found once the lock was taken (`target`: done
    already)."""
    conn.execute('BEGIN IMMEDIATE')
    try:
        version = conn.execute('PRAGMA user_version').fetchone()[0]
        for step in range(version + 1, target + 1):
            MIGRATIONS[step](conn)
        if version < target:
            conn.execute('PRAGMA application_id = %d' % APPLICATION_ID)
            conn.execute('PRAGMA user_version = %d' % target)
        conn.execute('COMMIT')
    except BaseException:
        disk_errors.rollback_quietly(conn)  # never hiding the error that ended it
        raise
    return version


def open_store(path: str, *, create: bool = True,
               schema_version: int = SCHEMA_VERSION) -> sqlite3.Connection:
    """Opens (creating or migrating it when needed) the results database at `path`.

    Args:
      path: the file.
      create: make a new file when there is none (False: StoreError instead).
      schema_version: the layout to bring a new or older file to (tests make older files).

    Returns:
      An sqlite3 connection in autocommit mode (writes use `transaction`), rows as
      sqlite3.Row.

    A file of an older schema that this opening migrates is said in one `note:` line on
    stderr (history/upgrades.py: the versions that can no longer write it).

    Raises:
      StoreError: no file (with create=False; or a loop of symbolic links), a folder that
        cannot be made (or is under a home folder that does not exist: that is never made), a
        file that is not a results database of this program, damaged (`_check_intact`) or
        newer, or a lock held too long.
    """
    if os.path.exists(path) and not os.path.isfile(path):
        raise StoreError('the results database %s is not a regular file (a folder or a '
                         'device); choose another --results_db=PATH' % path)
    if os.path.exists(path) and read_only_reason(path) == 'the file is read-only':
        # Refused before SQLite opens it: in a writable folder it made the -wal and -shm files
        # beside a file it then could not write (an immutable file: a user's trial).
        raise StoreError('the results database %s cannot be written: the file is read-only '
                         '(nothing was written, nor made beside it); the read-only commands '
                         '(list, show, history, regressions, html) read it, writes need '
                         'another --results_db=PATH' % path)
    if not os.path.exists(path):
        if not create or file_systems.link_loop(path):
            raise missing_error(path)
        home = home_problem(path)
        if home:
            raise StoreError('the results database %s cannot be created: it %s; give '
                             '--results_db=PATH' % (path, home))
        try:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        except OSError as e:
            raise StoreError('the results database %s cannot be created: %s'
                             % (path, e.strerror or e)) from None
        with contextlib.suppress(OSError):  # if not, SQLite's open says why
            file_systems.make_file(path)  # 0666 less the umask; SQLite's -wal, -shm follow
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_SECS, isolation_level=None)
    except sqlite3.Error as e:
        raise _problem(path, e) from None
    try:
        conn.row_factory = sqlite3.Row
        conn.execute('PRAGMA busy_timeout = %d' % int(BUSY_TIMEOUT_SECS * 1000))
        version = _check_identity(conn, path)
        _check_intact(conn, path, version)
        _wal(conn)
        if version < schema_version:
            found = _migrate(conn, schema_version)
            _check_identity(conn, path)
            upgrades.note_migrated(path, found, schema_version)  # once, by the migrating one
    except sqlite3.Error as e:
        conn.close()
        raise _problem(path, e) from None
    except BaseException:
        conn.close()
        raise
    return conn


def open_read_only(path: str, *, peek: bool = False) -> sqlite3.Connection:
    """Opens an existing results database for reading only: nothing is written to the file or
    beside it (a shared, read-only mount of a nightly database reads as well as a local one).

    The file is opened with SQLite's `mode=ro`, and with `immutable=1` (SQLite then reads the
    file as it is, takes no lock and makes no -wal or -shm file) where no writer of the file can
    be at work (`_as_it_is`): its folder cannot be written, or nothing is beside it (no -wal or
    -journal file: a writer keeps one while it has the file open) and either this process
    cannot write the file or `peek` asks for a look that leaves nothing behind. A read of the
    file as it is that meets a write begun meanwhile fails as SQLite's error and is tried once
    more with locks. Where nothing is beside the file, the checks (identity, damage) are made
    as it is first in any case: a file they refuse is left with no new file beside it, one
    they pass is then read with locks. Where the file and folder can be written, that is a
    `mode=rw` connection with `PRAGMA query_only` (no statement of it writes): a WAL reader
    needs -shm and -wal files, which SQLite removes at the close of the file's last connection
    only if it may write (a `mode=ro` one left them); that close folds a WAL writers left
    into the file, as theirs would have. A WAL that was not checkpointed is not seen through
    `immutable`: where the folder cannot be written a writer elsewhere must have finished.
    A file of an older schema is migrated in a copy in memory; the file keeps its version.

    Args:
      path: the file.
      peek: the identity check of a run before it starts (`check_file`): a database it then
        refuses must be left as it was, with no new file beside it.

    Raises:
      StoreError: no file, not a regular file, not a results database of this program,
        damaged or newer (see `open_store`).
    """
    if os.path.exists(path) and not os.path.isfile(path):
        raise StoreError('the results database %s is not a regular file (a folder or a '
                         'device); choose another --results_db=PATH' % path)
    if not os.path.exists(path):
        raise missing_error(path)
    reason = read_only_reason(path)
    folder_unwritable = reason not in (None, 'the file is read-only')
    if folder_unwritable:
        return _connect_read_only(path, True)
    if _as_it_is(path, True):
        try:
            conn = _connect_read_only(path, True)
        except StoreError:  # a write begun meanwhile: read it again with locks
            if os.path.exists(path + '-wal') or os.path.exists(path + '-journal'):
                return _connect_read_only(path, False, writable=reason is None)
            raise  # refused as it is (damaged, another program's): nothing made beside it
        if peek or reason is not None:
            return conn
        # Checked as it is; now read with locks. Not `immutable`: a run may record meanwhile
        # (nothing stops it: the folder and the file can be written), and its commit and the
        # checkpoint at its close rewrite pages of the file under a reader that takes no lock,
        # which SQLite documents as wrong results or SQLITE_CORRUPT.
        conn.close()
        return _connect_read_only(path, False, check_intact=False, writable=True)
    return _connect_read_only(path, False, writable=reason is None)


def _as_it_is(path: str, wanted: bool) -> bool:
    """True when `wanted` and no -wal or -journal file is beside `path` (no writer has it
    open; `open_read_only`)."""
    return wanted and not any(os.path.exists(path + tail) for tail in ('-wal', '-journal'))


def _connect_read_only(path: str, immutable: bool, check_intact: bool = True,
                       writable: bool = False) -> sqlite3.Connection:
    """`open_read_only`'s connection (with `immutable=1` when `immutable`; `mode=rw` with
    `PRAGMA query_only` when `writable`, so that its close removes the -wal and -shm files),
    its identity checked, its pages too unless not `check_intact` (checked a moment before),
    and an older schema migrated in a copy in memory."""
    uri = 'file:%s?mode=%s%s' % (_uri_path(path), 'rw' if writable else 'ro',
                                 '&immutable=1' if immutable else '')
    conn = None
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_SECS, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute('PRAGMA query_only = %d' % writable)
        version = _check_identity(conn, path)
        if check_intact:
            _check_intact(conn, path, version)
        if version < SCHEMA_VERSION:
            copy = sqlite3.connect(':memory:', isolation_level=None)
            conn.backup(copy)
            conn.close()
            conn = copy
            conn.row_factory = sqlite3.Row
            _migrate(conn, SCHEMA_VERSION)
    except sqlite3.Error as e:
        if conn is not None:
            conn.close()
        raise _problem(path, e) from None
    except BaseException:
        if conn is not None:
            conn.close()
        raise
    return conn


@contextlib.contextmanager
def opened(path: str, *, read_only: bool = False, **kwargs):
    """`open_store` (with read_only, `open_read_only`) as a context manager that closes the
    connection; an SQLite error inside (a damaged page met by a query) becomes StoreError."""
    conn = open_read_only(path) if read_only else open_store(path, **kwargs)
    try:
        yield conn
    except sqlite3.Error as e:
        raise _problem(path, e) from None
    finally:
        conn.close()


def check_file(path: str) -> str | None:
    """Why a run could not record into `path`, or None: read-only (nothing is created).

    A missing file is fine when its folder exists or can be made; an existing one must be a
    results database of this program with a schema this one knows (or an empty file).
    Whether this process can write it is tried by the run's check before it starts
    (preflight/output_paths.py), which makes a file to know; the read-only commands of
    tf_cnn_results read a database on read-only storage. The look at an existing file makes
    no file beside it (`open_read_only`'s peek): a database refused here is left as it was.
    """
    loop = file_systems.link_loop(path)
    if loop:
        return 'the results database %s is %s; give another --results_db=PATH' % (path, loop)
    if os.path.islink(path) and not os.path.exists(path):
        return ('the results database %s is a symbolic link to %s, which does not exist: '
                'restore its target or give another --results_db=PATH' % (path, os.readlink(path)))
    if not os.path.exists(path):
        home = home_problem(path)
        if home:
            return 'the results database %s cannot be made: it %s; give another ' \
                '--results_db=PATH' % (path, home)
        folder = os.path.dirname(os.path.abspath(path))
        while not os.path.exists(folder):
            folder = os.path.dirname(folder)
        if not os.path.isdir(folder):
            return ('the results database %s cannot be made: %s is a file, not a folder; '
                    'give another --results_db=PATH' % (path, folder))
        reason = read_only_reason(path)  # a read-only mount (EROFS) or permission bits
        if reason:
            return ('the results database %s cannot be made: %s; a run needs another '
                    '--results_db=PATH' % (path, reason))
        return None
    if not os.path.isfile(path):
        return 'the results database %s is %s, not a file; give another --results_db=PATH' % (
            path, 'a folder' if os.path.isdir(path) else 'a device or another special file')
    try:
        open_read_only(path, peek=True).close()
    except StoreError as e:
        return str(e)
    return None


def newer_schema(path: str) -> int | None:
    """The schema version of the results database at `path` when it is newer than
    SCHEMA_VERSION, else None (no file; older or current; not ours, unreadable: the run's
    check says those, `check_file`). Only its header is read, as it is where no writer has it
    open (`_as_it_is`), else with locks: nothing is made beside it, its pages not checked."""
    if not os.path.isfile(path):
        return None
    immutable = _as_it_is(path, True)
    uri = 'file:%s?mode=ro%s' % (_uri_path(path), '&immutable=1' if immutable else '')
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_SECS, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        _check_identity(conn, path)
    except NewerSchemaError as e:
        return e.version
    except (StoreError, sqlite3.Error):
        pass
    finally:
        conn.close()
    return None


def default_problem(value, environ=None) -> str | None:
    """Why a run with --results_db `value` does not record at all, or None: store_paths'
    `default_problem` (its default place under a home folder that does not exist, or on
    storage it cannot write), or, neither --results_db nor TF_CNN_RESULTS_DB naming it, a
    database there of a newer schema than this program knows (`newer_schema`;
    upgrades.newer_reason: 'holds a results database of schema version 8, newer than ...').
    A database named so keeps its usage error (preflight/output_paths.py)."""
    problem = store_paths.default_problem(value, environ)
    if problem or value not in (None, True) or variable_value(environ) is not None:
        return problem
    version = newer_schema(default_path(environ))
    return upgrades.newer_reason(version) if version else None


def run_path(value) -> str | None:
    """The database a run records into: `resolve_path(value)`, except that a default place
    the run cannot use (`default_problem`) is None, as --noresults_db: the run is not
    recorded (preflight/output_paths.py warns; lifecycle/results_db.py's last line)."""
    return None if default_problem(value) else resolve_path(value)


def _uri_path(path: str) -> str:
    """`path` absolute and percent-encoded for an SQLite URI, byte for byte: a name's byte
    that is not UTF-8 (read as a lone surrogate, PEP 383) is its own byte again."""
    from urllib.parse import quote
    return quote(os.fsencode(os.path.abspath(path)))


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection, path: str = 'the results database'):
    """One write transaction (BEGIN IMMEDIATE ... COMMIT; ROLLBACK on any error).

    Raises:
      StoreError: the lock stayed taken for BUSY_TIMEOUT_SECS (a wait past a moment is said
        in one line: history/write_wait.py), or SQLite failed (a full disk
        or failing storage said so: history/disk_errors.py).
    """
    try:
        write_wait.begin_immediate(conn, path, BUSY_TIMEOUT_SECS)  # a wait is said
    except sqlite3.Error as e:
        raise _problem(path, e) from None
    try:
        yield conn
        conn.execute('COMMIT')
    except sqlite3.Error as e:
        disk_errors.rollback_quietly(conn)  # after an I/O error SQLite rolled back already
        raise _problem(path, e) from None
    except BaseException:
        disk_errors.rollback_quietly(conn)
        raise


def bindable(value):
    """`value` as SQLite can bind it: text that is not valid UTF-8 (a lone surrogate: a
    file name's undecodable byte, PEP 383, or a JSON's '\\udcff' escape; SQLite binds text
    as UTF-8 and raised UnicodeEncodeError) with those characters as backslash escapes
    ('x\\udcffy' from the bytes b'x\\xffy' becomes 'x\\\\xffy'); any other value unchanged.
    A run refuses such a flag value before it starts (params/text_values.py); an ingested
    file's name or label may still hold one."""
    if not isinstance(value, str):
        return value
    try:
        value.encode('utf-8')
        return value
    except UnicodeEncodeError:
        pass
    try:
        return value.encode('utf-8', 'surrogateescape').decode('utf-8', 'backslashreplace')
    except UnicodeEncodeError:  # a surrogate no byte was decoded to: '\\ud800'
        return value.encode('utf-8', 'backslashreplace').decode('utf-8')


def insert_rows(conn: sqlite3.Connection, rows: list[dict], path: str = '') -> list[int | None]:
    """Adds rows (records.ROW_FIELDS) in one transaction; a row whose content_key is there
    already adds nothing.

    Returns:
      Per row: the new run's id, or None when it was there already.
    """
    names = list(records.ROW_FIELDS)
    sql = ('INSERT INTO runs (recorded_utc, %s) VALUES (?, %s) ON CONFLICT (content_key) DO '
           'NOTHING' % (', '.join(names), ', '.join('?' * len(names))))
    ids = []
    with transaction(conn, path or 'the results database'):
        now = records.utc_text()
        for row in rows:
            cursor = conn.execute(sql, [now] + [bindable(row.get(name)) for name in names])
            ids.append(cursor.lastrowid if cursor.rowcount == 1 else None)
    return ids


def record_result(path: str, result: dict, source: str = 'run') -> int | None:
    """Records one run's result dict (records.from_result) into the database at `path`.

    Returns:
      The run's id, or None when it was recorded already.

    Raises:
      StoreError: see `open_store`; records.RecordError: not a result of tf_cnn_benchmarks.
    """
    row = records.from_result(result, source=source)
    with opened(path) as conn:
        return insert_rows(conn, [row], path)[0]


FILTERS = {'model': 'model', 'precision': 'precision', 'mode': 'mode', 'batch_size': 'batch_size',
           'num_devices': 'num_devices', 'variable_update': 'variable_update', 'device': 'device',
           'data': 'data', 'image_size': 'image_size', 'config': 'config_key'}
GLOB_FILTERS = {'host': 'hostname', 'label': 'label'}


def _where(since: str | None, until: str | None, ids: list[int] | None,
           filters: dict) -> tuple[str, list]:
    """The WHERE clause ('' for none) and its arguments of `select_runs`' selection."""
    unknown = set(filters) - set(FILTERS) - set(GLOB_FILTERS)
    if unknown:
        raise ValueError('unknown filter(s): %s' % ', '.join(sorted(unknown)))
    where, args = [], []
    for name, value in sorted(filters.items()):
        if value is not None:
            where.append('%s %s ?' % ((GLOB_FILTERS[name], 'GLOB') if name in GLOB_FILTERS
                                      else (FILTERS[name], '=')))
            args.append(value)
    for bound, test in ((since, 'run_utc >= ?'), (until, 'run_utc < ?')):
        if bound:
            where.append(test)
            args.append(bound)
    if ids:
        where.append('id IN (%s)' % ', '.join('?' * len(ids)))
        args.extend(int(i) for i in ids)
    return (' WHERE ' + ' AND '.join(where) if where else ''), args


def select_runs(conn: sqlite3.Connection, *, since: str | None = None,
                until: str | None = None, ids: list[int] | None = None,
                limit: int | None = None, **filters) -> list[dict]:
    """The runs matching every filter given, oldest first (run_utc, then id), as dicts.

    Args:
      since: only runs with run_utc >= this ('YYYY-MM-DDTHH:MM:SS.ffffffZ').
      until: only runs with run_utc < this (the same form): `since` to `until` is half open.
      ids: only these run ids.
      limit: only the `limit` most recent of them (still oldest first); None: all.
      **filters: FILTERS (equal) and GLOB_FILTERS (a shell pattern: 'gpu-node-*'); None
        values are ignored.

    Raises:
      ValueError: an unknown filter name.
    """
    where, args = _where(since, until, ids, filters)
    if limit is None:
        sql = 'SELECT * FROM runs%s ORDER BY run_utc, id' % where
        return [dict(row) for row in conn.execute(sql, args)]
    sql = 'SELECT * FROM runs%s ORDER BY run_utc DESC, id DESC LIMIT ?' % where
    return [dict(row) for row in conn.execute(sql, args + [int(limit)])][::-1]


def count_runs(conn: sqlite3.Connection, *, since: str | None = None, until: str | None = None,
               ids: list[int] | None = None, **filters) -> int:
    """How many runs `select_runs` without a limit would return (the same arguments).

    Raises:
      ValueError: an unknown filter name.
    """
    where, args = _where(since, until, ids, filters)
    return conn.execute('SELECT COUNT(*) FROM runs%s' % where, args).fetchone()[0]

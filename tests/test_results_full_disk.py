"""The results database on a full disk (or failing storage): SQLite's words are said as what
they mean, with the fix (history/disk_errors.py); a run that cannot be recorded keeps its
results where they can be written, says where (its --benchmark_log_dir JSON when there is
one), and leaves no database file, -wal, -shm or empty folder of its own behind
(lifecycle/results_db.py). No disk is filled: SQLite's errors and the writes are faked."""

from __future__ import annotations

import errno
import os
import sqlite3

import pytest

from tf_cnn_benchmarks import cnn_util
from tf_cnn_benchmarks.history import disk_errors, store
from tf_cnn_benchmarks.lifecycle import results_db, results_log

import results_helpers as rh

FULL = ('the results database %s cannot be used: the disk holding %s is full (%s); free '
        'space there, or give --results_db=PATH on another disk')


@pytest.fixture
def full_disk(monkeypatch):
    """Every folder's disk has no space left (as statvfs would say)."""
    monkeypatch.setattr(disk_errors, 'free_bytes', lambda folder: 0)


def test_sqlite_words_of_a_full_disk_say_what_they_mean(full_disk, tmp_path):
    db = str(tmp_path / 'r.sqlite')
    problem = disk_errors.disk_problem
    assert problem(db, sqlite3.OperationalError('disk I/O error')) == FULL % (
        db, tmp_path, 'disk I/O error')
    assert problem(db, sqlite3.OperationalError('cannot commit - no transaction is active')) \
        == FULL % (db, tmp_path, 'SQLite: cannot commit - no transaction is active: an I/O '
                   'error ended the transaction')
    assert problem(db, sqlite3.OperationalError('no such table: runs')) is None


def test_an_io_error_with_space_left_is_the_storage(monkeypatch, tmp_path):
    monkeypatch.setattr(disk_errors, 'free_bytes', lambda folder: 10 << 30)
    db = str(tmp_path / 'r.sqlite')
    assert disk_errors.disk_problem(db, sqlite3.OperationalError('disk I/O error')) == (
        'the results database %s cannot be used: the storage holding %s failed to read or '
        'write it (disk I/O error); check that disk, or give --results_db=PATH on a local '
        'disk that works' % (db, tmp_path))


class _ReadFails:
    """A connection whose reads fail with an I/O error that rolled the transaction back."""

    in_transaction = False

    def execute(self, sql):
        if sql.startswith('PRAGMA'):
            raise sqlite3.OperationalError('disk I/O error')
        if sql in ('COMMIT', 'ROLLBACK'):
            raise sqlite3.OperationalError('cannot %s - no transaction is active' % sql.lower())


def test_the_identity_check_keeps_the_error_that_ended_its_read():
    # Before: the COMMIT in a `finally` raised 'cannot commit - no transaction is active' over
    # it: `tf_cnn_results list` on a full disk said only that (exit 4).
    with pytest.raises(sqlite3.OperationalError, match='^disk I/O error$'):
        store._check_identity(_ReadFails(), 'r.sqlite')


@pytest.mark.parametrize('error', [None, 'disk I/O error'])
def test_a_transaction_sqlite_rolled_back_is_one_store_error(full_disk, tmp_path, error):
    # SQLite rolls a transaction back by itself after an I/O error; the COMMIT (no error
    # raised inside) or the ROLLBACK (one raised) then failed with SQLite's words, unexplained
    # (the ROLLBACK's as a raw sqlite3 error over the one raised).
    db = str(tmp_path / 'r.sqlite')
    conn = sqlite3.connect(':memory:', isolation_level=None)
    with pytest.raises(store.StoreError) as raised:
        with store.transaction(conn, db):
            conn.execute('ROLLBACK')  # what SQLite did after the failed write
            if error:
                raise sqlite3.OperationalError(error)
    said = error or 'SQLite: cannot commit - no transaction is active: an I/O error ended ' \
        'the transaction'
    assert str(raised.value) == FULL % (db, tmp_path, said)


def _fails_like_a_full_disk(monkeypatch, full: str):
    """record_result makes the database file, then fails as on a full disk; JSON files under
    `full` cannot be written (ENOSPC)."""
    def record_result(path, result):
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute('PRAGMA journal_mode=WAL')
        conn.execute('CREATE TABLE meta (key TEXT)')  # a first write: the -wal and -shm files
        raise store._problem(path, sqlite3.OperationalError('disk I/O error'))

    real = results_log._write_local

    def write_local(path, text):
        if path.startswith(full):
            raise cnn_util.BenchmarkError('cannot write %s: %s' % (
                path, os.strerror(errno.ENOSPC)))
        return real(path, text)

    monkeypatch.setattr(store, 'record_result', record_result)
    monkeypatch.setattr(results_log, '_write_local', write_local)


def test_a_full_disk_under_the_database_gets_the_fallback(full_disk, monkeypatch, tmp_path,
                                                          capsys):
    # Before: 'nor could its results be kept: cannot write <full>/unrecorded/...json: No space
    # left on device' (no other place tried), and r.sqlite, its -wal and -shm and an empty
    # unrecorded/ left on the full disk.
    monkeypatch.setenv('XDG_DATA_HOME', str(tmp_path / 'data'))
    full = tmp_path / 'full'
    full.mkdir()
    db = str(full / 'r.sqlite')
    _fails_like_a_full_disk(monkeypatch, str(full))
    assert results_db.record(db, rh.result(321.0)) is None
    kept_in = tmp_path / 'data' / 'tf_cnn_benchmarks' / 'unrecorded'
    [kept] = os.listdir(kept_in)
    err = capsys.readouterr().err
    assert err == (
        'warning: the run was not recorded in the results database: %s. Its results are in %s '
        'instead (cannot write %s: No space left on device): `tf_cnn_results ingest %s '
        '--results_db=%s` records them\n' % (FULL % (db, full, 'disk I/O error'), kept_in / kept,
                                             err.split('instead (cannot write ')[1].split(':')[0],
                                             kept_in, db))
    assert os.listdir(full) == []  # no r.sqlite, -wal, -shm, nor an empty unrecorded/


def test_the_warning_names_the_benchmark_log_dir_copy(full_disk, monkeypatch, tmp_path,
                                                      capsys):
    # Before: the JSON the run had written into --benchmark_log_dir went unmentioned.
    full = tmp_path / 'full'
    full.mkdir()
    db = str(full / 'r.sqlite')
    _fails_like_a_full_disk(monkeypatch, str(full))
    copy = tmp_path / 'bl' / 'tf_cnn_benchmarks_trivial_x.json'
    copy.parent.mkdir()
    copy.write_text('{}')
    assert results_db.record(db, dict(rh.result(321.0), results_file=str(copy))) is None
    assert capsys.readouterr().err == (
        'warning: the run was not recorded in the results database: %s. Its results are in %s '
        '(--benchmark_log_dir): `tf_cnn_results ingest %s --results_db=%s` records them\n'
        % (FULL % (db, full, 'disk I/O error'), copy, copy, db))
    assert os.listdir(full) == []


def test_only_a_database_without_runs_is_removed(tmp_path):
    db = str(tmp_path / 'r.sqlite')
    rh.fill(db, [rh.result(321.0)])
    assert disk_errors.remove_unused_file(db) is False and os.path.exists(db)
    empty = str(tmp_path / 'e.sqlite')
    sqlite3.connect(empty).execute('PRAGMA journal_mode=WAL')
    assert disk_errors.remove_unused_file(empty) is True
    assert sorted(os.listdir(tmp_path)) == ['r.sqlite']


def test_a_file_unreadable_on_a_full_disk_is_read_as_it_is(monkeypatch, tmp_path):
    # On a full disk the -shm cannot grow (SQLITE_IOERR_SHMSIZE) and no read succeeds: the
    # operator's r.sqlite, -wal and -shm were left there. With an empty -wal the file alone
    # holds everything, and is read as it is; a -wal with content might hold a run: kept.
    real = disk_errors._count_runs
    monkeypatch.setattr(disk_errors, '_count_runs', lambda uri: (
        None if 'mode=rw' in uri else real(uri)))
    db = str(tmp_path / 'r.sqlite')
    conn = sqlite3.connect(db)
    conn.execute('PRAGMA journal_mode=WAL')
    conn.close()
    for tail, content in (('-wal', b'frames'), ('-shm', b'')):
        with open(db + tail, 'wb') as f:
            f.write(content)
    assert disk_errors.remove_unused_file(db) is False
    open(db + '-wal', 'wb').close()  # empty
    assert disk_errors.remove_unused_file(db) is True
    assert os.listdir(tmp_path) == []

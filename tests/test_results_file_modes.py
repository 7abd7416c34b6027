"""The modes of the files the results database and the calibration record are made with: 0666
less the umask, as open() gives and as a run's JSON and checkpoints have. A user's trial:
under umask 002 the database was -rw-r--r-- (SQLite's own 0644) in a drwxrwxr-x folder, so a
group could not share one database; the calibration record was 0600 (mkstemp's) under any
umask."""

from __future__ import annotations

import contextlib
import os
import stat

import pytest

from tf_cnn_benchmarks.hardware import calibration
from tf_cnn_benchmarks.history import store

import helpers
import results_helpers as rh


@contextlib.contextmanager
def _umask(mask: int):
    """`mask` as this process's umask while inside; the one before is restored."""
    before = os.umask(mask)
    try:
        yield
    finally:
        os.umask(before)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize('mask', [0o002, 0o000, 0o077])
def test_a_new_database_and_its_wal_files_follow_the_umask(tmp_path, mask):
    db = str(tmp_path / 'shared' / 'results.sqlite')
    with _umask(mask):
        conn = store.open_store(db)
        try:
            rh.fill(db, [rh.result(321.0)])  # a second connection: the WAL files stay open
            modes = {name: _mode(os.path.join(os.path.dirname(db), name))
                     for name in os.listdir(os.path.dirname(db))}
        finally:
            conn.close()
        assert _mode(tmp_path / 'shared') == 0o777 & ~mask
    want = 0o666 & ~mask  # before: 0644 under 002 and 000 (SQLite's default)
    assert modes == {'results.sqlite': want, 'results.sqlite-wal': want,
                     'results.sqlite-shm': want}
    with store.opened(db, read_only=True) as conn:
        assert rh.count_runs(conn) == 1  # the file made first is a new database for SQLite


def test_an_existing_database_keeps_its_mode(tmp_path):
    db = str(tmp_path / 'results.sqlite')
    rh.fill(db, [rh.result(321.0)])
    os.chmod(db, 0o640)
    with _umask(0o000):
        rh.fill(db, [rh.result(322.0)])
    assert _mode(db) == 0o640


@pytest.mark.parametrize('mask', [0o002, 0o022])
def test_the_calibration_record_follows_the_umask(tmp_path, mask):
    path = str(tmp_path / 'calibration.json')
    with _umask(mask):
        assert calibration.store(path, [helpers.measurement(1.0, key='a')])
    want = 0o666 & ~mask  # before: 0600 under any umask
    assert (_mode(path), _mode(path + '.lock')) == (want, want)
    assert sorted(os.listdir(tmp_path)) == ['calibration.json', 'calibration.json.lock']

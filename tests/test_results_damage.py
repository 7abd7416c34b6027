"""A results database damaged where no query looks (an index page overwritten) is found at
opening (history/store.py `_check_intact`, PRAGMA quick_check): the commands that read it stop
with one line (exit status 4), and a run neither records into it nor starts."""

from __future__ import annotations

import hashlib
import os
import sqlite3

import pytest

from tf_cnn_benchmarks import params
from tf_cnn_benchmarks.history import store
from tf_cnn_benchmarks.preflight import output_paths

import results_helpers as rh


def _sha(path) -> str:
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def _index_page_overwritten(path: str) -> None:
    """A database of 50 runs whose meta table's index page (page 3) has 1000 bytes of noise:
    `SELECT * FROM runs` still reads every run; integrity_check reports 'On tree page 3 cell
    1: Offset ... out of range'."""
    rh.fill(path, rh.series([100.0 + i for i in range(50)]))
    conn = sqlite3.connect(path)
    conn.execute('PRAGMA wal_checkpoint(TRUNCATE)')
    conn.execute('PRAGMA journal_mode=DELETE')  # no -wal beside it: the file is all there is
    page = conn.execute('PRAGMA page_size').fetchone()[0]
    [(root,)] = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = "
                             "'sqlite_autoindex_meta_1'").fetchall()
    conn.close()
    with open(path, 'r+b') as f:
        f.seek((root - 1) * page + 8)
        f.write(bytes((i * 37 + 11) % 256 for i in range(1000)))
    conn = sqlite3.connect(path)
    assert len(conn.execute('SELECT * FROM runs').fetchall()) == 50  # unseen by the runs
    conn.close()


@pytest.fixture
def damaged(tmp_path):
    path = str(tmp_path / 'results.sqlite')
    _index_page_overwritten(path)
    return path


def test_a_damaged_index_page_is_found_before_any_write(damaged):
    # Before: a new run recorded into it, the file changed.
    before = _sha(damaged)
    with pytest.raises(store.StoreError) as raised:
        store.record_result(damaged, rh.result(5.0))
    text = str(raised.value)
    # SQLite's words vary with its version: 'On tree page 3 cell 1: ...', 'Tree 3 page 3 ...'.
    assert text.startswith('%s is a damaged SQLite database (PRAGMA quick_check: ' % damaged)
    assert 'page 3 cell 1: Offset ' in text
    assert text.endswith("it was left untouched: move it away (a new database is made in its "
                         "place) or choose another --results_db=PATH; `sqlite3 %s .recover` "
                         "may save its runs" % damaged)
    assert '\n' not in text and _sha(damaged) == before
    with pytest.raises(params.ParamsError, match='^--results_db: %s is a damaged' % damaged):
        output_paths.check_output_paths(params.make_params(results_db=damaged))
    assert not os.path.exists(damaged + '-wal')


def test_a_refused_database_in_wal_mode_gets_no_file_beside_it(tmp_path, capsys):
    # Before (sweep53): `list` on a damaged database in WAL mode said 'it was left
    # untouched' (exit 4) and left results.sqlite-shm and -wal beside it.
    path = str(tmp_path / 'results.sqlite')
    rh.fill(path, rh.series([100.0 + i for i in range(50)]))
    conn = sqlite3.connect(path)
    assert conn.execute('PRAGMA journal_mode').fetchone()[0] == 'wal'
    page = conn.execute('PRAGMA page_size').fetchone()[0]
    [(root,)] = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = "
                             "'sqlite_autoindex_meta_1'").fetchall()
    conn.close()  # the last connection: the -wal and -shm files go
    assert sorted(os.listdir(tmp_path)) == ['results.sqlite']
    with open(path, 'r+b') as f:
        f.seek((root - 1) * page + 8)
        f.write(bytes((i * 37 + 11) % 256 for i in range(1000)))
    before = _sha(path)
    for command in (['list'], ['show', '1'], ['regressions']):
        status, _, err = rh.results_command(capsys, *command, '--results_db=%s' % path)
        assert status == 4 and 'is a damaged SQLite database' in err, err
        assert sorted(os.listdir(tmp_path)) == ['results.sqlite'], command
    assert _sha(path) == before


@pytest.mark.parametrize('command', [['list'], ['show', '1'], ['regressions'], ['html']])
def test_the_reading_commands_refuse_a_damaged_index_page(damaged, tmp_path, capsys, command):
    # Before: list, show, regressions and html read it and exited 0.
    args = command + ['--results_db=%s' % damaged]
    if command == ['html']:
        args.insert(1, str(tmp_path / 'page.html'))
    status, out, err = rh.results_command(capsys, *args)
    assert status == 4, err
    assert err.startswith('error: %s is a damaged SQLite database (PRAGMA quick_check: ' % damaged)
    assert not os.path.exists(tmp_path / 'page.html')

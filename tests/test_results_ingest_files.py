"""What `tf_cnn_results ingest` does with the files it is given that are not plain results:
a folder's JSON files of other names (counted and named, not read; read when given by
path), a results JSON or sweep record of a newer results format (skipped, with the fix),
and, for the reading commands, a database file cut short (history/ingest.py,
history/records.py, history/intact.py); and the history plot's dates across a new year
(history/plots.py)."""

from __future__ import annotations

import datetime
import json
import os
import sqlite3

import pytest

from tf_cnn_benchmarks import package_info
from tf_cnn_benchmarks.history import ingest, plots, records, store

import results_helpers as rh

_main = rh.results_command
_NAME = 'tf_cnn_benchmarks_trivial_20260105T000000.000000Z.json'


def _write(path, result) -> str:
    with open(path, 'w') as f:
        json.dump(result, f)
    return str(path)


@pytest.mark.cli
def test_a_renamed_results_json_in_a_folder_is_named_not_read_and_read_by_its_path(
        tmp_path, capsys):
    folder = tmp_path / 'runs'
    folder.mkdir()
    _write(folder / _NAME, rh.result(1000.0))
    renamed = _write(folder / 'hostA-lenet.json', rh.result(900.0, host='host-a'))
    db = str(tmp_path / 'r.sqlite')
    status, out, err = _main(capsys, 'ingest', str(folder), '--results_db=%s' % db)
    lines = out.splitlines()
    assert status == 0 and err == ''
    assert lines[0] == ('ingested: 1 new run, 0 already in the database, 0 failed sweep runs '
                        'not recorded, 0 files or lines skipped, 1 other JSON file not read')
    assert lines[1] == ('not read: 1 JSON file not named tf_cnn_benchmarks_*.json (a folder\'s '
                        'run JSONs are read by that name; give a results JSON renamed by hand '
                        'as a PATH of its own to ingest it): %s' % renamed)
    status, out, _ = _main(capsys, 'ingest', renamed, '--results_db=%s' % db)
    assert status == 0 and out.startswith('ingested: 1 new run, 0 already')
    # A folder holding only such files: the usage error names them.
    os.remove(folder / _NAME)
    status, _, err = _main(capsys, 'ingest', str(folder), '--results_db=%s' % db)
    assert status == 2 and err.endswith('it holds 1 JSON file of other names, read only when '
                                        'given as a PATH of its own (a results JSON renamed by '
                                        'hand): %s\n' % renamed)


def test_many_unread_files_are_counted_and_the_first_named(tmp_path):
    for i in range(7):
        _write(tmp_path / ('trace-%d.json' % i), {'traceEvents': []})
    _write(tmp_path / _NAME, rh.result(1000.0))
    unread = []
    ingest.find_files([str(tmp_path)], unread)
    assert len(unread) == 7
    line = ingest.unread_line(unread)
    assert line.startswith('not read: 7 JSON files not named tf_cnn_benchmarks_*.json')
    assert line.endswith('trace-4.json and 2 more')


@pytest.mark.cli
def test_a_folder_whose_only_run_json_is_unreadable_still_names_the_renamed_one(tmp_path, capsys):
    # Before: `error: ingest: none of the 1 file read holds a result (...)`, and the renamed
    # results JSON beside it, which its path would ingest, went unmentioned.
    folder = tmp_path / 'runs'
    folder.mkdir()
    _write(folder / _NAME, dict(rh.result(1000.0), format=99))
    _write(folder / 'hostA-lenet.json', rh.result(1000.0))
    status, out, err = _main(capsys, 'ingest', str(folder),
                             '--results_db=%s' % (tmp_path / 'r.sqlite'))
    assert (status, out) == (1, '')
    assert err.startswith('error: ingest: none of the 1 file read holds a result')
    assert err.rstrip().endswith('; not read: 1 JSON file not named tf_cnn_benchmarks_*.json (a '
                                 "folder's run JSONs are read by that name; give a results JSON "
                                 'renamed by hand as a PATH of its own to ingest it): %s'
                                 % (folder / 'hostA-lenet.json'))


@pytest.mark.cli
def test_a_results_json_of_a_newer_format_is_skipped_with_the_fix(tmp_path, capsys):
    folder = tmp_path / 'runs'
    folder.mkdir()
    _write(folder / _NAME, dict(rh.result(1000.0), format=99))
    _write(folder / _NAME.replace('0105', '0106'), dict(rh.result(1000.0), format=2))
    db = str(tmp_path / 'r.sqlite')
    status, out, err = _main(capsys, 'ingest', str(folder), '--results_db=%s' % db)
    assert status == 1 and out.startswith('ingested: 1 new run, 0 already in the database, '
                                          '0 failed sweep runs not recorded, 1 file or line '
                                          'skipped')
    assert ('skipped: %s: results format 99, newer than this tf_cnn_benchmarks (%s) knows '
            '(2): its fields may mean other things here; upgrade tf_cnn_benchmarks'
            % (folder / _NAME, package_info.VERSION)) in out
    assert err.startswith('error: ingest: 1 file or line could not be read as a result')


def test_a_sweep_record_of_a_newer_format_is_no_run():
    record = {'key': 'k', 'status': 'ok', 'format': 3, 'params': dict(rh.PARAMS),
              'images_per_sec': 5.0, 'started_utc': '2026-01-05T00:00:00+00:00'}
    with pytest.raises(records.RecordError, match=r'^results format 3, newer than .* knows '
                                                  r'\(2\)'):
        records.from_sweep_record(record, 'sweep x')


def _rows(*times: str) -> list[dict]:
    return [{'run_utc': t} for t in times]


def test_the_plot_names_the_year_where_the_runs_span_a_new_year():
    one_year = _rows('2026-01-05T02:10:00.000000Z', '2026-12-31T23:00:00.000000Z')
    assert plots.ticks(one_year) == ([0, 1], ['01-05 02:10', '12-31 23:00'])
    across = _rows('2025-12-31T02:10:00.000000Z', '2026-01-01T02:10:00.000000Z')
    assert plots.ticks(across) == ([0, 1], ['2025-12-31 02:10', '2026-01-01 02:10'])


def test_a_database_cut_short_is_named_so_with_the_recover_hint(tmp_path, capsys):
    path = str(tmp_path / 'r.sqlite')
    rh.fill(path, rh.series([100.0 + i for i in range(30)]))
    conn = sqlite3.connect(path)
    conn.execute('PRAGMA wal_checkpoint(TRUNCATE)')
    conn.execute('PRAGMA journal_mode=DELETE')  # no -wal beside it: the file is all there is
    conn.close()
    size = os.path.getsize(path)
    with open(path, 'r+b') as f:
        f.truncate(size // 2)
    status, _, err = _main(capsys, 'list', '--results_db=%s' % path)
    assert status == 4
    assert err.startswith('error: %s is a damaged SQLite database (cut short: %s of the %s '
                          'bytes its header gives: ' % (path, '{:,}'.format(size // 2),
                                                        '{:,}'.format(size)))
    assert err.rstrip().endswith('`sqlite3 %s .recover` may save its runs' % path)
    with pytest.raises(store.StoreError, match=r'\.recover` may save its runs$'):
        store.record_result(path, rh.result(5.0, finished=datetime.datetime(
            2026, 2, 1, tzinfo=datetime.timezone.utc)))

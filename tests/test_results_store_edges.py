"""Edges of the results database's files as users met them: a copy of a run JSON in one ingest
(history/ingest.py), a missing database where it cannot be made (history/store.py
missing_error)."""

from __future__ import annotations

import os
import shutil

from tf_cnn_benchmarks.history import ingest, store
from tf_cnn_benchmarks.lifecycle import results_log

import results_helpers as rh


def test_a_copy_of_a_run_json_is_read_once_and_called_a_copy(tmp_path):
    # A docs reader's trial: a run JSON and its copy said '(1 run JSON read as their sweep's
    # runs)' where no sweep was ingested.
    path = results_log.write_json(rh.result(777.0), str(tmp_path / 'a'))
    os.makedirs(tmp_path / 'b')
    shutil.copy(path, tmp_path / 'b' / os.path.basename(path))
    summary = ingest.ingest(str(tmp_path / 'db.sqlite'), [str(tmp_path / 'a'),
                                                          str(tmp_path / 'b')])
    assert (summary.added, summary.in_sweeps, summary.copies) == (1, 0, 1)
    assert summary.lines()[0].endswith('0 files or lines skipped (1 copy of a run read once)')


def test_a_missing_database_where_it_cannot_be_made_says_runs_do_not_record_there(
        tmp_path, monkeypatch):
    """`tf_cnn_results list` under a read-only home said 'runs record there unless
    --noresults_db', while a run there went on unrecorded, one warning saying so."""
    path = str(tmp_path / 'r.sqlite')
    assert '(runs record there unless --noresults_db' in str(store.missing_error(path))
    monkeypatch.setattr(store, 'write_problem', lambda p: (
        'cannot be made: %s is on a read-only file system' % tmp_path, 'fix'))
    assert str(store.missing_error(path)) == (
        'no results database at %s: it cannot be made: %s is on a read-only file system, so '
        'runs do not record there; give --results_db=PATH or set $TF_CNN_RESULTS_DB'
        % (path, tmp_path))

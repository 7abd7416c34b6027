"""Edges of the results database's files as users met them: a copy of a run JSON in one ingest
(history/ingest.py), a run JSON of a run stopped in its warm-up (left out, as the run leaves
it out), a missing database where it cannot be made (history/store.py missing_error)."""

from __future__ import annotations

import json
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


def _stopped_in_warmup(signal_name: str = 'SIGINT') -> dict:
    """A result as a run stopped by `signal_name` in its warm-up writes it
    (lifecycle/timed_run.py loop_result, lifecycle/signals.py): nothing timed."""
    return dict(rh.result(1.0), images_per_sec=None, num_steps=0, step_times=[],
                stopped_early=True, stopped_in_warmup=True, stopped_by_signal=signal_name,
                host_load=None)


def test_a_run_stopped_in_its_warm_up_is_left_out_as_the_run_leaves_it_out(tmp_path, capsys):
    # A CI engineer's nightly `ingest runs/*` failed (exit 1, 'not a tf_cnn_benchmarks result
    # (no images_per_sec)') whenever a job was cancelled in the warm-up; the run itself
    # records no row for it (lifecycle/results_db.py).
    logs, db = str(tmp_path / 'logs'), str(tmp_path / 'db.sqlite')
    stopped = results_log.write_json(_stopped_in_warmup(), logs)
    results_log.write_json(rh.result(500.0), logs)
    capsys.readouterr()
    status, out, err = rh.results_command(capsys, 'ingest', logs, '--results_db=' + db)
    assert (status, err) == (0, '')
    lines = out.splitlines()
    assert lines[0] == ('ingested: 1 new run, 0 already in the database, 0 failed sweep runs '
                        'not recorded, 0 files or lines skipped, 1 run left out (no images/sec)')
    assert lines[1] == ('left out: %s: stopped by SIGINT in the warm-up, before its first timed '
                        'step (no images/sec; a run does not record such a run either)' % stopped)
    with store.opened(db) as conn:
        assert [r['images_per_sec'] for r in store.select_runs(conn)] == [500.0]
    # Alone, it is no 'none of the files holds a result' error either.
    alone = ingest.ingest(str(tmp_path / 'db2.sqlite'), [stopped])
    assert (alone.added, alone.problems, len(alone.left_out)) == (0, [], 1)


def test_a_file_that_is_no_result_keeps_its_error_beside_a_run_stopped_in_its_warm_up(
        tmp_path, capsys):
    logs, db = tmp_path / 'logs', str(tmp_path / 'db.sqlite')
    results_log.write_json(_stopped_in_warmup('SIGTERM'), str(logs))
    no_rate = dict(rh.result(1.0))
    del no_rate['images_per_sec']  # a result's shape without the key: not one the run wrote
    for name, text in (('x_1', json.dumps({'stopped_in_warmup': True, 'images_per_sec': None})),
                       ('x_2', json.dumps(no_rate))):
        (logs / ('tf_cnn_benchmarks_%s.json' % name)).write_text(text)
    capsys.readouterr()
    status, out, err = rh.results_command(capsys, 'ingest', str(logs), '--results_db=' + db)
    assert status == 1 and err.startswith('error: ingest: 2 files or lines could not be read')
    skipped = [x for x in out.splitlines() if x.startswith('skipped: ')]
    assert [x.endswith('not a tf_cnn_benchmarks result (no %s)' % what) for x, what in
            zip(skipped, ('params, environment, images_per_sec', 'images_per_sec'))] == [True] * 2
    left = [x for x in out.splitlines() if x.startswith('left out: ')]
    assert len(left) == 1 and 'stopped by SIGTERM in the warm-up' in left[0]

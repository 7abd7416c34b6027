"""An evaluation's top-1 and top-5 accuracy in the results database (history/records.py,
schema 6 of history/store.py) and in `tf_cnn_results list` and `show` (tools/results_format.py):
a CI engineer's `show N --json` of an --eval run had no accuracy, though the run printed it
and its results JSON held it."""

from __future__ import annotations

import json
import sqlite3

from tf_cnn_benchmarks.history import records, store

import results_helpers as rh

_main = rh.results_command


def _evaluation(top_1: float, top_5: float, hours: int = 1, rate: float = 300.0) -> dict:
    """A result as an --eval run of real data writes it (lifecycle/results_log.py: 'eval'
    and the original's top-level keys; synthetic data's random labels store no accuracy)."""
    r = rh.result(rate, finished=rh.T0.replace(hour=hours), eval=True, data_dir='/data',
                  data_name='imagenet')
    r['plan'] = {'dataset': 'imagenet'}
    scored = {'top_1': top_1, 'top_5': top_5, 'images_per_sec': rate, 'num_examples': 96,
              'num_batches': 3, 'planned_batches': 3, 'partial': False, 'global_step': 40,
              'checkpoint_path': '/train/model.ckpt-40', 'subset': 'validation'}
    return dict(r, mode='evaluation', eval=scored, evals=[scored], top_1_accuracy=top_1,
                top_5_accuracy=top_5)


def test_an_evaluation_keeps_its_accuracy_in_show_list_and_json(tmp_path, capsys):
    db = str(tmp_path / 'r.sqlite')
    rh.fill(db, [rh.result(1000.0), _evaluation(0.71875, 0.9375)])
    status, out, _ = _main(capsys, 'show', '2', '--results_db=' + db)
    assert status == 0
    assert ('  accuracy: top-1 0.7188, top-5 0.9375 (the evaluation: 96 examples, validation '
            'subset, global step 40)') in out.splitlines()
    status, out, _ = _main(capsys, 'show', '1', '2', '--json', '--results_db=' + db)
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r['top_1_accuracy'], r['top_5_accuracy']) for r in rows] == [
        (None, None), (0.71875, 0.9375)]
    assert rows[1]['figures']['evaluation'] == {'num_examples': 96, 'subset': 'validation',
                                                'global_step': 40}
    status, out, _ = _main(capsys, 'list', '--results_db=' + db)
    lines = out.splitlines()
    assert lines[0].startswith('| run | finished (UTC) | host | label | configuration | '
                               'images/sec | top-1 / top-5 | step ms (median) |')
    assert '| 300.00 | 0.7188 / 0.9375 |' in lines[3] and '| 1000.00 | - |' in lines[2]
    # No evaluation listed: the table as before, without the column.
    status, out, _ = _main(capsys, 'list', '--mode=training', '--results_db=' + db)
    assert 'top-1' not in out


def test_a_training_run_keeps_its_last_evaluation_during_training(tmp_path, capsys):
    db = str(tmp_path / 'r.sqlite')
    trained = dict(_evaluation(0.5, 0.75), mode='training',
                   params=dict(rh.PARAMS, eval_during_training_every_n_steps=2,
                               data_dir='/data', data_name='imagenet'))
    rh.fill(db, [trained])
    status, out, _ = _main(capsys, 'show', '1', '--results_db=' + db)
    assert ('  accuracy: top-1 0.5000, top-5 0.7500 (the last evaluation during training: 96 '
            'examples, validation subset, global step 40)') in out.splitlines()
    assert records.from_result(rh.result(1.0))['top_1_accuracy'] is None
    # On synthetic data (random labels) an evaluation's accuracy means nothing: none stored.
    synthetic = dict(trained, params=dict(trained['params'], data_dir=None, data_name=None),
                     plan={'dataset': 'synthetic'})
    assert records.from_result(synthetic)['top_1_accuracy'] is None
    # `show` of such an evaluation says why it has none (it said 'recorded before the
    # database kept it' of a run recorded a minute before: a final user's point).
    evaluation = _evaluation(0.5, 0.75)
    rh.fill(db, [dict(evaluation, params=dict(evaluation['params'], data_dir=None,
                                              data_name=None),
                      plan=dict(evaluation.get('plan') or {}, dataset='synthetic'))])
    status, out, _ = _main(capsys, 'show', '2', '--results_db=' + db)
    assert status == 0
    assert ('  accuracy: not stored (synthetic data: its random labels make an accuracy '
            'meaningless)') in out.splitlines()


def test_a_schema_5_database_reads_and_migrates_with_its_evaluations(tmp_path, capsys):
    db = str(tmp_path / 'old.sqlite')
    old = [records.from_result(r) for r in (rh.result(1000.0), _evaluation(0.5, 0.75))]
    with store.opened(db, schema_version=5) as conn:
        columns = {c[1] for c in conn.execute('PRAGMA table_info(runs)')}
        assert 'top_1_accuracy' not in columns
        names = rh.columns_at(5)  # as the schema-5 program wrote them: no accuracy
        for row in old:
            conn.execute('INSERT INTO runs (recorded_utc, %s) VALUES (?, %s)' % (
                ', '.join(names), ', '.join('?' * len(names))),
                ['2026-01-01T00:00:00.000000Z'] + [row[n] for n in names])
    # The read-only commands read it through a copy migrated in memory; the file keeps 5.
    status, out, _ = _main(capsys, 'show', '2', '--results_db=' + db)
    assert status == 0 and ('  accuracy: not recorded (an evaluation recorded before the '
                            'database kept it)') in out.splitlines()
    status, out, _ = _main(capsys, 'show', '2', '--json', '--results_db=' + db)
    assert json.loads(out)['top_1_accuracy'] is None
    check = sqlite3.connect(db)
    assert check.execute('PRAGMA user_version').fetchone()[0] == 5
    check.close()
    # A write migrates the file (store.MIGRATIONS[6]): the old runs kept, the new one scored.
    rh.fill(db, [_evaluation(0.25, 0.5, hours=2, rate=310.0)])
    with store.opened(db) as conn:
        assert conn.execute('PRAGMA user_version').fetchone()[0] == store.SCHEMA_VERSION == 7
        rows = store.select_runs(conn)
    assert [(r['images_per_sec'], r['top_1_accuracy']) for r in rows] == [
        (1000.0, None), (300.0, None), (310.0, 0.25)]

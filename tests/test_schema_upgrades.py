"""An upgrade of the results database's schema, as an upgrading user met it (history/upgrades.py):
the first write of a new install migrated the default database without a word (and the old
install beside it could no longer write it), and an old install's run whose default database
a newer one had migrated stopped with a usage error, running no benchmark at all."""

from __future__ import annotations

import hashlib
import os
import sqlite3

import pytest

from tf_cnn_benchmarks import package_info, params
from tf_cnn_benchmarks.history import schema, store, upgrades
from tf_cnn_benchmarks.lifecycle import results_log
from tf_cnn_benchmarks.preflight import output_paths

import helpers
import results_helpers as rh

TINY = ['--model=trivial', '--batch_size=2', '--image_size=16', '--num_batches=1',
        '--num_warmup_batches=0']


def _schema_6(path: str) -> None:
    """A database as the schema-6 program (0.2.0) left it, with one run."""
    row = store.records.from_result(rh.result(1000.0))
    names = rh.columns_at(6)
    with store.opened(path, schema_version=6) as conn:
        conn.execute('INSERT INTO runs (recorded_utc, %s) VALUES (?, %s)' % (
            ', '.join(names), ', '.join('?' * len(names))),
            ['2026-01-01T00:00:00.000000Z'] + [row[n] for n in names])


def test_a_write_that_migrates_the_database_says_so_once(tmp_path, capsys):
    db = str(tmp_path / 'results.sqlite')
    _schema_6(db)
    assert capsys.readouterr().err == ''  # a new file's schema is made, not upgraded
    with store.opened(db, read_only=True):  # read through a copy: the file keeps schema 6
        pass
    assert capsys.readouterr().err == ''
    store.record_result(db, rh.result(900.0))  # a run's record
    assert capsys.readouterr().err.splitlines() == [
        'note: the results database %s was upgraded from schema 6 to 7 (the column '
        'latency_p90_ms, filled for the runs stored from their latency figures); '
        'tf_cnn_benchmarks before 0.3.0 can no longer write it' % db]
    store.record_result(db, rh.result(800.0))  # the next opening finds schema 7
    with store.opened(db) as conn:
        assert rh.count_runs(conn) == 3
    assert capsys.readouterr().err == ''


def test_an_ingest_that_migrates_says_so_in_its_output(tmp_path, capsys):
    db = str(tmp_path / 'r.sqlite')
    _schema_6(db)
    logged = results_log.write_json(rh.result(700.0), str(tmp_path / 'logs'), quiet=True)
    capsys.readouterr()
    status, _, err = rh.results_command(capsys, 'ingest', logged, '--results_db=' + db)
    assert status == 0, err
    assert err.splitlines() == ['note: ' + upgrades.migrated_line(db, 6, 7)]


def test_the_note_names_every_step_and_an_unknown_first_writer_as_this_version():
    line = upgrades.migrated_line('/d/r.sqlite', 4, 6)
    assert line == ('the results database /d/r.sqlite was upgraded from schema 4 to 6 '
                    '(schema 5: the runs of mobilenet renamed mobilenet_v1; schema 6: the '
                    'columns top_1_accuracy and top_5_accuracy); tf_cnn_benchmarks before '
                    'this version can no longer write it')
    # Raised together (docs/CONTRIBUTING.md): this schema's first version and description.
    assert upgrades.first_writer(store.SCHEMA_VERSION) is not None
    assert set(schema.DESCRIPTIONS) == set(range(2, store.SCHEMA_VERSION + 1))


def _sha(path: str) -> str:
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


@pytest.fixture
def newer_default(tmp_path, monkeypatch) -> str:
    """The default database (under a temporary XDG_DATA_HOME, TF_CNN_RESULTS_DB unset) at a
    schema newer than this program's; its path."""
    monkeypatch.setenv('XDG_DATA_HOME', str(tmp_path / 'data'))
    monkeypatch.delenv('TF_CNN_RESULTS_DB', raising=False)
    path = store.default_path()
    os.makedirs(os.path.dirname(path))
    with store.opened(path):
        pass
    conn = sqlite3.connect(path)
    conn.execute('PRAGMA user_version = %d' % (store.SCHEMA_VERSION + 1))
    conn.close()
    return path


@pytest.mark.cli
def test_a_run_whose_default_database_is_newer_goes_on_unrecorded(newer_default, tmp_path):
    # Before: exit 2 before TensorFlow loaded ('has schema version 8, newer than this
    # tf_cnn_benchmarks knows (7)'): an old cron job beside a newer install ran nothing.
    before = _sha(newer_default)
    logs = str(tmp_path / 'logs')
    run = helpers.run_command(*TINY, '--benchmark_log_dir=' + logs)
    assert run.returncode == 0, run.stderr
    why = ('holds a results database of schema version %d, newer than this tf_cnn_benchmarks '
           '(%s) knows (%d), left untouched: upgrade tf_cnn_benchmarks to record there'
           % (store.SCHEMA_VERSION + 1, package_info.VERSION, store.SCHEMA_VERSION))
    warning = ('warning: the run is not recorded in the results database: its default place '
               '%s %s; give --results_db=PATH to record it, or --noresults_db to record '
               'nothing' % (newer_default, why))
    assert [line for line in run.stderr.splitlines() if 'results database' in line] == [warning]
    assert run.stdout.splitlines()[-1] == (
        'Not recorded in a results database: its default place %s; give --results_db=PATH to '
        'record runs (--noresults_db: record nothing)' % why)
    assert [n for n in os.listdir(logs) if n.endswith('.json')]  # the results JSON written
    assert _sha(newer_default) == before
    assert sorted(os.listdir(os.path.dirname(newer_default))) == ['results.sqlite']


@pytest.mark.cli
def test_a_newer_database_named_by_the_flag_or_the_variable_stays_a_usage_error(
        newer_default, monkeypatch):
    refused = ('%s has schema version %d, newer than this tf_cnn_benchmarks (%s) knows (%d); it '
               'was left untouched: upgrade tf_cnn_benchmarks, or choose another '
               '--results_db=PATH (or --noresults_db to record nothing)'
               % (newer_default, store.SCHEMA_VERSION + 1, package_info.VERSION,
                  store.SCHEMA_VERSION))
    run = helpers.run_command(*TINY, '--results_db=' + newer_default)
    assert run.returncode == 2
    assert run.stderr.splitlines()[-1] == 'error: --results_db: ' + refused
    monkeypatch.setenv('TF_CNN_RESULTS_DB', newer_default)
    assert store.run_path(None) == newer_default
    with pytest.raises(params.ParamsError) as raised:
        output_paths.check_output_paths(params.make_params())
    assert str(raised.value) == '--results_db (not given: TF_CNN_RESULTS_DB): ' + refused

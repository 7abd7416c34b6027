"""A finished run whose record waits for the results database's lock (lifecycle/results_db.py,
history/write_wait.py, lifecycle/signal_abort.py): its results are on disk before the wait,
the wait is said, a second signal during it says where they are and how to record them, the
ingest hint names the database the run used, and a recorded run says its id."""

from __future__ import annotations

import glob
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading

import pytest

from tf_cnn_benchmarks.history import ingest, store, write_wait
from tf_cnn_benchmarks.lifecycle import results_db, run_hooks, signal_abort, signals

import results_helpers as rh

TESTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TESTS)


def _held(db: str) -> sqlite3.Connection:
    """A results database at `db` whose write lock another connection holds (as another
    process would: SQLite locks per connection)."""
    store.open_store(db).close()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute('BEGIN IMMEDIATE')
    return holder


def test_the_results_are_on_disk_while_the_write_waits_and_the_wait_is_said(
        tmp_path, monkeypatch):
    # Before: the JSON was written only after the write failed, so a kill during the wait of
    # up to 60 s (said nowhere) lost the run.
    db = str(tmp_path / 'r.sqlite')
    holder = _held(db)
    monkeypatch.setattr(write_wait, 'NOTE_AFTER_SECS', 0.01)
    seen = []

    def waiting(text):  # the wait's line: what a kill now would leave on disk
        [copy] = glob.glob(str(tmp_path / 'unrecorded' / 'tf_cnn_benchmarks_trivial_*.json'))
        shutil.copy(copy, tmp_path / 'left.json')
        seen.append(text)
        holder.execute('ROLLBACK')  # the other process is done
    monkeypatch.setattr(write_wait.cnn_util, 'log_fn', waiting)
    kept = []
    assert results_db.record(db, rh.result(321.0), kept=kept.append) == 1
    assert seen == ['Waiting for the results database %s: another process holds its lock (up '
                    'to 60 s)' % db]
    assert kept[0].startswith(str(tmp_path / 'unrecorded' / 'tf_cnn_benchmarks_trivial_'))
    assert kept[1:] == [None]  # recorded: the copy is no longer where the results are
    assert json.load(open(tmp_path / 'left.json'))['images_per_sec'] == 321.0
    assert 'unrecorded' not in os.listdir(tmp_path)  # the copy and its folder removed
    # The copy a kill would have left: ingested, the same run, not a second one.
    summary = ingest.ingest(db, [str(tmp_path / 'left.json')])
    assert (summary.added, summary.present) == (0, 1)
    holder.close()


def test_a_lock_held_past_the_timeout_keeps_the_copy_written_before(tmp_path, monkeypatch,
                                                                    capsys):
    db = str(tmp_path / 'r.sqlite')
    holder = _held(db)
    monkeypatch.setattr(store, 'BUSY_TIMEOUT_SECS', 0.2)
    monkeypatch.setattr(write_wait, 'NOTE_AFTER_SECS', 0.05)
    assert results_db.record(db, rh.result(321.0)) is None
    holder.close()
    [copy] = glob.glob(str(tmp_path / 'unrecorded' / '*.json'))  # one: the one written before
    out, err = capsys.readouterr()
    assert out == ('Waiting for the results database %s: another process holds its lock (up to '
                   '0.2 s)\nResults written to %s\n' % (db, copy))
    assert err == (
        'warning: the run was not recorded in the results database: the results database %s '
        'stayed locked by another process for 0.2 s (database is locked); try again, or give '
        'this run --results_db=OTHER_PATH. Its results are in %s: `tf_cnn_results ingest %s '
        '--results_db=%s` records them\n' % (db, copy, os.path.dirname(copy), db))
    assert ingest.ingest(db, [os.path.dirname(copy)]).added == 1


def test_a_hint_names_the_database_unless_it_is_the_default(monkeypatch, tmp_path):
    # Before: the hint of a full disk or a lock held too long said `tf_cnn_results ingest X`:
    # pasted, it recorded the run into the default database, not the one the run used.
    default = store.default_path()
    assert results_db.ingest_command('/k/x.json', default) == '`tf_cnn_results ingest /k/x.json`'
    assert results_db.ingest_command('/k/x.json', '/o/r.sqlite') == (
        '`tf_cnn_results ingest /k/x.json --results_db=/o/r.sqlite`')
    assert results_db.recorded_line(default, 17) == (
        'Recorded as run 17 in %s (tf_cnn_results show 17)' % default)
    # TF_CNN_RESULTS_DB's database is named: a shell without the variable reads another.
    named = str(tmp_path / 'named.sqlite')
    monkeypatch.setenv('TF_CNN_RESULTS_DB', named)
    assert results_db.recorded_line(named, 3) == (
        'Recorded as run 3 in %s (tf_cnn_results show 3 --results_db=%s)' % (named, named))


class Reporter(run_hooks.RunHook):
    output = 'the fake record'

    def __init__(self):
        self.reported = False

    def report(self, result):
        self.reported = True

    def written(self, result):
        return [self.output] if self.reported else []


def test_a_second_signal_during_the_runs_own_reports_names_what_they_wrote(monkeypatch,
                                                                           capfd):
    # A second SIGTERM while the total block measured the CPU peak: the run's own report
    # phase wrote the results JSON, and the abort line said 'without saving' as it killed the
    # record's write. It now waits a moment for the reports and names them.
    exits = []
    monkeypatch.setattr(signals.os, '_exit', exits.append)
    monkeypatch.setattr(signals.dir_hold, 'release_all', lambda: None)
    fake = Reporter()
    hook = signals.SignalHook(reporters=[fake])
    hook.after_timed()
    hook.catcher._watched(signal.SIGTERM)  # in the total block: late, stops nothing
    result = {'model': 'trivial', 'images_per_sec': 50.0, 'num_steps': 3,
              'stopped_early': False}
    hook.after_loop(result)
    hook.end(result)  # the report phase begins
    second = threading.Thread(target=hook.catcher._watched, args=(signal.SIGHUP,))
    second.start()
    fake.report(result)
    hook.report(result)  # the reports are done
    second.join(timeout=30)
    assert exits == [129]
    assert capfd.readouterr().err.splitlines()[-1] == (
        'error: received SIGHUP again: aborting at once, after writing the fake record')


def test_the_abort_line_says_where_unrecorded_results_are():
    later = {'salvage': ['the final checkpoint'], 'saved': ['results JSON']}
    pending = ('its results are in /u/x.json, not recorded in the results database /r.sqlite: '
               '`tf_cnn_results ingest /u/x.json --results_db=/r.sqlite` records them')
    # The run's own reports: the record's write waits, only the pending copy is there.
    assert signal_abort.describe(None, None, later, signal_abort.Whereabouts(
        [], False, pending)) == pending
    assert signal_abort.describe(None, 'the checkpoint /t/m-3', later, signal_abort.Whereabouts(
        ['the results JSON /b/x.json'], False, 'not recorded ...')) == (
        'after writing the checkpoint /t/m-3 and the results JSON /b/x.json; not recorded ...')
    # A salvage still writing the record when the abort's wait ended.
    assert signal_abort.describe(None, None, later, signal_abort.Whereabouts(
        ['the results JSON /b/x.json'], True, 'not recorded ...')) == (
        'after writing the results JSON /b/x.json, with the figures of its timed steps; not '
        'recorded ...; the final checkpoint may be missing')
    # Nothing kept: as before.
    assert signal_abort.describe(None, None, later, None) == 'without saving'


# A tiny run whose record waits for a lock this test holds; when the wait is said, the run
# gets SIGTERM twice. Before: 'aborting at once, without saving', exit 143, no row and no
# JSON anywhere.
_SIGNALLED_WHILE_WAITING = textwrap.dedent('''
    import os, signal, sys
    sys.path.insert(0, {tests!r})
    import checkout
    checkout.load()
    from tf_cnn_benchmarks import cli, cnn_util
    from tf_cnn_benchmarks.history import write_wait
    from tf_cnn_benchmarks.lifecycle import signals
    signals.ECHO_SECS = 0.0  # two signals sent at once are two here
    signals.SALVAGE_SECS = 1.0  # the abort's wait for the run's own reports
    write_wait.NOTE_AFTER_SECS = 0.0
    said = cnn_util.log_fn

    def log_fn(text):
        said(text)
        if text.startswith('Waiting for the results database'):
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)
    cnn_util.log_fn = log_fn
    sys.exit(cli.main(['tf_cnn_benchmarks'] + {args!r}))
''')


@pytest.mark.cli
def test_a_second_signal_while_the_record_waits_leaves_the_results_for_ingest(tmp_path):
    db = str(tmp_path / 'k.sqlite')
    holder = _held(db)
    args = ['--model=trivial', '--batch_size=2', '--image_size=16', '--num_batches=2',
            '--num_warmup_batches=1', '--device=cpu', '--results_db=%s' % db, '--label=t']
    proc = subprocess.run(
        [sys.executable, '-c', _SIGNALLED_WHILE_WAITING.format(tests=TESTS, args=args)],
        capture_output=True, text=True, timeout=300, cwd=REPO,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3'))
    holder.close()
    assert proc.returncode == 143, proc.stderr
    [copy] = glob.glob(str(tmp_path / 'unrecorded' / 'tf_cnn_benchmarks_trivial_*.json'))
    assert proc.stderr.splitlines()[-1] == (
        'error: received SIGTERM again: aborting at once, its results are in %s, not recorded '
        'in the results database %s: `tf_cnn_results ingest %s --results_db=%s` records them'
        % (copy, db, copy, db))
    assert 'Recorded as run' not in proc.stdout
    assert ingest.ingest(db, [copy]).added == 1
    assert ingest.ingest(db, [str(tmp_path / 'unrecorded')]).present == 1

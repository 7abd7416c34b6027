"""The results database (history/store.py, records.py, ingest.py, lifecycle/results_db.py):
rows of a run and of a sweep record, writers at once, idempotent ingest, the migration from
schema 1, files that are not ours left untouched, the --results_db/--noresults_db flag, and a
run recording itself."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from tf_cnn_benchmarks import flag_parsing, package_info, params
from tf_cnn_benchmarks.history import ingest, records, store
from tf_cnn_benchmarks.lifecycle import results_db, results_log
from tf_cnn_benchmarks.preflight import output_paths
from tf_cnn_benchmarks.tools.sweep import runner as sweep_runner

import results_helpers as rh

TESTS = os.path.dirname(os.path.abspath(__file__))
KEY = ('model=trivial|mode=training|precision=fp32|batch_size=32|num_devices=1|num_workers=1|'
       'variable_update=parameter_server|device=cpu|data=synthetic|image_size=32')


def _sha(path) -> str:
    return hashlib.sha256(open(path, 'rb').read()).hexdigest()


def _sweep_record(result, repeat=0, started='2026-01-05T00:00:00+00:00'):
    config = {'model': 'trivial', 'batch_size': 32, 'num_gpus': 1, 'precision': 'fp32',
              'variable_update': 'parameter_server', 'repeat': repeat}
    outcome = {'status': 'ok', 'exit_status': 0, 'error': None, 'result': result,
               'wall_secs': 10.0, 'started_utc': started}
    return sweep_runner.make_record(config, ['--device=cpu'], [], outcome,
                                    'runs/trivial-r%d' % repeat, dict(result['environment']))


# --- Rows.

def test_a_result_becomes_a_row_with_its_configuration_figures_and_environment():
    r = rh.result(1000.0, use_bf16=True, num_intra_threads=1, label='image-7')
    row = records.from_result(r)
    assert row['config_key'] == KEY.replace('fp32', 'bf16')
    assert (row['model'], row['precision'], row['mode'], row['batch_size'], row['num_devices'],
            row['hostname'], row['label']) == ('trivial', 'bf16', 'training', 32, 1, 'node-a',
                                               'image-7')
    assert row['images_per_sec'] == 1000.0 and row['num_steps'] == 4
    assert row['step_time_min'] == pytest.approx(0.032 * 0.99)
    assert row['step_time_max'] == pytest.approx(0.032 * 1.01)
    assert (row['model_flops_per_sec'], row['fraction_of_peak'], row['input_share'],
            row['peak_rss_bytes'], row['latency_p50_ms']) == (2e9, 0.25, 0.01, 2 ** 30, None)
    assert (row['cpu_flags'], row['gpus'], row['tf_version']) == ('avx2 fma', '', '2.21.0')
    assert json.loads(row['params_json'])['num_intra_threads'] == 1
    assert set(json.loads(row['figures_json'])) == {'utilisation', 'input', 'memory',
                                                    'latency_ms'}
    assert row['run_utc'] == '2026-01-05T00:00:00.000000Z'


def test_a_cluster_chief_records_the_cluster_total():
    r = dict(rh.result(400.0), num_workers=2, cluster_images_per_sec=790.0)
    row = records.from_result(r)
    assert row['images_per_sec'] == 790.0 and row['num_workers'] == 2
    assert 'num_workers=2' in row['config_key']


def test_a_sweep_record_and_its_run_json_are_the_same_run():
    r = rh.result(1234.5678901234)
    from_json = records.from_result(json.loads(json.dumps(r)), source='json x')
    from_sweep = records.from_sweep_record(_sweep_record(r), source='sweep y')
    assert from_json['content_key'] == from_sweep['content_key'] == records.from_result(
        r)['content_key']
    assert from_sweep['config_key'] == KEY
    assert from_sweep['run_utc'] == '2026-01-05T00:00:10.000000Z'  # started + wall time
    other = records.from_result(rh.result(1234.5678901235))
    assert other['content_key'] != from_json['content_key']


def test_what_changed_between_two_runs_leaves_out_output_paths():
    a = records.from_result(rh.result(1000.0, benchmark_log_dir='/a'))
    b = records.from_result(rh.result(900.0, num_intra_threads=1, benchmark_log_dir='/b',
                                      env={'tf_version': '2.22.0'}))
    assert records.changes(a, b) == ['tf_version 2.21.0 -> 2.22.0', '--num_intra_threads 0 -> 1']


# --- Writers at once.

_WRITER = textwrap.dedent('''
    import os, sys, time
    sys.path.insert(0, {tests!r})
    import checkout
    checkout.load()
    import results_helpers as rh
    from tf_cnn_benchmarks.history import store
    db, writer, count, go = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    while not os.path.exists(go):
        time.sleep(0.005)
    for i in range(count):
        store.record_result(db, rh.result(1000.0 + writer + i / 1000.0, host='w%d' % writer))
''')


@pytest.mark.cli
def test_several_processes_writing_at_once_lose_and_duplicate_no_run(tmp_path):
    db, go = str(tmp_path / 'new' / 'results.sqlite'), str(tmp_path / 'go')
    writers, count = 4, 40
    procs = [subprocess.Popen([sys.executable, '-c', _WRITER.format(tests=TESTS), db, str(w),
                               str(count), go], stderr=subprocess.PIPE, text=True)
             for w in range(writers)]
    open(go, 'w').close()  # all start together, on a database none has made yet
    errors = [p.communicate(timeout=240)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * writers, errors
    with store.opened(db) as conn:
        rows = store.select_runs(conn)
        assert conn.execute('PRAGMA journal_mode').fetchone()[0] == 'wal'
        assert conn.execute('PRAGMA user_version').fetchone()[0] == store.SCHEMA_VERSION
    assert len(rows) == writers * count
    assert len({r['content_key'] for r in rows}) == writers * count
    for w in range(writers):
        mine = sorted(r['images_per_sec'] for r in rows if r['hostname'] == 'w%d' % w)
        assert mine == [1000.0 + w + i / 1000.0 for i in range(count)]


# --- Ingest.

def _sweep_folder(root, results):
    """A sweep folder as tf_cnn_sweep leaves it: results.jsonl, and each run's JSON in its
    run folder; plus a failed run's record and a torn last line."""
    os.makedirs(root)
    with open(os.path.join(root, 'results.jsonl'), 'w', encoding='utf-8') as f:
        for i, r in enumerate(results):
            record = _sweep_record(r, repeat=i)
            results_log.write_json(dict(r), os.path.join(root, record['run_dir']))
            f.write(json.dumps(record) + '\n')
        failed = dict(_sweep_record(results[0], repeat=99), status='failed',
                      key='model=trivial|repeat=99')
        f.write(json.dumps(failed) + '\n{"key": "torn')
    return root


def test_ingest_twice_adds_each_run_once(tmp_path, capsys):
    results = rh.series([1000.0, 1010.0, 990.0])
    sweep = _sweep_folder(str(tmp_path / 'sweep'), results)
    loose = results_log.write_json(rh.result(777.0), str(tmp_path / 'logs'))
    db = str(tmp_path / 'db.sqlite')
    first = ingest.ingest(db, [sweep, loose])
    assert (first.added, first.present, first.failed_runs, first.in_sweeps) == (4, 0, 1, 3)
    assert first.problems == ['%s line 5: not a sweep record' % os.path.join(sweep,
                                                                              'results.jsonl')]
    again = ingest.ingest(db, [str(tmp_path)])
    assert (again.added, again.present) == (0, 4)
    with store.opened(db) as conn:
        rows = store.select_runs(conn)
    assert sorted(r['images_per_sec'] for r in rows) == [777.0, 990.0, 1000.0, 1010.0]
    assert {r['source'].split()[0] for r in rows} == {'sweep', 'json'}
    # A run that recorded itself, then its JSON ingested: still one row.
    recorded = rh.result(555.0)
    results_db.record(db, recorded)
    path = results_log.write_json(dict(recorded), str(tmp_path / 'more'))
    assert (ingest.ingest(db, [path]).added, ingest.ingest(db, [path]).present) == (0, 1)
    capsys.readouterr()


def _cluster_task_results(total=173.66, own=(87.11, 86.55)):
    """The two JSONs a 2-worker cluster's --benchmark_log_dir holds (cluster/coordination.py):
    worker 0's (the chief's: its own images/sec and the cluster total) and worker 1's (its own
    figure only)."""
    def task(index, rate):
        r = rh.result(rate, variable_update='parameter_server', job_name='worker',
                      task_index=index)
        r.update(num_workers=2, task='worker %d' % index, traffic_bytes_estimate={})
        return r
    chief = dict(task(0, own[0]), cluster_images_per_sec=total, worker_images_per_sec=list(own))
    return chief, task(1, own[1])


def test_ingest_of_a_clusters_log_dir_stores_the_chiefs_row_and_names_the_rest(tmp_path):
    chief, other = _cluster_task_results()
    logs = str(tmp_path / 'logs')
    other_path = results_log.write_json(dict(other), logs)
    results_log.write_json(dict(chief), logs)
    db = str(tmp_path / 'db.sqlite')
    summary = ingest.ingest(db, [logs])
    with store.opened(db) as conn:
        rows = store.select_runs(conn)
    assert [(r['images_per_sec'], r['num_workers']) for r in rows] == [(173.66, 2)]
    assert (summary.added, summary.present, summary.problems) == (1, 0, [])
    lines = summary.lines()
    assert lines[0].endswith(', 0 files or lines skipped, 1 cluster task JSON not the '
                             'chief\'s')
    assert len(lines) == 2 and lines[1].startswith(
        'skipped: 1 cluster task JSON other than the chief\'s, each the task\'s own share ')
    assert lines[1].endswith(': worker 1 (%s)' % other_path)
    # As a run records itself (only the chief, lifecycle/results_db.py): the same one row.
    db2 = str(tmp_path / 'db2.sqlite')
    results_db.record(db2, dict(chief))
    again = ingest.ingest(db2, [logs])
    assert (again.added, again.present, len(again.other_tasks)) == (0, 1, 1)
    # A one-host run and the controller's (cluster total set) are nobody's share.
    assert ingest.other_task(rh.result(5.0)) is None
    assert ingest.other_task(chief) is None and ingest.other_task(other) == 'worker 1'


def test_ingest_of_a_missing_path_names_it(tmp_path):
    with pytest.raises(FileNotFoundError, match='nowhere does not exist'):
        ingest.ingest(str(tmp_path / 'db.sqlite'), [str(tmp_path / 'nowhere')])
    assert not os.path.exists(tmp_path / 'db.sqlite')


# --- Schema versions.

def test_a_schema_1_database_is_migrated_with_its_runs(tmp_path):
    db = str(tmp_path / 'old.sqlite')
    old_rows = [records.from_result(r) for r in rh.series([1000.0, 900.0], use_fp16=True)]
    with store.opened(db, schema_version=1) as conn:
        columns = [c[1] for c in conn.execute('PRAGMA table_info(runs)')]
        assert 'config_key' not in columns
        for row in old_rows:  # as the schema-1 program wrote them: no later columns
            names = rh.columns_at(1)
            conn.execute('INSERT INTO runs (recorded_utc, %s) VALUES (?, %s)' % (
                ', '.join(names), ', '.join('?' * len(names))),
                ['2026-01-01T00:00:00.000000Z'] + [row[n] for n in names])
        assert conn.execute('PRAGMA user_version').fetchone()[0] == 1
    with store.opened(db) as conn:
        assert conn.execute('PRAGMA user_version').fetchone()[0] == store.SCHEMA_VERSION
        rows = store.select_runs(conn, config=KEY.replace('fp32', 'fp16'))
        indexes = {r[1] for r in conn.execute('PRAGMA index_list(runs)')}
    assert [r['images_per_sec'] for r in rows] == [1000.0, 900.0]
    assert [r['given_flags_json'] for r in rows] == [None, None]  # derived when shown
    assert indexes == {'runs_content_key', 'runs_series'}


def _pinned(rate: float, cpus: int | None, hours: int = 0) -> dict:
    """A result whose host load recorded `cpus` allowed CPUs (None: no host load)."""
    r = rh.result(rate, finished=rh.T0 + datetime.timedelta(hours=hours))
    if cpus is not None:
        r['host_load'] = {'cores': cpus, 'cpus_allowed': cpus, 'representative': True,
                          'others_fraction': 0.01, 'outside_fraction': 0.01,
                          'steal_fraction': 0.0, 'reasons': []}
    return r


def test_runs_of_other_allowed_cpu_counts_are_other_configurations(tmp_path, capsys,
                                                                    monkeypatch):
    # A new user's trial: `tf_cnn_results list` of a run pinned to 1 CPU and an unpinned one
    # of the same flags said '2 runs, 1 configuration'.
    monkeypatch.chdir(tmp_path)  # history writes its plot into the working folder
    db = str(tmp_path / 'r.sqlite')
    rh.fill(db, [_pinned(361.0, 2), _pinned(245.5, 1, 1), _pinned(300.0, None, 2)])
    with store.opened(db) as conn:
        keys = [r['config_key'] for r in store.select_runs(conn)]
    assert keys == [KEY + '|cpus_allowed=2', KEY + '|cpus_allowed=1', KEY]  # old: as before
    assert [records.cpus_in_key(k) for k in keys] == [2, 1, None]
    status, out, _ = rh.results_command(capsys, 'list', '--results_db=' + db)
    assert status == 0 and '3 runs, 3 configurations' in out
    assert records.describe_config(dict(records.from_result(_pinned(1.0, 1)))).endswith(
        'synthetic 32px on 1 CPU')
    # history needs one configuration: no filter picks the CPUs, --config=KEY does.
    status, _, err = rh.results_command(capsys, 'history', '--results_db=' + db)
    assert status != 0 and err.startswith(
        'error: history shows one configuration; 3 match the filters (trivial on 2 CPUs; '
        'trivial on 1 CPU; trivial on ? CPUs): they differ in the allowed CPUs, which has no '
        'filter: give --config=KEY')
    status, out, _ = rh.results_command(capsys, 'history', '--results_db=' + db,
                                        '--config=' + KEY + '|cpus_allowed=1')
    assert status == 0 and '245.5' in out


def test_a_schema_3_database_keys_its_runs_by_their_allowed_cpus(tmp_path):
    db = str(tmp_path / 'old.sqlite')
    old_rows = [records.from_result(_pinned(1000.0 + i, cpus, i))
                for i, cpus in enumerate((1, 2, None))]
    with store.opened(db, schema_version=3) as conn:
        for row in old_rows:  # as the schema-3 program wrote them: no CPUs in the key
            row = dict(row, config_key=KEY)
            names = rh.columns_at(3)
            conn.execute('INSERT INTO runs (recorded_utc, %s) VALUES (?, %s)' % (
                ', '.join(names), ', '.join('?' * len(names))),
                ['2026-01-01T00:00:00.000000Z'] + [row[n] for n in names])
    with store.opened(db) as conn:
        assert conn.execute('PRAGMA user_version').fetchone()[0] == store.SCHEMA_VERSION == 7
        keys = [r['config_key'] for r in store.select_runs(conn)]
    assert keys == [KEY + '|cpus_allowed=1', KEY + '|cpus_allowed=2', KEY]


def test_a_schema_1_database_reads_read_only_without_being_migrated(tmp_path):
    """The read-only commands never write (issue 41.3): an older file is migrated in a copy
    in memory and keeps its version; a database that is not there is not made."""
    db = str(tmp_path / 'old.sqlite')
    row = records.from_result(rh.result(1000.0))
    with store.opened(db, schema_version=1) as conn:
        names = rh.columns_at(1)
        conn.execute('INSERT INTO runs (recorded_utc, %s) VALUES (?, %s)' % (
            ', '.join(names), ', '.join('?' * len(names))),
            ['2026-01-01T00:00:00.000000Z'] + [row[n] for n in names])
    with store.opened(db, read_only=True) as conn:
        assert [r['config_key'] for r in store.select_runs(conn)] == [KEY]
    check = sqlite3.connect(db)
    assert check.execute('PRAGMA user_version').fetchone()[0] == 1
    check.close()
    with pytest.raises(store.StoreError, match='^no results database at '):
        store.open_read_only(str(tmp_path / 'none.sqlite'))
    assert not os.path.exists(tmp_path / 'none.sqlite')


def _foreign(path):
    conn = sqlite3.connect(path)
    conn.execute('CREATE TABLE notes (text TEXT)')
    conn.execute("INSERT INTO notes VALUES ('keep me')")
    conn.commit()
    conn.close()


def _newer(path):
    with store.opened(path):
        pass
    conn = sqlite3.connect(path)
    conn.execute('PRAGMA user_version = 99')
    conn.close()


def _damaged(path):
    with store.opened(path) as conn:
        store.insert_rows(conn, [records.from_result(rh.result(1000.0 + i))
                                 for i in range(300)])
    size = os.path.getsize(path)
    with open(path, 'r+b') as f:  # pages in the middle of the runs table overwritten
        f.seek(size // 2 // 4096 * 4096)
        f.write(b'\x07' * 8192)


@pytest.mark.parametrize('make, text', [
    (lambda p: open(p, 'w').write('not a database\n' * 100),
     'is not an SQLite database (file is not a database); it was left untouched: move it away'),
    (_foreign, 'is an SQLite database of another program (application_id 0x0, tables: notes), '
               'not a tf_cnn_benchmarks results database; it was left untouched'),
    (_newer, 'has schema version 99, newer than this tf_cnn_benchmarks (%s) knows (7); it was '
             'left untouched: upgrade tf_cnn_benchmarks' % package_info.VERSION),
    (_damaged, 'is a damaged SQLite database (PRAGMA quick_check: '),
])
def test_a_file_that_is_not_ours_is_one_error_and_left_untouched(tmp_path, make, text):
    path = str(tmp_path / 'results.sqlite')
    make(path)
    before = _sha(path)
    with pytest.raises(store.StoreError) as raised:
        with store.opened(path) as conn:  # the damage shows when the runs are read
            store.select_runs(conn)
            store.insert_rows(conn, [records.from_result(rh.result(5.0))], path)
    assert str(raised.value).startswith(path + ' ') and text in str(raised.value)
    assert '\n' not in str(raised.value)
    assert _sha(path) == before
    # Found before a run starts, as a usage error of the command (a damaged one too: its
    # quick_check, issue ops 11).
    with pytest.raises(params.ParamsError, match='^--results_db: %s ' % path):
        output_paths.check_output_paths(params.make_params(results_db=path))


# --- The flag.

@pytest.mark.parametrize('args, value', [
    ([], None), (['--results_db=/x/r.sqlite'], '/x/r.sqlite'), (['--noresults_db'], False),
    (['--results_db'], None), (['--results_db=false'], False),
])
def test_results_db_takes_a_path_or_no(args, value):
    assert flag_parsing.parse_flags(['prog'] + args).results_db == value
    assert store.resolve_path(value) == (None if value is False else value
                                         or store.default_path())


def test_noresults_db_works_in_a_flag_file_and_refuses_a_value(tmp_path):
    flagfile = tmp_path / 'flags'
    flagfile.write_text('--noresults_db\n--label=nightly\n')
    p = flag_parsing.parse_flags(['prog', '--flagfile=%s' % flagfile])
    assert (p.results_db, p.label) == (False, 'nightly')
    with pytest.raises(params.ParamsError, match='^--noresults_db=x: --noresults_db takes no '
                                                 'value; write --noresults_db or '
                                                 '--results_db=false'):
        flag_parsing.parse_flags(['prog', '--noresults_db=x'])


def test_the_default_place_follows_xdg_data_home():
    assert store.default_path({'XDG_DATA_HOME': '/d'}) == '/d/tf_cnn_benchmarks/results.sqlite'
    assert store.default_path({'HOME': '/home/u'}) == (
        '/home/u/.local/share/tf_cnn_benchmarks/results.sqlite')
    # conftest.py keeps the tests' runs out of the user's database.
    assert store.default_path().startswith(os.environ['XDG_DATA_HOME'])
    assert 'tf_cnn_tests_data_' in os.environ['XDG_DATA_HOME']


# --- A run records itself.

def test_a_run_records_itself_once_and_noresults_db_records_nothing(tiny_run, tmp_path,
                                                                    capsys, monkeypatch):
    db = str(tmp_path / 'r.sqlite')
    result = tiny_run(results_db=db, label='build-42', benchmark_log_dir=str(tmp_path / 'l'))
    # After the total block (and the results JSON's line) one line says the run's id: with
    # many jobs on a host, no --label is needed to find it.
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == ['Results written to %s' % result['results_file'],
                        'Recorded as run 1 in %s (tf_cnn_results show 1 --results_db=%s)'
                        % (db, db)]
    with store.opened(db) as conn:
        rows = store.select_runs(conn)
    assert len(rows) == 1 and rows[0]['label'] == 'build-42'
    assert rows[0]['images_per_sec'] == result['images_per_sec']
    assert rows[0]['run_utc'] == result['finished_utc']
    assert rows[0]['config_key'] == ('model=trivial|mode=training|precision=fp32|batch_size=4|'
                                     'num_devices=1|num_workers=1|variable_update='
                                     'parameter_server|device=cpu|data=synthetic|image_size=16'
                                     '|cpus_allowed=%d' % len(os.sched_getaffinity(0)))
    assert json.load(open(result['results_file']))['finished_utc'] == result['finished_utc']
    assert ingest.ingest(db, [str(tmp_path / 'l')]).present == 1  # its JSON: the same run
    monkeypatch.setenv('XDG_DATA_HOME', str(tmp_path / 'xdg'))
    tiny_run(results_db=False)
    assert not os.path.exists(tmp_path / 'xdg')
    assert 'Recorded as' not in capsys.readouterr().out  # nothing recorded, nothing said
    tiny_run()  # the default: the default place
    default = str(tmp_path / 'xdg' / 'tf_cnn_benchmarks' / 'results.sqlite')
    with store.opened(default) as conn:
        assert rh.count_runs(conn) == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        'Recorded as run 1 in %s (tf_cnn_results show 1)' % default)


def test_a_write_that_fails_at_the_end_keeps_the_result_for_ingest(tmp_path, capsys):
    db = str(tmp_path / 'results.sqlite')
    _foreign(db)  # made after the run's check: the run's write fails
    assert results_db.record(db, rh.result(321.0)) is None
    err = capsys.readouterr().err
    kept = str(tmp_path / 'unrecorded')
    assert err.startswith('warning: the run was not recorded in the results database: %s is '
                          'an SQLite database of another program' % db)
    # The hint names the database the run used (not the default): pasted, it records there.
    assert '`tf_cnn_results ingest %s --results_db=%s` records them' % (kept, db) in err
    summary = ingest.ingest(str(tmp_path / 'other.sqlite'), [kept])
    assert summary.added == 1


def test_only_a_clusters_chief_records():
    import dataclasses

    from tf_cnn_benchmarks.lifecycle import wiring

    import helpers
    plan = helpers.tiny_bench(results_db='/nowhere/x.sqlite').plan
    hooks = [h for h in wiring.make_hooks(plan, None, None)
             if isinstance(h, results_db.RecordHook)]
    assert [h.database for h in hooks] == ['/nowhere/x.sqlite']
    worker = dataclasses.replace(plan, is_chief=False)
    assert not any(isinstance(h, results_db.RecordHook)
                   for h in wiring.make_hooks(worker, None, None))


def test_an_evaluation_is_recorded_as_its_own_mode(tiny_run, tmp_path):
    db, train_dir = str(tmp_path / 'r.sqlite'), str(tmp_path / 'train')
    tiny_run(train_dir=train_dir, num_batches=2, results_db=db)
    evaluated = tiny_run(eval=True, train_dir=train_dir, num_batches=2, results_db=db)
    with store.opened(db) as conn:
        rows = store.select_runs(conn)
    assert [r['mode'] for r in rows] == ['training', 'evaluation']
    assert rows[1]['images_per_sec'] == evaluated['images_per_sec'] > 0
    # Synthetic data (tiny_run's): random labels, no accuracy stored (it stored 0.0);
    # real data's: tests/test_results_accuracy.py.
    assert evaluated['eval']['synthetic'] and evaluated['eval']['top_1'] is not None
    assert (rows[1]['top_1_accuracy'], rows[1]['top_5_accuracy']) == (None, None)
    assert rows[1]['run_utc'] == evaluated['finished_utc']


def test_results_kept_where_no_folder_can_be_made_is_one_warning(capsys, monkeypatch,
                                                                  tmp_path):
    # The fallback's own failure (the database's folder vanished after the check) is one
    # warning, not a traceback; the next place of unrecorded_dirs keeps the results.
    monkeypatch.setenv('XDG_DATA_HOME', str(tmp_path))
    assert results_db.record('/proc/x/r.sqlite', rh.result(321.0)) is None
    err = capsys.readouterr().err
    assert err.startswith('warning: the run was not recorded in the results database: ')
    kept = os.path.join(store.data_folder(), 'unrecorded')
    assert ('Its results are in %s/tf_cnn_benchmarks_trivial_' % kept) in err
    assert 'instead (cannot create the folder /proc/x/unrecorded for the results JSON' in err
    # Where no place takes them, the warning says so.
    monkeypatch.setattr(results_db, 'unrecorded_dirs', lambda database: ['/proc/x/unrecorded'])
    assert results_db.record('/proc/x/r.sqlite', rh.result(321.0)) is None
    assert 'nor could its results be kept: cannot create the folder /proc/x/unrecorded' in (
        capsys.readouterr().err)


def test_tf_cnn_results_db_names_the_default_database(monkeypatch, tmp_path):
    """Users guessed TF_CNN_RESULTS_DB: it names the database of every run, sweep and
    tf_cnn_results command without --results_db; --results_db wins; the fallback folder of
    results that could not be recorded stays the XDG one (not beside the named file)."""
    environ = {'XDG_DATA_HOME': '/data', 'TF_CNN_RESULTS_DB': '~/nightly.sqlite'}
    assert store.default_path(environ) == os.path.expanduser('~/nightly.sqlite')
    assert store.default_path(dict(environ, TF_CNN_RESULTS_DB=' ')) == (
        '/data/tf_cnn_benchmarks/results.sqlite')
    assert store.data_folder(environ) == '/data/tf_cnn_benchmarks'
    db = str(tmp_path / 'named.sqlite')
    monkeypatch.setenv('TF_CNN_RESULTS_DB', db)
    assert store.resolve_path(None) == db and store.resolve_path('/x.sqlite') == '/x.sqlite'
    (tmp_path / 'a_file').write_text('')  # a database beside which nothing can be made
    assert results_db.unrecorded_dir(str(tmp_path / 'a_file' / 'x.sqlite')) == os.path.join(
        os.environ['XDG_DATA_HOME'], 'tf_cnn_benchmarks', 'unrecorded')
    assert results_db.record(store.resolve_path(None), rh.result(321.0)) == 1
    with store.opened(db, read_only=True) as conn:
        assert rh.count_runs(conn) == 1


_MADE_ON_READ_ONLY = '''
mount --bind -o ro "$1" "$1" || exit 9
shift
"$@" --results_db="$RO/new.sqlite"; echo "RUN $?"
TF_CNN_RESULTS_DB="$RO/sub/new.sqlite" "$@"; echo "RUN $?"
XDG_DATA_HOME="$RO" "$@"; echo "RUN $?"
env -u XDG_DATA_HOME HOME="$RO" "$@"; echo "RUN $?"
'''


@pytest.mark.cli
def test_a_database_to_be_made_on_a_read_only_mount_says_read_only(tmp_path):
    """A new --results_db (or one TF_CNN_RESULTS_DB names) on a read-only mount said `the
    folder ... is not writable`: it says the file system is read-only (EROFS) and gives the
    fix, as for an existing database there. The default place there (XDG_DATA_HOME, or a
    read-only HOME in a locked-down container) refused the run too (exit 2), while a HOME that
    does not exist let it go on: now the run goes on, not recorded, with one warning saying so
    and the fix. A real read-only bind mount in a private mount namespace (root is not stopped
    by chmod)."""
    from results_helpers import private_mounts as _private_mounts
    why = _private_mounts()
    if why:
        pytest.skip(why)
    folder = str(tmp_path / 'ro')
    os.mkdir(folder)
    run = [sys.executable, os.path.join(os.path.dirname(TESTS), 'tf_cnn_benchmarks.py'),
           '--model=trivial', '--batch_size=2', '--image_size=16', '--num_batches=1',
           '--num_warmup_batches=0']
    proc = subprocess.run(['unshare', '-rm', 'bash', '-c', _MADE_ON_READ_ONLY, 'sh', folder,
                           *run], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, RO=folder), cwd=str(tmp_path))
    assert [x for x in proc.stdout.splitlines() if x.startswith('RUN')] == [
        'RUN 2', 'RUN 2', 'RUN 0', 'RUN 0'], proc.stdout[-2000:] + proc.stderr[-2000:]
    fix = ('cannot be made: %s is on a read-only file system; a run needs another '
           '--results_db=PATH (or --noresults_db to record nothing)' % folder)
    unused = ('warning: the run is not recorded in the results database: its default place '
              '%s%s/tf_cnn_benchmarks/results.sqlite cannot be made: %s is on a read-only file '
              'system; give --results_db=PATH to record it, or --noresults_db to record nothing')
    assert [x for x in proc.stderr.splitlines() if 'results database' in x] == [
        'error: --results_db: the results database %s/new.sqlite %s' % (folder, fix),
        'error: --results_db (not given: TF_CNN_RESULTS_DB): the results database '
        '%s/sub/new.sqlite %s' % (folder, fix),
        unused % (folder, '', folder), unused % (folder, '/.local/share', folder)]
    assert proc.stdout.count('total images/sec') == 2
    assert os.listdir(folder) == []

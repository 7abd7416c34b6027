"""A model name whose network changed ('mobilenet': this project's MobileNet v1 until it took the
original's meaning, MobileNet v2): every results JSON and sweep record says its results format
('format': 2); a stored one without it (format 1) of 'mobilenet' ran v1 and reads as
'mobilenet_v1', so it is never one configuration with a run of today's
(metrics/configuration.py stored_model; ingest, history/records.py and history/ingest.py;
--baseline, metrics/baseline.py, which refuses a newer format, as ingest does; the results
database's migration to schema 5, history/store.py; a sweep's records, tools/sweep/results.py:
compare and resume)."""

from __future__ import annotations

import json
import os
import types

import pytest

from tf_cnn_benchmarks import params
from tf_cnn_benchmarks.history import ingest, records, run_flags, store
from tf_cnn_benchmarks.lifecycle import results_log
from tf_cnn_benchmarks.metrics import baseline, configuration
from tf_cnn_benchmarks.tools.sweep import cli as sweep
from tf_cnn_benchmarks.tools.sweep import results as sweep_results
from tf_cnn_benchmarks.tools.sweep import runner as sweep_runner

import results_helpers as rh


def _mobilenet(rate, fmt, hours=0, **extra):
    """A training result of 'mobilenet' as the code of results format `fmt` wrote it (1: no
    'format' key, MobileNet v1; 2: today's, MobileNet v2)."""
    r = rh.result(rate, model='mobilenet', image_size=224, finished=rh.T0.replace(hour=hours),
                  **extra)
    if fmt != 1:
        r['format'] = fmt
    return r


def test_the_results_format_says_which_network_a_record_of_mobilenet_ran():
    assert configuration.RESULTS_FORMAT == 2
    assert configuration.format_of({}) == 1
    assert configuration.format_of({'format': 2}) == 2
    assert configuration.format_of({'format': 'two'}) == configuration.format_of(
        {'format': True}) == 1
    assert configuration.stored_model('mobilenet', 1) == 'mobilenet_v1'
    assert configuration.stored_model('mobilenet', 2) == 'mobilenet'
    assert configuration.stored_model('mobilenet_v2', 1) == 'mobilenet_v2'
    assert configuration.stored_model('resnet50', 1) == 'resnet50'


def test_every_results_json_written_says_its_format(tmp_path):
    # A dry run's or scaling plan's report has none of its own: write_json adds it.
    path = results_log.write_json({'model': 'mobilenet', 'dry_run': True}, str(tmp_path),
                                  prefix='dry_run')
    with open(path, encoding='utf-8') as f:
        assert json.load(f)['format'] == 2
    # A run's result has it from its common keys (the dict run() returns too).
    plan = types.SimpleNamespace(
        params=params.make_params(model='mobilenet'), mode='training', summary=dict,
        given_flags={}, global_batch_size=32, per_device_batch_size=32, devices=['/cpu:0'],
        num_workers=1, image_size=224)
    assert results_log.common_fields(plan)['format'] == 2


def test_an_ingested_results_json_of_format_1_is_mobilenet_v1(tmp_path):
    old, new = _mobilenet(500.0, 1), _mobilenet(900.0, 2, 1)
    rows = [records.from_result(r, source='json x') for r in (old, new)]
    assert [r['model'] for r in rows] == ['mobilenet_v1', 'mobilenet']
    assert [r['config_key'].split('|')[0] for r in rows] == [
        'model=mobilenet_v1', 'model=mobilenet']
    # The content key is the name recorded: ingesting the run again adds nothing.
    assert rows[0]['content_key'] == records.from_result(old, source='json y')['content_key']
    # A run recording itself is today's network: its result says format 2.
    assert records.from_result(new)['model'] == 'mobilenet'
    # Through the ingest command's reader, a results JSON of each format.
    summary = ingest.Summary()
    for name, result, meant in (('a', old, 'mobilenet_v1'), ('b', new, 'mobilenet')):
        path = tmp_path / ('tf_cnn_benchmarks_mobilenet_2026010%sT000000.000000Z.json'
                           % ('5' if name == 'a' else '6'))
        path.write_text(json.dumps(result))
        assert ingest.json_row(str(path), summary)['model'] == meant
    assert summary.problems == []


def _sweep_record(rate, fmt, repeat=0):
    """A sweep's record of a 'mobilenet' run as the sweep code of format `fmt` wrote it."""
    config = {'model': 'mobilenet', 'batch_size': 8, 'num_gpus': 1, 'precision': 'fp32',
              'variable_update': 'parameter_server', 'repeat': repeat}
    record = {'key': sweep_results.config_key(config), 'config': config,
              'status': 'ok', 'extra_flags': ['--device=cpu'], 'argv': [],
              'exit_status': 0, 'error': None, 'run_dir': 'runs/x%d' % repeat,
              'params': dict(rh.PARAMS, model='mobilenet', batch_size=8, image_size=224),
              'images_per_sec': rate, 'environment': dict(rh.ENVIRONMENT),
              'started_utc': '2026-01-05T00:00:0%d+00:00' % repeat, 'wall_secs': 5.0,
              'step_time_secs': {'min': 0.2, 'max': 0.2, 'count': 3}, 'figures': {}}
    if fmt != 1:
        record['format'] = fmt
    return record


def test_the_sweep_writes_its_format_in_every_record():
    config = {'model': 'mobilenet', 'batch_size': 8, 'num_gpus': 1, 'precision': 'fp32',
              'variable_update': 'parameter_server', 'repeat': 0}
    outcome = {'status': 'failed', 'exit_status': 1, 'error': 'error: x',
               'started_utc': '2026-01-05T00:00:00+00:00', 'wall_secs': 1.0}
    record = sweep_runner.make_record(config, [], [], outcome, 'runs/x', {})
    assert record['format'] == 2
    assert sweep_results.read_as_today(record)['key'].startswith('model=mobilenet|')


def test_an_ingested_sweep_record_of_format_1_is_mobilenet_v1(tmp_path):
    for fmt, meant in ((1, 'mobilenet_v1'), (2, 'mobilenet')):
        row = records.from_sweep_record(_sweep_record(40.0, fmt), 'sweep x')
        assert (row['model'], row['config_key'].split('|')[0]) == (meant, 'model=' + meant)
    # A sweep of before resumed by today's code: the old record and today's have one key in
    # the file, and are two runs of two networks (no results JSON in the run folders).
    folder = rh.sweep_folder(str(tmp_path / 's'), [_sweep_record(40.0, 1),
                                                   _sweep_record(75.0, 2)])
    summary = ingest.Summary()
    rows = ingest.sweep_rows(os.path.join(folder, 'results.jsonl'), summary)
    assert sorted((r['model'], r['images_per_sec']) for r in rows) == [
        ('mobilenet', 75.0), ('mobilenet_v1', 40.0)]
    assert summary.problems == []


def test_a_sweep_of_before_reads_as_mobilenet_v1_and_a_resume_runs_todays_again(tmp_path):
    folder = rh.sweep_folder(str(tmp_path / 'old'), [_sweep_record(40.0, 1)])
    loaded, bad = sweep_results.load_records(sweep_results.results_path(folder))
    assert bad == 0 and [r['key'] for r in loaded] == [
        'model=mobilenet_v1|batch_size=8|num_gpus=1|precision=fp32|'
        'variable_update=parameter_server|repeat=0']
    assert loaded[0]['params']['model'] == 'mobilenet'  # as it ran
    planned = sweep_results.config_key(dict(_sweep_record(0, 2)['config']))
    assert planned not in sweep_results.done_keys(loaded)


def test_compare_never_matches_an_old_sweeps_mobilenet_with_todays(tmp_path, capsys):
    a = rh.sweep_folder(str(tmp_path / 'a'), [_sweep_record(40.0 + i, 1, i) for i in range(3)])
    b = rh.sweep_folder(str(tmp_path / 'b'), [_sweep_record(75.0 + i, 2, i) for i in range(3)])
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b]) == 0
    out = capsys.readouterr().out
    assert 'only in A (1): mobilenet_v1 bs=8 gpus=1 fp32 parameter_server' in out
    assert 'only in B (1): mobilenet bs=8 gpus=1 fp32 parameter_server' in out
    # Two sweeps of today's (or two of before) are compared as ever.
    c = rh.sweep_folder(str(tmp_path / 'c'), [_sweep_record(80.0 + i, 2, i) for i in range(3)])
    assert sweep.main(['tf_cnn_sweep', 'compare', b, c]) == 0
    out = capsys.readouterr().out
    assert '| mobilenet | 8 | 1 | fp32 | parameter_server |' in out and 'only in' not in out


def _write_old_rows(db, results):
    """Rows as the code of before the rename wrote them, in a schema-4 file."""
    with store.opened(db, schema_version=4) as conn:
        for row in (records.from_result(dict(r, format=2)) for r in results):
            names = rh.columns_at(4)
            conn.execute('INSERT INTO runs (recorded_utc, %s) VALUES (?, %s)' % (
                ', '.join(names), ', '.join('?' * len(names))),
                ['2026-01-01T00:00:00.000000Z'] + [row[n] for n in names])


def test_a_database_of_before_reads_its_mobilenet_runs_as_mobilenet_v1(tmp_path, capsys):
    db = str(tmp_path / 'old.sqlite')
    pinned = _mobilenet(510.0, 1, 1)
    pinned['host_load'] = {'cores': 2, 'cpus_allowed': 2, 'representative': True,
                           'others_fraction': 0.0, 'outside_fraction': 0.0,
                           'steal_fraction': 0.0, 'reasons': []}
    # A schema-4 file was written by the code of before only: its 'mobilenet' rows are v1.
    _write_old_rows(db, [_mobilenet(500.0, 1), pinned, rh.result(100.0)])
    with store.opened(db, read_only=True) as conn:  # migrated in memory, the file as it was
        assert {r['model'] for r in store.select_runs(conn)} == {'mobilenet_v1', 'trivial'}
    # Migrates the file, then records today's mobilenet (v2) and mobilenet_v1.
    today_v1 = dict(rh.result(505.0, model='mobilenet_v1', image_size=224,
                              finished=rh.T0.replace(hour=3)), format=2)
    rh.fill(db, [_mobilenet(900.0, 2, 2), today_v1])
    with store.opened(db) as conn:
        assert conn.execute('PRAGMA user_version').fetchone()[0] == store.SCHEMA_VERSION == 7
        rows = store.select_runs(conn)
    keys = {r['config_key'] for r in rows}
    old_key = [k for k in keys if k.startswith('model=mobilenet_v1|')]
    assert len(old_key) == 2 and any(k.endswith('|cpus_allowed=2') for k in old_key)
    assert sorted(r['model'] for r in rows) == ['mobilenet', 'mobilenet_v1', 'mobilenet_v1',
                                                'mobilenet_v1', 'trivial']
    v1_rows = [r for r in rows if r['model'] == 'mobilenet_v1']
    assert [json.loads(r['params_json'])['model'] for r in v1_rows] == [  # as it ran
        'mobilenet', 'mobilenet', 'mobilenet_v1']
    # The regression finder's series are its configurations: v1's runs are not v2's, and
    # today's mobilenet_v1 run continues the series of the old one on the same CPUs.
    status, out, _ = rh.results_command(capsys, 'list', '--results_db=' + db)
    assert status == 0 and '5 runs, 4 configurations' in out
    assert records.changes(v1_rows[0], v1_rows[2]) == []  # the name is no change of flags
    # `tf_cnn_results show`'s line runs the network the old row ran.
    assert run_flags.run_flags(v1_rows[0]).flags['model'] == 'mobilenet_v1'
    assert run_flags.run_flags(
        [r for r in rows if r['model'] == 'mobilenet'][0]).flags['model'] == 'mobilenet'


def test_a_baseline_of_format_1_of_mobilenet_is_refused(tmp_path):
    path = tmp_path / 'baseline.json'
    stored = _mobilenet(500.0, 1, batch_size=32)
    stored['steps'] = [{'step': 1, 'images_per_sec': 500.0}]
    path.write_text(json.dumps(stored))
    here = params.make_params(model='mobilenet', batch_size=32, image_size=224, device='cpu')
    mine = dict(configuration.of_params(here._asdict()), data='synthetic', num_workers=1)
    with pytest.raises(params.ParamsError, match="model: 'mobilenet_v1' in the baseline, "
                       "'mobilenet' here"):
        baseline.check_config(baseline.load(str(path)), str(path), here, mine)
    stored['format'] = 2  # today's: the same network
    path.write_text(json.dumps(stored))
    assert baseline.check_config(baseline.load(str(path)), str(path), here, mine)
    # A baseline of format 1 of mobilenet is one of a mobilenet_v1 run of today's.
    stored.pop('format')
    path.write_text(json.dumps(stored))
    v1 = params.make_params(model='mobilenet_v1', batch_size=32, image_size=224, device='cpu')
    mine_v1 = dict(configuration.of_params(v1._asdict()), data='synthetic', num_workers=1)
    assert baseline.check_config(baseline.load(str(path)), str(path), v1, mine_v1)
    changed = baseline.what_changed(baseline.load(str(path)), v1._asdict(), None)
    assert changed and not [c for c in changed if c.startswith('--model')]  # not a change


def test_a_baseline_of_a_newer_results_format_is_refused_with_the_fix(tmp_path):
    # Before: a format-99 JSON was read as today's (ingest refused it, --baseline did not).
    path = tmp_path / 'baseline.json'
    stored = _mobilenet(500.0, 99, batch_size=32)
    stored['steps'] = [{'step': 1, 'images_per_sec': 500.0}]
    path.write_text(json.dumps(stored))
    with pytest.raises(baseline.BaselineError) as e:
        baseline.load(str(path))
    assert str(e.value) == '--baseline=%s: %s' % (path, configuration.newer_format(stored))
    assert 'results format 99, newer than this tf_cnn_benchmarks' in str(e.value)
    assert 'upgrade tf_cnn_benchmarks' in str(e.value)

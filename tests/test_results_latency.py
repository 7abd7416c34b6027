"""Per-batch latency in the results database and over time (schema 7 of history/schema.py,
history/series_metric.py, `tf_cnn_results history` and `regressions` --metric): an inference
user's trial found the database kept no p90 and neither command could follow or gate on a
latency, whose rise (not fall) is the regression."""

from __future__ import annotations

import json
import sqlite3

from tf_cnn_benchmarks.history import records, regressions, series_metric, store

import results_helpers as rh

_main = rh.results_command
P99 = series_metric.METRICS['latency_p99_ms']


def _inference(p99: float, hours: int, p90: float | None = None) -> dict:
    """A forward-only run at batch 1 with its latency block (lifecycle/results_log.py);
    images/sec moved a hair per run so that each is another run (its content key)."""
    r = rh.result(100.0 + hours * 0.01, finished=rh.T0.replace(hour=hours), batch_size=1,
                  forward_only=True)
    latency = {'p50': p99 * 0.8, 'p99': p99, 'mean': p99 * 0.85, 'count': 4, 'batch_size': 1,
               'set_up_left_out': True}
    if p90 is not None:
        latency['p90'] = p90
    return dict(r, mode='forward-only', latency_ms=latency)


def test_a_schema_6_database_migrates_keeping_its_rows_and_p90_from_their_figures(tmp_path):
    db = str(tmp_path / 'old.sqlite')
    old = [records.from_result(r) for r in (rh.result(1000.0), _inference(10.0, 2, p90=9.0))]
    with store.opened(db, schema_version=6) as conn:
        assert 'latency_p90_ms' not in {c[1] for c in conn.execute('PRAGMA table_info(runs)')}
        names = rh.columns_at(6)  # as the schema-6 program wrote them: no p90 column
        for row in old:
            conn.execute('INSERT INTO runs (recorded_utc, %s) VALUES (?, %s)' % (
                ', '.join(names), ', '.join('?' * len(names))),
                ['2026-01-01T00:00:00.000000Z'] + [row[n] for n in names])
    with store.opened(db) as conn:  # a write's opening migrates the file
        assert conn.execute('PRAGMA user_version').fetchone()[0] == store.SCHEMA_VERSION == 7
        rows = store.select_runs(conn)
    # The rows kept; the training run has no p90 (null), the inference run's came from the
    # latency block its figures_json kept.
    assert [(r['images_per_sec'], r['latency_p99_ms'], r['latency_p90_ms']) for r in rows] == [
        (1000.0, None, None), (100.02, 10.0, 9.0)]


def test_a_run_with_latency_stores_p90_and_an_older_json_without_it_stores_null(tmp_path):
    db = str(tmp_path / 'r.sqlite')
    rh.fill(db, [_inference(10.0, 1, p90=9.5), _inference(11.0, 2)])
    with store.opened(db) as conn:
        got = [(r['latency_p50_ms'], r['latency_p90_ms'], r['latency_p99_ms'])
               for r in store.select_runs(conn)]
    assert got == [(8.0, 9.5, 10.0), (8.8, None, 11.0)]


def test_show_prints_the_three_percentiles_it_stores(tmp_path, capsys):
    # `show` printed p50 and p99 only, after p90 was stored.
    db = str(tmp_path / 'r.sqlite')
    rh.fill(db, [_inference(10.0, 1, p90=9.5), _inference(11.0, 2)])
    status, out, _ = _main(capsys, 'show', '1', '--results_db=' + db)
    assert status == 0 and 'latency p50 8.00 ms, p90 9.50 ms, p99 10.00 ms' in out
    status, out, _ = _main(capsys, 'show', '2', '--results_db=' + db)
    assert status == 0 and 'latency p50 8.80 ms, p90 - ms, p99 11.00 ms' in out


def test_history_follows_p99_and_leaves_out_runs_without_it_in_one_line(tmp_path, capsys):
    db = str(tmp_path / 'r.sqlite')
    runs = [_inference(p, i + 1, p90=p * 0.9) for i, p in enumerate([10.0, 10.2, 9.9])]
    no_latency = dict(_inference(0.0, 5), latency_ms=None)  # too short for percentiles
    rh.fill(db, runs + [no_latency])
    status, out, err = _main(capsys, 'history', '--results_db=' + db,
                             '--metric=latency_p99_ms', '--png=' + str(tmp_path / 'h.png'))
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith('left out 1 of 4 runs: no latency p99 ms recorded (')
    head = next(line for line in lines if line.startswith('| run |'))
    assert '| latency p99 ms |' in head
    assert [line.split(' | ')[4] for line in lines if line.startswith('| 1 ')
            or line.startswith('| 2 ') or line.startswith('| 3 ')] == ['10.000', '10.200',
                                                                        '9.900']
    assert 'latest batch of repeats: 10.000 latency p99 ms median of 3' in out
    status, out, _ = _main(capsys, 'history', '--results_db=' + db, '--json',
                           '--metric=latency_p90_ms')
    obj = json.loads(out)
    assert obj['metric'] == 'latency_p90_ms' and obj['metric_left_out'].startswith(
        'left out 1 of 4 runs: no latency p90 ms')
    assert [r['latency_p90_ms'] for r in obj['runs']] == [9.0, 9.18, 8.91]
    # A training-only configuration has no latency: one error line, exit 1.
    rh.fill(db, [rh.result(1000.0)])
    status, out, err = _main(capsys, 'history', '--results_db=' + db, '--mode=training',
                             '--metric=latency_p99_ms')
    assert status == 1 and err.startswith('error: no run of trivial fp32 training bs=32')
    status, _, err = _main(capsys, 'history', '--results_db=' + db, '--metric=p99')
    assert status == 2 and 'give one of images_per_sec, latency_p50_ms' in err


def _latency_rows(values: list[float]) -> list[dict]:
    """Database rows of one series with injected p99 latencies (ms), an hour apart."""
    rows = []
    for i, value in enumerate(values):
        row = records.from_result(_inference(value, i + 1))
        rows.append(dict(row, id=i + 1))
    return rows


def test_a_latency_rise_is_a_regression_and_a_fall_an_improvement():
    rise = _latency_rows([9.9, 10.1, 9.8, 10.2, 9.7, 10.3, 12.0, 12.1, 11.9])
    found, searched, short = regressions.find_regressions(rise, 5.0, metric=P99)
    assert (searched, short) == (1, 0) and len(found) == 1
    assert found[0].first_slower['id'] == 7 and found[0].still_slower
    fields = regressions.summary(found[0])
    assert fields['change'] == '+20.0%'
    assert fields['latency p99 ms'] == '10.000 (6 runs) -> 12.000 (3 runs)'
    # The same figures as images/sec are a rise, not a regression: the direction decides.
    as_rate = [dict(r, images_per_sec=r['latency_p99_ms']) for r in rise]
    assert regressions.find_regressions(as_rate, 5.0)[0] == []
    fall = _latency_rows([12.1, 11.9, 12.2, 11.8, 12.3, 11.7, 10.0, 10.1, 9.9])
    assert regressions.find_regressions(fall, 5.0, metric=P99)[0] == []


def test_regressions_gate_fails_on_a_latency_rise_and_passes_on_a_fall(tmp_path, capsys):
    rise = str(tmp_path / 'rise.sqlite')
    rh.fill(rise, [_inference(p, i + 1) for i, p in enumerate(
        [9.9, 10.1, 9.8, 10.2, 9.7, 10.3, 12.0, 12.1, 11.9])] + [rh.result(1000.0)])
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + rise,
                           '--metric=latency_p99_ms', '--fail_on_regression')
    lines = out.splitlines()
    assert status == 1
    assert lines[0] == 'left out 1 of 10 runs: no latency p99 ms recorded (a training run ' \
        'measures no latency; a run too short for percentiles, or for p90 one recorded ' \
        'before the database kept it, has none)'
    assert lines[1].startswith('REGRESSION (latency p99 ms higher): trivial fp32 forward-only')
    assert lines[3].startswith('  latency p99 ms: 10.000 (6 runs) -> 12.000 (3 runs), +20.0%, '
                               'Mann-Whitney p=')
    assert '  still higher: yes' in lines
    assert lines[-1] == ('gate: FAILED: 1 regression of latency p99 ms still higher by more '
                         'than 5%')
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + rise, '--json',
                           '--metric=latency_p99_ms', '--fail_on_regression')
    obj = json.loads(out)
    step = obj['series'][0]['steps_down'][0]
    assert (status, obj['metric'], obj['series'][0]['verdict']) == (1, 'latency_p99_ms',
                                                                     'regression')
    assert (step['median_latency_p99_ms_before'], step['median_latency_p99_ms_after'],
            round(step['change_pct'], 6)) == (10.0, 12.0, 20.0)
    fall = str(tmp_path / 'fall.sqlite')
    rh.fill(fall, [_inference(p, i + 1) for i, p in enumerate(
        [12.1, 11.9, 12.2, 11.8, 12.3, 11.7, 10.0, 10.1, 9.9])])
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + fall,
                           '--metric=latency_p99_ms', '--fail_on_regression')
    assert status == 0 and out.splitlines()[-1] == 'gate: passed'
    assert 'regressions: none (1 series searched' in out
    check = sqlite3.connect(fall)
    assert check.execute('PRAGMA user_version').fetchone()[0] == 7
    check.close()


def test_a_latency_series_not_judged_says_step_up_throughout(tmp_path, capsys):
    # An upgrading user's series said 'possible step up at run: #38' and then, in its
    # summary, 'runs spread too wide before a possible step down'.
    db = str(tmp_path / 'r.sqlite')
    rh.fill(db, [_inference(p, i + 1) for i, p in enumerate(
        [10.0, 10.1, 9.9, 13.0, 10.2, 9.8, 10.7, 10.6])])
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db,
                           '--metric=latency_p99_ms')
    assert status == 0 and '  possible step up at run: #4 ' in out
    assert 'possible step up for the test' in out and 'step down' not in out


def test_history_of_a_latency_picks_the_configuration_that_has_it(tmp_path, capsys):
    # A user with trivial's training and forward-only runs: `--metric=latency_p99_ms` said
    # two configurations match and suggested --mode=training (no latency there), and
    # --mode=forward_only (the run flag's spelling) matched nothing.
    db = str(tmp_path / 'r.sqlite')
    rh.fill(db, [rh.result(1000.0), _inference(10.0, 1, p90=9.5), _inference(11.0, 2)])
    status, out, err = _main(capsys, 'history', '--results_db=' + db, '--model=trivial',
                             '--metric=latency_p99_ms', '--json')
    assert (status, err) == (0, '')
    assert [r['latency_p99_ms'] for r in json.loads(out)['runs']] == [10.0, 11.0]
    status, out, _ = _main(capsys, 'list', '--results_db=' + db, '--mode=forward_only', '--json')
    assert status == 0 and [json.loads(line)['mode'] for line in out.splitlines()] == [
        'forward-only', 'forward-only']

"""`tf_cnn_results` and the host load of each run: a run too short for its load to be measured
is not clean. `list` says 'not measured' in its host load column, `show` why, and the verdicts
(regressions, history, the html page, `--baseline`, `tf_cnn_sweep compare`) leave it out like a
busy run, counting it in their left-out line; --include_unclean_runs keeps it
(metrics/clean_runs.py). Before, such runs were kept, so on a shared CI runner the gates judged
the short runs, whose load nobody knew, and left out the longer ones measured busy."""

from __future__ import annotations

import json

import pytest

from tf_cnn_benchmarks import params
from tf_cnn_benchmarks.metrics import baseline, clean_runs, host_load

import results_helpers as rh

SHORT = host_load.measure(host_load.Sample(0.0, 3.1, 0, 0, 0),
                          host_load.Sample(0.02, 3.2, 0, 0, 0), 2, 2, 100)
RATES = [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1002.0, 998.0, 1003.0]
UNMEASURED = ('had no measured host load (run too short: a longer timed part (a larger '
              '--num_batches) measures it)')


def _busy(others: float) -> dict:
    return host_load.measure(host_load.Sample(0.0, 3.1, 0, 0, 0),
                             host_load.Sample(10.0, 3.4, int(others * 2 * 1000), 0, 0), 2, 2,
                             100)


def _db(tmp_path, rates=RATES, short=3) -> str:
    """Runs of one configuration: the first `short` too short to measure, the next busy, the
    rest quiet."""
    db = str(tmp_path / 'r.sqlite')
    results = rh.series(rates)
    for i, r in enumerate(results):
        r['host_load'] = SHORT if i < short else _busy(0.8 if i == short else 0.05)
    rh.fill(db, results)
    return db


_main = rh.results_command


def test_a_run_too_short_to_measure_is_not_clean():
    state = clean_runs.state(SHORT, 3, 3)
    assert SHORT['others_fraction'] is None and 'too short' in SHORT['error']
    assert state.unmeasured == 'run too short' and not state.clean
    assert state.reasons == ['unmeasured'] and state.verdict == state.badge == 'not measured'
    assert state.describe() == (
        'host load not measured (run too short): whether the host was quiet is not known (left '
        'out of the verdicts unless --include_unclean_runs)')
    assert clean_runs.reason_lines([state, state]) == ['2 ' + UNMEASURED]
    # Not recorded at all (results from before the measurement): clean, as before.
    assert clean_runs.state(None).verdict == 'clean' and clean_runs.state(None).clean
    assert '--include_unclean_runs' in clean_runs.INCLUDE_FLAG
    assert 'whose host load was not measured' in clean_runs.INCLUDE_HELP


def test_list_has_the_host_load_column_and_show_says_why_it_is_left_out(tmp_path, capsys):
    db = _db(tmp_path)
    status, out, _ = _main(capsys, 'list', '--results_db=' + db)
    rows = out.splitlines()
    assert status == 0 and rows[0].endswith('| step ms (median) | host load |')
    verdicts = [row.rsplit('|', 2)[1].strip() for row in rows[2:10]]
    assert verdicts == ['not measured'] * 3 + ['busy'] + ['clean'] * 4
    status, out, _ = _main(capsys, 'show', '1', '5', '--results_db=' + db)
    lines = [line for line in out.splitlines() if line.startswith('  clean: ')]
    assert lines == [
        '  clean: host load not measured (run too short): whether the host was quiet is not '
        'known (left out of the verdicts unless --include_unclean_runs)',
        "  clean: clean (other processes used 5% of the run's cores)"]


def test_the_gates_judge_the_measured_quiet_runs_not_the_unmeasured_ones(tmp_path, capsys):
    """The CI user's case: the short runs (no load measured) were slow, the longer quiet ones
    not. Before, the short runs were kept and the busy one left out: the finder judged the
    noisiest data and found the 'step'. Now the short runs are left out and counted."""
    rates = RATES + [r * 0.6 for r in RATES]  # 8 measured quiet, then 8 short and slow
    db = str(tmp_path / 'r.sqlite')
    results = rh.series(rates)
    for i, r in enumerate(results):
        r['host_load'] = _busy(0.05) if i < 8 else SHORT
    rh.fill(db, results)
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db)
    assert status == 0 and out.startswith('regressions: none (1 series searched; 0 with ')
    assert 'left out 8 of 16 runs: 8 %s; --include_unclean_runs keeps them' % UNMEASURED \
        in out.splitlines(), out
    assert 'REGRESSION' not in out
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db,
                           '--include_unclean_runs')
    assert 'REGRESSION' in out  # kept, the short slow runs read as a step down
    assert 'kept 8 unclean runs of 16 (--include_unclean_runs): 8 %s' % UNMEASURED \
        in out.splitlines(), out
    assert ('host load: not measured for 8 of 16 runs kept in the verdicts (run too short): '
            'whether the host was quiet during them is not known; a longer timed part (a '
            'larger --num_batches) measures it') in out.splitlines(), out


def test_a_gate_with_only_unmeasured_runs_says_nothing_could_be_judged_on_both_lines(
        tmp_path, capsys):
    # Before: 'regressions: none (0 series searched; ...)' then a gate that said otherwise.
    db = _db(tmp_path, short=len(RATES))
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db, '--fail_on_regression')
    lines = out.splitlines()
    assert status == 3  # not judged
    assert lines[0] == ('regressions: nothing could be judged (0 series searched; 0 with fewer '
                        'than 6 runs, too few for the test).')
    assert lines[1] == 'left out 8 of 8 runs: 8 %s; --include_unclean_runs keeps them' % (
        UNMEASURED)
    assert lines[-1].startswith('gate: NOT JUDGED: no series was searched: every one of the 8 '
                                'matching runs was left out')
    # One series too short for the test: the same first words as the gate's line.
    db2 = str(tmp_path / 'few.sqlite')
    rh.fill(db2, rh.series(RATES[:3]))
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db2, '--fail_on_regression')
    lines = out.splitlines()
    assert status == 3 and lines[0].startswith('regressions: nothing could be judged (1 series '
                                               'searched; 1 with fewer than 6 runs')
    assert lines[-1].startswith('gate: NOT JUDGED: nothing could be judged')


def test_history_and_the_page_list_the_unmeasured_runs_as_left_out(tmp_path, capsys):
    from tf_cnn_benchmarks.history import page, records, store
    db = _db(tmp_path)
    status, out, _ = _main(capsys, 'history', '--results_db=' + db,
                           '--png=' + str(tmp_path / 'h.png'))
    assert status == 0
    assert ('left out: #1 2026-01-05 00:00:00 (not measured), #2 2026-01-05 01:00:00 (not '
            'measured), #3 2026-01-05 02:00:00 (not measured), #4 2026-01-05 03:00:00 (busy)'
            in out.splitlines()), out
    assert 'host load: not measured for' not in out  # the left-out lines say it
    with store.opened(db, read_only=True) as conn:
        rows = store.select_runs(conn)
    text = page.build_page(rows, db, 5.0)
    marked = {int(cell.split('</td>')[0]): cell.split('<span class="badge">')[1].split('<')[0]
              for cell in text.split('<td class="num">#')[1:]}
    assert marked == {4: 'busy', 1: 'not measured', 2: 'not measured', 3: 'not measured'}
    assert marked == {r['id']: records.host_load_word(r, clean='') for r in rows
                      if records.host_load_word(r, clean='')}
    assert '4 runs left out of the verdicts (--include_unclean_runs keeps them):' in text


def _result_json(tmp_path, load) -> str:
    p = params.make_params(model='trivial', batch_size=8)
    rates = [100.0, 101.0, 99.0, 100.5, 99.5]
    data = {'params': {k: (list(v) if isinstance(v, tuple) else v)
                       for k, v in p._asdict().items()},
            'images_per_sec': sum(rates) / len(rates), 'host_load': load,
            'steps': [{'step': i + 1, 'images_per_sec': r} for i, r in enumerate(rates)]}
    path = tmp_path / 'baseline.json'
    path.write_text(json.dumps(data))
    return str(path)


def test_baseline_refuses_an_unmeasured_baseline_and_does_not_judge_an_unmeasured_run(
        tmp_path):
    here = params.make_params(model='trivial', batch_size=8)
    path = _result_json(tmp_path, SHORT)
    with pytest.raises(baseline.BaselineError, match=r'is not a clean run \(host load not '
                                                     r'measured \(run too short\)'):
        baseline.check_config(baseline.load(path), path, here)
    stored = baseline.check_config(baseline.load(_result_json(tmp_path, _busy(0.05))), path,
                                   here)
    c = baseline.compare(stored, [100.0] * 5, 100.0, 5.0, clean_runs.state(SHORT, 5, 5))
    assert not c['judged'] and c['verdict'] == '?' and 'host load not measured' in c['left_out']
    assert baseline.format_line(c).endswith(
        '(host load not measured (run too short): whether the host was quiet is not known): '
        'NOT JUDGED (rerun with a longer timed part (a larger --num_batches), or '
        '--include_unclean_runs)')
    judged = baseline.compare(stored, [100.0] * 5, 100.0, 5.0, clean_runs.state(SHORT, 5, 5),
                              include_unclean=True)
    assert judged['left_out'] is None and judged['verdict'] != '?'

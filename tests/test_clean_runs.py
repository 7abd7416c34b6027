"""Verdicts from clean runs (issue 39.4): the rule (metrics/clean_runs.py), and every command
that judges, with recorded host loads and timed steps (no run is timed here):
`tf_cnn_results regressions` / `history` / `html` / `show`, `tf_cnn_sweep compare` and the
--baseline gate leave out runs whose timed part shared the host or that stopped before their
planned steps, say how many and why, and keep them with --include_unclean_runs."""

from __future__ import annotations

import json
import types

import pytest

from tf_cnn_benchmarks import cnn_util, params
from tf_cnn_benchmarks.history import page, records, store
from tf_cnn_benchmarks.lifecycle import figure_hooks
from tf_cnn_benchmarks.metrics import baseline, clean_runs, host_load
from tf_cnn_benchmarks.tools import results_cli
from tf_cnn_benchmarks.tools.sweep import cli as sweep
from tf_cnn_benchmarks.tools.sweep import host_load as sweep_host_load
from tf_cnn_benchmarks.tools.sweep import results as sweep_results

import results_helpers as rh

BUSY_LINE = 'shared the host (others used > 25% of the cores)'
# The series: 6 runs at full speed, two of them beside other jobs (597 and 1,060
# images/sec against 1,800-2,240), then 6 pinned to one core (-44% in the medians).
FULL = [2050.0, 1800.0, 597.0, 2240.0, 1060.0, 1950.0]
PINNED = [1150.0, 1120.0, 1190.0, 1100.0, 1170.0, 1130.0]
BUSY_AT = (2, 4)
# A flat series whose last three runs shared the host.
FLAT = [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1002.0, 998.0, 1003.0, 997.0, 560.0, 610.0,
        640.0]
FLAT_BUSY_AT = (9, 10, 11)


def load(others: float, steal: float = 0.0, cores: int = 2) -> dict:
    """result['host_load'] of a 10 s timed part on 2 CPUs where other processes used
    `others` of the run's cores (metrics/host_load.py measure, from two samples)."""
    return host_load.measure(
        host_load.Sample(0.0, 3.1, 0, 0, 0),
        host_load.Sample(10.0, 3.4, int(round(others * cores * 1000)),
                         int(round(steal * 2 * 1000)), 0), cores, 2, 100)


def _with(result: dict, others=None, steps=None) -> dict:
    if others is not None:
        result['host_load'] = load(others)
    if steps is not None:
        result['num_steps'], planned = steps
        result['plan'] = dict(result['plan'], num_batches=planned)
    return result


def _db(tmp_path, rates, busy=(), stopped=None, name='db', **kwargs) -> str:
    """A database of one series; runs at `busy` positions with others at 80% of the cores,
    the one at stopped[0] with stopped[1] = (run, planned) timed steps; the others at 5%."""
    db = str(tmp_path / (name + '.sqlite'))
    results = rh.series(rates, **kwargs)
    for i, r in enumerate(results):
        _with(r, others=0.8 if i in busy else 0.05)
        if stopped and i == stopped[0]:
            _with(r, steps=stopped[1])
    rh.fill(db, results)
    return db


_main = rh.results_command


# --- The rule.

def test_the_rule_a_quarter_of_the_cores_steal_and_the_planned_steps():
    assert clean_runs.OTHERS_LIMIT == host_load.OTHERS_LIMIT == 0.25
    assert clean_runs.state(load(0.25)).clean  # at the limit: clean
    busy = clean_runs.state(load(0.26))
    assert busy.busy and not busy.clean and busy.reasons == ['busy'] and busy.badge == 'busy'
    stolen = clean_runs.state(load(0.0, steal=0.075))
    assert stolen.reasons == ['steal'] and stolen.badge == 'steal 8%'
    stopped = clean_runs.state(None, 28, 100)
    assert stopped.stopped and stopped.badge == 'stopped at 28 of 100'
    assert stopped.why() == 'stopped at 28 of 100 timed steps'
    both = clean_runs.state(load(0.71), 1, 100)
    assert both.badge == 'busy, stopped at 1 of 100'
    assert both.why() == ("busy: other processes used 71% of the run's cores (more than 25%); "
                          'stopped at 1 of 100 timed steps')
    # Not measured, or planned steps unknown: clean (older results).
    assert clean_runs.state(None, 28, None).clean and clean_runs.state(None).clean
    assert clean_runs.state(None).describe() == ('clean (host load not recorded: counts as '
                                                 'clean)')
    # A load recorded without figures is not measured: not clean (metrics/clean_runs.py).
    garbled = clean_runs.state({'others_fraction': 'x'}, True, 100)
    assert not garbled.clean and garbled.unmeasured == 'unknown' and not garbled.stopped


def test_planned_steps_of_a_result():
    r = rh.result(1000.0)
    assert clean_runs.planned_steps(r) is None  # the helper's results plan none
    assert clean_runs.planned_steps(_with(r, steps=(28, 100))) == 100
    assert clean_runs.of_result(r).badge == 'stopped at 28 of 100'
    r['stopped_at_top_1_accuracy'] = True  # ended early as planned
    assert clean_runs.of_result(r).clean
    evaluation = {'mode': 'evaluation', 'num_steps': 3, 'plan': {'eval': {'num_batches': 5}}}
    assert clean_runs.of_result(evaluation).badge == 'stopped at 3 of 5'
    assert clean_runs.planned_from_params({'num_batches': 100}) == 100
    assert clean_runs.planned_from_params({'num_batches': 100, 'eval': True}) is None
    assert clean_runs.planned_from_params({'num_batches': 100,
                                           'stop_at_top_1_accuracy': 0.7}) is None


def test_the_left_out_lines_one_per_reason():
    states = {'a': clean_runs.state(load(0.8)), 'b': clean_runs.state(load(0.05)),
              'c': clean_runs.state(load(0.9)), 'd': clean_runs.state(None, 28, 100)}
    chosen = clean_runs.select('abc', states.get)
    assert chosen.kept == ['b'] and [x for x, _ in chosen.left_out] == ['a', 'c']
    assert chosen.lines() == ['left out 2 of 3 runs: 2 %s; --include_unclean_runs keeps them'
                              % BUSY_LINE]
    assert clean_runs.select('abcd', states.get).lines() == [
        'left out 3 of 4 runs (--include_unclean_runs keeps them):',
        '  2 ' + BUSY_LINE, '  1 stopped before its planned steps (28 of 100)']
    kept = clean_runs.select('abd', states.get, include=True)
    assert kept.kept == ['a', 'b', 'd'] and kept.left_out == []
    assert kept.lines() == ['kept 2 unclean runs of 3 (--include_unclean_runs):',
                            '  1 ' + BUSY_LINE, '  1 stopped before its planned steps (28 of 100)']
    assert clean_runs.select('b', states.get).lines() == []


def test_a_run_left_out_for_two_reasons_is_counted_under_each_and_the_head_says_so():
    # The docs trial (docs51): 'left out 26 of 26 runs' over '22 shared the host', '1 stopped
    # ...', '4 had no measured host load': 27, a run stopped by SIGINT beside other jobs.
    states = {'a': clean_runs.state(load(0.8)), 'b': clean_runs.state(load(0.9), 92, 100),
              'c': clean_runs.state(load(0.05), 28, 100), 'd': clean_runs.state(load(0.05))}
    assert states['b'].reasons == ['busy', 'stopped']
    assert clean_runs.select('abcd', states.get).lines() == [
        'left out 3 of 4 runs, 1 of them for more than one reason (--include_unclean_runs '
        'keeps them):', '  2 ' + BUSY_LINE,
        '  2 stopped before their planned steps (92 of 100, 28 of 100)']
    kept = clean_runs.select('ab', states.get, include=True)
    assert kept.lines()[0] == ('kept 2 unclean runs of 2, 1 of them for more than one reason '
                               '(--include_unclean_runs):')
    # One reason, or several runs of one reason each: the counts add up, nothing to say.
    assert 'more than one' not in ' '.join(clean_runs.select('acd', states.get).lines())


# --- The database: what a row keeps, older rows.

def test_a_row_keeps_the_host_load_and_the_timed_steps_and_reads_them_back():
    row = records.from_result(_with(rh.result(1000.0), others=0.8, steps=(28, 100)))
    figures = json.loads(row['figures_json'])
    assert figures['host_load']['others_fraction'] == pytest.approx(0.8)
    assert figures['timed_steps'] == {'run': 28, 'planned': 100}
    assert records.run_state(row).badge == 'busy, stopped at 28 of 100'
    # A row recorded before either was kept: clean on load; planned steps from --num_batches.
    old = records.from_result(rh.result(1000.0, num_batches=100))
    assert 'host_load' not in json.loads(old['figures_json'])
    assert records.run_state(dict(old, figures_json='{}')).badge == 'stopped at 4 of 100'
    assert records.run_state(dict(old, figures_json='{}', num_steps=100)).clean
    # A sweep record keeps its host load subset and its steps too.
    record = {'status': 'ok', 'params': dict(rh.PARAMS, num_batches=100),
              'images_per_sec': 900.0, 'started_utc': '2026-01-05T00:00:00+00:00',
              'wall_secs': 3.0, 'environment': rh.ENVIRONMENT,
              'step_time_secs': {'median': 0.1, 'min': 0.1, 'max': 0.1, 'count': 28},
              'host_load': sweep_host_load.record_host_load({'host_load': load(0.6)})}
    assert records.run_state(records.from_sweep_record(record, 'sweep x')).badge == (
        'busy, stopped at 28 of 100')


# --- tf_cnn_results regressions: the two series.

def test_a_step_behind_two_busy_full_speed_runs_is_found_at_the_first_slowed_run(
        tmp_path, capsys):
    db = _db(tmp_path, FULL + PINNED, busy=BUSY_AT, change_at=6,
             changed={'num_intra_threads': 1})
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db, '--fail_on_regression')
    lines = out.splitlines()
    assert status == 1, out
    assert lines[1] == '  first slower run: #7 2026-01-05 06:00:00 (label: -)'
    assert lines[2].startswith('  images/sec: 2000.0 (4 runs) -> 1140.0 (6 runs), -43.0%')
    assert lines[-2:] == ['left out 2 of 12 runs: 2 %s; --include_unclean_runs keeps them'
                          % BUSY_LINE,
                          'gate: FAILED: 1 regression still slower by more than 5%']
    # Kept in, the two busy runs hide the step (the finding before the rule): the
    # gate passed it. Their spread is too wide for the test to catch even a 5% step there,
    # so it is not judged now (the power rule of --baseline and compare).
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db, '--fail_on_regression',
                           '--include_unclean_runs')
    assert status == 3 and 'REGRESSION' not in out
    lines = out.splitlines()
    assert lines[-2] == 'kept 2 unclean runs of 12 (--include_unclean_runs): 2 ' + BUSY_LINE
    assert lines[-1].startswith('gate: NOT JUDGED: 1 of 1 series could not be judged: ')
    assert ('(a possible step down of -39.2% at run #7: with 6 runs before it and 6 after the '
            'test could not have caught a 5% step (p at best 0.2, above the level 0.0071); no '
            'number of runs after it can judge it: 2 of the 6 runs before it (#3, #5) lie more '
            'than 5% below their median (1875.0): runs after it 5% slower keep p above the level '
            'however many follow)'
            in lines[-1])


def test_a_flat_series_with_three_busy_runs_is_not_flagged(tmp_path, capsys):
    db = _db(tmp_path, FLAT, busy=FLAT_BUSY_AT)
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db, '--fail_on_regression')
    assert status == 0 and 'REGRESSION' not in out, out
    assert out.splitlines() == [
        'regressions: none (1 series searched; 0 with fewer than 6 runs, too few for the '
        'test).', 'left out 3 of 12 runs: 3 %s; --include_unclean_runs keeps them' % BUSY_LINE,
        'gate: passed']
    # Kept in, the busy runs at the end look like a regression.
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db, '--fail_on_regression',
                           '--include_unclean_runs')
    assert status == 1 and out.count('REGRESSION: ') == 1
    assert '  first slower run: #10 ' in out


def test_a_stopped_run_is_left_out_and_a_series_of_only_unclean_runs_is_not_judged(
        tmp_path, capsys):
    db = _db(tmp_path, FLAT[:7], stopped=(3, (28, 100)))
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db, '--fail_on_regression')
    assert status == 0 and out.splitlines()[-2:] == [
        'left out 1 of 7 runs: 1 stopped before its planned steps (28 of 100); '
        '--include_unclean_runs keeps them', 'gate: passed']
    every = _db(tmp_path, FLAT[:6], busy=range(6), name='busy')
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + every,
                           '--fail_on_regression')
    assert status == 3 and out.splitlines()[-1] == (
        'gate: NOT JUDGED: no series was searched: every one of the 6 matching runs was left out '
        '(see above; --include_unclean_runs keeps them)')
    # In JSON nothing is above: the line points at the key that holds the reasons.
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + every,
                           '--fail_on_regression', '--json')
    data = json.loads(out)
    assert status == 3 and data['gate']['line'] == (
        'gate: NOT JUDGED: no series was searched: every one of the 6 matching runs was left out '
        '(why: the left_out key; --include_unclean_runs keeps them)')
    assert data['left_out'] == ['left out 6 of 6 runs: 6 shared the host (others used > 25% '
                                'of the cores); --include_unclean_runs keeps them']


# --- show, history, html.

def test_show_and_history_mark_the_runs_left_out(tmp_path, capsys):
    db = _db(tmp_path, FULL + PINNED, busy=BUSY_AT, stopped=(8, (28, 100)), change_at=6,
             changed={'num_intra_threads': 1})
    status, out, _ = _main(capsys, 'show', '3', '9', '1', '--results_db=' + db)
    lines = out.splitlines()
    assert status == 0
    assert lines.count("  clean: busy: other processes used 80% of the run's cores (more than "
                       '25%) (left out of the verdicts unless --include_unclean_runs)') == 1
    assert lines.count('  clean: stopped at 28 of 100 timed steps (left out of the verdicts '
                       'unless --include_unclean_runs)') == 1
    assert lines.count("  clean: clean (other processes used 5% of the run's cores)") == 1
    png = str(tmp_path / 'h.png')
    status, out, _ = _main(capsys, 'history', '--results_db=' + db, '--png=' + png)
    lines = out.splitlines()
    assert status == 0
    assert not [x for x in lines if x.startswith(('| 3 |', '| 5 |', '| 9 |'))]
    assert [x for x in lines if x.startswith('| 7 |')][0].endswith(
        '| step down -43.5% | --num_intra_threads 0 -> 1 |')
    assert ('left out: #3 2026-01-05 02:00:00 (busy), #5 2026-01-05 04:00:00 (busy), #9 '
            '2026-01-05 08:00:00 (stopped at 28 of 100)') in lines
    assert lines[lines.index('left out 3 of 12 runs (--include_unclean_runs keeps them):')
                 + 1:][:2] == ['  2 ' + BUSY_LINE,
                               '  1 stopped before its planned steps (28 of 100)']
    status, out, _ = _main(capsys, 'history', '--results_db=' + db, '--png=' + png,
                           '--include_unclean_runs')
    assert status == 0
    assert [x for x in out.splitlines() if x.startswith('| 3 |')][0].endswith('| busy | - |')


def test_history_of_only_unclean_runs_is_an_error(tmp_path, capsys):
    db = _db(tmp_path, [1000.0, 990.0], busy=(0, 1))
    status, out, err = _main(capsys, 'history', '--results_db=' + db,
                             '--png=' + str(tmp_path / 'h.png'))
    assert status == 1 and out.splitlines() == [
        'left out 2 of 2 runs: 2 %s; --include_unclean_runs keeps them' % BUSY_LINE]
    assert err == ('error: every run of trivial fp32 training bs=32 x1 parameter_server cpu '
                   'synthetic 32px on 2 CPUs was left out of the history; '
                   '--include_unclean_runs keeps them\n')


def test_the_page_counts_and_badges_the_runs_left_out(tmp_path):
    db = _db(tmp_path, FULL + PINNED, busy=BUSY_AT, change_at=6,
             changed={'num_intra_threads': 1})
    with store.opened(db, read_only=True) as conn:
        rows = store.select_runs(conn)
    text = page.build_page(rows, db, 5.0)
    assert '1 step down found.' in text
    assert ('left out 2 of 12 runs: 2 shared the host (others used &gt; 25% of the cores); '
            '--include_unclean_runs keeps them') in text
    assert '2 runs left out of the verdicts (--include_unclean_runs keeps them):' in text
    assert text.count('<span class="badge">busy</span>') == 2
    kept = page.build_page(rows, db, 5.0, include_unclean=True)
    # Kept, the busy runs hide the step: no step down found, and none passed either.
    assert 'No step down found.' not in kept and 'step down found' not in kept
    assert ('1 series not judged: runs spread too wide before a possible step down for the '
            'test to catch --min_change.') in kept
    assert '2 unclean runs kept in the verdicts (--include_unclean_runs):' in kept
    assert kept.count('<span class="badge">busy</span>') == 2


# --- tf_cnn_sweep compare.

def _sweep(directory, rates, busy=()):
    out = []
    for i, rate in enumerate(rates):
        config = {'model': 'trivial', 'batch_size': 8, 'num_gpus': 1, 'precision': 'fp32',
                  'variable_update': 'parameter_server', 'repeat': i}
        out.append({'key': sweep_results.config_key(config), 'config': config, 'status': 'ok',
                    'images_per_sec': rate, 'extra_flags': [], 'environment': {},
                    'host_load': sweep_host_load.record_host_load(
                        {'host_load': load(0.8 if i in busy else 0.05)})})
    return rh.sweep_folder(directory, out)


def test_compare_leaves_busy_repeats_out_of_the_gate(tmp_path, capsys):
    # A's busy repeats hide that B is 20% slower than A's clean ones.
    a = _sweep(str(tmp_path / 'a'), [100.0, 101.0, 99.0, 60.0, 61.0, 59.0], busy=(3, 4, 5))
    b = _sweep(str(tmp_path / 'b'), [80.0, 81.0, 79.0])
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=5']) == 1
    out = capsys.readouterr().out
    assert ('| slower | 80% (3/6 busy) | 5% | FAILED: 20.0% slower (> 5%); A: 3 of 6 runs '
            'left out (busy) |') in out
    assert ('A: left out 3 of 6 runs: 3 %s; --include_unclean_runs keeps them' % BUSY_LINE
            in out.splitlines())
    assert out.rstrip().endswith('gate: FAILED: 1 of 1 configuration slower than A by more '
                                 'than 5% beyond the noise: trivial bs=8 gpus=1 fp32 '
                                 'parameter_server')
    # Kept, the busy runs spread A so wide that no 5% slowdown of B's 3 repeats could have
    # been caught: not judged (3), where it passed (0) before (the --baseline gate's rule).
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=5',
                       '--include_unclean_runs']) == 3
    out = capsys.readouterr().out
    assert ('| ? | 80% (3/6 busy) | 5% | the test could not have caught a 5% slowdown with '
            '6+3 repeats (p=0.548 at 5% slower, A spread 26.2%): no count of B repeats can '
            'against this A; repeat A on a quiet host; busy host in A |') in out
    assert 'A: kept 3 unclean runs of 6 (--include_unclean_runs): 3 ' + BUSY_LINE in out
    assert ('gate: NOT JUDGED: nothing could be judged: trivial bs=8 gpus=1 fp32 '
            "parameter_server (runs: 6 in A, 3 in B; a slowdown of the gate's size could not "
            'have been caught). '
            'To judge them: more repeats, or less spread, as the notes say (a quiet host)') in out


def test_compare_names_a_configuration_whose_every_run_was_left_out(tmp_path, capsys):
    a = _sweep(str(tmp_path / 'a'), [100.0, 101.0, 99.0])
    b = _sweep(str(tmp_path / 'b'), [60.0, 61.0, 59.0], busy=(0, 1, 2))
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=5']) == 3  # not judged
    out = capsys.readouterr().out
    assert 'left out in B (1): trivial bs=8 gpus=1 fp32 parameter_server' in out
    assert 'failed in B' not in out
    assert ('no configuration has clean successful runs in both A and B (the runs left out as '
            'unclean are counted below).') in out  # it said 'no ... successful runs'
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=150']) == 2
    assert capsys.readouterr().err.startswith(
        'error: --fail_on_slower=150: must be >= 0 and below 100 (percent slower allowed; a run '
        'cannot be 100% slower, so the gate could never fail). usage: tf_cnn_sweep compare ')
    # The runs were fine, the host was shared: the gate says so, and how to judge anyway.
    assert out.rstrip().endswith(
        'gate: NOT JUDGED: nothing was compared: every one of the 3 matching runs of B (3 %s) was '
        'left out as unclean; --include_unclean_runs keeps them, or run the sweep again on a '
        'quiet host with a new --output_dir and compare that' % BUSY_LINE)
    both = _sweep(str(tmp_path / 'both'), [100.0, 101.0], busy=(0, 1))
    assert sweep.main(['tf_cnn_sweep', 'compare', both, b, '--fail_on_slower=5']) == 3
    assert capsys.readouterr().out.rstrip().endswith(
        'every one of the 2 matching runs of A (2 %s) and of the 3 of B (3 %s) was left out as '
        'unclean; --include_unclean_runs keeps them, or run the sweep again on a quiet host '
        'with a new --output_dir and compare that' % (BUSY_LINE, BUSY_LINE))
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=5',
                       '--include_unclean_runs']) == 1  # kept: B is 40% slower
    assert 'gate: FAILED: 1 of 1 configuration slower' in capsys.readouterr().out


def test_compare_gate_does_not_pass_when_a_busy_repeat_left_too_few_to_judge(tmp_path,
                                                                             capsys):
    # The report: one busy repeat of B left out left 2 of 3 runs of a configuration, and the
    # gate passed on the other configuration without a word about it.
    def folder(name, rates16, busy16=(), busy8=()):
        records = []
        for batch, rates, busy in ((8, [100.0, 101.0, 99.0], busy8), (16, rates16, busy16)):
            for i, rate in enumerate(rates):
                config = {'model': 'trivial', 'batch_size': batch, 'num_gpus': 1,
                          'precision': 'fp32', 'variable_update': 'parameter_server',
                          'repeat': i}
                records.append({
                    'key': sweep_results.config_key(config), 'config': config, 'status': 'ok',
                    'images_per_sec': rate, 'extra_flags': [], 'environment': {},
                    'host_load': sweep_host_load.record_host_load(
                        {'host_load': load(0.8 if i in busy else 0.05)})})
        return rh.sweep_folder(str(tmp_path / name), records)

    a = folder('a', [200.0, 202.0, 198.0])
    b = folder('b', [160.0, 161.0, 150.0], busy16=(2,))
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=5']) == 3
    assert capsys.readouterr().out.splitlines()[-1] == (
        'gate: NOT JUDGED: 1 of 2 configurations could not be judged: trivial bs=16 gpus=1 fp32 '
        'parameter_server (runs: 3 in A, 2 in B (1 left out as unclean); too few for the '
        'test). To judge them: run the sweep again on a quiet host with a new --output_dir and '
        'compare that (--include_unclean_runs keeps the unclean ones); or --allow_unjudged '
        'passes the gate on the 1 judged')
    # Every run of B's bs=16 left out: named the same way.
    b = folder('b3', [160.0, 161.0, 150.0], busy16=(0, 1, 2))
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=5']) == 3
    out = capsys.readouterr().out
    assert 'left out in B (1): trivial bs=16 gpus=1 fp32 parameter_server' in out
    assert ('could not be judged: trivial bs=16 gpus=1 fp32 parameter_server (runs: 3 in A, 0 '
            'in B (3 left out as unclean))') in out.splitlines()[-1]
    # Nothing judged, for that reason and too few runs: the line says what to do about it.
    b = folder('b4', [160.0, 161.0, 150.0], busy16=(0, 1, 2), busy8=(0,))
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=5',
                       '--allow_unjudged']) == 3
    assert capsys.readouterr().out.splitlines()[-1] == (
        'gate: NOT JUDGED: nothing could be judged: trivial bs=8 gpus=1 fp32 parameter_server '
        '(runs: 3 in A, 2 in B (1 left out as unclean); too few for the test); trivial bs=16 '
        'gpus=1 fp32 parameter_server (runs: 3 in A, 0 in B (3 left out as unclean)). To judge '
        'them: run the sweep again on a quiet host with a new --output_dir and compare that '
        '(--include_unclean_runs keeps the unclean ones)')
    # Kept, the three runs are judged: 20% slower.
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=5',
                       '--include_unclean_runs']) == 1
    assert capsys.readouterr().out.splitlines()[-1].startswith(
        'gate: FAILED: 1 of 2 configurations slower than A by more than 5% beyond the noise: '
        'trivial bs=16 gpus=1 fp32 parameter_server')


# --- --baseline.

def _stored(tmp_path, **extra) -> str:
    rates = [100.0, 101.0, 99.0, 100.5, 99.5]
    p = params.make_params(model='trivial', batch_size=8)
    data = dict({'params': {k: (list(v) if isinstance(v, tuple) else v)
                            for k, v in p._asdict().items()},
                 'images_per_sec': sum(rates) / len(rates),
                 'steps': [{'step': i + 1, 'images_per_sec': r} for i, r in enumerate(rates)]},
                **extra)
    path = tmp_path / 'baseline.json'
    path.write_text(json.dumps(data))
    return str(path)


def test_a_baseline_that_is_not_clean_is_refused_unless_included(tmp_path):
    path = _stored(tmp_path, host_load=load(0.71))
    here = params.make_params(model='trivial', batch_size=8)
    with pytest.raises(baseline.BaselineError) as e:
        baseline.check_config(baseline.load(path), path, here)
    assert str(e.value) == (
        "--baseline=%s is not a clean run (busy: other processes used 71%% of the run's cores "
        "(more than 25%%)); give the results JSON of a run on a quiet host that ran all its "
        "steps (with a timed part long enough to measure its host load), or "
        "--include_unclean_runs to judge against it anyway" % path)
    assert isinstance(e.value, params.ParamsError)  # a usage error: exit status 2
    kept = params.make_params(model='trivial', batch_size=8, include_unclean_runs=True)
    assert baseline.check_config(baseline.load(path), path, kept)['results_file'] == path


def test_a_run_that_is_not_clean_is_not_judged_by_the_baseline_gate(tmp_path):
    # Exit status 3 (not judged), not 1: a CI tells a busy host from a regression.
    stored = baseline.load(_stored(tmp_path))
    same = [99.8, 100.7, 99.2, 100.2, 101.2]
    busy = clean_runs.state(load(0.6), 5, 5)
    c = baseline.compare(stored, same, 100.2, 5.0, busy)
    assert c['verdict'] == '?' and not c['failed'] and not c['judged']
    assert c['left_out'] == busy.why() and baseline.exit_status(c) == 3
    assert baseline.format_line(c) == (
        "baseline: 100.00 images/sec, this run 100.20 (+0.2%): not judged, this run is not "
        "clean (busy: other processes used 60% of the run's cores (more than 25%)): NOT JUDGED "
        "(rerun on a quiet host, or --include_unclean_runs)")
    with pytest.raises(baseline.NotJudgedError, match=r'^the --baseline gate could not judge '
                                                      r'this run: it is not clean \(busy'):
        baseline.raise_if_failed({'baseline': c})
    assert issubclass(baseline.NotJudgedError, cnn_util.BenchmarkError)
    assert baseline.NotJudgedError.exit_status == 3 and baseline.RegressionError.exit_status == 1
    judged = baseline.compare(stored, same, 100.2, 5.0, busy, include_unclean=True)
    assert judged['verdict'] == 'same' and not judged['failed'] and judged['left_out'] is None
    assert baseline.exit_status(judged) == 0
    clean = baseline.compare(stored, same, 100.2, 5.0, clean_runs.state(load(0.1), 5, 5))
    assert clean['verdict'] == 'same' and not clean['failed']
    stopped = baseline.compare(stored, same[:2], 100.2, 5.0, clean_runs.state(None, 2, 5))
    assert baseline.exit_status(stopped) == 3
    assert stopped['left_out'] == 'stopped at 2 of 5 timed steps'


def test_the_figures_hook_gives_the_gate_this_runs_load_and_steps():
    plan = types.SimpleNamespace(num_batches=100, params=types.SimpleNamespace(
        stop_at_top_1_accuracy=None))
    hook = figure_hooks.FiguresHook(plan, host_load=lambda loop: load(0.7))
    state = hook._run_state(types.SimpleNamespace(num_steps=28))
    assert state.badge == 'busy, stopped at 28 of 100'
    plan.params.stop_at_top_1_accuracy = 0.5  # may end early as planned
    assert figure_hooks.FiguresHook(plan)._run_state(types.SimpleNamespace(num_steps=28)).clean


@pytest.mark.parametrize('command', ['history', 'regressions', 'html'])
def test_every_judging_command_takes_the_flag_and_its_help_names_the_rule(command, capsys):
    assert results_cli.main(['tf_cnn_results', command, '--help']) == 0
    out = ' '.join(capsys.readouterr().out.split())
    assert ('--include_unclean_runs, --noinclude_unclean_runs keep runs that shared the host '
            '(other processes above 25% of their cores, or steal above 5%), that were stopped '
            'or paused during their timed part, whose host load was not measured (too short a '
            'timed part) or that stopped before their planned steps in the verdicts') in out
    assert sweep.main(['tf_cnn_sweep', 'compare', '--help']) == 0
    assert '[--include_unclean_runs]' in capsys.readouterr().out
    assert 'include_unclean_runs' in params.SPEC_BY_NAME  # --baseline's, on the command


def test_list_json_says_which_runs_are_clean_at_its_top_level(tmp_path, capsys):
    # A cron user's `jq '.images_per_sec'` trend job mixed a SIGTERM-stopped and a busy run
    # with clean ones: the verdict was only in the text's host-load column.
    db = _db(tmp_path, [1000.0, 990.0, 1010.0], busy=(1,), stopped=(2, (157, 3000)))
    status, out, _ = rh.results_command(capsys, 'list', '--results_db=' + db, '--json')
    rows = [json.loads(line) for line in out.splitlines()]
    assert status == 0
    assert [(r['clean'], r['unclean_reason']) for r in rows] == [
        (True, None),
        (False, "busy: other processes used 80% of the run's cores (more than 25%)"),
        (False, 'stopped at 157 of 3000 timed steps')]

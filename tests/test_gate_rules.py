"""The three regression gates (--baseline, `tf_cnn_sweep compare --fail_on_slower`,
`tf_cnn_results regressions --fail_on_regression`) under one rule, as a CI job written from
the docs meets them:

* one exit status per outcome: 0 passed, 1 a regression, 2 a usage error, 3 nothing (or not
  everything) could be judged, and for tf_cnn_results 4 a database that cannot be used; they
  were all 1;
* `--json` on `regressions` and `compare`: one object, each series' or configuration's
  verdict with its figures, and the gate's verdict and exit status;
* a configuration is metrics/configuration.py's: a thread-count change is named under "what
  changed" by all three (--baseline refused it as "another configuration"), and flags that
  only name or place a run (--label, --results_db) never count (compare noted that "the
  flags for every run differ" on every night whose --label changed).

Every figure is injected (result dicts, sweep records): nothing depends on this host's speed.
"""

from __future__ import annotations

import json
import os

import pytest

from tf_cnn_benchmarks.metrics import configuration
from tf_cnn_benchmarks.tools.sweep import cli as sweep
from tf_cnn_benchmarks.tools.sweep import results as sweep_results

import helpers
import results_helpers as rh

_main = rh.results_command


def _sweep(directory, rates, extra_flags=(), params=None, batch=8, cpus=None):
    """A sweep folder of one configuration's repeats at `rates`; `cpus`: the allowed CPUs its
    runs' host loads recorded (None: no host load)."""
    records = []
    for i, rate in enumerate(rates):
        config = {'model': 'trivial', 'batch_size': batch, 'num_gpus': 1, 'precision': 'fp32',
                  'variable_update': 'parameter_server', 'repeat': i}
        records.append({'key': sweep_results.config_key(config), 'config': config,
                        'status': 'ok', 'images_per_sec': rate,
                        'extra_flags': list(extra_flags), 'environment': {},
                        'params': params})
        if cpus is not None:
            records[-1]['host_load'] = {'cores': cpus, 'cpus_allowed': cpus,
                                        'others_fraction': 0.01, 'outside_fraction': 0.01,
                                        'steal_fraction': 0.0, 'representative': True}
    return rh.sweep_folder(directory, records)


A = [100.0, 101.0, 99.0]


# --- tf_cnn_sweep compare.

def test_nights_that_differ_only_in_their_label_and_database_have_no_flags_note(tmp_path,
                                                                              capsys):
    a = _sweep(str(tmp_path / 'a'), A, ['--num_batches=50', '--label=image-17',
                                        '--results_db=/db/a.sqlite'])
    b = _sweep(str(tmp_path / 'b'), [100.5, 98.0, 99.5],
               ['--num_batches=50', '--label=image-18', '--results_db=/db/b.sqlite',
                '--benchmark_log_dir=/logs/2', '--train_dir=/train/2'])
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=5']) == 0
    out = capsys.readouterr().out
    assert 'note:' not in out and 'gate: passed' in out


def test_compare_names_a_thread_count_change_under_what_changed_and_judges(tmp_path, capsys):
    a = _sweep(str(tmp_path / 'a'), A, ['--num_batches=50', '--label=n1'])
    b = _sweep(str(tmp_path / 'b'), [80.0, 81.0, 79.0],
               ['--num_batches=50', '--num_intra_threads=1', '--label=n2'])
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=5']) == 1
    out = capsys.readouterr().out
    assert ('note: the flags for every run differ: A: --num_batches=50 --label=n1; B: '
            '--num_batches=50 --num_intra_threads=1 --label=n2; what changed: '
            '--num_intra_threads None -> 1') in out.splitlines()
    assert out.splitlines()[-1].startswith('gate: FAILED: 1 of 1 configuration slower')


def test_a_compare_gate_between_other_configurations_is_a_usage_error(tmp_path, capsys):
    # The rule of every gate: --baseline refuses a baseline of another device or data.
    cpu = {'model': 'trivial', 'device': 'cpu', 'data_dir': None, 'image_size': 32}
    a = _sweep(str(tmp_path / 'a'), A, params=cpu)
    b = _sweep(str(tmp_path / 'b'), A, params=dict(cpu, device='gpu'))
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=5']) == 2
    captured = capsys.readouterr()
    assert captured.out == '' and captured.err == (
        "error: --fail_on_slower: A and B ran other configurations (device: 'cpu' in A, 'gpu' "
        "in B); a gate compares runs of the same configuration: give sweeps of the same "
        "--device, data (--data_dir, --data_name), mode (--forward_only, --eval), "
        "--image_size and allowed CPUs (taskset, numactl, a container's cpuset)\n")
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b]) == 0  # a report: it says so
    assert ("note: A and B ran other configurations (device: 'cpu' in A, 'gpu' in B): a gate "
            "(--fail_on_slower) refuses to judge them") in capsys.readouterr().out
    same = _sweep(str(tmp_path / 'c'), A, params=dict(cpu, num_intra_threads=1))
    assert sweep.main(['tf_cnn_sweep', 'compare', a, same, '--fail_on_slower=5']) == 0
    capsys.readouterr()


def test_a_compare_gate_between_sweeps_of_other_allowed_cpus_is_a_usage_error(tmp_path,
                                                                             capsys):
    # A new user's trial: `taskset -c 0 tf_cnn_sweep` against an unpinned sweep was compared
    # as one configuration, without a word (the runs recorded 1 and 2 allowed CPUs).
    a = _sweep(str(tmp_path / 'a'), A, cpus=2)
    b = _sweep(str(tmp_path / 'b'), [70.0, 71.0, 69.0], cpus=1)
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=5']) == 2
    captured = capsys.readouterr()
    assert captured.out == '' and captured.err.startswith(
        "error: --fail_on_slower: A and B ran other configurations (cpus_allowed: 2 in A, 1 in "
        "B); a gate compares runs of the same configuration: ")
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b]) == 0  # a report: it says so
    assert ("note: A and B ran other configurations (cpus_allowed: 2 in A, 1 in B): a gate "
            "(--fail_on_slower) refuses to judge them") in capsys.readouterr().out
    # The same count, or a side whose runs did not record it (older sweeps): judged.
    for other in (_sweep(str(tmp_path / 'c'), A, cpus=2), _sweep(str(tmp_path / 'd'), A)):
        assert sweep.main(['tf_cnn_sweep', 'compare', a, other, '--fail_on_slower=5']) == 0
        assert 'ran other configurations' not in capsys.readouterr().out


def test_compare_exit_statuses_tell_a_regression_from_not_judged(tmp_path, capsys):
    a = _sweep(str(tmp_path / 'a'), A)
    slower = _sweep(str(tmp_path / 'slow'), [70.0, 71.0, 69.0])
    first_night = _sweep(str(tmp_path / 'few'), [70.0])
    same = _sweep(str(tmp_path / 'same'), [100.5, 98.0, 99.5])
    gate = ['--fail_on_slower=5']
    assert [sweep.main(['tf_cnn_sweep', 'compare', a, b] + gate)
            for b in (same, slower, first_night)] == [0, 1, 3]
    assert sweep.main(['tf_cnn_sweep', 'compare', a, str(tmp_path / 'gone')] + gate) == 2
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith('gate:')]
    assert [x.split(':')[1].strip() for x in lines] == ['passed', 'FAILED', 'NOT JUDGED']


def test_compare_json_is_one_object_with_each_verdict_and_the_exit_status(tmp_path, capsys):
    flags_a, flags_b = ['--num_batches=50'], ['--num_batches=50', '--num_intra_threads=1']
    a = _sweep(str(tmp_path / 'a'), A, flags_a)
    _sweep(a, [200.0], flags_a, batch=16)  # one run a side: too few for the test
    b = _sweep(str(tmp_path / 'b'), [80.0, 81.0, 79.0], flags_b)
    _sweep(b, [150.0], flags_b, batch=16)
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=5', '--json']) == 1
    data = json.loads(capsys.readouterr().out)
    assert data['exit_status'] == 1 and data['gate']['verdict'] == 'regression'
    assert data['gate']['line'].startswith('gate: FAILED: 1 of 2 configurations slower')
    assert data['what_changed'] == ['--num_intra_threads None -> 1']
    slow, few = sorted(data['configurations'], key=lambda c: c['batch_size_per_device'])
    assert slow['verdict'] == 'slower' and slow['gate_failed'] and slow['p_value'] == 0.05
    assert (slow['a_median_images_per_sec'], slow['b_median_images_per_sec'],
            slow['a_runs'], slow['b_runs']) == (100.0, 80.0, 3, 3)
    assert abs(slow['b_over_a_ratio'] - 0.8) < 1e-12 and abs(slow['a_noise_pct'] - 1.0) < 1e-9
    assert few['verdict'] == '?' and few['p_value'] is None and not few['gate_failed']
    assert data['not_judged'] == ['trivial bs=16 gpus=1 fp32 parameter_server (runs: 1 in A, '
                                  '1 in B; too few for the test)']
    assert data['only_in_a'] == [] and data['fail_on_slower_pct'] == 5.0
    # Without a gate: a report, exit 0, no gate verdict.
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--json']) == 0
    data = json.loads(capsys.readouterr().out)
    assert data['gate'] is None and data['exit_status'] == 0


def test_a_compare_gate_refused_with_json_still_prints_one_object(tmp_path, capsys):
    # `compare ... --json | tee compare.json`: a usage error saved an empty file, not JSON.
    a = _sweep(str(tmp_path / 'a'), A)
    gone = str(tmp_path / 'gone')
    for args, start in (([a, gone, '--fail_on_slower=10'], 'no results file at %s' % gone),
                        ([a, a, '--fail_on_slower=x'], '--fail_on_slower=x: takes a number'),
                        ([a], 'compare takes two sweeps')):
        assert sweep.main(['tf_cnn_sweep', 'compare'] + args + ['--json']) == 2
        captured = capsys.readouterr()
        [err] = captured.err.splitlines()
        data = json.loads(captured.out)
        assert data == {'error': err[len('error: '):], 'exit_status': 2,
                        'gate': {'verdict': 'usage error', 'line': err}}
        assert data['error'].startswith(start)
    # Without --json the refusal is the error line alone.
    assert sweep.main(['tf_cnn_sweep', 'compare', a, gone, '--fail_on_slower=10']) == 2
    assert capsys.readouterr().out == ''


# --- tf_cnn_results regressions.

def _nights(tmp_path, rates, name='db', **kwargs) -> str:
    path = str(tmp_path / (name + '.sqlite'))
    rh.fill(path, rh.series(rates, **kwargs))
    return path


def test_regressions_see_a_thread_count_change_and_not_a_label_or_database(tmp_path, capsys):
    db = _nights(tmp_path, [1000, 1010, 990, 1005, 995, 1002, 700, 705, 698], change_at=6,
                 changed={'num_intra_threads': 1, 'label': 'night-7',
                          'results_db': '/other.sqlite', 'benchmark_log_dir': '/logs/7'})
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db, '--fail_on_regression')
    assert status == 1 and '  what changed: --num_intra_threads 0 -> 1' in out.splitlines()
    assert out.count('REGRESSION: ') == 1  # one series: the thread count is no configuration


def test_regressions_exit_statuses_tell_a_regression_from_not_judged_from_no_database(
        tmp_path, capsys):
    slow = _nights(tmp_path, [1000, 1010, 990, 1005, 995, 1002, 700, 705, 698], name='slow')
    flat = _nights(tmp_path, [1000, 1010, 990, 1005, 995, 1002], name='flat')
    first_night = _nights(tmp_path, [1000, 1010, 990], name='first')
    foreign = tmp_path / 'notes.sqlite'
    foreign.write_text('not a database\n' * 100)
    statuses = [_main(capsys, 'regressions', '--results_db=' + str(db), '--fail_on_regression')[0]
                for db in (flat, slow, first_night, tmp_path / 'none.sqlite', foreign)]
    assert statuses == [0, 1, 3, 4, 4]
    assert _main(capsys, 'regressions', '--results_db=' + first_night, '--host=typo',
                 '--fail_on_regression')[0] == 3
    assert _main(capsys, 'regressions', '--results_db=' + flat, '--min_change=x')[0] == 2


def test_regressions_json_gives_each_series_its_verdict_and_figures(tmp_path, capsys):
    db = str(tmp_path / 'r.sqlite')
    rh.fill(db, rh.series([1000, 1010, 990, 1005, 995, 1002, 700, 705, 698], change_at=6,
                          changed={'num_intra_threads': 1, 'label': 'night-7'})
            + rh.series([500, 505], use_bf16=True))
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db, '--fail_on_regression',
                           '--json')
    data = json.loads(out)
    assert status == 1 and data['exit_status'] == 1
    assert data['gate'] == {'verdict': 'regression',
                            'line': 'gate: FAILED: 1 regression still slower by more than 5%'}
    by_precision = {s['configuration'].split()[1]: s for s in data['series']}
    fp32, bf16 = by_precision['fp32'], by_precision['bf16']
    assert (fp32['verdict'], fp32['runs'], fp32['host']) == ('regression', 9, 'node-a')
    assert (bf16['verdict'], bf16['runs'], bf16['steps_down']) == ('too few runs', 2, [])
    [step] = fp32['steps_down']
    assert (step['first_slower_run_id'], step['label'], step['runs_before'],
            step['runs_after'], step['still_slower']) == (7, 'night-7', 6, 3, True)
    assert (step['median_images_per_sec_before'], step['median_images_per_sec_after']) == (
        1001.0, 700.0)
    assert abs(step['change_pct'] + 30.07) < 0.01 and 0 < step['p_value'] <= 0.05
    assert step['what_changed'] == ['--num_intra_threads 0 -> 1']
    assert (data['series_searched'], data['series_with_too_few_runs'],
            data['min_runs_per_series']) == (2, 1, 6)
    assert data['host_load_not_measured'] is None  # was '' (the docstring says None)
    # Nothing to judge: the object says so and carries exit status 3.
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db, '--precision=bf16',
                           '--fail_on_regression', '--json')
    data = json.loads(out)
    assert status == 3 and data['gate']['verdict'] == 'not judged' and data['exit_status'] == 3


def test_regressions_does_not_pass_a_step_down_the_test_cannot_reach(tmp_path, capsys):
    # The CI trial (ci51): 5 clean nights' runs, then 3 runs 50% slower. With 5 and 3 runs the
    # exact test gives p >= 1/56 = 0.018, above Tarone's 0.0167 for 8 runs: 'regressions:
    # none', 'gate: passed', exit 0. Now the series is not judged (exit 3), named, with the
    # runs that judge it; one more run finds the step (exit 1).
    rates = [700.0, 710.0, 705.0, 702.0, 704.0, 350.0, 355.0, 352.0]
    db = _nights(tmp_path, rates, name='five', change_at=5, changed={'label': 'night-6'})
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db, '--fail_on_regression')
    lines = out.splitlines()
    assert status == 3, out
    assert lines[:5] == [
        'NOT JUDGED: trivial fp32 training bs=32 x1 parameter_server cpu synthetic 32px on '
        'node-a',
        '  possible step down at run: #6 2026-01-05 05:00:00 (label: night-6)',
        '  images/sec: 704.0 (5 runs) -> 352.0 (3 runs), -50.0%, Mann-Whitney p at least 1/56 '
        '= 0.018 with 5 and 3 runs, above the level 0.017: too few runs for the test',
        '  judgeable after: 1 more run',
        '  what changed: nothing recorded (the same flags and environment)']
    assert lines[-2:] == [
        'regressions: none found, 1 series not judged: too few runs on a side of a possible '
        'step down for the test (1 series searched; 0 with fewer than 6 runs, too few for the '
        'test).',
        'gate: NOT JUDGED: 1 of 1 series could not be judged: trivial fp32 training bs=32 x1 '
        'parameter_server cpu synthetic 32px on node-a (a possible step down of -50.0% at run '
        '#6: 5 runs before it and 3 after are too few for the test; judgeable after 1 more '
        "run). More runs of the configuration judge it (the next night's); filters (--since, "
        '--config) leave out a configuration no longer run']
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db, '--fail_on_regression',
                           '--json')
    data = json.loads(out)
    [series] = data['series']
    assert (status, data['exit_status'], data['gate']['verdict'], series['verdict']) == (
        3, 3, 'not judged', 'not judged')
    step = series['possible_step_down']
    assert (step['first_run_after_id'], step['label'], step['runs_before'], step['runs_after'],
            step['more_runs_needed'], data['series_not_judged']) == (6, 'night-6', 5, 3, 1, 1)
    assert step['smallest_p_value'] > step['significance_level']
    # 4 runs before the step: the same (1/35 against 0.025).
    four = _nights(tmp_path, rates[1:], name='four')
    assert _main(capsys, 'regressions', '--results_db=' + four, '--fail_on_regression')[0] == 3
    # The next night's run: found, the gate fails.
    more = _nights(tmp_path, rates + [351.0], name='more')
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + more, '--fail_on_regression')
    assert status == 1 and out.splitlines()[-1] == (
        'gate: FAILED: 1 regression still slower by more than 5%')
    # A regression elsewhere fails the gate, whose line names the series not judged too.
    both = str(tmp_path / 'both.sqlite')
    rh.fill(both, rh.series(rates + [351.0], host='node-b') + rh.series(rates, host='node-a'))
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + both, '--fail_on_regression')
    assert status == 1 and out.splitlines()[-1].startswith(
        'gate: FAILED: 1 regression still slower by more than 5%; and 1 of 2 series could not '
        'be judged: trivial fp32 training bs=32 x1 parameter_server cpu synthetic 32px on '
        'node-a (a possible step down of -50.0% at run #')


def test_regressions_refused_with_json_still_prints_one_object(tmp_path, capsys):
    # `regressions --fail_on_regression --json > regressions.json`: exit 2 and 4 saved nothing.
    noise = tmp_path / 'noise.sqlite'
    noise.write_bytes(bytes(range(256)) * 20)
    flat = _nights(tmp_path, [1000, 1010, 990, 1005, 995, 1002], name='flat')
    cases = [(['--results_db=%s' % noise], 4, 'database error'),
             (['--results_db=%s' % (tmp_path / 'none.sqlite')], 4, 'database error'),
             (['--results_db=' + flat, '--min_change=abc'], 2, 'usage error'),
             (['--results_db=' + flat, '--frobnicate'], 2, 'usage error')]
    for args, status, verdict in cases:
        got, out, err = _main(capsys, 'regressions', '--fail_on_regression', '--json', *args)
        [line] = err.splitlines()
        assert got == status and json.loads(out) == {
            'error': line[len('error: '):], 'exit_status': status,
            'gate': {'verdict': verdict, 'line': line}}
    # Without --json, and for list's JSON lines (one object per run), the error line alone.
    for args in (['regressions', '--fail_on_regression'], ['list', '--json']):
        got, out, err = _main(capsys, *args, '--results_db=%s' % noise)
        assert (got, out) == (4, '') and err.startswith('error: ')


# --- --baseline through the command.

def test_the_baseline_gate_exits_3_when_it_cannot_judge_and_names_a_thread_change(tmp_path):
    logs = str(tmp_path / 'ref')
    flags = ['--model=trivial', '--batch_size=2', '--image_size=8', '--num_warmup_batches=1',
             '--noresults_db']
    first = helpers.run_command(*flags, '--num_batches=4', '--benchmark_log_dir=' + logs)
    assert first.returncode == 0, first.stderr
    [name] = os.listdir(logs)
    # One timed step: too few for the test (n=4+1), whatever this host's speed; the thread
    # count, refused before as "another configuration", is what changed.
    # --include_unclean_runs: runs this short have no measured host load (metrics/clean_runs.py).
    got = helpers.run_command(*flags, '--num_batches=1', '--num_intra_threads=1',
                              '--include_unclean_runs', '--baseline=' + os.path.join(logs, name))
    assert got.returncode == 3, got.stdout + got.stderr
    line = [x for x in got.stdout.splitlines() if x.startswith('baseline: ')][0]
    assert ': NOT JUDGED (a larger --num_batches gives the test its steps); what changed: ' in line
    assert line.endswith('--num_batches 4 -> 1; --num_intra_threads None -> 1'), line
    assert got.stderr.splitlines()[-1].startswith(
        'error: the --baseline gate could not judge this run: n=4+1: ')


def test_the_three_gates_share_one_definition_of_a_configuration():
    from tf_cnn_benchmarks.history import records
    from tf_cnn_benchmarks.tools.sweep import compare
    assert records.CONFIG_FIELDS == configuration.CONFIG_FIELDS
    assert set(compare.SWEEP_WIDE_PARTS) | {'model', 'batch_size', 'num_devices',
                                            'precision', 'variable_update', 'num_workers'} == (
        set(configuration.CONFIG_FIELDS))
    assert {'label', 'results_db', 'benchmark_log_dir', 'train_dir'} <= set(
        configuration.NAMING_FLAGS)
    assert 'num_intra_threads' not in configuration.NAMING_FLAGS


@pytest.mark.parametrize('a, b, verdict, reason', [
    # A tight: three B repeats 5% below A's median would have been caught (p=0.05): judged.
    ([100.0, 104.0, 96.0], [100.0, 99.0, 101.0], 'same', ''),
    # A spread 8%: no count of B repeats could catch 5% (one of A's three lies below it).
    ([100.0, 92.0, 108.0], [100.0, 99.0, 101.0], '?',
     'the test could not have caught a 5% slowdown with 3+3 repeats (p=0.35 at 5% slower, A '
     'spread 8.0%): no count of B repeats can against this A; repeat A on a quiet host'),
    ([100.0, 106.0, 94.0, 100.0], [100.0, 101.0, 99.0], '?',
     'the test could not have caught a 5% slowdown with 4+3 repeats (p=0.186 at 5% slower, A '
     'spread 6.0%): B with 64 repeats could'),
])
def test_compare_passes_same_only_where_a_slowdown_of_its_size_could_be_caught(a, b, verdict,
                                                                              reason):
    # Before: 'same' passed the gate even where the test had no power at --fail_on_slower
    # (the --baseline gate refused that: metrics/baseline.py).
    from tf_cnn_benchmarks.tools.sweep import gate
    j = gate.judge(sweep_results.Stats(a), sweep_results.Stats(b), 5.0)
    assert (j.verdict, j.reason, j.failed) == (verdict, reason, False)
    # Without a gate the table's verdict stays the test's own.
    assert gate.judge(sweep_results.Stats(a), sweep_results.Stats(b)).verdict == 'same'

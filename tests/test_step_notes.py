"""What a step's verdict says beyond its figures (history/step_notes.py): the host load the
runs after it recorded more of, and why no number of runs judges a possible step down.

The issue (an auditor's, on a shared 2-core host): 6 resnet20 runs beside others using 48-50%
of the cores, then 4 beside 54-70%. With --include_unclean_runs `regressions` said `what
changed: nothing recorded (the same flags and environment)` though each run's load was in
the database, and `judgeable after: no number of runs` without saying why.

Every figure is injected (result dicts into a temporary database): no run, no timing.
"""

from __future__ import annotations

import json

import pytest

from tf_cnn_benchmarks.history import step_notes
from tf_cnn_benchmarks.metrics import host_load

import results_helpers as rh

_main = rh.results_command

RATES = [263.0, 302.0, 275.0, 290.0, 250.0, 276.0, 217.0, 170.0, 264.0, 218.0]
OTHERS = [0.48, 0.50, 0.49, 0.48, 0.50, 0.49, 0.54, 0.70, 0.62, 0.58]


def _load(others: float, steal: float = 0.0, cores: int = 2) -> dict:
    """result['host_load'] of a 10 s timed part on 2 CPUs (metrics/host_load.py measure)."""
    return host_load.measure(
        host_load.Sample(0.0, 3.1, 0, 0, 0),
        host_load.Sample(10.0, 3.4, int(round(others * cores * 1000)),
                         int(round(steal * 2 * 1000)), 0), cores, 2, 100)


def _db(tmp_path, rates, others, **kwargs) -> str:
    results = rh.series(rates, model='resnet20', **kwargs)
    for result, share in zip(results, others):
        result['host_load'] = _load(share)
    path = str(tmp_path / 'db.sqlite')
    rh.fill(path, results)
    return path


def _row(others=None, steal=None, rid=1, rate=100.0) -> dict:
    load = {'others_fraction': others, 'steal_fraction': steal}
    return {'id': rid, 'images_per_sec': rate,
            'figures_json': json.dumps({'host_load': load} if others is not None
                                       or steal is not None else {})}


def test_a_slowdown_beside_more_load_names_the_load_and_why_no_count_judges_it(
        tmp_path, capsys):
    db = _db(tmp_path, RATES, OTHERS)
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db)
    assert status == 0 and 'left out 10 of 10 runs: 10 shared the host' in out
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db, '--include_unclean_runs')
    lines = out.splitlines()
    assert lines[0].startswith('NOT JUDGED: resnet20 ')
    assert lines[2].startswith('  images/sec: 275.5 (6 runs) -> 217.5 (4 runs), -21.1%')
    # Run #5 (250) lies below 95% of the median 275.5: it counts against every run after, so
    # runs 5% slower cannot reach the level, however many (was: 'no number of runs' alone).
    assert lines[3] == (
        '  judgeable after: no number of runs: 1 of the 6 runs before it (#5) lies more than '
        '5% below their median (275.5): runs after it 5% slower keep p above the level however '
        'many follow')
    # Was: 'nothing recorded (the same flags and environment)'.
    assert lines[4] == (
        '  what changed: the same flags and environment; the later runs shared the host more: '
        'others used 54-70% of the cores, before 48-50% (a likely cause)')
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db, '--include_unclean_runs',
                           '--json')
    step = json.loads(out)['series'][0]['possible_step_down']
    assert step['host_load_rise'] == [
        'the later runs shared the host more: others used 54-70% of the cores, before 48-50%']
    assert step['what_changed'] == [] and step['more_runs_needed'] is None


def test_a_step_found_beside_more_load_and_a_changed_flag_names_both(tmp_path, capsys):
    rates = [300.0, 302.0, 298.0, 301.0, 299.0, 300.0, 240.0, 238.0, 242.0, 241.0]
    others = [0.02, 0.03, 0.02, 0.02, 0.03, 0.02, 0.40, 0.45, 0.41, 0.40]
    db = _db(tmp_path, rates, others, change_at=6, changed={'num_intra_threads': 1})
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db, '--include_unclean_runs',
                           '--json')
    [step] = json.loads(out)['series'][0]['steps_down']
    assert step['host_load_rise'] == [
        'the later runs shared the host more: others used 40-45% of the cores, before 2-3%']
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db, '--include_unclean_runs')
    assert out.splitlines()[0].startswith('REGRESSION: ')
    assert ('  what changed: --num_intra_threads 0 -> 1; the later runs shared the host more: '
            'others used 40-45% of the cores, before 2-3% (another possible cause)'
            in out.splitlines())


def test_the_rule_a_rise_of_five_points_in_the_medians_and_steal_too():
    before = [_row(0.10), _row(0.12), _row(0.11)]
    # 4 points more: not named; 5 points: named (the default --min_change's scale).
    assert step_notes.load_rise(before, [_row(0.15), _row(0.15)]) == []
    assert step_notes.what_changed([], before, [_row(0.15)]) == step_notes.NOTHING
    assert step_notes.load_rise(before, [_row(0.16), _row(0.16)]) == [
        'the later runs shared the host more: others used 16% of the cores, before 10-12%']
    # Less load after a slowdown is no cause: not named.
    assert step_notes.load_rise(before, [_row(0.01)]) == []
    # Steal, and a run without a measured load on a side, counted.
    assert step_notes.load_rise([_row(0.1, 0.0), _row(0.1, 0.01)],
                                [_row(0.1, 0.08), _row(0.1, 0.09), _row()]) == [
        "the later runs lost more to steal: the hypervisor took 8-9% of the CPUs' time, before "
        "0-1% (2 of 3 later runs measured)"]
    # No measured run on a side: nothing to compare.
    assert step_notes.load_rise(before, [_row(), _row()]) == []


@pytest.mark.parametrize('change, expected', [
    (5.0, '1 of the 3 runs before it (#3) lies more than 5% below their median (1000.0): runs '
          'after it 5% slower keep p above the level however many follow'),
    (0.0, '1 of the 3 runs before it (#3) lies below their median (1000.0): runs after it just '
          'below it keep p above the level however many follow'),
])
def test_never_reason_names_the_runs_before_below_the_point(change, expected):
    before = [_row(rid=1, rate=1000.0), _row(rid=2, rate=1010.0), _row(rid=3, rate=940.0)]
    assert step_notes.never_reason(before, change) == expected
    close = [_row(rid=1, rate=1000.0), _row(rid=2, rate=1010.0)]
    assert step_notes.never_reason(close, 5.0) == (
        '2 runs before it are too few for any count after them to reach the level')


def test_never_reason_of_a_latency_counts_the_runs_above_the_point():
    # A latency's regression is a rise (history/series_metric.py): the runs before it that
    # count against a judgement lie above their median (the images/sec wording said 'below'
    # and 'slower' of a latency series).
    from tf_cnn_benchmarks.history import series_metric
    metric = series_metric.METRICS['latency_p99_ms']
    before = [{'id': 1, 'latency_p99_ms': 10.0}, {'id': 2, 'latency_p99_ms': 10.1},
              {'id': 3, 'latency_p99_ms': 11.0}]
    assert step_notes.never_reason(before, 5.0, metric) == (
        '1 of the 3 runs before it (#3) lies more than 5% above their median (10.100): runs '
        'after it 5% higher keep p above the level however many follow')

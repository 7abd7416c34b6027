"""The change-point search (history/regressions.py): Tarone's level, a planted 10% step found
at its run, flat noisy series not flagged (the false-positive rate measured over many series
at p 0.05), the detection power for a 10% step, steps up and recoveries, one series per host.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tf_cnn_benchmarks.history import records, regressions
from tf_cnn_benchmarks.metrics import significance

import results_helpers as rh


def _noisy(n, noise, rng, level=1000.0):
    return list(level * (1.0 + noise * rng.standard_normal(n)))


def _stepped(n, at, change, noise, rng):
    return [v * (1.0 + change if i >= at else 1.0) for i, v in enumerate(_noisy(n, noise, rng))]


def _downs(values, min_change_pct=regressions.DEFAULT_MIN_CHANGE_PCT):
    return [s for s in regressions.find_steps(values, min_change_pct) if s.direction == 'slower']


def test_tarones_level_counts_only_the_splits_that_can_reach_it():
    # 6 runs: one split 3|3, smallest p 1/20: the plain level.
    assert regressions.corrected_level([(3, 3)]) == 0.05
    # 7 runs: 3|4 and 4|3 (smallest p 1/35 each): 0.05 / 2, which neither can reach.
    assert regressions.corrected_level([(3, 4), (4, 3)]) == 0.025
    # 12 runs: 7 splits, all able to reach 0.05/7 (3|9: 1/220): 0.05 / 7.
    sizes = [(k, 12 - k) for k in range(3, 10)]
    assert regressions.corrected_level(sizes) == pytest.approx(0.05 / 7)
    assert significance.min_p_value(3, 9) == pytest.approx(1 / 220)


def test_a_planted_10_percent_step_is_found_at_its_run():
    values = _stepped(20, 12, -0.10, 0.02, np.random.default_rng(7))
    steps = regressions.find_steps(values)
    assert [(s.index, s.direction) for s in steps] == [(12, 'slower')]
    j = steps[0].judgement
    assert j.ratio == pytest.approx(0.9, abs=0.03)
    assert j.p_slower <= steps[0].level == pytest.approx(0.05 / 15)
    assert (steps[0].start, steps[0].end) == (0, 20)


def test_a_noisy_flat_series_is_not_flagged():
    values = _noisy(30, 0.03, np.random.default_rng(11))
    assert max(values) / min(values) > 1.10  # noisy: the runs spread over 10%
    assert regressions.find_steps(values) == []


@pytest.mark.parametrize('min_change_pct, most', [(0.0, 0.05), (5.0, 0.01)])
def test_the_false_positive_rate_on_flat_series_stays_below_p(min_change_pct, most):
    """400 flat series of 20 runs with 3% noise: how many are flagged slower at p 0.05."""
    rng = np.random.default_rng(2026)
    flagged = sum(bool(_downs(_noisy(20, 0.03, rng), min_change_pct)) for _ in range(400))
    rate = flagged / 400
    print('false-positive rate, min_change %g%%: %.4f' % (min_change_pct, rate))
    assert rate <= most


def test_a_10_percent_step_is_found_nearly_always_and_at_its_run():
    """300 series of 20 runs with 2% noise and a 10% step down at a random run."""
    rng = np.random.default_rng(99)
    found = at_run = 0
    for _ in range(300):
        at = int(rng.integers(3, 18))
        downs = _downs(_stepped(20, at, -0.10, 0.02, rng))
        found += bool(downs)
        at_run += any(s.index == at for s in downs)
    print('10%% step: power %.3f, at the right run %.3f' % (found / 300, at_run / 300))
    assert found / 300 >= 0.97 and at_run / 300 >= 0.9


def test_a_step_below_min_change_does_not_count():
    values = _stepped(20, 10, -0.04, 0.002, np.random.default_rng(3))
    assert _downs(values, 5.0) == []
    assert [s.index for s in _downs(values, 2.0)] == [10]


def test_a_regression_and_its_fix_are_two_steps_and_it_is_not_still_slower():
    rng = np.random.default_rng(5)
    rates = [v * (0.8 if 8 <= i < 16 else 1.0) for i, v in enumerate(_noisy(24, 0.01, rng))]
    steps = regressions.find_steps(rates)
    assert [(s.index, s.direction) for s in steps] == [(8, 'slower'), (16, 'faster')]
    found, searched, short = regressions.find_regressions(
        [dict(records.from_result(r), id=i + 1) for i, r in enumerate(rh.series(rates))])
    assert (len(found), searched, short) == (1, 1, 0)
    assert found[0].first_slower['id'] == 9 and not found[0].still_slower


def test_each_host_is_its_own_series_and_the_change_is_named():
    rng = np.random.default_rng(8)
    fast = rh.series(_noisy(9, 0.01, rng, 1000.0), host='node-a')
    slow_host = rh.series(_noisy(9, 0.01, rng, 700.0), host='node-b')  # slower, not slowed
    slowed = rh.series([v * (0.85 if i >= 6 else 1) for i, v in enumerate(
        _noisy(9, 0.01, rng, 900.0))], host='node-c', change_at=6,
        changed={'num_intra_threads': 1})
    rows = [dict(records.from_result(r), id=i + 1)
            for i, r in enumerate(sorted(fast + slow_host + slowed,
                                         key=lambda r: (r['finished_utc'],
                                                        r['environment']['hostname'])))]
    found, searched, short = regressions.find_regressions(rows)
    assert (searched, short) == (3, 0)
    assert [(r.hostname, r.first_slower['hostname'], r.changes, r.still_slower)
            for r in found] == [('node-c', 'node-c', ['--num_intra_threads 0 -> 1'], True)]
    assert found[0].first_slower['run_utc'] == '2026-01-05T06:00:00.000000Z'
    fields = regressions.summary(found[0])
    assert fields['what changed'] == '--num_intra_threads 0 -> 1'
    assert fields['change'].startswith('-1') and fields['still slower'] == 'yes'


def test_series_shorter_than_two_segments_are_counted_not_searched():
    rows = [dict(records.from_result(r), id=i + 1)
            for i, r in enumerate(rh.series([1000.0, 500.0, 400.0, 300.0, 200.0]))]
    assert regressions.find_regressions(rows) == ([], 1, 1)
    assert regressions.min_runs() == 6


# The CI trial's nights (ci51): 4 or 5 clean runs, then 3 runs 50% slower. No split of 7 or 8
# runs with 3 on a side can reach Tarone's level (1/35 > 0.025, 1/56 > 0.0167), so the search
# found nothing and the gate passed a clean 50% step down. Such a step is not judged now.
BEFORE = [700.0, 710.0, 705.0, 702.0, 704.0, 706.0]
AFTER = [350.0, 355.0, 352.0, 351.0]


@pytest.mark.parametrize('before, after, at, smallest, level, more', [
    (4, 3, 4, 1 / 35, 0.025, 1),   # 8 runs: 4|4 reaches 0.0167
    (5, 3, 5, 1 / 56, 0.05 / 3, 1),  # 9 runs: 5|4 (1/126) reaches 0.0125
    (3, 4, 3, 1 / 35, 0.025, 2),   # 8 runs: 3|5 (1/56) still cannot; 9 runs: 3|6 (1/84) can
])
def test_a_step_down_the_test_cannot_reach_is_untestable_with_the_runs_that_judge_it(
        before, after, at, smallest, level, more):
    values = BEFORE[:before] + AFTER[:after]
    assert regressions.find_steps(values) == []
    step = regressions.untestable_step(values, [])
    assert (step.index, step.start, step.end) == (at, 0, before + after)
    assert step.smallest_p == pytest.approx(smallest) and step.smallest_p > step.level
    assert step.level == pytest.approx(level) and step.more_runs == more
    assert step.ratio == pytest.approx(0.5, abs=0.01)
    # `more` runs later, at the same speed, the step is found where it was.
    longer = values + [353.0, 354.0][:more]
    assert [(s.index, s.direction) for s in regressions.find_steps(longer)] == [(at, 'slower')]
    assert regressions.untestable_step(longer, regressions.find_steps(longer)) is None


def test_series_the_test_can_judge_have_no_untestable_step():
    for values in (BEFORE[:3] + AFTER[:3],      # 6 runs: 3|3 reaches 0.05
                   BEFORE + AFTER[:3],          # 9 runs: found
                   [700.0, 690.0, 705.0, 695.0, 702.0, 698.0, 701.0, 699.0],  # flat, 8 runs
                   BEFORE[:5] + [720.0, 730.0, 725.0]):  # 8 runs, a step up: not a regression
        assert regressions.untestable_step(values, regressions.find_steps(values)) is None
    assert regressions.runs_to_reach(3, 3) == 0 and regressions.runs_to_reach(4, 3) == 1


def test_an_untestable_step_after_a_step_found_is_in_the_runs_after_it():
    # A step found at run 10; then 4 runs and 3 runs 12.5% slower: the 7 runs after the step
    # cannot be split by the test, and the series is not judged there.
    values = [1000.0, 1004.0, 998.0, 1002.0, 1001.0, 999.0, 1003.0, 997.0, 1000.5, 1002.5,
              800.0, 802.0, 798.0, 801.0, 700.0, 702.0, 699.0]  # no ties: the exact test
    steps = regressions.find_steps(values)
    assert [s.index for s in steps] == [10]
    step = regressions.untestable_step(values, steps)
    assert (step.index, step.start, step.end, step.more_runs) == (14, 10, 17, 1)
    rows = [dict(records.from_result(r), id=i + 1) for i, r in enumerate(rh.series(values))]
    search = regressions.search(rows)
    assert (len(search.found), search.searched, search.short) == (1, 1, 0)
    [unjudged] = search.unjudged
    assert (unjudged.first_after['id'], len(unjudged.before), len(unjudged.after)) == (15, 4, 3)
    assert regressions.unjudged_summary(unjudged)['p'] == (
        'at least 1/35 = 0.029 with 4 and 3 runs, above the level 0.025')
    # One more run: the second step is found, and nothing is left that the test cannot judge.
    more = [dict(records.from_result(r), id=i + 1)
            for i, r in enumerate(rh.series(values + [701.0]))]
    search = regressions.search(more)
    assert [r.first_slower['id'] for r in search.found] == [11, 15] and search.unjudged == []


def test_the_summary_counts_the_series_too_short_for_the_search(tmp_path, capsys):
    # A user's trial read '(1 series searched; 0 with fewer than 6 runs ...)' as a count stuck
    # at 0 (their one series had 8 runs): four series, two of them short (5 runs; 1 run),
    # counted alike by the text, --json and the page.
    db = str(tmp_path / 'results.sqlite')
    rh.fill(db, rh.series([100.0 + i for i in range(8)], batch_size=32)
            + rh.series([200.0 + i for i in range(6)], batch_size=16)
            + rh.series([300.0 + i for i in range(5)], batch_size=8)
            + rh.series([400.0], batch_size=4))
    status, out, _ = rh.results_command(capsys, 'regressions', '--results_db=' + db)
    assert status == 0 and out == ('regressions: none (4 series searched; 2 with fewer than 6 '
                                   'runs, too few for the test).\n')
    status, out, _ = rh.results_command(capsys, 'regressions', '--json', '--results_db=' + db)
    data = json.loads(out)
    assert (data['series_searched'], data['series_with_too_few_runs']) == (4, 2)
    assert sorted(s['runs'] for s in data['series'] if s['verdict'] == 'too few runs') == [1, 5]
    status, _, _ = rh.results_command(capsys, 'html', str(tmp_path / 'site'),
                                      '--results_db=' + db)
    with open(tmp_path / 'site' / 'index.html', encoding='utf-8') as f:
        assert ('4 series (configuration x host) searched, 2 too short for the test (fewer '
                'than 6 runs)') in f.read()
    status, out, _ = rh.results_command(capsys, 'regressions', '--batch_size=8',
                                        '--results_db=' + db)
    assert out == ('regressions: nothing could be judged (1 series searched; 1 with fewer '
                   'than 6 runs, too few for the test).\n')

"""Series of a year of nightly runs and more (history/regressions.py, metrics/significance.py,
tools/results_failure.py). A trial user's database of 17,520 runs (730 a series): the exact
test's smallest p-value, 1 / C(n_a + n_b, n_a), overflowed a float from about 1,030 runs of a
flat series, and in a noisy one from about 550 (the runs that could judge a possible step,
counted up to 512 more), so `regressions`, `history` and `html` ended in a traceback and the
CI recipe's `regressions --json > regressions.json` saved an empty file."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tf_cnn_benchmarks.history import records, regressions
from tf_cnn_benchmarks.metrics import significance

import results_helpers as rh


def _rows(values, **kwargs):
    return [dict(records.from_result(r), id=i + 1)
            for i, r in enumerate(rh.series(values, **kwargs))]


def test_the_smallest_p_value_of_long_series_is_its_true_limit_not_an_overflow():
    # C(1028, 514) < 2**1024 still fits a float: exact. C(1030, 515) does not: 0.0, which is
    # what 1 / C rounds to (it is below 1e-308).
    assert significance.min_p_value(514, 514) == 1.0 / math.comb(1028, 514)
    assert 0.0 < significance.min_p_value(514, 514) < 1e-307
    assert significance.min_p_value(515, 515) == 0.0
    assert significance.min_p_value(3, 5000) == pytest.approx(1.0 / math.comb(5003, 3))
    assert significance.min_p_value(4, 3) == 1.0 / 35  # small counts: exact as before
    # Tarone's level over the splits of 1,100 runs: all of them can reach it (no overflow).
    sizes = [(k, 1100 - k) for k in range(3, 1098)]
    assert regressions.corrected_level(sizes) == pytest.approx(0.05 / len(sizes))


def test_a_flat_series_of_1100_runs_is_searched_and_passes():
    values = [1000.0 + (i % 7) * 1e-3 for i in range(1100)]  # flat: no ties
    assert regressions.find_steps(values) == []
    assert regressions.untestable_step(values, []) is None


def test_a_noisy_series_of_529_runs_counts_the_runs_that_would_judge_it():
    # 9 runs, 3 of them 9% below the others, then 520 runs 5.4% slower with 8% noise: no
    # number of runs after the possible step can judge it (the count went up to 512 more
    # runs: 1,041 in all, which overflowed).
    start = [1100.0, 1000.0, 1105.0, 1002.0, 1098.0, 1001.0, 1103.0, 1099.0, 1102.0]
    values = start + list(1040.0 * (1 + 0.08 * np.random.default_rng(3).standard_normal(520)))
    steps = regressions.find_steps(values)
    assert steps == []
    step = regressions.untestable_step(values, steps, recent_runs=0)
    assert (step.start, step.end, step.more_runs) == (0, 529, None)
    assert step.p_at_change > step.level


def test_an_unforeseen_error_is_one_line_and_the_gates_json_still_an_object(
        tmp_path, capsys, monkeypatch):
    db = str(tmp_path / 'r.sqlite')
    rh.fill(db, rh.series([1000.0, 1001.0, 999.0, 1002.0, 998.0, 1000.5]))

    def broken(*args, **kwargs):
        raise OverflowError('int too large to convert to float')

    monkeypatch.setattr(regressions, 'search', broken)
    status, out, err = rh.results_command(capsys, 'regressions', '--results_db=' + db,
                                          '--fail_on_regression', '--json')
    assert status == significance.INTERNAL == 70  # neither a pass with a warning nor a regression
    assert err.count('\n') == 1 and 'Traceback' not in err
    assert err.startswith('error: regressions failed: OverflowError: int too large to convert '
                          'to float (at tests/test_long_series.py:')
    assert err.rstrip().endswith('nothing was judged. This is a bug of tf_cnn_results: please '
                                 'report it with the command line')
    saved = json.loads(out)
    assert saved['exit_status'] == 70 and saved['gate']['verdict'] == 'internal error'
    assert saved['gate']['line'] == err.rstrip()
    # `history` has no verdict to give: the same status, and no object.
    monkeypatch.setattr(regressions, 'find_regressions', broken)
    status, out, err = rh.results_command(capsys, 'history', '--results_db=' + db,
                                          '--model=trivial', '--json')
    assert (status, out) == (70, '')
    assert err.startswith('error: history failed: OverflowError') and err.count('\n') == 1


def _noisy(n, noise, seed, level=1000.0):
    return list(level * (1 + noise * np.random.default_rng(seed).standard_normal(n)))


def test_a_recent_step_a_years_correction_hides_is_found_in_the_recent_runs():
    # 700 runs with 6% noise, then 8 runs 10% slower: among the 703 splits of the whole series
    # (level 7e-05) the test cannot call it; among the 28 of the last 30 runs (0.0018) it can.
    rng = np.random.default_rng(5)
    values = (list(1000 * (1 + 0.06 * rng.standard_normal(700)))
              + list(900 * (1 + 0.06 * rng.standard_normal(8))))
    assert [s for s in regressions.find_steps(values, recent_runs=0)
            if s.direction == 'slower'] == []
    [step] = regressions.find_steps(values, recent_runs=regressions.DEFAULT_RECENT_RUNS)
    assert step.direction == 'slower' and abs(step.index - 700) <= 1
    assert step.level == pytest.approx(0.05 / 28) and step.start == 0
    assert step.judgement.ratio == pytest.approx(0.9, abs=0.04)


@pytest.mark.parametrize('seed', [1, 2, 3])
def test_noise_alone_in_a_long_series_is_no_regression(seed):
    values = _noisy(730, 0.06, seed)
    assert [s for s in regressions.find_steps(values, recent_runs=30)
            if s.direction == 'slower'] == []


@pytest.mark.parametrize('recent_runs', [regressions.DEFAULT_RECENT_RUNS, 0])
def test_an_old_step_outside_the_recent_runs_is_still_reported(recent_runs):
    values = _noisy(300, 0.02, 4) + _noisy(430, 0.02, 5, level=850.0)
    search = regressions.search(_rows(values), recent_runs=recent_runs)
    [found] = search.found
    assert found.step.index == 300 and found.still_slower and search.unjudged == []


def test_the_correction_is_named_when_it_is_why_a_step_is_not_judged():
    # A 5% step could reach 0.05 against the runs before it (p 0.024), not 0.0063, the level
    # corrected for the 8 possible step points of 13 runs.
    values = [1000.0, 1004.0, 998.0, 1002.0, 1001.0, 940.0, 1003.0, 997.0, 1000.5, 1002.5,
              939.0, 941.0, 943.0]
    step = regressions.untestable_step(values, [])
    assert (step.splits, step.alpha) == (8, 0.05)
    assert regressions.why_unjudged(step) == (
        'the level corrected for 8 possible step points (0.0063) is too strict to catch a 5% '
        'step against the spread of the runs before it; at 0.05 it could')
    [u] = regressions.search(_rows(values)).unjudged
    assert regressions.unjudged_summary(u)['p'] == (
        'at best 0.024 for a 5% step with 10 and 3 runs, above the level 0.0063 (0.05 '
        'corrected for 8 possible step points)')

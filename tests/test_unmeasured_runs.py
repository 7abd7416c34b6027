"""`tf_cnn_results` and the host load of each run: `list` has a 'host load' column with the words
`show` uses, a run too short for its load to be measured is 'not measured (run too short)', not
'clean', `history` and the `html` page mark it in `list`'s words, and the verdicts that keep it
say so (metrics/clean_runs.py)."""

from __future__ import annotations

from tf_cnn_benchmarks.metrics import clean_runs, host_load

import results_helpers as rh

SHORT = host_load.measure(host_load.Sample(0.0, 3.1, 0, 0, 0),
                          host_load.Sample(0.02, 3.2, 0, 0, 0), 2, 2, 100)
RATES = [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1002.0, 998.0, 1003.0]


def _busy(others: float) -> dict:
    return host_load.measure(host_load.Sample(0.0, 3.1, 0, 0, 0),
                             host_load.Sample(10.0, 3.4, int(others * 2 * 1000), 0, 0), 2, 2,
                             100)


def _db(tmp_path) -> str:
    """8 runs of one configuration: #1-#3 too short to measure, #4 busy, the rest quiet."""
    db = str(tmp_path / 'r.sqlite')
    results = rh.series(RATES)
    for i, r in enumerate(results):
        r['host_load'] = SHORT if i < 3 else _busy(0.8 if i == 3 else 0.05)
    rh.fill(db, results)
    return db


_main = rh.results_command


def test_a_run_too_short_to_measure_is_not_called_clean():
    state = clean_runs.state(SHORT, 3, 3)
    assert SHORT['others_fraction'] is None and 'too short' in SHORT['error']
    assert state.unmeasured == 'run too short' and state.verdict == 'not measured'
    assert state.describe().startswith('not measured (run too short): whether the host was '
                                       'quiet is not known')
    # Not recorded at all (results from before the measurement): clean, as before.
    assert clean_runs.state(None).verdict == 'clean' and not clean_runs.state(None).unmeasured
    assert clean_runs.unmeasured_line([state, clean_runs.state(None)]) == (
        'host load: not measured for 1 of 2 runs (run too short): whether the host was quiet '
        'during them is not known; a longer timed part (a larger --num_batches) measures it')
    assert clean_runs.unmeasured_line([clean_runs.state(None)]) == ''


def test_list_has_the_host_load_column_and_show_says_not_measured(tmp_path, capsys):
    db = _db(tmp_path)
    status, out, _ = _main(capsys, 'list', '--results_db=' + db)
    rows = out.splitlines()
    assert status == 0 and rows[0].endswith('| step ms (median) | host load |')
    verdicts = [row.rsplit('|', 2)[1].strip() for row in rows[2:10]]
    assert verdicts == ['not measured'] * 3 + ['busy'] + ['clean'] * 4
    status, out, _ = _main(capsys, 'show', '1', '5', '--results_db=' + db)
    lines = [line for line in out.splitlines() if line.startswith('  clean: ')]
    assert lines == [
        '  clean: not measured (run too short): whether the host was quiet is not known; the '
        'verdicts keep it and say so',
        "  clean: clean (other processes used 5% of the run's cores)"]


def test_the_regression_finder_and_history_say_which_runs_had_no_measured_load(tmp_path,
                                                                              capsys):
    db = _db(tmp_path)
    # 7 of the 8 runs are kept in the verdicts (the busy #4 is left out): the line says so.
    line = ('host load: not measured for 3 of 7 runs kept in the verdicts (run too short): '
            'whether the host was quiet during them is not known; a longer timed part (a '
            'larger --num_batches) measures it')
    status, out, _ = _main(capsys, 'regressions', '--results_db=' + db)
    assert status == 0 and line in out.splitlines(), out
    assert 'left out 1 of 8 runs: 1 shared the host' in out
    status, out, _ = _main(capsys, 'history', '--results_db=' + db,
                           '--png=' + str(tmp_path / 'h.png'))
    assert status == 0 and line in out.splitlines(), out


def _history_marks(capsys, *flags) -> dict:
    """{run id: its 'step' column} of `tf_cnn_results history FLAGS`."""
    status, out, _ = _main(capsys, 'history', *flags)
    rows = [r for r in out.splitlines() if r.startswith('| ') and r[2:3].isdigit()]
    assert status == 0 and rows, out
    return {int(r.split('|')[1]): r.split('|')[8].strip() for r in rows}


def test_history_marks_the_runs_list_does_not_call_clean_in_lists_words(tmp_path, capsys):
    # Its step column marked a kept busy run but left the runs too short to measure blank,
    # where `list` says 'not measured'.
    db = _db(tmp_path)
    png = '--png=' + str(tmp_path / 'h.png')
    marks = _history_marks(capsys, '--results_db=' + db, png)
    assert marks == {1: 'not measured', 2: 'not measured', 3: 'not measured', 5: '', 6: '',
                     7: '', 8: ''}
    marks = _history_marks(capsys, '--results_db=' + db, png, '--include_unclean_runs')
    assert marks[4] == 'busy' and marks[1] == 'not measured' and marks[8] == ''


def test_the_page_marks_the_runs_history_marks_not_measured(tmp_path):
    # `history` marked runs #1-#3 'not measured'; the html page listed only the busy run #4 and
    # showed the three unmeasured ones nowhere.
    from tf_cnn_benchmarks.history import page, records, store
    db = _db(tmp_path)
    with store.opened(db, read_only=True) as conn:
        rows = store.select_runs(conn)
    text = page.build_page(rows, db, 5.0)
    marked = {int(cell.split('</td>')[0]): cell.split('<span class="badge">')[1].split('<')[0]
              for cell in text.split('<td class="num">#')[1:]}
    assert marked == {4: 'busy', 1: 'not measured', 2: 'not measured', 3: 'not measured'}
    assert marked == {r['id']: records.host_load_word(r, clean='') for r in rows
                      if records.host_load_word(r, clean='')}
    assert '3 runs kept in the verdicts, host load not measured (run too short):' in text
    # Before: 'of 7 runs' on a page of 8 runs: the count is of the runs kept in the verdicts.
    assert ('<p class="note">host load: not measured for 3 of 7 runs kept in the verdicts (run '
            'too short): whether the host was quiet during them is not known') in text

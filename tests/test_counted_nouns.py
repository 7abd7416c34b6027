"""Counts printed with a noun say it in its number (cnn_util.counted): a user read '1 runs left
out' on the results page, '1 runs: 1 ok' in a sweep's report, and 'host load: not measured for
2 of 2 runs' on a page of 3 runs (the count was of the runs kept in the verdicts)."""

from __future__ import annotations

from tf_cnn_benchmarks.history import page
from tf_cnn_benchmarks.metrics import clean_runs
from tf_cnn_benchmarks.tools.sweep import compare, host_load, report

BUSY = {'others_fraction': 0.9, 'steal_fraction': 0.0}
SHORT = {'others_fraction': None, 'steal_fraction': None, 'error': 'run too short'}


def _row(run_id: int) -> dict:
    return {'id': run_id, 'run_utc': '2026-12-06T10:00:00', 'hostname': 'node-a', 'label': '',
            'images_per_sec': 10.0}


def test_the_pages_tables_of_one_run_say_run():
    assert '1 run left out of the verdicts (--include_unclean_runs keeps them):' in \
        page._unclean_table([_row(1)], kept=False)
    assert '1 unclean run kept in the verdicts' in page._unclean_table([_row(1)], kept=True)
    assert '2 runs left out of the verdicts' in page._unclean_table([_row(1), _row(2)], False)


def test_a_selection_of_one_run_says_run():
    one = clean_runs.select([BUSY], clean_runs.state)
    assert one.lines()[0].startswith('left out 1 of 1 run: 1 shared the host')
    kept = clean_runs.select([BUSY], clean_runs.state, include=True)
    assert kept.lines()[0].startswith('kept 1 unclean run of 1 (--include_unclean_runs)')
    two = clean_runs.select([BUSY, None], clean_runs.state, noun='repeats')
    assert two.lines()[0].startswith('left out 1 of 2 repeats: ')


def test_the_unmeasured_line_names_what_it_counts():
    states = [clean_runs.state(SHORT), clean_runs.state(SHORT)]
    assert clean_runs.unmeasured_line(states[:1]).startswith(
        'host load: not measured for 1 of 1 run (run too short)')
    assert clean_runs.unmeasured_line(
        states, 'run kept in the verdicts', 'runs kept in the verdicts').startswith(
        'host load: not measured for 2 of 2 runs kept in the verdicts (run too short)')


def test_the_left_out_line_of_unmeasured_runs_counts_them_in_their_number():
    states = [clean_runs.state(SHORT), clean_runs.state(SHORT)]
    assert clean_runs.reason_lines(states[:1])[0].startswith('1 had no measured host load (')
    assert clean_runs.select(states, lambda s: s).lines()[0].startswith(
        'left out 2 of 2 runs: 2 had no measured host load (run too short')


def test_the_sweeps_lines_of_one_run_say_run():
    config = {'model': 'trivial', 'batch_size': 8, 'num_gpus': 1, 'precision': 'fp32',
              'variable_update': 'parameter_server', 'repeat': 0}
    record = {'status': 'ok', 'extra_flags': [], 'started_utc': '2026-12-06T10:00:00Z',
              'host_load': dict(SHORT), 'config': config}
    assert '\n1 run: 1 ok, 0 failed, 0 interrupted.' in report.header([record])
    assert report.header([record] * 2).count('\n2 runs: 2 ok, ') == 1
    assert host_load.unmeasured_line([record], 1).startswith(
        'host load: not measured for 1 of 1 run compared (run too short)')
    assert compare._side([record]).endswith(', 1 run')
    config = compare.results.config_of(record)
    gone = dict(record, status=compare.LEFT_OUT, host_load=dict(BUSY))
    assert compare._left_out_note(config, 'B', [gone]) == 'B: 1 of 1 run left out (busy)'

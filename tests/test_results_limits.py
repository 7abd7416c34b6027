"""tf_cnn_results on a large database: `list` and `show` cut by --limit to the most recent
runs (with a line saying how many were left out; on a terminal `list` shows the last
TERMINAL_LIMIT unless --limit says otherwise), --until beside --since, and `show` in the
order its ids were given (tools/results_cli.py, history/store.py select_runs)."""

from __future__ import annotations

import json

import pytest

from tf_cnn_benchmarks.history import store
from tf_cnn_benchmarks.tools import results_cli

import results_helpers as rh

_main = rh.results_command


@pytest.fixture
def db(tmp_path):
    # 20 runs: node a and node b alternate hourly from 2026-01-05 00:00 (ids 1-18, to 08:00),
    # then two bf16 runs of node a at 00:00 and 01:00 (ids 19, 20).
    return rh.three_series(str(tmp_path / 'results.sqlite'))


def _ids(out: str) -> list[int]:
    return [int(line.split('|')[1]) for line in out.splitlines()[2:] if line.startswith('| ')]


def test_list_limit_keeps_the_most_recent_runs_oldest_first_and_says_how_many_are_left(db, capsys):
    status, out, err = _main(capsys, 'list', '--results_db=%s' % db, '--limit=3')
    assert status == 0 and err == ''
    assert _ids(out) == [16, 17, 18]  # node a and b at 08:00 come last; 07:00's b before
    lines = out.splitlines()
    assert lines[-2:] == ['3 runs, 1 configuration.',
                          '(17 older runs not shown: --limit=0 for all)']
    _, out, _ = _main(capsys, 'list', '--results_db=%s' % db, '--limit=0')
    assert len(_ids(out)) == 20 and 'not shown' not in out
    # A limit above the count: every run, no note.
    _, out, _ = _main(capsys, 'list', '--results_db=%s' % db, '--limit=20')
    assert len(_ids(out)) == 20 and 'not shown' not in out


def test_list_json_limit_puts_the_note_on_stderr(db, capsys):
    status, out, err = _main(capsys, 'list', '--results_db=%s' % db, '--limit=2', '--json')
    assert status == 0
    assert [json.loads(line)['id'] for line in out.splitlines()] == [17, 18]
    assert err == '(18 older runs not shown: --limit=0 for all)\n'


def test_list_on_a_terminal_defaults_to_the_last_runs_and_a_pipe_gets_every_one(
        db, capsys, monkeypatch):
    monkeypatch.setattr(results_cli, 'TERMINAL_LIMIT', 5)
    _, out, _ = _main(capsys, 'list', '--results_db=%s' % db)  # a pipe: every run
    assert len(_ids(out)) == 20 and 'not shown' not in out
    monkeypatch.setattr(results_cli, '_terminal', lambda: True)
    _, out, _ = _main(capsys, 'list', '--results_db=%s' % db)
    assert _ids(out) == [14, 15, 16, 17, 18]
    assert out.splitlines()[-1] == '(15 older runs not shown: --limit=0 for all)'
    _, out, _ = _main(capsys, 'list', '--results_db=%s' % db, '--limit=0')
    assert len(_ids(out)) == 20


def test_show_limit_and_ids_in_the_order_asked(db, capsys):
    status, out, _ = _main(capsys, 'show', '--results_db=%s' % db, '18', '1', '7', '1')
    runs = [line for line in out.splitlines() if line.startswith('run #')]
    assert status == 0 and [r.split()[1] for r in runs] == ['#18', '#1', '#7']
    status, out, err = _main(capsys, 'show', '--results_db=%s' % db, '--host=node-b',
                             '--limit=1', '--json')
    assert status == 0 and [json.loads(line)['id'] for line in out.splitlines()] == [18]
    assert err == '(8 older runs not shown: --limit=0 for all)\n'
    # An id cut by the limit still exists: no error for it, the missing one is named.
    status, _, err = _main(capsys, 'show', '--results_db=%s' % db, '3', '99', '--limit=1')
    assert status == 1 and err.startswith('error: no run #99 in ')


def test_until_is_the_half_open_end_of_since(db, capsys):
    _, out, _ = _main(capsys, 'list', '--results_db=%s' % db, '--since=2026-01-05T01:00',
                      '--until=2026-01-05T03:00')
    assert _ids(out) == [3, 4, 20, 5, 6]  # 01:00 (a, b, bf16 a) and 02:00 (a, b)
    status, out, err = _main(capsys, 'show', '--results_db=%s' % db, '--until=2026-01-05T01:00',
                             '--host=node-b')
    assert status == 0 and [line.split()[1] for line in out.splitlines()
                            if line.startswith('run #')] == ['#2']
    status, out, _ = _main(capsys, 'history', '--results_db=%s' % db, '--host=node-a',
                           '--precision=fp32', '--until=2026-01-05T02:00', '--json')
    assert status == 0 and [r['id'] for r in json.loads(out)['runs']] == [1, 3]
    status, _, err = _main(capsys, 'regressions', '--results_db=%s' % db, '--until=someday')
    assert status == 2 and 'error: --until=someday: give a date or time' in err
    status, _, err = _main(capsys, 'show', '--results_db=%s' % db, '--until=2020-01-01')
    assert status == 1 and err.startswith('error: no run in %s matches --until=2020-01-01' % db)


def test_a_since_not_before_until_is_a_usage_error(db, capsys):
    # Before: `no runs match.`, exit 0, for a range no run can be in.
    for command in ('list', 'regressions'):
        status, out, err = _main(capsys, command, '--results_db=%s' % db,
                                 '--since=2026-12-08', '--until=2026-12-01')
        assert (status, out) == (2, '')
        assert err == ('error: --since=2026-12-08 is not before --until=2026-12-01, so no run '
                       'can match; give a --since earlier than --until (--since=2026-01-01 '
                       '--until=2026-02-01 is January)\n')


def test_a_negative_limit_is_a_usage_error(db, capsys):
    status, _, err = _main(capsys, 'list', '--results_db=%s' % db, '--limit=-1')
    assert status == 2 and 'argument --limit: must be >= 0' in err


def test_select_runs_limit_and_count_agree(db):
    with store.opened(db, read_only=True) as conn:
        assert [r['id'] for r in store.select_runs(conn, host='node-a', limit=2)] == [15, 17]
        assert store.count_runs(conn, host='node-a') == 11
        assert store.count_runs(conn, until='2026-01-05T01:00:00.000000Z') == 3

"""What `tf_cnn_results list`, `show` and `history` print where a CI engineer's trial found
them silent, broken or ambiguous (tools/results_cli.py, tools/results_format.py): filters that
match nothing, a cluster run's figure, labels that break a markdown table, `history --json`."""

from __future__ import annotations

import json
import os

import pytest

import results_helpers as rh

_main = rh.results_command


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / 'results.sqlite')
    rh.fill(path, rh.series([1000, 1010, 990]))
    return path


def test_show_of_filters_that_match_nothing_says_so_and_exits_1(db, capsys):
    # Before: no output at all and exit 0, though `show 999` and `history` exit 1.
    for extra in ([], ['--json']):
        status, out, err = _main(capsys, 'show', '--model=nomodel', "--label=a b",
                                 '--results_db=%s' % db, *extra)
        assert (status, out) == (1, '')
        assert err == "error: no run in %s matches --model=nomodel --label='a b'\n" % db
    status, out, _ = _main(capsys, 'show', '--model=trivial', '--results_db=%s' % db)
    assert status == 0 and out.count('run #') == 3


def test_html_of_filters_that_match_nothing_says_so_exits_1_and_writes_no_page(
        db, capsys, tmp_path):
    # Before (sweep53): 'page written to hz/index.html', exit 0, a page of '0 runs of 0
    # configurations on 0 hosts ()', though --help promises exit 1 as `show` and `history`.
    site = tmp_path / 'site'
    status, out, err = _main(capsys, 'html', str(site), '--model=nomodel',
                             '--results_db=%s' % db)
    assert (status, out) == (1, '')
    assert err == 'error: no run in %s matches --model=nomodel; no page written\n' % db
    assert not site.exists()
    from tf_cnn_benchmarks.history import store
    empty = str(tmp_path / 'empty.sqlite')
    with store.opened(empty):  # a database of no run
        pass
    status, out, err = _main(capsys, 'html', str(site), '--results_db=%s' % empty)
    assert (status, out, err) == (1, '', 'error: no run in %s; no page written\n' % empty)
    assert not site.exists()
    status, out, _ = _main(capsys, 'html', str(site), '--results_db=%s' % db)
    assert status == 0 and (site / 'index.html').exists()


def test_help_says_runs_whose_host_load_was_not_measured_are_left_out(capsys):
    # Before: '... is 'not measured' there, kept by the verdicts' (they are left out).
    status, out, _ = _main(capsys, '--help')
    text = ' '.join(out.split())
    assert status == 0 and 'kept by the verdicts' not in text
    assert ("or was too short for its host load to be measured ('not measured': a larger "
            "--num_batches measures it), or that stopped before its planned steps (SIGINT "
            "after 28 of 100) is left out" in text)


def test_list_json_of_no_run_prints_nothing(db, capsys):
    # Before: one blank line, which a JSON-lines reader fails on (json.loads('')).
    status, out, err = _main(capsys, 'list', '--json', '--model=nomodel', '--results_db=%s' % db)
    assert (status, out, err) == (0, '', '')
    status, out, _ = _main(capsys, 'list', '--json', '--results_db=%s' % db)
    assert status == 0 and [json.loads(line)['id'] for line in out.splitlines()] == [1, 2, 3]
    assert out.endswith('}\n')
    status, out, _ = _main(capsys, 'list', '--model=nomodel', '--results_db=%s' % db)
    assert (status, out) == (0, 'no runs match.\n')


def _cluster_chief(own: float, total: float | None) -> dict:
    """The chief's result of a 2-worker run: its own images/sec `own`, the cluster's `total`
    (as tf_cnn_cluster's chief JSON has them: 56.08 and 112.22); None: a worker timed no
    step."""
    result = rh.result(own, num_gpus=1, batch_size=8)
    result.update(num_workers=2, task='worker 0')
    if total is not None:
        result.update(cluster_images_per_sec=total, worker_images_per_sec=[56.08, 56.14])
    return result


def test_list_and_show_say_a_cluster_runs_figure_is_the_cluster_total(tmp_path, capsys):
    # Before: 112.22 with nothing saying it is not the chief JSON's images_per_sec (56.08).
    path = str(tmp_path / 'r.sqlite')
    rh.fill(path, [rh.result(1000.0), _cluster_chief(56.08, 112.22),
                   _cluster_chief(55.5, None)])
    status, out, _ = _main(capsys, 'list', '--results_db=%s' % path)
    rows = out.splitlines()
    assert status == 0 and rows[2].endswith('| 1000.00 | 31.84 | clean |')
    assert ' x2w parameter_server cpu synthetic 32px | 112.22 (sum of 2 workers) |' in rows[3]
    assert ' | 55.50 (worker 0 only) |' in rows[4]
    _, out, _ = _main(capsys, 'show', '1', '2', '3', '--results_db=%s' % path)
    said = [x for x in out.splitlines() if x.startswith('  images/sec: ')]
    assert said == [
        '  images/sec: 1000.00 (global batch 32, 4 timed steps)',
        "  images/sec: 112.22, the cluster's total: the sum of its 2 workers' images/sec "
        '(56.08, 56.14) (global batch 8, 4 timed steps)',
        "  images/sec: 55.50, worker 0's own share (no cluster total: a worker timed no step) "
        '(global batch 8, 4 timed steps)']
    _, out, _ = _main(capsys, 'show', '1', '2', '--json', '--results_db=%s' % path)
    one, cluster = (json.loads(line) for line in out.splitlines())
    assert one['images_per_sec_of'] == 'the run'
    assert cluster['images_per_sec'] == 112.22 and cluster['images_per_sec_of'].startswith(
        "the cluster's total: the sum of its 2 workers'")
    assert cluster['figures']['cluster'] == {'workers': 2, 'total': True,
                                             'worker_images_per_sec': [56.08, 56.14]}


def test_a_cluster_total_over_the_workers_span_says_so(tmp_path, capsys):
    """A chief of today records its workers' images over their timed parts' span
    (cluster/figures.py; 'cluster_span_secs'), not the sum of their images/sec: `list` and
    `show` said 'sum of 2 workers' for it too."""
    path = str(tmp_path / 'r.sqlite')
    chief = _cluster_chief(56.08, 105.4)
    chief.update(cluster_images=448, cluster_span_secs=4.25)
    rh.fill(path, [chief])
    _, out, _ = _main(capsys, 'list', '--results_db=%s' % path)
    assert ' | 105.40 (total of 2 workers) |' in out.splitlines()[2]
    _, out, _ = _main(capsys, 'show', '1', '--results_db=%s' % path)
    assert [x for x in out.splitlines() if x.startswith('  images/sec: ')] == [
        "  images/sec: 105.40, the cluster's total: its 2 workers' images over 4.25 s, the "
        "first one's timed start to the last one's end (each worker's own images/sec: 56.08, "
        "56.14) (global batch 8, 4 timed steps)"]
    _, out, _ = _main(capsys, 'show', '1', '--json', '--results_db=%s' % path)
    assert json.loads(out)['figures']['cluster'] == {
        'workers': 2, 'total': True, 'worker_images_per_sec': [56.08, 56.14], 'span_secs': 4.25}


def test_a_label_with_a_bar_or_a_line_break_stays_in_its_cell(tmp_path, capsys):
    # Before: `--label=$'a|b\nc'` split list's row in two and added a column.
    path = str(tmp_path / 'r.sqlite')
    rh.fill(path, [rh.result(1000.0, label='a|b\nc'), rh.result(990.0, label='x\r\ny')])
    status, out, _ = _main(capsys, 'list', '--results_db=%s' % path)
    rows = out.splitlines()[2:4]
    assert status == 0 and [r.count(' | ') for r in rows] == [7, 7]
    assert '| node-a | a\\|b\\nc | trivial ' in rows[0] and '| node-a | x\\ny | ' in rows[1]
    _, out, _ = _main(capsys, 'history', '--results_db=%s' % path, '--png=%s' % (
        tmp_path / 'h.png'))
    assert '| node-a | a\\|b\\nc | 1000.00 |' in out


def test_the_html_page_says_a_cluster_runs_figure_is_the_cluster_total(tmp_path, capsys):
    # Before: the page's latest-batch table gave 112.2 as the host's figure, unmarked.
    path = str(tmp_path / 'r.sqlite')
    rh.fill(path, [_cluster_chief(56.08, 112.22)])
    status, _, err = _main(capsys, 'html', str(tmp_path / 'site'), '--results_db=%s' % path)
    text = open(tmp_path / 'site' / 'index.html', encoding='utf-8').read()
    assert status == 0, err
    assert '<td class="num">112.2 (sum of 2 workers)</td>' in text
    one = str(tmp_path / 'one.sqlite')
    rh.fill(one, [rh.result(1000.0)])
    _main(capsys, 'html', str(tmp_path / 'one'), '--results_db=%s' % one)
    text = open(tmp_path / 'one' / 'index.html', encoding='utf-8').read()
    assert '<td class="num">1000.0</td>' in text and 'workers)' not in text


def test_show_keeps_a_label_with_a_line_break_on_its_line(tmp_path, capsys):
    # Before: `label: a` then a line `b`, which read as another field of the block.
    path = str(tmp_path / 'r.sqlite')
    rh.fill(path, [rh.result(1000.0, label='a|b\nc')])
    status, out, _ = _main(capsys, 'show', '1', '--results_db=%s' % path)
    assert status == 0 and '\n  label: a|b\\nc\n' in out


def test_regressions_keep_a_label_with_a_line_break_on_its_line(tmp_path, capsys):
    # Before: '(label: new' then a line 'build)'.
    path = str(tmp_path / 'r.sqlite')
    rh.fill(path, rh.series([1000, 1010, 990, 1005, 995, 700, 705, 698, 702, 699], change_at=5,
                            changed={'label': 'new\nbuild'}))
    status, out, _ = _main(capsys, 'regressions', '--results_db=%s' % path)
    assert status == 0 and '  first slower run: #6 ' in out, out
    assert '(label: new\\nbuild)\n' in out


def test_history_json_prints_the_series_and_writes_no_plot(tmp_path, capsys, monkeypatch):
    # A CI engineer's trial: `history` had no --json, and wrote history-....png into the
    # current folder whenever it ran.
    monkeypatch.chdir(tmp_path)
    db = str(tmp_path / 'r.sqlite')
    runs = rh.series([1000.0, 1010.0, 990.0])
    runs[1]['host_load'] = {'others_fraction': 0.8, 'steal_fraction': 0.0}  # busy
    rh.fill(db, runs)
    status, out, err = _main(capsys, 'history', '--json', '--results_db=' + db)
    assert (status, err, out.count('\n')) == (0, '', 1)
    series = json.loads(out)
    assert series['config_key'].startswith('model=trivial|mode=training|precision=fp32|')
    assert [(r['id'], r['run_utc'], r['images_per_sec'], r['clean'], r['unclean_reason'])
            for r in series['runs']] == [
        (1, '2026-01-05T00:00:00.000000Z', 1000.0, True, None),
        (3, '2026-01-05T02:00:00.000000Z', 990.0, True, None)]
    assert [(r['id'], r['clean'], r['unclean_reason']) for r in series['left_out_runs']] == [
        (2, False, "busy: other processes used 80% of the run's cores (more than 25%)")]
    assert series['png'] is None
    assert not [n for n in os.listdir(tmp_path) if n.endswith('.png')]
    # Unclean runs kept: in the series, marked; --png writes the plot and names it.
    png = str(tmp_path / 'h.png')
    status, out, _ = _main(capsys, 'history', '--json', '--include_unclean_runs',
                           '--png=' + png, '--results_db=' + db)
    series = json.loads(out)
    assert status == 0 and series['png'] == png and os.path.getsize(png) > 0
    assert [(r['id'], r['clean']) for r in series['runs']] == [(1, True), (2, False), (3, True)]
    assert series['left_out_runs'] == []
    # Without --json: the table and the plot under its default name, the line naming it.
    status, out, _ = _main(capsys, 'history', '--results_db=' + db)
    name = [n for n in os.listdir(tmp_path) if n.startswith('history-')]
    assert status == 0 and out.splitlines()[-1] == 'plot written to %s' % name[0]

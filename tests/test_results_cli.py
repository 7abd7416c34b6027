"""tf_cnn_results (tools/results_cli.py), in process through main(argv), and one real sweep
recording its runs: list, show, history with its PNG, regressions and the CI gate, html,
ingest; usage errors and a database that is not there."""

from __future__ import annotations

import datetime
import os
import shlex
import subprocess
import sys

import pytest

from tf_cnn_benchmarks import flag_parsing
from tf_cnn_benchmarks.history import records, store
from tf_cnn_benchmarks.tools import results_cli, results_format

import results_helpers as rh

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SLOW_AT = rh.SLOW_AT
_main = rh.results_command


@pytest.fixture
def db(tmp_path):
    return rh.three_series(str(tmp_path / 'results.sqlite'))


def test_list_filters_by_model_precision_host_label_and_since(db, capsys):
    status, out, _ = _main(capsys, 'list', '--results_db=%s' % db, '--host=node-a',
                           '--precision=fp32')
    lines = out.splitlines()
    assert status == 0 and lines[0] == ('| run | finished (UTC) | host | label | configuration | '
                                        'images/sec | step ms (median) | host load |')
    # The median step: (0.99 + 1) / 2 x 32 ms; no host load recorded: clean, as `show` says.
    assert lines[2] == ('| 1 | 2026-01-05 00:00:00 | node-a | - | trivial fp32 training bs=32 '
                        'x1 parameter_server cpu synthetic 32px | 1000.00 | 31.84 | clean |')
    assert lines[-1] == '9 runs, 1 configuration.'
    _, out, _ = _main(capsys, '--results_db=%s' % db, 'list', '--label=slow-*')
    assert out.splitlines()[-1] == '3 runs, 1 configuration.'
    _, out, _ = _main(capsys, 'list', '--results_db=%s' % db, '--since=2026-01-05T07:00')
    assert out.splitlines()[-1] == '4 runs, 1 configuration.'  # 07:00 and 08:00 of a, b
    _, out, _ = _main(capsys, 'list', '--results_db=%s' % db, '--model=resnet50')
    assert out == 'no runs match.\n'


def test_since_takes_a_date_a_time_or_an_age():
    now = datetime.datetime(2026, 2, 1, 12, tzinfo=datetime.timezone.utc)
    assert results_cli.since_time('7d', now) == '2026-01-25T12:00:00.000000Z'
    assert results_cli.since_time('12h', now) == '2026-02-01T00:00:00.000000Z'
    assert results_cli.since_time('2026-01-31') == '2026-01-31T00:00:00.000000Z'
    assert results_cli.since_time('2026-01-31T12:00+01:00') == '2026-01-31T11:00:00.000000Z'
    with pytest.raises(results_cli.UsageError, match='--since=yesterday: give a date'):
        results_cli.since_time('yesterday')


def test_show_prints_a_run_in_full(db, capsys):
    status, out, _ = _main(capsys, 'show', '13', '--results_db=%s' % db)
    lines = out.splitlines()
    assert status == 0 and lines[0] == 'run #13'
    assert '  label: slow-build' in lines
    assert ('  images/sec: 700.00 (global batch 32, 4 timed steps)') in lines
    assert ('  figures: model 2.0 GFLOP/s, 25.0% of peak, input wait 1.0%, peak RSS 1.00 GiB'
            in lines)
    assert any(x.startswith('  environment: host node-a; TensorFlow 2.21.0; Python 3.11.2; '
                            'Test CPU (2 cores; avx2 fma); GPUs none; oneDNN on')
               for x in lines)
    assert '--num_intra_threads=1' in [x for x in lines if x.startswith('  flags:')][0]
    status, _, err = _main(capsys, 'show', '99', '--results_db=%s' % db)
    assert status == 1 and err == 'error: no run #99 in %s\n' % db
    status, _, err = _main(capsys, 'show', '--results_db=%s' % db)
    assert status == 2 and err.startswith('error: show takes run ids')


def test_show_prints_flags_a_user_can_paste_back(tmp_path, capsys):
    """Every printed flag parses back (flag_parsing) to the run's value; unset ones (None) and
    those at their default (--noforward_only was printed: a pasted line warned of them) are
    left out, booleans read --NAME, lists join with commas, and a value a shell would split is
    quoted. (A row without its given flags: test_results_show_flags.py has the rest.)"""
    path = str(tmp_path / 'r.sqlite')
    rh.fill(path, [rh.result(1000, all_reduce_spec=None, allow_growth=None, use_fp16=True,
                             label='my run', benchmark_log_dir='/tmp/logs',
                             num_intra_threads=1, forward_only=False,
                             not_a_flag_today=3)])
    status, out, _ = _main(capsys, 'show', '1', '--results_db=%s' % path)
    line = [x for x in out.splitlines() if x.startswith('  flags: ')][0]
    assert status == 0 and 'None' not in line and 'not_a_flag_today' not in line
    assert "--label='my run'" in line and '--use_fp16' in line and 'forward_only' not in line
    argv = shlex.split(line[len('  flags: '):])
    parsed = flag_parsing.parse_flags(['tf_cnn_benchmarks'] + argv)
    assert parsed.use_fp16 is True and parsed.forward_only is False
    assert (parsed.label, parsed.benchmark_log_dir, parsed.num_intra_threads) == (
        'my run', '/tmp/logs', 1)
    assert parsed.all_reduce_spec is None and parsed.model == 'trivial'


def test_regressions_names_the_first_slower_run_and_fails_the_gate(db, capsys):
    status, out, _ = _main(capsys, 'regressions', '--results_db=%s' % db,
                           '--fail_on_regression')
    lines = out.splitlines()
    assert status == 1
    assert lines[:5] == [
        'REGRESSION: trivial fp32 training bs=32 x1 parameter_server cpu synthetic 32px on '
        'node-a',
        '  first slower run: #13 2026-01-05 06:00:00 (label: slow-build)',
        '  images/sec: 1001.0 (6 runs) -> 700.0 (3 runs), -30.1%, Mann-Whitney p=0.012 '
        '(level 0.013)',  # 1/C(9,3) at Tarone's 0.05/4
        '  still slower: yes',
        '  what changed: --num_intra_threads 0 -> 1']
    assert lines[-2:] == ['regressions: 1 step down in 1 series, 1 still slower (3 series '
                          'searched; 1 with fewer than 6 runs, too few for the test).',
                          'gate: FAILED: 1 regression still slower by more than 5%']
    # Only node b, or a step larger than the one found: nothing, and the gate passes.
    status, out, _ = _main(capsys, 'regressions', '--results_db=%s' % db, '--host=node-b',
                           '--fail_on_regression')
    assert status == 0 and out.splitlines() == [
        'regressions: none (1 series searched; 0 with fewer than 6 runs, too few for the '
        'test).', 'gate: passed']
    status, out, _ = _main(capsys, 'regressions', '--results_db=%s' % db, '--min_change=35')
    assert status == 0 and out.startswith('regressions: none')
    # A host that matches nothing (a typo, another hostname): the gate searched nothing, does
    # not pass: exit status 3 (not judged), which a CI tells from a regression's 1.
    status, out, _ = _main(capsys, 'regressions', '--results_db=%s' % db, '--host=nohost',
                           '--fail_on_regression')
    assert status == 3 and out.splitlines()[-1] == (
        'gate: NOT JUDGED: no series was searched (no run matches the filters: check --host, '
        '--model and the other filters against `tf_cnn_results list`)')
    # Only the bfloat16 series, 2 runs: too short for the test, nothing judged, no pass.
    status, out, _ = _main(capsys, 'regressions', '--results_db=%s' % db, '--precision=bf16',
                           '--fail_on_regression')
    assert status == 3 and out.splitlines()[-1] == (
        'gate: NOT JUDGED: nothing could be judged: each of the 1 series has fewer than 6 runs for '
        'the test')


def test_history_prints_the_runs_and_writes_the_plot(db, capsys, tmp_path):
    png = str(tmp_path / 'h.png')
    status, out, err = _main(capsys, 'history', '--results_db=%s' % db, '--precision=fp32',
                             '--png=%s' % png)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith('trivial fp32 training bs=32 x1 parameter_server cpu synthetic '
                               '32px (model=trivial|mode=training|precision=fp32|')
    row = [x for x in lines if x.startswith('| 13 |')][0]
    # Step times 32/700 s x (0.99, 1, 1.01, 0.99): median 45.49 ms, stdev 0.38 ms.
    assert row == ('| 13 | 2026-01-05 06:00:00 | node-a | slow-build | 700.00 | 45.49 | 0.38 | '
                   'step down -30.1% | --num_intra_threads 0 -> 1 |')
    assert 'node-a: 9 runs; latest batch of repeats: 700.00 images/sec median of 3' in lines
    assert lines[-1] == 'plot written to %s' % png
    from PIL import Image
    image = Image.open(png).convert('RGB')
    assert image.size == (720, 288)
    colours = {image.getpixel((x, y)) for x in range(image.width) for y in range(image.height)}
    assert (0x1f, 0x77, 0xb4) in colours and (0xd6, 0x27, 0x28) in colours  # a host, the step


def test_history_wants_one_configuration(db, capsys):
    status, _, err = _main(capsys, 'history', '--results_db=%s' % db)
    assert status == 2 and err == (
        'error: history shows one configuration; 2 match the filters (trivial fp32; trivial '
        'bf16): --precision=fp32 picks the first, or give --config=KEY (`tf_cnn_results show '
        'RUN` prints a KEY)\n')
    status, _, err = _main(capsys, 'history', '--results_db=%s' % db, '--model=vgg16')
    assert status == 1 and err == 'error: no run in %s matches --model=vgg16\n' % db


def test_history_tells_configurations_apart_by_their_data(capsys, tmp_path, monkeypatch):
    # Two configurations that differ only in their data: the hint names --data, --data picks
    # one, and the default PNG names the data (they wrote the same file before).
    db = str(tmp_path / 'results.sqlite')
    real = rh.series([500, 505, 495], start=rh.T0 + datetime.timedelta(minutes=30))
    for r in real:
        r['plan'] = {'dataset': 'imagenet'}
    rh.fill(db, rh.series([1000, 1010, 990]) + real)
    monkeypatch.chdir(tmp_path)
    status, out, err = _main(capsys, 'history', '--results_db=%s' % db)
    assert (status, out) == (2, '') and err.endswith(
        '2 match the filters (trivial synthetic; trivial imagenet): --data=synthetic picks the '
        'first, or give --config=KEY (`tf_cnn_results show RUN` prints a KEY)\n')
    pngs = []
    for data in ('synthetic', 'imagenet'):
        status, out, err = _main(capsys, 'history', '--results_db=%s' % db, '--data=' + data)
        assert status == 0, err
        assert out.splitlines()[0].startswith(
            'trivial fp32 training bs=32 x1 parameter_server cpu %s 32px' % data)
        pngs.append(out.splitlines()[-1])
    assert pngs == ['plot written to history-trivial-fp32-training-bs32-x1-parameter_server-'
                    'cpu-%s-32px.png' % data for data in ('synthetic', 'imagenet')]
    status, out, _ = _main(capsys, 'list', '--results_db=%s' % db, '--device=cpu',
                           '--image_size=32', '--data=imagenet')
    assert status == 0 and out.count(' 500.00 ') + out.count(' 505.00 ') == 2, out
    status, out, _ = _main(capsys, 'list', '--results_db=%s' % db, '--image_size=64')
    assert (status, out) == (0, 'no runs match.\n')


def test_history_of_many_configurations_names_a_few_and_the_filters_that_pick_one(
        capsys, tmp_path):
    # Eleven configurations: the line listed every key in full (1,107 characters), then each
    # in its long form with every differing field's values (about 600): now within 200, the
    # configurations in short form (their differing parts only).
    db = str(tmp_path / 'results.sqlite')
    rh.fill(db, [r for model in ('trivial', 'lenet', 'alexnet') for batch in (8, 16, 32)
                 for r in rh.series([100, 101], model=model, batch_size=batch)]
            + rh.series([102, 103], model='trivial', batch_size=8, use_bf16=True)
            + rh.series([104, 105], model='trivial', batch_size=8, num_gpus=2))
    status, out, err = _main(capsys, 'history', '--results_db=%s' % db)
    assert (status, out) == (2, '')
    assert err == (
        'error: history shows one configuration; 11 match the filters (trivial fp32 bs=8 x1 '
        'and 10 more): --model=trivial --precision=fp32 --batch_size=8 --num_devices=1 picks '
        'the first, or give --config=KEY\n')
    assert len(err.rstrip('\n')) <= results_format.LINE_LIMIT
    status, out, err = _main(capsys, 'history', '--results_db=%s' % db, '--model=trivial',
                             '--precision=fp32', '--batch_size=8', '--num_devices=1',
                             '--png=%s' % (tmp_path / 'h.png'))
    assert status == 0, err
    assert out.startswith('trivial fp32 training bs=8 x1 parameter_server cpu synthetic 32px')
    # A part without a filter (the workers): --config=KEY.
    rows = [dict(records.from_result(r), id=i) for i, r in enumerate(
        rh.series([100]) * 2)]
    rows[1]['num_workers'], rows[1]['config_key'] = 2, 'other'
    assert results_format.many_configurations_message(rows, results_cli.FILTER_FLAGS) == (
        'history shows one configuration; 2 match the filters (trivial x1w; trivial x2w): they '
        'differ in num_workers, which has no filter: give --config=KEY (`tf_cnn_results show '
        'RUN` prints a KEY)')


def test_html_writes_one_page(db, capsys, tmp_path):
    status, out, _ = _main(capsys, 'html', str(tmp_path / 'site'), '--results_db=%s' % db)
    path = str(tmp_path / 'site' / 'index.html')
    assert status == 0 and out == 'page written to %s\n' % path
    text = open(path, encoding='utf-8').read()
    assert '<script' not in text and 'http' not in text.replace('http-equiv', '')
    assert text.count('<img ') == 2 and text.count('src="data:image/png;base64,') == 2
    assert '<td>#13 2026-01-05 06:00:00</td><td>slow-build</td>' in text


def test_an_output_that_cannot_be_written_is_refused_before_the_work(db, capsys, tmp_path,
                                                                    monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'afile').write_text('x')
    status, out, err = _main(capsys, 'html', 'afile', '--results_db=%s' % db)
    assert (status, out) == (2, '') and err == (
        'error: html OUT_DIR afile is a file, not a folder; give a folder this user can write '
        '(made when missing) for its index.html\n')
    status, out, err = _main(capsys, 'html', 'afile/site', '--results_db=%s' % db)
    assert (status, out) == (2, '') and err.startswith(
        'error: html OUT_DIR afile/site: %s is a file, not a folder; give a folder' % (
            tmp_path / 'afile'))
    # The table was printed, then the plot failed: now nothing is done.
    status, out, err = _main(capsys, 'history', '--results_db=%s' % db, '--precision=fp32',
                             '--host=node-a', '--png=nodir/x.png')
    assert (status, out) == (2, '') and err == (
        'error: --png=nodir/x.png: its folder nodir does not exist; create it, or give a file '
        'name in a folder this user can write\n')
    status, out, err = _main(capsys, 'history', '--results_db=%s' % db, '--precision=fp32',
                             '--host=node-a', '--png=%s' % tmp_path)
    assert (status, out) == (2, '') and err == (
        'error: --png=%s is a folder; give a file name in a folder this user can write\n'
        % tmp_path)
    assert not [n for n in os.listdir(tmp_path) if n.endswith('.png') or n == 'nodir']


_SLUG = 'trivial-fp32-training-bs32-x1-parameter_server-cpu-synthetic-32px'
_HISTORY_IN = '''
import os, sys
sys.path.insert(0, {tests!r})
import checkout
checkout.load()
from tf_cnn_benchmarks.tools import results_cli
os.chdir({cwd!r})
for png in ([], ['--png=' + os.path.join({cwd!r}, 'h.png')]):
    status = results_cli.main(['tf_cnn_results', 'history', '--results_db=' + {db!r},
                               '--precision=fp32', '--host=node-a'] + png)
    sys.stdout.flush()
    print('STATUS %d' % status, flush=True)
'''


@pytest.mark.cli
def test_history_in_a_read_only_folder_prints_its_table_and_warns_without_the_plot(db,
                                                                                   tmp_path):
    """The default plot was not asked for: in a read-only current folder (a real read-only
    bind in a private mount namespace) the table prints, one warning naming --png, exit 0
    (before: exit 1 after the table). A --png given into that folder stays an error, exit 2."""
    why = rh.private_mounts()
    if why:
        pytest.skip(why)
    folder = str(tmp_path / 'ro')
    os.mkdir(folder)
    script = _HISTORY_IN.format(tests=os.path.join(REPO, 'tests'), cwd=folder, db=db)
    proc = subprocess.run(['unshare', '-rm', 'bash', '-c', 'mount --bind -o ro "$1" "$1" && '
                           '"$2" -c "$3"', 'sh', folder, sys.executable, script],
                          capture_output=True, text=True, timeout=120)
    out, err = proc.stdout, proc.stderr
    assert [x for x in out.splitlines() if x.startswith('STATUS')] == ['STATUS 0', 'STATUS 2'], (
        out + err)
    assert out.startswith('trivial fp32 training bs=32 x1 parameter_server cpu synthetic 32px')
    assert '| 13 | 2026-01-05 06:00:00 | node-a | slow-build | 700.00 |' in out
    assert 'plot written' not in out
    assert err.splitlines() == [
        'warning: no plot written: history-%s.png: cannot write in %s: Read-only file system; '
        '--png=PATH writes it where this user can write' % (_SLUG, folder),
        'error: --png=%s/h.png: cannot write in %s: Read-only file system; give a file name in '
        'a folder this user can write' % (folder, folder)]
    assert os.listdir(folder) == []


def test_history_in_a_removed_current_folder_warns_without_the_plot(db, capsys, tmp_path,
                                                                    monkeypatch):
    # A current folder that cannot take the default plot, for any user (root included).
    gone = tmp_path / 'gone'
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    status, out, err = _main(capsys, 'history', '--results_db=%s' % db, '--precision=fp32',
                             '--host=node-a')
    assert status == 0 and '| 13 | 2026-01-05 06:00:00 | node-a | slow-build |' in out
    assert 'plot written' not in out and err.startswith(
        'warning: no plot written: history-%s.png: the current folder is gone (' % _SLUG)
    assert err.endswith('); --png=PATH writes it where this user can write\n') and (
        err.count('\n') == 1)


@pytest.mark.parametrize('args, status, text', [
    # The subcommand's help, where --min_change is not: `list` takes no such option.
    (['list', '--min_change=3'], 2, 'error: unrecognized arguments: --min_change=3 (see '
                                    'tf_cnn_results list --help)'),
    # A misspelt filter: the closest options (as a run's flags get "Did you mean").
    (['list', '--modle=trivial'], 2, 'error: unrecognized arguments: --modle=trivial; did you '
                                     'mean --mode or --model? (see tf_cnn_results list --help)'),
    (['regressions', '--min_change=-1'], 2, 'error: argument --min_change: must be >= 0'),
    # A step of 100% or more (to 0 images/sec) cannot happen: such a gate could never fail.
    (['regressions', '--min_change=100'], 2, 'error: argument --min_change: must be >= 0 and '
                                             'below 100 (percent slower; a run cannot be 100% '
                                             'slower, so no step could count)'),
    (['html', 'site', '--min_change=150'], 2, 'error: argument --min_change: must be >= 0 and'),
    (['list', '--since=soon'], 2, 'error: --since=soon: give a date or time'),
    (['frobnicate'], 2, "error: argument COMMAND: invalid choice: 'frobnicate'"),
    ([], 2, 'error: the following arguments are required: COMMAND'),
])
def test_usage_errors_are_one_line_and_exit_2(db, capsys, args, status, text):
    got, out, err = _main(capsys, *(args + ['--results_db=%s' % db] if args else args))
    assert (got, out) == (status, '')
    assert err.startswith(text) and err.count('\n') == 1


def test_a_missing_or_foreign_database_is_one_error(capsys, tmp_path):
    missing = str(tmp_path / 'none.sqlite')
    status, _, err = _main(capsys, 'list', '--results_db=%s' % missing)
    assert status == 4 and err.startswith('error: no results database at %s (runs record '
                                          'there unless --noresults_db;' % missing)
    assert not os.path.exists(missing)
    text = tmp_path / 'notes.txt'
    text.write_text('mine\n' * 200)
    status, _, err = _main(capsys, 'regressions', '--results_db=%s' % text)
    assert status == 4 and err.startswith('error: %s is not an SQLite database' % text)
    assert text.read_text() == 'mine\n' * 200


def test_ingest_prints_what_it_added(capsys, tmp_path):
    from tf_cnn_benchmarks.lifecycle import results_log
    logs = str(tmp_path / 'logs')
    for r in rh.series([10.0, 11.0]):
        results_log.write_json(r, logs)
    (tmp_path / 'logs' / 'tf_cnn_benchmarks_x_1.json').write_text('{"not": "a result"}')
    capsys.readouterr()
    db = str(tmp_path / 'db.sqlite')
    status, out, err = _main(capsys, 'ingest', logs, '--results_db=%s' % db, '--label=copied')
    lines = out.splitlines()
    # Exit status 1 (it was 0): a file that is no result is named, the rest is ingested.
    assert status == 1 and lines[0] == ('ingested: 2 new runs, 0 already in the database, 0 '
                                        'failed sweep runs not recorded, 1 file or line '
                                        'skipped')
    assert err == ('error: ingest: 1 file or line could not be read as a result (named above); '
                   'the other runs were ingested: fix or remove it and ingest again (a run '
                   'already in the database is not added twice)\n')
    assert lines[1].startswith('skipped: %s/tf_cnn_benchmarks_x_1.json: not a tf_cnn_benchmarks '
                               'result' % logs)
    assert lines[2] == 'database: %s' % db
    with store.opened(db) as conn:
        assert {r['label'] for r in store.select_runs(conn)} == {'copied'}
    status, _, err = _main(capsys, 'ingest', str(tmp_path / 'gone'), '--results_db=%s' % db)
    assert status == 2 and err == 'error: ingest: %s does not exist\n' % (tmp_path / 'gone')


def test_ingest_of_a_folder_without_result_files_is_an_error(capsys, tmp_path):
    photos = tmp_path / 'photos'
    (photos / 'trip').mkdir(parents=True)
    (photos / 'trip' / 'beach.jpg').write_bytes(b'\xff\xd8\xff')
    (photos / 'notes.json').write_text('{}')
    db = tmp_path / 'db.sqlite'
    status, out, err = _main(capsys, 'ingest', str(photos), '--results_db=%s' % db)
    assert status == 2 and out == ''
    # Its JSON file of another name is named: a results JSON renamed by hand is read by path.
    assert err == ("error: ingest: %s holds no result file at any level (ingest reads a "
                   "sweep's results.jsonl and run JSONs tf_cnn_benchmarks_*.json); give the "
                   "sweep's --output_dir or the run's --benchmark_log_dir; it holds 1 JSON "
                   "file of other names, read only when given as a PATH of its own (a results "
                   "JSON renamed by hand): %s\n" % (photos, photos / 'notes.json'))
    assert not db.exists()
    # Files named one by one, none of them a result: an error too (it said 'skipped: ...' and
    # exited 0); bad data, exit 1 as a file skipped beside good ones (it was 2, a usage
    # error's, though the docs give 1 for a file that cannot be read as a result).
    status, out, err = _main(capsys, 'ingest', str(photos / 'trip' / 'beach.jpg'),
                             str(photos / 'notes.json'), '--results_db=%s' % db)
    assert status == 1 and out == ''
    assert err.startswith('error: ingest: none of the 2 files read holds a result (the '
                          'first: %s: ' % (photos / 'notes.json'))
    assert err.endswith("; ingest reads a sweep's results.jsonl and run JSONs "
                        "tf_cnn_benchmarks_*.json\n") and err.count('\n') == 1
    assert not db.exists()
    for name, text in (('corrupt.json', '{bad'), ('empty.json', '')):
        (tmp_path / name).write_text(text)
        status, out, err = _main(capsys, 'ingest', str(tmp_path / name), '--results_db=%s' % db)
        assert (status, out, err.count('\n')) == (1, '', 1), err
        assert err.startswith('error: ingest: none of the 1 file read holds a result')
        assert not db.exists()


@pytest.mark.cli
def test_a_sweep_records_every_run_and_its_folder_ingests_as_the_same_runs(tmp_path):
    db, out = str(tmp_path / 'db.sqlite'), str(tmp_path / 'sweep')
    proc = subprocess.run(
        [sys.executable, '-m', 'tools.sweep', '--output_dir=%s' % out, '--models=trivial',
         '--batch_sizes=4', '--repeats=2', '--noprogress', '--', '--device=cpu',
         '--num_batches=3', '--num_warmup_batches=0', '--image_size=16',
         '--results_db=%s' % db, '--label=nightly-1'],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    with store.opened(db) as conn:
        rows = store.select_runs(conn)
    assert [r['label'] for r in rows] == ['nightly-1', 'nightly-1']
    assert {r['config_key'] for r in rows} == {
        'model=trivial|mode=training|precision=fp32|batch_size=4|num_devices=1|num_workers=1|'
        'variable_update=parameter_server|device=cpu|data=synthetic|image_size=16'
        '|cpus_allowed=%d' % len(os.sched_getaffinity(0))}  # the runs' CPUs: a part of it
    again = subprocess.run([sys.executable, '-m', 'tools.results_cli', 'ingest', out,
                            '--results_db=%s' % db], cwd=REPO, capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith('ingested: 0 new runs, 2 already in the database, 0 '
                                   'failed sweep runs not recorded, 0 files or lines '
                                   'skipped (2 run JSONs read as their sweep\'s runs)')

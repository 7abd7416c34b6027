"""The results database's regression search on real runs: sweeps run twice into a fresh
results database, the second time slowed, then `tf_cnn_results regressions` and `html`, and
the page in a browser.

    python -m bench.bench_regression_demo
    python -m bench.bench_regression_demo --only=flat,threads --repeats=3 --num_batches=100

Series (SERIES: each a configuration of the trivial model of its own, so all live in one
database and on one page; each sweep's runs are labelled `<series>-sweep-<1|2>`):

* flat: `tf_cnn_sweep` at batch 16, run twice unchanged;
* threads: at batch 8, the second sweep with `--num_intra_threads=1` added to every run (a slowed
  configuration: one intra-op thread instead of the host's physical cores, -30% for this
  configuration on the idle 2-core development host, runtime/cpu_tuning.py);
* trace: CIFAR-10 at batch 8, the second sweep with `--print_step_breakdown
  --display_every=1` (a full trace of every step: tests/test_results_real_runs.py's slowing,
  and why).

None of these flags is part of a configuration (history/records.py CONFIG_FIELDS), so each
series stays one, and `regressions` names them among what changed. The sweeps run round by
round (every series' first sweep, then every series' second), so a drift of the host's speed
reaches every series alike. Each run is a fresh process, recorded by its own results hook
(--results_db). Then, from the checkout: `tf_cnn_results regressions`, the same with
--fail_on_regression (expected exit status 1), the flat series alone with
--fail_on_regression (expected 0), `tf_cnn_results html`, and headless Chromium's screenshot
of the page.

Writes results/<date>-cpu-tf<X.Y>-regression-demo.json and .md (bench/bench_report.py), and
the screenshot beside them as .png when it is under --max_png_bytes (else it stays in the
work folder, named in the .md). Per series: the images/sec of every run in order, the steps
down found (index in the series, first slower run, change, Mann-Whitney p and the level it
was held to, what changed), the index expected (the first run of the slowed sweep; none for
the flat series) and whether they agree. Exit status 1 when a series is not as expected.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from tf_cnn_benchmarks.history import regressions, result_files, store

from . import bench_report
from .preamble import REPO, RESULTS, ArgumentParser

WHAT = 'regression-demo'
CHROMIUM_NAMES = ('chromium', 'chromium-browser', 'google-chrome')
# name -> (batch size, timed steps of a run, flags of both sweeps' runs, flags added to the
# second sweep's runs). The CIFAR-10 model's step takes under a millisecond: more steps.
SERIES = {
    'flat': (16, 500, [], []),
    'threads': (8, 500, [], ['--num_intra_threads=1']),
    'trace': (8, 2000, ['--data_name=cifar10'], ['--print_step_breakdown', '--display_every=1']),
}
# The page's width as headless Chromium shows it (tests/test_results_page.py: the flags that
# work in a container as root), and its height: the head, and one plot with its table per
# configuration, in pixels.
PAGE_WIDTH, PAGE_HEAD, PAGE_PER_CONFIG = 1100, 420, 480


def chromium() -> str | None:
    """The headless browser's path, None when none is installed."""
    return next((shutil.which(n) for n in CHROMIUM_NAMES if shutil.which(n)), None)


def screenshot(browser: str, html_path: str, png_path: str, profile_dir: str,
               window: tuple[int, int], timeout_secs: float = 180.0) -> None:
    """Renders `html_path` from disk in headless Chromium into `png_path` (window: width,
    height in pixels).

    Raises:
      RuntimeError: Chromium failed or wrote no PNG (its stderr's end in the message).
    """
    proc = subprocess.run(
        [browser, '--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars',
         '--force-device-scale-factor=1', '--user-data-dir=%s' % profile_dir,
         '--window-size=%d,%d' % window, '--screenshot=%s' % png_path,
         'file://' + os.path.abspath(html_path)],
        capture_output=True, text=True, timeout=timeout_secs, stdin=subprocess.DEVNULL)
    if proc.returncode or not os.path.exists(png_path):
        raise RuntimeError('chromium failed (exit %d): %s' % (proc.returncode,
                                                              proc.stderr[-1000:]))


def small_png(path: str) -> bytes:
    """The PNG at `path` with its colours reduced to a 64-colour palette (the page's plots use
    a few flat colours; the screenshot shrinks about fivefold), as bytes."""
    from PIL import Image
    out = io.BytesIO()
    Image.open(path).convert('RGB').quantize(colors=64).save(out, format='PNG', optimize=True)
    return out.getvalue()


def _command(argv: list[str], timeout_secs: float) -> dict:
    """Runs a command of the checkout (`python -m tools.X ...` from REPO); returns
    {'command' (as a user types it), 'exit_status', 'stdout', 'wall_secs', 'load_before',
    'load_after'}."""
    console = {'tools.sweep': 'tf_cnn_sweep', 'tools.results_cli': 'tf_cnn_results'}
    load, start = os.getloadavg()[0], time.perf_counter()
    proc = subprocess.run([sys.executable, '-m'] + argv, cwd=REPO, capture_output=True,
                          text=True, timeout=timeout_secs)
    if proc.returncode not in (0, 1, 3):  # 3: the gate could not judge (docs/campaigns.md)
        print(proc.stdout[-2000:] + proc.stderr[-2000:], file=sys.stderr)
    return {'command': shlex.join([console[argv[0]]] + argv[1:]),
            'exit_status': proc.returncode, 'stdout': proc.stdout,
            'wall_secs': round(time.perf_counter() - start, 1),
            'load_before': round(load, 2), 'load_after': round(os.getloadavg()[0], 2)}


def plan_series(only: str, num_batches: int | None = None) -> list[dict]:
    """[{'name', 'batch_size', 'num_batches', 'flags', 'slowing' (flags, [] for flat)}] of
    SERIES, or of the comma-separated names in `only`; `num_batches` for every series when
    given.

    Raises:
      ValueError: a name SERIES does not have.
    """
    names = [n for n in only.split(',') if n] or list(SERIES)
    unknown = [n for n in names if n not in SERIES]
    if unknown:
        raise ValueError('--only=%s: no series %s (there are %s)' % (
            only, ', '.join(unknown), ', '.join(SERIES)))
    return [{'name': n, 'batch_size': SERIES[n][0], 'num_batches': num_batches or SERIES[n][1],
             'flags': list(SERIES[n][2]), 'slowing': list(SERIES[n][3])} for n in names]


def run_sweeps(series: list[dict], args, db: str, work: str) -> list[dict]:
    """Both rounds of every series' sweep; returns one _command dict per sweep, with its
    'series', 'round' (1, 2), the share of the run's CPUs other processes took during each
    run's timed part ('others_shares', in run order, metrics/host_load.py: 0.5 is half of
    them) and its median ('others_share', None when not measured)."""
    sweeps = []
    for round_ in (1, 2):
        for s in series:
            label = '%s-sweep-%d' % (s['name'], round_)
            out = os.path.join(work, 'sweeps', label)
            argv = ['tools.sweep', '--output_dir=%s' % out, '--models=trivial',
                    '--batch_sizes=%d' % s['batch_size'], '--repeats=%d' % args.repeats,
                    '--noprogress', '--', '--device=cpu', '--num_batches=%d' % s['num_batches'],
                    '--results_db=%s' % db, '--label=%s' % label] + s['flags']
            if round_ == 2:
                argv += s['slowing']
            print('round %d, %s: %s' % (round_, s['name'], shlex.join(argv)), flush=True)
            done = _command(argv, args.timeout_secs)
            done.pop('stdout')
            shares = []
            with open(os.path.join(out, 'results.jsonl'), encoding='utf-8') as f:
                for line in f:
                    load = json.loads(line).get('host_load') or {}
                    if load.get('others_fraction') is not None:
                        shares.append(load['others_fraction'])
            done.update(series=s['name'], round=round_, others_shares=[
                round(x, 3) for x in shares],
                others_share=round(statistics.median(shares), 3) if shares else None)
            sweeps.append(done)
    return sweeps


def findings(series: list[dict], rows: list[dict], repeats: int, min_change_pct: float
             ) -> list[dict]:
    """Per series: its runs' images/sec in order, the steps down found and whether they are
    what the sweeps made (flat: none; slowed: one, at the first run of the slowed sweep,
    naming the slowing's flags)."""
    found, _, _ = regressions.find_regressions(rows, min_change_pct)
    out = []
    for s in series:
        runs = [r for r in rows if r['label'].startswith(s['name'] + '-sweep-')]
        steps = []
        for reg in (r for r in found if r.config_key == runs[0]['config_key']):
            j = reg.step.judgement
            steps.append({'index': reg.step.index, 'first_slower_run': reg.first_slower['id'],
                          'label': reg.first_slower['label'], 'change_pct': round(
                              100 * (j.ratio - 1), 1), 'p': j.p_slower, 'level': reg.step.level,
                          'what_changed': reg.changes, 'still_slower': reg.still_slower})
        expected = repeats if s['slowing'] else None
        named = {c.split(' ')[0] for c in steps[0]['what_changed']} if steps else set()
        ok = (not steps if expected is None else len(steps) == 1 and steps[0]['index'] ==
              expected and named == {f.split('=')[0] for f in s['slowing']})
        rates = [r['images_per_sec'] for r in runs]
        out.append(dict(s, config_key=runs[0]['config_key'], run_ids=[r['id'] for r in runs],
                        images_per_sec=[round(v, 2) for v in rates],
                        median_sweep_1=round(statistics.median(rates[:repeats]), 2),
                        median_sweep_2=round(statistics.median(rates[repeats:]), 2),
                        steps_down=steps, expected_index=expected, as_expected=ok))
    return out


def markdown(data: dict, png_name: str | None) -> str:
    """The result's tables: the series, every run, the commands' output and the page."""
    rows = []
    for s in data['series']:
        step = s['steps_down'][0] if s['steps_down'] else None
        rows.append([s['name'], ' '.join(s['flags']) or '-', str(s['batch_size']),
                     ' '.join(s['slowing']) or '- (flat)', str(len(s['run_ids'])),
                     '%.1f' % s['median_sweep_1'], '%.1f' % s['median_sweep_2'],
                     '%+.1f%%' % (100 * (s['median_sweep_2'] / s['median_sweep_1'] - 1)),
                     '-' if step is None else 'run #%d (index %d)' % (
                         step['first_slower_run'], step['index']),
                     '-' if s['expected_index'] is None else 'index %d' % s['expected_index'],
                     '-' if step is None else '%.2g (level %.2g)' % (step['p'], step['level']),
                     '-' if step is None else '; '.join(step['what_changed']),
                     'yes' if s['as_expected'] else '**no**'])
    runs = []
    for s in data['series']:
        cells = [s['name']]
        for round_ in (1, 2):
            rates = s['images_per_sec'][(round_ - 1) * data['repeats']:][:data['repeats']]
            shares = next(w['others_shares'] for w in data['sweeps']
                          if w['series'] == s['name'] and w['round'] == round_)
            cells.append(', '.join('%.0f' % v + (' (%.0f%%)' % (100 * shares[i])
                                                   if i < len(shares) else '')
                                   for i, v in enumerate(rates)))
        runs.append(cells)
    sweeps = [[str(w['round']), w['series'], '`%s`' % w['command'], '%.0f' % w['wall_secs'],
               '-' if w['others_share'] is None else '%.0f%%' % (100 * w['others_share']),
               '%.1f-%.1f' % (w['load_before'], w['load_after'])] for w in data['sweeps']]
    text = [
        'Sweeps of the trivial model run twice into a fresh results database, the second time '
        'slowed (or not: flat), then `tf_cnn_results regressions` at --min_change=%g%%.' %
        data['min_change_pct'], '',
        bench_report.markdown_table(
            ['series', 'flags', 'batch', 'sweep 2 adds', 'runs', 'sweep 1 images/sec',
             'sweep 2 images/sec', 'change', 'step down found at', 'expected at',
             'Mann-Whitney p', 'what changed', 'as expected'], 'llrlrrrrllrll', rows), '',
        'Images/sec of each run (its total: the timed steps\' images over their wall time; '
        'one fresh process each), in the order they ran, with the share of the run\'s CPUs '
        'other processes took during its timed part (metrics/host_load.py; above 100%: more '
        'than the run\'s own cores, as with one intra-op thread):', '',
        bench_report.markdown_table(['series', 'sweep 1', 'sweep 2'], 'lll', runs), '',
        'The sweeps, in the order they ran (others: the median share of the run\'s CPUs other '
        'processes took during the timed part; load: the 1-minute load average before and '
        'after):', '',
        bench_report.markdown_table(['round', 'series', 'command', 'wall s', 'others', 'load'],
                                    'lllrrl', sweeps), '',
        '`%s` (exit status %d):' % (data['regressions']['command'],
                                    data['regressions']['exit_status']), '',
        '```', data['regressions']['stdout'].rstrip(), '```', '',
        'The gate: `%s` exit status %d (expected %d).' % (
            data['gate']['command'], data['gate']['exit_status'], data['gate']['expected'])]
    if data.get('flat_gate'):
        text[-1] += ' The flat series alone, `%s`: exit status %d (expected 0).' % (
            data['flat_gate']['command'], data['flat_gate']['exit_status'])
    text.append('')
    if png_name:
        text += ['The page (`%s`) as headless Chromium shows it:' % data['html']['command'], '',
                 '![the results page](%s)' % png_name, '']
    else:
        text += ['The page: %s' % (data['screenshot_note']), '']
    return '\n'.join(text)


def main(argv=None) -> int:
    parser = ArgumentParser(prog='bench_regression_demo', description=__doc__.split('\n')[0])
    parser.add_argument('--only', default='', help='comma-separated series (default: %s)'
                        % ','.join(SERIES))
    parser.add_argument('--repeats', type=int, default=5, help='runs per sweep (>= 3)')
    parser.add_argument('--num_batches', type=int, help='timed steps of every run (default: '
                        'each series\' own)')
    parser.add_argument('--min_change', type=float, default=regressions.DEFAULT_MIN_CHANGE_PCT,
                        help='tf_cnn_results regressions --min_change (percent)')
    parser.add_argument('--work_dir', help='database, sweeps and page (default: a new '
                        'temporary folder, kept)')
    parser.add_argument('--max_png_bytes', type=int, default=200_000)
    parser.add_argument('--timeout_secs', type=float, default=3600.0, help='per command')
    parser.add_argument('--out', default=RESULTS)
    args = parser.parse_args(argv)
    if args.repeats < 3:
        parser.error('--repeats=%d: the test needs 3 runs on each side of a step' % args.repeats)
    try:
        series = plan_series(args.only, args.num_batches)
    except ValueError as e:
        parser.error(str(e))
    work = args.work_dir or tempfile.mkdtemp(prefix='regression_demo_')
    os.makedirs(work, exist_ok=True)
    db = os.path.join(work, 'results.sqlite')
    if os.path.exists(db):
        parser.error('%s exists: the demo needs a fresh database (another --work_dir)' % db)
    data = {'repeats': args.repeats, 'min_change_pct': args.min_change, 'work_dir': work,
            'sweeps': run_sweeps(series, args, db, work)}
    data.update(_results_commands(db, work, args.min_change, series))
    with store.opened(db, create=False) as conn:
        data['series'] = findings(series, store.select_runs(conn), args.repeats, args.min_change)
    png, data['screenshot_note'] = _page_png(work, len(series), args.max_png_bytes)
    prov = bench_report.provenance(argv)
    stem = result_files.result_stem(WHAT, prov)
    if png:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, stem + '.png'), 'wb') as f:
            f.write(png)
    bench_report.write_results(args.out, WHAT, data, markdown(data, png and stem + '.png'),
                               argv, prov=prov)
    expected = all(s['as_expected'] for s in data['series']) and all(
        data[g]['exit_status'] == data[g]['expected'] for g in ('gate', 'flat_gate')
        if data.get(g))
    print('as expected: %s' % ('yes' if expected else 'NO'))
    return 0 if expected else 1


def _results_commands(db: str, work: str, min_change: float, series: list[dict]) -> dict:
    """`tf_cnn_results` over the database: {'regressions' (with its output), 'gate' (every
    series, --fail_on_regression), 'flat_gate' (the flat series alone; None without it),
    'html'}, each a _command dict; the gates' with the exit status 'expected'."""
    results = ['tools.results_cli', '--results_db=%s' % db]
    change = '--min_change=%g' % min_change
    gate = ['regressions', change, '--fail_on_regression']
    out = {'regressions': _command(results + ['regressions', change], 600),
           'gate': dict(_command(results + gate, 600),
                        expected=1 if any(s['slowing'] for s in series) else 0),
           'flat_gate': None,
           'html': _command(results + ['html', os.path.join(work, 'site'), change], 600)}
    if any(s['name'] == 'flat' for s in series):
        out['flat_gate'] = dict(_command(results + gate + ['--label=flat-*'], 600), expected=0)
    for name in ('gate', 'flat_gate', 'html'):
        if out[name]:
            out[name].pop('stdout')
    return out


def _page_png(work: str, configurations: int, max_bytes: int) -> tuple[bytes | None, str]:
    """(the page's screenshot for results/ or None, a note saying where it is)."""
    browser = chromium()
    if browser is None:
        return None, 'not rendered: no headless Chromium here (Debian: apt-get install chromium)'
    path = os.path.join(work, 'page.png')
    window = (PAGE_WIDTH, PAGE_HEAD + PAGE_PER_CONFIG * configurations)
    screenshot(browser, os.path.join(work, 'site', 'index.html'), path,
               os.path.join(work, 'chromium-profile'), window)
    png = small_png(path)
    if len(png) > max_bytes:
        return None, 'rendered to %s (%d bytes: too large to commit)' % (path, len(png))
    return png, 'rendered to %s' % path


if __name__ == '__main__':
    sys.exit(main())

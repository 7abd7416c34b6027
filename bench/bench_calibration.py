"""Issue 39's targets: a fresh-cache first run against a warm one, and utilisation across
calibrations made with and without a CPU burner beside them.

1. Start-up: the command (default the README's quick start, `--model=resnet50 --batch_size=16
   --num_batches=10`) run with an empty XDG_CACHE_HOME, then again with the cache it left
   (warm), --reps times in turn (so the host's load hits both alike). Per run: seconds to the
   first line on stdout, wall seconds, the load average before and after. Targets: first
   line within 5 s; fresh wall time within 1.3x of the warm one (the median ratio).
2. Utilisation: --utilisation_runs runs of the command, each after a `--calibrate` of the same
   flags into one record; every second calibration runs beside --burners busy loops (`python
   -c 'while 1: pass'`, for the calibration's whole duration). Per run: the utilisation line's
   percentage and peak, and what the calibration stored. Target: (max - min) / median of the
   percentages <= 10%.

Both parts use their own cache and data folders (nothing of the user's is read or written),
and --noresults_db. `--calibrate_flags` adds flags to the calibrations only (the default
`--graph_choices=off` calibrates the peak and kernels alone, not the minute-long graph-choice
probe; pass '' to calibrate everything).
"""

from __future__ import annotations

import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from argparse import ArgumentParser

from bench import bench_report

REPO = bench_report.REPO
COMMAND = '--model=resnet50 --batch_size=16 --num_batches=10'
UTIL = re.compile(r'^utilisation: ([0-9.]+)% of ([0-9.]+ [A-Z]+FLOP/s) \((.*)\)$')


def timed_run(flags: list[str], env: dict, timeout: float) -> dict:
    """Runs the command; {'first_line_secs', 'wall_secs', 'exit_status', 'load_before',
    'load_after', 'utilisation' (percent or None), 'peak', 'peak_source', 'stdout_tail'}."""
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, os.path.join(REPO, 'tf_cnn_benchmarks.py')]
                            + flags, cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    first, lines = None, []
    for line in proc.stdout:
        if first is None:
            first = time.perf_counter() - start
        lines.append(line.rstrip('\n'))
        if time.perf_counter() - start > timeout:
            proc.kill()
            break
    status = proc.wait()
    wall = time.perf_counter() - start
    out = {'first_line_secs': first, 'wall_secs': wall, 'exit_status': status,
           'load_before': load_before, 'load_after': os.getloadavg()[0], 'utilisation': None,
           'peak': None, 'peak_source': None, 'stdout_tail': lines[-4:]}
    for line in lines:
        m = UTIL.match(line)
        if m:
            out.update(utilisation=float(m.group(1)), peak=m.group(2), peak_source=m.group(3))
        elif line.startswith('utilisation: not known'):
            out['peak_source'] = line
        if line.startswith('calibration: '):
            out.setdefault('calibration', []).append(line)
    return out


def environment(cache: str, data: str) -> dict:
    env = dict(os.environ, XDG_CACHE_HOME=cache, XDG_DATA_HOME=data)
    env.pop('TF_CNN_CALIBRATION', None)
    env.pop('TF_CNN_RESULTS_DB', None)  # the runs' database is under `data`
    return env


def start_up(flags: list[str], reps: int, timeout: float) -> list[dict]:
    """Part 1: `reps` pairs of (fresh, warm) runs."""
    rows = []
    for rep in range(reps):
        with tempfile.TemporaryDirectory(prefix='bench_calib_') as tmp:
            env = environment(os.path.join(tmp, 'cache'), os.path.join(tmp, 'data'))
            for kind in ('fresh', 'warm'):
                print('start-up %d/%d: %s run' % (rep + 1, reps, kind), flush=True)
                rows.append(dict(timed_run(flags, env, timeout), kind=kind, rep=rep + 1))
    return rows


def utilisation_runs(flags: list[str], calibrate: list[str], runs: int, burners: int,
                     timeout: float) -> list[dict]:
    """Part 2: `runs` x (a calibration, every second one beside `burners` busy loops; then
    the command), one record."""
    rows = []
    with tempfile.TemporaryDirectory(prefix='bench_calib_') as tmp:
        env = environment(os.path.join(tmp, 'cache'), os.path.join(tmp, 'data'))
        for i in range(runs):
            burn = i % 2 == 1
            print('utilisation %d/%d: calibration %s a burner' % (
                i + 1, runs, 'beside' if burn else 'without'), flush=True)
            loops = [subprocess.Popen([sys.executable, '-c', 'while 1: pass'])
                     for _ in range(burners if burn else 0)]
            try:
                cal = timed_run(['--calibrate'] + flags + calibrate, env, timeout)
            finally:
                for loop in loops:
                    loop.kill()
                    loop.wait()
            run = timed_run(flags, env, timeout)
            rows.append({'run': i + 1, 'burner': burn, 'calibration_exit': cal['exit_status'],
                         'calibration': cal.get('calibration', []), **{
                             k: run[k] for k in ('utilisation', 'peak', 'peak_source',
                                                 'wall_secs', 'load_before', 'load_after',
                                                 'exit_status')}})
    return rows


def summary(start_rows: list[dict], util_rows: list[dict]) -> dict:
    fresh = [r for r in start_rows if r['kind'] == 'fresh']
    warm = [r for r in start_rows if r['kind'] == 'warm']
    ratios = [f['wall_secs'] / w['wall_secs'] for f, w in zip(fresh, warm)]
    firsts = [r['first_line_secs'] for r in start_rows if r['first_line_secs'] is not None]
    pct = [r['utilisation'] for r in util_rows if r['utilisation'] is not None]
    spread = (max(pct) - min(pct)) / statistics.median(pct) if len(pct) >= 2 else None
    return {'fresh_over_warm_wall': statistics.median(ratios) if ratios else None,
            'first_line_secs_max': max(firsts) if firsts else None,
            'utilisation_spread': spread, 'utilisation_known': len(pct),
            'utilisation_runs': len(util_rows),
            'targets': {'first_line_within_5s': bool(firsts) and max(firsts) <= 5.0,
                        'fresh_within_1.3x_warm': bool(ratios) and
                        statistics.median(ratios) <= 1.3,
                        'utilisation_spread_within_10pct': spread is not None and
                        spread <= 0.10}}


def markdown(start_rows, util_rows, s) -> str:
    fmt = lambda v, p='%.1f': '-' if v is None else p % v  # noqa: E731
    table1 = bench_report.markdown_table(
        ['rep', 'cache', 'first line (s)', 'wall (s)', 'load avg before/after', 'exit'],
        'llrrll', [[str(r['rep']), r['kind'], fmt(r['first_line_secs']), fmt(r['wall_secs']),
                    '%.1f / %.1f' % (r['load_before'], r['load_after']),
                    str(r['exit_status'])] for r in start_rows])
    table2 = bench_report.markdown_table(
        ['run', 'calibration', 'utilisation', 'peak', 'load avg before/after', 'what the '
         'calibration stored'], 'llrrll',
        [[str(r['run']), 'beside a burner' if r['burner'] else 'no burner',
          fmt(r['utilisation'], '%.1f%%'), r['peak'] or '-',
          '%.1f / %.1f' % (r['load_before'], r['load_after']),
          '; '.join(x.split(': ', 1)[1][:90] for x in r['calibration']
                    if 'stored' in x) or '-'] for r in util_rows])
    return '\n'.join([
        '## Start-up: fresh cache against warm', '', table1, '',
        'Median fresh/warm wall time: %s; slowest first line: %s s.' % (
            fmt(s['fresh_over_warm_wall'], '%.2fx'), fmt(s['first_line_secs_max'])), '',
        '## Utilisation across calibrations with and without a burner', '', table2, '',
        'Spread (max - min) / median of the known utilisations: %s (%d of %d runs known).' % (
            fmt(None if s['utilisation_spread'] is None else 100 * s['utilisation_spread'],
                '%.1f%%'), s['utilisation_known'], s['utilisation_runs']), '',
        'Targets: %s' % ', '.join('%s %s' % (k, 'met' if v else 'NOT met')
                                  for k, v in s['targets'].items())])


def main(argv=None) -> int:
    parser = ArgumentParser(prog='bench_calibration', description=__doc__.split('\n')[0])
    parser.add_argument('--command', default=COMMAND, help='the run\'s flags')
    parser.add_argument('--calibrate_flags', default='--graph_choices=off',
                        help='extra flags of the calibrations only')
    parser.add_argument('--reps', type=int, default=2, help='(fresh, warm) pairs')
    parser.add_argument('--utilisation_runs', type=int, default=5)
    parser.add_argument('--burners', type=int, default=2)
    parser.add_argument('--timeout_secs', type=float, default=1800.0)
    parser.add_argument('--out', default=bench_report.RESULTS)
    args = parser.parse_args(argv)
    flags = shlex.split(args.command) + ['--noresults_db']
    subprocess.run([sys.executable, '-c', 'import tensorflow'], cwd=REPO, capture_output=True)
    start_rows = start_up(flags, args.reps, args.timeout_secs)
    util_rows = utilisation_runs(flags, shlex.split(args.calibrate_flags),
                                 args.utilisation_runs, args.burners, args.timeout_secs)
    s = summary(start_rows, util_rows)
    data = {'command': args.command, 'start_up': start_rows, 'utilisation': util_rows,
            'summary': s}
    return bench_report.finish(args.out, 'calibration', data, markdown(start_rows, util_rows, s))


if __name__ == '__main__':
    sys.exit(main())

"""The README's quick CPU runs, timed as a user runs them: wall time of the whole command.

    python -m bench.bench_quick_runs [--only=N,...]

Runs each command of QUICK_RUNS (the README's "Quick runs on a CPU" table lists the same
commands; tests/test_docs.py checks they agree) as a fresh process from the checkout, the
console script replaced by its module (`tf_cnn_benchmarks` -> `python tf_cnn_benchmarks.py`,
`tf_cnn_cluster` -> `python -m tools.launch_cluster`, `tf_cnn_sweep` -> `python -m
tools.sweep`), with `--noresults_db` added so the runs leave the results database alone.
Records per command its wall time in seconds (TensorFlow's start-up included), the last
`total images/sec` (a cluster: `cluster images/sec`; a sweep: none), its exit status
and its output (the example output of docs/output.md is the resnet50 run's). Before the first
command TensorFlow is imported once in a process of its own (untimed), so that every time is a
warm-cache time, as of any command after the first since boot; the file says so
(`page_cache: warm`), and the README's table with it.

Writes results/*-quick-runs.json and .md (bench/bench_report.py).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

from . import bench_report
from .preamble import REPO, RESULTS, ArgumentParser

# The README's quick runs, as a user types them. The sweep's folder is made in a temporary
# folder when it runs here (its command keeps the README's relative path).
QUICK_RUNS = (
    'tf_cnn_benchmarks --model=trivial',
    'tf_cnn_benchmarks --model=resnet50 --batch_size=16 --num_batches=10',
    'tf_cnn_cluster --num_workers=2 -- --model=trivial --batch_size=8 --num_batches=20',
    'tf_cnn_sweep --output_dir=runs/quick --models=trivial --batch_sizes=8 --repeats=1 '
    '-- --device=cpu --num_batches=10',
)

OUTPUT_LINES = 80  # of a command's standard output, kept in the result file

_MODULES = {'tf_cnn_benchmarks': ['tf_cnn_benchmarks.py'],
            'tf_cnn_cluster': ['-m', 'tools.launch_cluster'],
            'tf_cnn_sweep': ['-m', 'tools.sweep']}
# `total images/sec: X`, or a cluster's `cluster images/sec: X` (`cluster total images/sec`
# in older versions).
_RATE = re.compile(r'^(?:\[\w+\] )?(?:(cluster )(?:total )?|total )images/sec: ([0-9.]+)', re.M)


def checkout_argv(command: str, work_dir: str) -> list[str]:
    """The command as run from the checkout: its module for the console script, the sweep's
    --output_dir inside work_dir, and --noresults_db (after `--` when the command has one)."""
    words = shlex.split(command)
    argv = [sys.executable] + _MODULES[words[0]] + words[1:]
    argv = [('--output_dir=' + os.path.join(work_dir, a.split('=', 1)[1]))
            if a.startswith('--output_dir=') else a for a in argv]
    if '--' in argv:
        argv.insert(argv.index('--') + 1, '--noresults_db')
    else:
        argv.append('--noresults_db')
    return argv


def images_per_sec(stdout: str) -> float | None:
    """The cluster total when there is one, else the last `total images/sec`; None."""
    found = _RATE.findall(stdout)
    cluster = [float(rate) for is_cluster, rate in found if is_cluster]
    if cluster:
        return cluster[-1]
    return float(found[-1][1]) if found else None


def time_command(command: str, timeout_secs: float) -> dict:
    """Runs one quick command; returns {'command', 'wall_secs', 'images_per_sec',
    'exit_status', 'error' (the first `error:` line, None), 'load_before', 'busy' (the run's
    own verdict: True where it warned that other processes made its images/sec not
    representative, metrics/host_load.py), 'output' (its standard output, at most
    OUTPUT_LINES last lines: docs/output.md shows the resnet50 run's)}."""
    with tempfile.TemporaryDirectory(prefix='quick_runs_') as work:
        load = os.getloadavg()[0]
        start = time.perf_counter()
        proc = subprocess.run(checkout_argv(command, work), cwd=REPO, capture_output=True,
                              text=True, timeout=timeout_secs)
        wall = time.perf_counter() - start
    errors = [line for line in (proc.stdout + proc.stderr).splitlines() if 'error:' in line]
    if proc.returncode:
        print(proc.stdout[-2000:] + proc.stderr[-2000:], file=sys.stderr)
    return {'command': command, 'wall_secs': round(wall, 1),
            'images_per_sec': images_per_sec(proc.stdout), 'exit_status': proc.returncode,
            'error': errors[0] if errors else None, 'load_before': round(load, 2),
            'busy': 'is not representative' in proc.stderr,
            'output': '\n'.join(proc.stdout.splitlines()[-OUTPUT_LINES:])}


def markdown(rows: list[dict]) -> str:
    return bench_report.markdown_table(
        ['command', 'wall time (s)', 'images/sec', 'exit', 'load before', 'the run said'],
        'lrrrrl',
        [['`%s`' % r['command'], '%.1f' % r['wall_secs'],
          '-' if r['images_per_sec'] is None else '%.2f' % r['images_per_sec'],
          str(r['exit_status']), '%.2f' % r['load_before'],
          {True: 'busy host', False: 'quiet host'}.get(r.get('busy'), '?')] for r in rows])


def main(argv=None) -> int:
    parser = ArgumentParser(prog='bench_quick_runs', description=__doc__.split('\n')[0])
    parser.add_argument('--only', default='', help='1-based indices of QUICK_RUNS, e.g. 1,3')
    parser.add_argument('--timeout_secs', type=float, default=900.0, help='per command')
    parser.add_argument('--out', default=RESULTS)
    args = parser.parse_args(argv)
    try:
        picked = [int(i) for i in args.only.split(',')] if args.only else []
    except ValueError:
        parser.error('--only=%s: takes 1-based indices such as 1,3' % args.only)
    if any(not 1 <= i <= len(QUICK_RUNS) for i in picked):
        parser.error('--only=%s: indices run from 1 to %d' % (args.only, len(QUICK_RUNS)))
    commands = [QUICK_RUNS[i - 1] for i in picked] if picked else list(QUICK_RUNS)
    # TensorFlow's files into the page cache first: every command then times a warm start.
    subprocess.run([sys.executable, '-c', 'import tensorflow'], cwd=REPO, capture_output=True,
                   timeout=args.timeout_secs)
    rows = []
    for command in commands:
        print('running: %s' % command, flush=True)
        rows.append(time_command(command, args.timeout_secs))
    return bench_report.finish(args.out, 'quick_runs', {'rows': rows, 'page_cache': 'warm'},
                               markdown(rows) + '\n\nWarm-cache times: TensorFlow was imported '
                               'once (untimed) before the first command.',
                               status=1 if any(r['exit_status'] for r in rows) else 0)


if __name__ == '__main__':
    sys.exit(main())

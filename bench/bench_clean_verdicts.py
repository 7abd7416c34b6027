"""Verdicts from clean runs (issue 39.4) on real runs: two series of the trivial model recorded
into a fresh results database, some runs beside a CPU burner, then `tf_cnn_results
regressions` with and without --include_unclean_runs.

    python -m bench.bench_clean_verdicts
    python -m bench.bench_clean_verdicts --num_batches=300 --out_dir=/tmp/x

Series (each a configuration of its own, batch sizes 8 and 16, so both live in one database):

* step (batch 8): 6 runs at full speed (both cores), the 3rd and 5th beside a CPU burner
  (`python -c 'while True: pass'`, started before the run and killed after it), then 6 runs
  pinned to CPU 0 (the process's affinity set before it starts, as `taskset -c 0` does). The
  finder should find the step at the first pinned run (index 6) once the busy runs are left
  out; with them kept, they can hide it (the issue's finding).
* flat (batch 16): 12 runs at full speed, the last three beside the burner. Not flagged once
  they are left out; with them kept, the last three can look like a regression.

One process makes the full-speed runs of both series (interleaved, step first), a second one,
pinned, the pinned runs: a fresh process spends seconds importing TensorFlow, so 2 processes
make the 24 runs, each process's first WARMUP_RUNS runs unrecorded (a process's first runs
are slower). Every run records itself (--results_db) with its host load
(metrics/host_load.py) and timed steps; the rule of a clean run is metrics/clean_runs.py's.

Writes results/<date>-cpu-tf<X.Y>-clean-verdicts.json and .md: per series, each run's
images/sec, the share of its cores other processes used, its mark, whether the burner ran;
the steps found with and without --include_unclean_runs, the expected index and whether the
default agrees; and the runs busy without the burner (the host's own load: other people's
jobs). Exit status 1 when a series is not as expected.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile

from tf_cnn_benchmarks.history import records, store
from tf_cnn_benchmarks.tools import results_cli

from . import bench_report
from .preamble import REPO, RESULTS, ArgumentParser

WHAT = 'clean-verdicts'
STEP_BATCH, FLAT_BATCH = 8, 16
STEP_BUSY, FLAT_BUSY = (2, 4), (9, 10, 11)  # positions in each series run beside the burner
PER_SERIES, FULL_SPEED = 12, 6  # runs of a series; step: full-speed runs before the pinned
WARMUP_RUNS = 2
BURNER = 'while True: pass'

# The child: runs (series, index, burner) in order, each recording itself into the database.
_CHILD = '''
import contextlib, io, json, subprocess, sys
import tf_cnn_benchmarks as tfcnn
db, common, plan = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
warmup, burner = int(sys.argv[4]), sys.argv[5]
def run(**flags):
    with contextlib.redirect_stdout(io.StringIO()):
        tfcnn.run(tfcnn.make_params(**dict(common, **flags)), print_header=False)
for i in range(warmup):
    run(batch_size=plan[0][1], results_db=False)
for name, batch, busy in plan:
    proc = subprocess.Popen([sys.executable, '-c', burner]) if busy else None
    try:
        run(batch_size=batch, results_db=db, label=name)
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()
    print('%s batch %d%s' % (name, batch, ' (burner)' if busy else ''), flush=True)
'''


def plans() -> tuple[list, list]:
    """(the full-speed process's runs, the pinned process's runs): [label, batch, burner]."""
    full = []
    for i in range(PER_SERIES):
        if i < FULL_SPEED:
            full.append(['step-full', STEP_BATCH, i in STEP_BUSY])
        full.append(['flat', FLAT_BATCH, i in FLAT_BUSY])
    pinned = [['step-pinned', STEP_BATCH, False] for _ in range(PER_SERIES - FULL_SPEED)]
    return full, pinned


def run_child(db: str, common: dict, plan: list, cpus, timeout_secs: float) -> None:
    """One process making `plan`'s runs, its affinity `cpus` (None: unchanged).

    Raises:
      RuntimeError: the process failed (its stderr's end in the message).
    """
    def pin():
        if cpus is not None:
            os.sched_setaffinity(0, cpus)

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3', TF_CNN_BUSY_HOST_WARNING='0')
    proc = subprocess.run(
        [sys.executable, '-c', _CHILD, db, json.dumps(common), json.dumps(plan),
         str(WARMUP_RUNS), BURNER], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=timeout_secs, preexec_fn=pin, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise RuntimeError('the runs failed (exit status %d): %s' % (proc.returncode,
                                                                      proc.stderr[-2000:]))


def regressions_text(db: str, batch: int, include: bool) -> tuple[int, str]:
    """(exit status, stdout) of `tf_cnn_results regressions --fail_on_regression` on one
    series (in this process)."""
    argv = ['tf_cnn_results', 'regressions', '--results_db=' + db, '--batch_size=%d' % batch,
            '--fail_on_regression'] + (['--include_unclean_runs'] if include else [])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = results_cli.main(argv)
    return status, out.getvalue()


def _first_slower(text: str, rows: list[dict]) -> list[int]:
    """Positions in the series of each 'first slower run: #ID' of the command's text."""
    ids = [r['id'] for r in rows]
    out = []
    for line in text.splitlines():
        if line.startswith('  first slower run: #'):
            out.append(ids.index(int(line.split('#')[1].split()[0])))
    return out


def series_findings(db: str, rows: list[dict], name: str, batch: int, busy: tuple,
                    expected: int | None) -> dict:
    """One series' runs, what the finder said with and without the unclean runs, and
    whether the default verdict is the expected one."""
    mine = [r for r in rows if r['batch_size'] == batch]
    runs = []
    for i, r in enumerate(mine):
        state = records.run_state(r)
        runs.append({'index': i, 'id': r['id'], 'label': r['label'],
                     'images_per_sec': round(r['images_per_sec'], 1),
                     'others_fraction': state.others_fraction, 'burner': i in busy,
                     'mark': state.badge or 'clean'})
    verdicts = {}
    for include in (False, True):
        status, text = regressions_text(db, batch, include)
        verdicts['included' if include else 'default'] = {
            'exit_status': status, 'steps_at': _first_slower(text, mine), 'output': text}
    found, status = verdicts['default']['steps_at'], verdicts['default']['exit_status']
    # Judged, and as expected: the step at `expected` (the gate fails), or none (it passes).
    ok = (found == [expected] and status == 1) if expected is not None else (
        found == [] and status == 0)
    return {'series': name, 'batch_size': batch, 'runs': runs, 'expected_step_at': expected,
            'verdicts': verdicts, 'as_expected': ok,
            'busy_without_burner': sum(1 for x in runs if not x['burner']
                                       and x['mark'] != 'clean')}


def host_quiet(secs: float = 3.0) -> dict:
    """What other processes used of this host's CPUs over `secs` before the runs
    (metrics/host_load.py over both CPUs: this process sleeps)."""
    import time

    from tf_cnn_benchmarks.metrics import host_load
    reader = host_load.ProcReader()
    start = reader.sample()
    time.sleep(secs)
    load = host_load.measure(start, reader.sample(), len(reader.cpus), len(reader.cpus),
                             reader.ticks_per_sec)
    return {'line': host_load.format_line(load), 'others_fraction': load['others_fraction']}


def markdown(data: dict) -> str:
    lines = ['Before the runs: %s (over 3 s, all CPUs).' % data['host_before']['line'], '',
             'Runs of the trivial model (synthetic ImageNet, %d timed steps each), recorded '
             'into a fresh results database; burner: `python -c \'%s\'` beside the run; '
             'pinned: the process\'s affinity set to CPU 0. others: the share of the run\'s '
             'cores other processes used over its timed part (metrics/host_load.py); the '
             'verdicts leave out runs above 25%% (metrics/clean_runs.py).'
             % (data['num_batches'], BURNER), '']
    for s in data['series']:
        lines += ['## %s (batch %d)' % (s['series'], s['batch_size']), '',
                  bench_report.markdown_table(
                      ['run', 'label', 'images/sec', 'others', 'burner', 'mark'], 'rlrrll',
                      [[str(x['index']), x['label'], '%.1f' % x['images_per_sec'],
                        '-' if x['others_fraction'] is None
                        else '%.0f%%' % (100 * x['others_fraction']),
                        'yes' if x['burner'] else '', x['mark']] for x in s['runs']]), '']
        for key, title in (('default', 'busy runs left out (default)'),
                           ('included', '--include_unclean_runs')):
            v = s['verdicts'][key]
            lines.append('- %s: steps down at %s, exit status %d' % (
                title, ', '.join(map(str, v['steps_at'])) or 'none', v['exit_status']))
        lines += ['- expected (default): %s; as expected: %s; runs busy without the burner '
                  '(the host\'s own load): %d' % (
                      'none' if s['expected_step_at'] is None
                      else 'index %d' % s['expected_step_at'],
                      'yes' if s['as_expected'] else 'NO', s['busy_without_burner']), '',
                  '```', s['verdicts']['default']['output'].rstrip(), '```', '']
    quiet_runs = sum(len([x for x in s['runs'] if not x['burner']]) for s in data['series'])
    if quiet_runs and sum(s['busy_without_burner'] for s in data['series']) == quiet_runs:
        lines += ['Every run without the burner was busy too (the host\'s own load, other '
                  'people\'s jobs): nothing was left to judge, and the target cannot be shown '
                  'on this host at this load; rerun when the host is quiet.', '']
    return '\n'.join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog='bench_clean_verdicts', description=__doc__.split('\n')[0])
    parser.add_argument('--num_batches', type=int, default=100,
                        help='timed steps of each run (default %(default)d)')
    parser.add_argument('--timeout_secs', type=float, default=900.0,
                        help='per process (default %(default)g)')
    parser.add_argument('--out_dir', default=RESULTS, help='where the results files go')
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    quiet = host_quiet()
    common = {'model': 'trivial', 'device': 'cpu', 'num_batches': args.num_batches,
              'graph_choices': 'off'}
    full, pinned = plans()
    cpu0 = {min(os.sched_getaffinity(0))}
    with tempfile.TemporaryDirectory(prefix='clean-verdicts-') as work:
        db = os.path.join(work, 'results.sqlite')
        run_child(db, common, full, None, args.timeout_secs)
        run_child(db, common, pinned, cpu0, args.timeout_secs)
        with store.opened(db, read_only=True) as conn:
            rows = store.select_runs(conn)
        series = [series_findings(db, rows, 'step', STEP_BATCH, STEP_BUSY, FULL_SPEED),
                  series_findings(db, rows, 'flat', FLAT_BATCH, FLAT_BUSY, None)]
    data = {'num_batches': args.num_batches, 'series': series, 'host_before': quiet,
            'machine': bench_report.machine_meta(load_before)}
    status = 0 if all(s['as_expected'] for s in series) else 1
    return bench_report.finish(args.out_dir, WHAT, data, markdown(data), status)


if __name__ == '__main__':
    sys.exit(main())

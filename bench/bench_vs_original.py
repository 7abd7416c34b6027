"""Side by side with the original tf_cnn_benchmarks: images/sec of both on the same runtime.

    python -m bench.bench_vs_original --original_dir=/tmp/orig/scripts/tf_cnn_benchmarks \
        [--original_python=/tmp/origenv/bin/python] [--repeats=2] [--configs=NAME,...] \
        [--data_dir=../shared/data/imagenet_tfrecords] [--tag=T]

Each configuration runs both programs as fresh processes with the same flags
(`--device=cpu --data_format=NHWC --model=M --batch_size=B --num_batches=N
--num_warmup_batches=W`, plus `--data_dir=D --nodistortions` for the real-data rows) and the
same environment (TF_ENABLE_ONEDNN_OPTS=1, TF_CPU_ALLOCATOR_USE_BFC=true, and
TF_USE_LEGACY_KERAS=1, which the original needs with its tf-keras), `--repeats` times,
alternating ours and the original and swapping which goes first in every repeat, so a drift
of a shared machine hits both alike. The figure of a process is its `total images/sec` line.

Per configuration the table gives the best run of each program (the least disturbed by other
processes), ratio = best ours / best original, median ratio = median ours / median original
(less moved by one lucky run), and the spread of each program's runs,
(max - min) / max in percent. The original's copy stays outside the project; its interpreter
(`--original_python`) must have tf-keras installed.

Also measured (extra rows, ours only, not against the original): resnet50 with --distortions on
real data as a fraction of resnet50 on synthetic data.

Writes results/*-vs_original[_T].json and .md, with the CPU model and the load averages
before and after.
"""

from __future__ import annotations

import os
import platform
import re
import statistics
import subprocess
import sys
import time

from . import bench_report  # noqa: E402
from .preamble import REPO, RESULTS, ArgumentParser  # noqa: E402

ENV = {'TF_ENABLE_ONEDNN_OPTS': '1', 'TF_CPU_ALLOCATOR_USE_BFC': 'true',
       'TF_USE_LEGACY_KERAS': '1', 'TF_CPP_MIN_LOG_LEVEL': '2'}
TOTAL = re.compile(r'total images/sec:\s*([0-9.]+)')

# name -> (model, batch size, real data?, timed steps)
CONFIGS = {}
for _model, _steps in (('trivial', 200), ('alexnet', 20), ('resnet50', 8), ('inception3', 6),
                       ('vgg16', 4), ('mobilenet', 20)):
    for _batch in (16, 32):
        CONFIGS['%s_b%d_synthetic' % (_model, _batch)] = (_model, _batch, False, _steps)
CONFIGS['trivial_b32_real'] = ('trivial', 32, True, 300)  # 60 steps took ~1 s: too noisy
CONFIGS['resnet50_b16_real'] = ('resnet50', 16, True, 8)


FAILURES: dict[str, str] = {}  # program -> last failure line, for the table
#: program -> what its runs of one configuration said beside the figure: 'busy host' (ours
#: warned that other processes made its images/sec not representative; the original warns of
#: nothing), 'loss nan' (a step line's loss was nan or inf: the figure times a diverged model).
NOTES: dict[str, set] = {}
_NON_FINITE_LOSS = re.compile(r'^\d+\s+images/sec:.*\s(-?nan|-?inf)\s*$', re.M | re.I)


def run_notes(stdout: str, stderr: str) -> set:
    """What one run's output says beside its figure (see NOTES)."""
    notes = set()
    if 'is not representative' in stderr:
        notes.add('busy host')
    if _NON_FINITE_LOSS.search(stdout):
        notes.add('loss nan')
    return notes


def run_once(python: str, cwd: str, flags: list[str], timeout: float,
             who: str = '') -> float | None:
    """Runs one fresh process; returns its `total images/sec`, or None (printing why and
    keeping the last error line in FAILURES[who])."""
    env = dict(os.environ, **ENV)
    try:
        done = subprocess.run([python, 'tf_cnn_benchmarks.py'] + flags, cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print('  timed out after %.0f s: %s' % (timeout, ' '.join(flags)), flush=True)
        FAILURES[who] = 'timed out after %.0f s' % timeout
        return None
    NOTES.setdefault(who, set()).update(run_notes(done.stdout, done.stderr))
    match = TOTAL.search(done.stdout)
    if done.returncode or not match:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        print('  failed (exit %d): %s' % (done.returncode, ' | '.join(tail)), flush=True)
        FAILURES[who] = tail[-1].strip() if tail else 'exit %d' % done.returncode
        return None
    return float(match.group(1))


def config_flags(model, batch, real, steps, args, extra=()) -> list[str]:
    flags = ['--device=cpu', '--data_format=NHWC', '--model=%s' % model,
             '--batch_size=%d' % batch, '--num_batches=%d' % steps,
             '--num_warmup_batches=%d' % args.warmup]
    if real:
        flags += ['--data_dir=%s' % args.data_dir, '--nodistortions']
    return flags + list(extra)


def spread(values: list[float]) -> float:
    """(max - min) / max in percent; 0 for fewer than two values."""
    return 100.0 * (max(values) - min(values)) / max(values) if len(values) > 1 else 0.0


def measure(name, args) -> dict:
    """Runs one configuration `--repeats` times in alternation; returns its row."""
    model, batch, real, steps = CONFIGS[name]
    steps = max(2, int(steps * args.steps_scale))
    flags = config_flags(model, batch, real, steps, args)
    programs = {'ours': (sys.executable, REPO),
                'original': (args.original_python, args.original_dir)}
    runs = {'ours': [], 'original': []}
    FAILURES.clear()
    NOTES.clear()
    for repeat in range(args.repeats):
        order = ['ours', 'original'] if repeat % 2 == 0 else ['original', 'ours']
        for who in order:
            rate = run_once(*programs[who], flags, args.timeout, who)
            if rate is not None:
                runs[who].append(rate)
            print('  %-20s %-8s %s' % (name, who, rate), flush=True)
    ours, orig = max(runs['ours'], default=0.0), max(runs['original'], default=0.0)
    med = {who: statistics.median(v) if v else 0.0 for who, v in runs.items()}
    return {'median_ratio': med['ours'] / med['original'] if med['original'] else None,
            'config': name, 'model': model, 'batch_size': batch,
            'data': 'real, no distortions' if real else 'synthetic', 'steps': steps,
            'ours': ours, 'original': orig, 'ratio': ours / orig if orig else None,
            'ours_runs': runs['ours'], 'original_runs': runs['original'],
            'ours_spread_pct': spread(runs['ours']) if runs['ours'] else None,
            'original_spread_pct': spread(runs['original']) if runs['original'] else None,
            'failures': dict(FAILURES),
            'notes': {who: sorted(n) for who, n in NOTES.items() if n}}


def distortions_row(args) -> dict:
    """Ours only: resnet50 batch 16 with distortions on real data vs synthetic, alternating."""
    model, batch, _, steps = CONFIGS['resnet50_b16_real']
    steps = max(2, int(steps * args.steps_scale))
    runs = {'distortions': [], 'synthetic': []}
    for repeat in range(args.repeats):
        for kind in (['distortions', 'synthetic'] if repeat % 2 == 0
                     else ['synthetic', 'distortions']):
            flags = config_flags(model, batch, False, steps, args)
            if kind == 'distortions':
                flags += ['--data_dir=%s' % args.data_dir, '--distortions']
            rate = run_once(sys.executable, REPO, flags, args.timeout)
            if rate is not None:
                runs[kind].append(rate)
            print('  %-20s %-12s %s' % ('resnet50 ours', kind, rate), flush=True)
    d, s = max(runs['distortions'], default=0.0), max(runs['synthetic'], default=0.0)
    return {'distortions': d, 'synthetic': s, 'ratio': d / s if s else None, 'runs': runs}


def cpu_model() -> str:
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or 'unknown'


def markdown(rows, extra, meta) -> str:
    lines = ['Ours vs the original tf_cnn_benchmarks, %s, %d cores, TF %s; flags `--device=cpu '
             '--data_format=NHWC`, %d warm-up steps; best of %d alternating fresh processes each; '
             'load average %.2f before, %.2f after' % (
                 meta['cpu'], meta['cores'], meta['tensorflow'], meta['warmup'],
                 meta['repeats'], meta['load_before'], meta['load_after']), '']
    lines.append(bench_report.markdown_table(
        ['model', 'batch', 'data', 'ours images/sec', 'original images/sec', 'ratio',
         'median ratio', 'spread ours / original', 'the runs said'], 'lrlrrrrrl',
        [[r['model'], '%d' % r['batch_size'], r['data'],
          '%.2f' % r['ours'] if r['ours'] else 'fails: %s' % r['failures'].get(
              'ours', '?')[:60].replace('|', '/'),
          '%.2f' % r['original'] if r['original'] else 'fails: %s' % r['failures'].get(
              'original', '?')[:60].replace('|', '/'),
          '%.2f' % r['ratio'] if r['ratio'] else 'n/a',
          '%.2f' % r['median_ratio'] if r.get('median_ratio') else 'n/a',
          '%s / %s' % tuple('%.0f%%' % s if s is not None else '-' for s in (
              r['ours_spread_pct'], r['original_spread_pct'])),
          '; '.join('%s: %s' % (who, ', '.join(n)) for who, n in sorted(
              r.get('notes', {}).items())) or '-'] for r in rows]))
    if extra:
        lines += ['', 'Ours, resnet50 batch 16: real data with --distortions %.2f images/sec, '
                  'synthetic %.2f: ratio %.2f' % (extra['distortions'], extra['synthetic'],
                                                  extra['ratio'] or 0.0)]
    return '\n'.join(lines)


def main(argv=None) -> int:
    parser = ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--original_dir', required=True,
                        help='folder holding the original tf_cnn_benchmarks.py')
    parser.add_argument('--original_python', default=sys.executable,
                        help='interpreter for the original (needs tf-keras)')
    parser.add_argument('--data_dir', default=os.path.join(
        os.path.dirname(REPO), 'shared', 'data', 'imagenet_tfrecords'))
    parser.add_argument('--configs', default=','.join(CONFIGS),
                        help='comma-separated subset of: ' + ', '.join(CONFIGS))
    parser.add_argument('--repeats', type=int, default=2)
    parser.add_argument('--warmup', type=int, default=5, help='--num_warmup_batches of both')
    parser.add_argument('--steps_scale', type=float, default=1.0,
                        help='multiplies every configuration\'s timed steps')
    parser.add_argument('--no_distortions_row', action='store_true')
    parser.add_argument('--timeout', type=float, default=1800.0, help='seconds per process')
    parser.add_argument('--tag', default='')
    parser.add_argument('--out', default=RESULTS,
                        help='folder for vs_original[_TAG].json and .md')
    args = parser.parse_args(argv)
    if not os.path.isfile(os.path.join(args.original_dir, 'tf_cnn_benchmarks.py')):
        parser.error('no tf_cnn_benchmarks.py in --original_dir=%s' % args.original_dir)
    if not os.access(args.original_python, os.X_OK):
        parser.error('--original_python=%s is not an executable' % args.original_python)
    if args.repeats < 1:
        parser.error('--repeats must be >= 1')
    names = [n for n in args.configs.split(',') if n]
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        parser.error('unknown --configs %s; valid: %s' % (unknown, ', '.join(CONFIGS)))
    needs_data = any(CONFIGS[n][2] for n in names) or not args.no_distortions_row
    if needs_data and not os.path.isdir(args.data_dir):
        parser.error('no --data_dir=%s for the real-data rows; give the ImageNet TFRecords '
                     'folder, or drop those --configs and add --no_distortions_row'
                     % args.data_dir)
    load_before, start = os.getloadavg()[0], time.time()
    rows = []
    for name in names:
        rows.append(measure(name, args))
        r = rows[-1]
        print('%-24s ours %8.2f  original %8.2f  ratio %s' % (
            name, r['ours'], r['original'], '%.3f' % r['ratio'] if r['ratio'] else 'n/a'),
            flush=True)
    extra = None if args.no_distortions_row else distortions_row(args)
    os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
    import tensorflow as tf
    meta = {'cpu': cpu_model(), 'cores': os.cpu_count(), 'tensorflow': tf.__version__,
            'warmup': args.warmup, 'repeats': args.repeats, 'load_before': load_before,
            'load_after': os.getloadavg()[0], 'elapsed_secs': time.time() - start,
            'original_dir': args.original_dir, 'original_python': args.original_python}
    name = 'vs_original' + ('_' + args.tag if args.tag else '')
    return bench_report.finish(args.out, name, {'meta': meta, 'rows': rows,
                                                'distortions': extra},
                               markdown(rows, extra, meta))


if __name__ == '__main__':
    sys.exit(main())

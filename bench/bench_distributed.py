"""Benchmark of multi-host training on loopback: what the cluster runtime costs per step.

For each model (default: trivial and resnet50 at a small batch, synthetic data, 1 device per
task) it runs, as separate tf_cnn_benchmarks processes on free loopback ports:

  local            one process, no cluster (--variable_update=parameter_server on one host);
                   run first and again last, to show how the machine's load drifted
  <mode> x1, x2    1 and 2 workers, for parameter_server and distributed_replicated (+ 1 ps),
                   collective_all_reduce (no ps) and distributed_all_reduce (+ a controller)

Every task writes its result JSON (--benchmark_log_dir) and runs with --print_step_breakdown
(--display_every = --num_batches, so only timed step 1 and the last step are traced). Reported:

  images/sec       per worker: its images per step / mean time of its untraced timed steps;
                   cluster: the sum over workers (distributed_all_reduce: the controller's)
  step ms          the chief's (controller's) mean untraced step time
  sync ms          step ms - step ms of the local run: the per-step cost of the cluster
  ratio            images/sec of the first worker (distributed_all_reduce: the controller's /
                   workers) / local images/sec (x1 rows: the "1 ps + 1 worker vs local"
                   figure; target >= 0.9 for resnet50)
  MB/step          traced: bytes moved between tasks in the chief's last traced step (the
                   trace's RecvTensor records: what its step sent and received; a controller:
                   all workers; collective ops do not appear there); estimate: sent + received
                   per worker from the variables' sizes (result['traffic_bytes_estimate'])
  breakdown        input / compute / sync / overhead ms of the last traced step (see
                   step_breakdown.py)

On a 2-core machine the x2 rows share the cores between two workers, so their absolute scaling
means little; the x1 rows and sync ms are the figures to read.

Usage:
    python -m bench.bench_distributed [--models trivial,resnet50] [--batch_sizes 8,4]
        [--num_batches 20,8] [--modes parameter_server,...] [--workers 1,2]

Writes results/*-distributed.json and results/*-distributed.md (with --tag T:
distributed_T.*). Loopback addresses only.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import tempfile
import time

from . import bench_report  # noqa: E402
from .preamble import REPO, RESULTS, ArgumentParser  # noqa: E402

ENTRY = os.path.join(REPO, 'tf_cnn_benchmarks.py')
MODES = ('parameter_server', 'distributed_replicated', 'collective_all_reduce',
         'distributed_all_reduce')


def free_port() -> int:
    import socket
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def _start(args: list[str], log_path: str) -> subprocess.Popen:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3', PYTHONUNBUFFERED='1')
    with open(log_path, 'w') as log:
        return subprocess.Popen([sys.executable, ENTRY] + args, stdout=log,
                                stderr=subprocess.STDOUT, env=env, cwd=REPO)


def run_config(model: str, batch: int, steps: int, mode: str | None, workers: int,
               work_dir: str, timeout: float, extra_flags=()) -> dict:
    """Runs one configuration; returns the chief's and every worker's result JSON.

    Raises:
      RuntimeError: a task failed or timed out (its log tail in the message).
    """
    common = ['--model=%s' % model, '--batch_size=%d' % batch, '--num_batches=%d' % steps,
              '--num_warmup_batches=3', '--display_every=%d' % steps, '--print_step_breakdown',
              '--startup_timeout_secs=300'] + list(extra_flags)
    tasks = []  # (name, args, reports)
    if mode is None:
        tasks.append(('local', common, True))
    else:
        worker_hosts = ['127.0.0.1:%d' % free_port() for _ in range(workers)]
        cluster = ['--variable_update=%s' % mode, '--worker_hosts=' + ','.join(worker_hosts)]
        if mode in ('parameter_server', 'distributed_replicated'):
            cluster.append('--ps_hosts=127.0.0.1:%d' % free_port())
            tasks.append(('ps0', ['--job_name=ps', '--task_index=0'], False))
        reports = mode != 'distributed_all_reduce'
        tasks += [('worker%d' % i, ['--job_name=worker', '--task_index=%d' % i], reports)
                  for i in range(workers)]
        if mode == 'distributed_all_reduce':
            cluster.append('--controller_host=127.0.0.1:%d' % free_port())
            tasks.append(('controller', ['--job_name=controller', '--task_index=0'], True))
        tasks = [(name, args + cluster + common, reports) for name, args, reports in tasks]
    procs = []
    for name, args, reports in tasks:
        out_dir = os.path.join(work_dir, name)
        os.makedirs(out_dir, exist_ok=True)
        if reports:
            args = args + ['--benchmark_log_dir=%s' % out_dir]
        procs.append((name, _start(args, os.path.join(out_dir, 'log.txt')), out_dir, reports))
    deadline = time.monotonic() + timeout
    failed = None
    for name, proc, out_dir, _ in procs:
        try:
            code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            code = 'timeout'
        if code != 0 and failed is None:
            failed = (name, code, out_dir)
            for _, other, _, _ in procs:
                if other.poll() is None:
                    other.kill()
    if failed:
        name, code, out_dir = failed
        with open(os.path.join(out_dir, 'log.txt')) as f:
            tail = f.read()[-2000:]
        raise RuntimeError('%s %s x%d: %s exited %s\n%s' % (model, mode, workers, name, code, tail))
    results = {}
    for name, _, out_dir, reports in procs:
        if reports:
            files = glob.glob(os.path.join(out_dir, '*.json'))
            with open(files[0]) as f:
                results[name] = json.load(f)
    return results


def untraced_times(result: dict, steps: int) -> list[float]:
    """Seconds of the timed steps that were not traced (timed step 1 and step `steps` are)."""
    times = [t for i, t in enumerate(result['step_times'], 1) if i not in (1, steps)]
    return times or result['step_times']


def untraced_rate(result: dict, steps: int) -> tuple[float, float]:
    """(images/sec of this task, mean step seconds) over its untraced timed steps."""
    times = untraced_times(result, steps)
    mean = sum(times) / len(times)
    return result['per_device_batch_size'] * result['num_devices'] / mean, mean


def summarise(model, mode, workers, results, steps, local) -> dict:
    chief_name = 'controller' if 'controller' in results else (
        'local' if 'local' in results else 'worker0')
    chief = results[chief_name]
    rates = {n: untraced_rate(r, steps)[0] for n, r in results.items()}
    step_secs = untraced_rate(chief, steps)[1]
    fastest = min(untraced_times(chief, steps))
    cluster = rates[chief_name] if chief_name != 'worker0' else sum(rates.values())
    last = chief['step_breakdown']['steps'][-1]
    row = {
        'model': model, 'config': 'local' if mode is None else '%s x%d' % (mode, workers),
        'mode': mode, 'workers': workers, 'images_per_sec': rates,
        'cluster_images_per_sec': cluster, 'step_ms': step_secs * 1e3,
        'fastest_step_ms': fastest * 1e3,
        'transfer_mb_per_step': last['transfer_bytes'] / 1e6,
        'estimated_mb_per_step': sum((chief.get('traffic_bytes_estimate') or {}).values()) / 1e6,
        'breakdown_last_traced_step': last,
        'batch_size': chief['per_device_batch_size'], 'image_size': chief['image_size'],
    }
    if local is not None and mode is not None:
        row['sync_overhead_ms'] = row['step_ms'] - local['step_ms']
        first = rates['controller'] / workers if chief_name == 'controller' else rates['worker0']
        row['ratio_vs_local'] = first / local['cluster_images_per_sec']
        # From the fastest untraced steps: the least disturbed by other load on the machine.
        row['fastest_sync_overhead_ms'] = row['fastest_step_ms'] - local['fastest_step_ms']
        row['fastest_ratio_vs_local'] = local['fastest_step_ms'] / row['fastest_step_ms']
    return row


def markdown(rows: list[dict]) -> str:
    lines = ['| model | config | images/sec per worker | cluster images/sec | step ms (mean / '
             'fastest) | sync ms (mean / fastest) | ratio vs local (mean / fastest) | MB/step '
             '(traced / estimate) | '
             'breakdown: input / compute / sync / overhead ms |', '|' + '---|' * 9]
    for r in rows:
        b = r['breakdown_last_traced_step']
        per_worker = ', '.join('%.2f' % v for k, v in sorted(r['images_per_sec'].items())
                               if k.startswith('worker')) or '-'
        sync = ratio = '-'
        if 'sync_overhead_ms' in r:
            sync = '%.0f / %.0f' % (r['sync_overhead_ms'], r['fastest_sync_overhead_ms'])
            ratio = '%.2f / %.2f' % (r['ratio_vs_local'], r['fastest_ratio_vs_local'])
        lines.append('| %s | %s | %s | %.2f | %.0f / %.0f | %s | %s | %.1f / %.1f | %.0f / %.0f /'
                     ' %.0f / %.0f |' % (r['model'], r['config'], per_worker,
                                         r['cluster_images_per_sec'], r['step_ms'],
                                         r['fastest_step_ms'], sync, ratio,
                                         r['transfer_mb_per_step'], r['estimated_mb_per_step'],
                                         b['input_ms'], b['compute_ms'], b['sync_ms'],
                                         b['overhead_ms']))
    return '\n'.join(lines) + '\n'


def main(argv=None) -> int:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--models', default='trivial,resnet50')
    parser.add_argument('--batch_sizes', default='8,4', help='per model, per device')
    parser.add_argument('--num_batches', default='20,8', help='timed steps, per model')
    parser.add_argument('--modes', default=','.join(MODES))
    parser.add_argument('--workers', default='1,2')
    parser.add_argument('--timeout_secs', type=float, default=1800, help='per configuration')
    parser.add_argument('--out_dir', default=RESULTS)
    parser.add_argument('--tag', default='')
    parser.add_argument('--extra_flags', default='', help='more tf_cnn_benchmarks flags for '
                                                          'every task (space-separated)')
    parser.add_argument('--rescan', help='rebuild the table from the task results in this work '
                                         'directory of an earlier run (no new runs)')
    args = parser.parse_args(argv)
    if args.rescan:
        return write_outputs(rescan(args.rescan), args, args.rescan)
    models = args.models.split(',')
    batches = [int(x) for x in args.batch_sizes.split(',')]
    steps = [int(x) for x in args.num_batches.split(',')]
    rows = []
    work = tempfile.mkdtemp(prefix='bench_distributed_')
    for model, batch, n in zip(models, batches, steps):
        # The local run first and last: their difference shows how much the machine's load
        # drifted during the model's runs; the cluster rows compare with the first.
        configs = [(None, 1)] + [(m, w) for m in args.modes.split(',')
                                 for w in (int(x) for x in args.workers.split(','))] + [(None, 1)]
        local = None
        for index, (mode, workers) in enumerate(configs):
            name = '%s_%d_%s_%d' % (model, index, mode or 'local', workers)
            start = time.monotonic()
            results = run_config(model, batch, n, mode, workers, os.path.join(work, name),
                                 args.timeout_secs, args.extra_flags.split())
            row = summarise(model, mode, workers, results, n, local)
            if mode is None:
                if local is None:
                    local = row
                else:
                    row['config'] = 'local (again, last)'
            rows.append(row)
            print('%-45s %8.2f images/sec (cluster)  %7.0f ms/step  [%.0f s]' % (
                row['config'] + ' ' + model, row['cluster_images_per_sec'], row['step_ms'],
                time.monotonic() - start), flush=True)
    return write_outputs(rows, args, work)


def rescan(work: str) -> list[dict]:
    """The rows of an earlier run, from its work directory ('<model>_<i>_<mode>_<workers>'
    sub-directories with one sub-directory per task holding its result JSON)."""
    rows, local = [], {}
    names = sorted(os.listdir(work), key=lambda n: (n.split('_')[0], int(n.split('_')[1])))
    for name in names:
        model, _, rest = name.partition('_')
        _, _, rest = rest.partition('_')
        mode, _, workers = rest.rpartition('_')
        results = {}
        for task in sorted(os.listdir(os.path.join(work, name))):
            files = glob.glob(os.path.join(work, name, task, '*.json'))
            if files:
                with open(files[0]) as f:
                    results[task] = json.load(f)
        steps = next(iter(results.values()))['num_steps']
        mode = None if mode == 'local' else mode
        row = summarise(model, mode, int(workers), results, steps, local.get(model))
        if mode is None:
            if model in local:
                row['config'] = 'local (again, last)'
            else:
                local[model] = row
        rows.append(row)
    return rows


def write_outputs(rows: list[dict], args, work: str) -> int:
    """Writes the JSON and markdown results; prints the table."""
    return bench_report.finish(
        args.out_dir, 'distributed' + ('_' + args.tag if args.tag else ''),
        {'rows': rows, 'cpu_count': os.cpu_count(), 'work_dir': work},
        '## Cluster on loopback (bench/bench_distributed.py)\n\n' + markdown(rows))


if __name__ == '__main__':
    sys.exit(main())

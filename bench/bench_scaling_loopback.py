"""The step-time model against a measured cluster on this machine: 1 ps and 1 to 4 workers on
loopback, CPU towers, predicted from the 1-worker run and the loopback rate measured here.

For a model (default: trivial at ImageNet's 227x227, whose 17 MB of variables make the ps's
link the bound), it

  1. measures the loopback rate between two tasks (hardware/loopback.py: TensorFlow gRPC, and
     the CPU time per byte it costs);
  2. runs 1 ps + 1 worker (tools/launch_cluster.py: every task a process on a free loopback
     port) and takes the worker's images/sec as the single-device figure;
  3. predicts 2..N workers with speed_model/step_time.py (scaling_report.PlanInputs with every
     task on this host: the workers share its cores, the ps's link carries every worker's
     reads and gradients) and runs each, then the 1-worker run again (the load drifts;
     `again=False` leaves it out);
  4. prints measured / predicted per row, with the load average before and after each run and
     what other processes used of the cores during it (metrics/host_load.py: the host's busy
     CPU time less this process's and its waited-for children's, i.e. the launcher and every
     task, over the run's wall time, start-up included).

tests/test_scaling_published.py runs it with 1 and 3 workers (a slow test: -m slow).

Usage (from the checkout's top folder):
    python -m bench.bench_scaling_loopback [--model trivial] [--batch_size 32]
        [--workers 2,3,4] [--num_batches 30] [--threads 1] [--no_again]

Writes results/<date>-cpu-tf<X.Y>-scaling-loopback.json and .md (bench/bench_report.py);
`python -m bench.make_performance_page` makes the tables of docs/scaling.md and the README from
the newest one. Loopback addresses only.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time

from . import bench_report
from .preamble import REPO, RESULTS, ArgumentParser, start

# The launcher's cluster figure (`cluster total images/sec` in older versions).
_TOTAL = re.compile(r'^\[launcher\] cluster (?:total )?images/sec: ([0-9.]+)', re.M)
_WORKER = re.compile(r'^\[launcher\] worker(\d+) images/sec: ([0-9.]+)', re.M)


def load_average() -> float:
    """The 1-minute load average (os.getloadavg)."""
    return os.getloadavg()[0]


def run_cluster(workers: int, flags: list[str], log_dir: str, timeout: float = 600) -> dict:
    """Runs 1 ps + `workers` workers with `flags` (tools/launch_cluster.py).

    Returns:
      {'total': the cluster's images/sec, 'workers': [each worker's images/sec],
       'load_before', 'load_after': 1-minute load averages, 'secs': wall seconds of the
       whole launch, 'others_cores': core-equivalents other processes used meanwhile (None
       where /proc cannot be read)}.

    Raises:
      RuntimeError: the launcher failed (its output's tail in the message).
    """
    from tf_cnn_benchmarks.metrics import host_load
    reader = host_load.ProcReader()
    first = reader.sample()
    before, start = load_average(), time.monotonic()
    cmd = [sys.executable, '-m', 'tools.launch_cluster', '--num_ps=1',
           '--num_workers=%d' % workers, '--log_dir=%s' % log_dir,
           '--timeout_secs=%g' % timeout, '--'] + flags
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3', PYTHONUNBUFFERED='1')
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env,
                          timeout=timeout + 60)
    found = _TOTAL.search(proc.stdout)
    if proc.returncode != 0 or not found:
        raise RuntimeError('cluster of %d workers failed (exit %d): %s' % (
            workers, proc.returncode, (proc.stdout + proc.stderr)[-2000:]))
    load = host_load.measure(first, reader.sample(), len(reader.cpus), len(reader.cpus),
                             reader.ticks_per_sec)
    return {'total': float(found.group(1)),
            'workers': [float(v) for _, v in sorted(_WORKER.findall(proc.stdout))],
            'load_before': before, 'load_after': load_average(),
            'secs': time.monotonic() - start, 'others_cores': load['others_cores']}


def plan(model: str, batch: int, one_worker: float, rate, threads: int, cores: int,
         workers, image_size: int | None = None):
    """{workers: step_time.Prediction} of 1 ps + `workers` workers on this host, from the
    1-worker images/sec and the loopback.LoopbackRate `rate`."""
    from tf_cnn_benchmarks.hardware import links
    from tf_cnn_benchmarks.speed_model import layer_profile, scaling_report, step_time
    from tf_cnn_benchmarks.speed_model import traffic_patterns as patterns
    profile = layer_profile.from_model(model, 'imagenet', image_size)
    network = links.measured_link('loopback', rate.bytes_per_sec, rate.how)
    inputs = scaling_report.PlanInputs(
        profile, batch, patterns.Links(None, 1, None, network), None, 'parameter_server', 1,
        'CPU', on_one_host=True, host_cores=cores, threads=threads,
        cpu_secs_per_byte=rate.cpu_secs_per_byte)
    one = scaling_report.topology(inputs, 1, 1)
    compute = step_time.compute_from_single_device(
        one_worker, batch, profile, one, inputs.links, source='1 ps + 1 worker, measured')
    inputs = inputs._replace(compute=compute)
    return {w: scaling_report.predict_topology(inputs, scaling_report.topology(inputs, w, 1))
            for w in workers}


def compare(model='trivial', batch=32, workers=(2, 3, 4), num_batches=30, threads=1,
            image_size=None, log_root=None, again=True) -> dict:
    """Measures and predicts (see the module docstring); returns the result dict.

    Args:
      model, batch, image_size: the run (batch per worker; image_size None: the model's).
      workers: the worker counts to predict and run (each one cluster start-up).
      num_batches: timed steps per run (after 5 warm-up steps).
      threads: intra-op threads per worker.
      log_root: the folder of the tasks' logs (default a new temporary one).
      again: run 1 worker again at the end (the drift of the single-device figure).

    Returns:
      {'model', 'batch_size', 'threads', 'cores', 'loopback_bytes_per_sec' (bytes/s),
       'loopback_cpu_secs_per_byte' (CPU seconds per byte), 'load_at_rate', 'one_worker' and
       'one_worker_again' (images/sec; again None without `again`), 'one_worker_load',
       'one_worker_others_cores', 'rows': [{'workers', 'measured', 'predicted' (images/sec),
       'ratio' (measured / predicted), 'bound', 'load_before', 'load_after', 'others_cores',
       'secs'}], 'others_cores_max' (the most any run saw, core-equivalents), 'cpu'}.

    Raises:
      RuntimeError: a cluster run failed.
    """
    from tf_cnn_benchmarks.hardware import loopback, machine
    from tf_cnn_benchmarks.runtime import cpu_tuning
    flags = ['--model=%s' % model, '--batch_size=%d' % batch, '--num_batches=%d' % num_batches,
             '--num_warmup_batches=5', '--device=cpu', '--num_intra_threads=%d' % threads,
             '--num_inter_threads=2', '--display_every=%d' % num_batches, '--noresults_db']
    if image_size:
        flags.append('--image_size=%d' % image_size)
    log_root = log_root or tempfile.mkdtemp(prefix='scaling_loopback_')
    load_rate = load_average()
    rate = loopback.measure()
    first = run_cluster(1, flags, os.path.join(log_root, 'w1'))
    cores = cpu_tuning.physical_cores()
    predicted = plan(model, batch, first['total'], rate, threads, cores, workers, image_size)
    rows = []
    for w in workers:
        measured = run_cluster(w, flags, os.path.join(log_root, 'w%d' % w))
        found = predicted[w]
        rows.append({'workers': w, 'measured': measured['total'],
                     'predicted': found.images_per_sec,
                     'ratio': measured['total'] / found.images_per_sec,
                     'bound': found.bound, 'load_before': measured['load_before'],
                     'load_after': measured['load_after'],
                     'others_cores': measured['others_cores'], 'secs': measured['secs']})
    last = run_cluster(1, flags, os.path.join(log_root, 'w1_again')) if again else None
    others = [r['others_cores'] for r in [first, last] + rows
              if r is not None and r['others_cores'] is not None]
    return {'model': model, 'batch_size': batch, 'threads': threads, 'cores': cores,
            'loopback_bytes_per_sec': rate.bytes_per_sec,
            'loopback_cpu_secs_per_byte': rate.cpu_secs_per_byte,
            'load_at_rate': load_rate, 'one_worker': first['total'],
            'one_worker_again': last['total'] if last else None,
            'one_worker_load': first['load_before'],
            'one_worker_others_cores': first['others_cores'],
            'others_cores_max': max(others) if others else None,
            'rows': rows, 'cpu': machine.cpu_model()}


def _others(value) -> str:
    return '?' if value is None else '%.2f' % value


def format_result(result: dict) -> list[str]:
    """The comparison as lines: one line of inputs, then a Markdown table."""
    again = result.get('one_worker_again')
    lines = ['%s, batch %d, %d intra-op thread(s) per worker, %d cores (%s); loopback '
             '%.0f MB/s, %.2f ns of CPU per byte (load %.1f); 1 worker %.1f images/sec (load '
             '%.1f, others used %s cores)%s' % (
                 result['model'], result['batch_size'], result['threads'], result['cores'],
                 result['cpu'], result['loopback_bytes_per_sec'] / 1e6,
                 result['loopback_cpu_secs_per_byte'] * 1e9, result['load_at_rate'],
                 result['one_worker'], result['one_worker_load'],
                 _others(result.get('one_worker_others_cores')),
                 '' if again is None else ', again at the end %.1f' % again),
             '']
    return lines + table_lines(result['rows'])


def table_lines(rows: list[dict]) -> list[str]:
    """The Markdown table of the compared worker counts (the results file's and the README's):
    measured and predicted images/sec, their ratio, the predicted bound, the load."""
    lines = ['| workers | measured images/sec | predicted | measured / predicted | predicted '
             'bound | load average before, after | others\' cores |',
             '|---:|---:|---:|---:|---|---|---:|']
    for row in rows:
        lines.append('| %d | %.1f | %.1f | %.2f | %s | %.1f, %.1f | %s |' % (
            row['workers'], row['measured'], row['predicted'], row['ratio'], row['bound'],
            row['load_before'], row['load_after'], _others(row.get('others_cores'))))
    return lines


def main(argv=None) -> int:
    parser = ArgumentParser(prog='bench_scaling_loopback', description=__doc__.split('\n')[0])
    parser.add_argument('--model', default='trivial', help='a registry name (default trivial)')
    parser.add_argument('--batch_size', type=int, default=32, help='images per worker and step')
    parser.add_argument('--image_size', type=int, default=0,
                        help="pixels per side (0: the model's own)")
    parser.add_argument('--workers', default='2,3,4',
                        help='worker counts to predict and run, comma-separated')
    parser.add_argument('--num_batches', type=int, default=30, help='timed steps per run')
    parser.add_argument('--threads', type=int, default=1, help='intra-op threads per worker')
    parser.add_argument('--no_again', action='store_true',
                        help='do not run 1 worker again at the end')
    args = parser.parse_args(argv)
    start()
    result = compare(args.model, args.batch_size, tuple(int(w) for w in args.workers.split(',')),
                     args.num_batches, args.threads, args.image_size or None,
                     again=not args.no_again)
    return bench_report.finish(RESULTS, 'scaling_loopback', result,
                               '\n'.join(format_result(result)))


if __name__ == '__main__':
    sys.exit(main())

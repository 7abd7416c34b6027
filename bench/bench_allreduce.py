"""Benchmark of the gradient all-reduce alone (variable_managers/allreduce.py) on logical CPU
devices.

For each algorithm configuration and tensor size, every tower holds `--num_tensors` gradients of
that size (float32, in resource variables on its device); one step all-reduces them all and waits
for every output on every device. Reported per cell:

* bandwidth: gradient bytes per tower reduced per second, num_tensors * size / step time, from
  the fastest timed step (the least disturbed by other processes on a shared machine) and from
  the median step (in the JSON),
* the median step time in milliseconds.

Usage:
    python -m bench.bench_allreduce [--devices 2] [--sizes 4k,256k,4m,25m] [--num_tensors 8]

Writes results/*-allreduce.json and results/*-allreduce.md (a markdown table); with
--tag T, allreduce_T.json and allreduce_T.md.

The CPU allocator matters for the repacking rows: TensorFlow's default CPU allocator hands large
buffers back to the OS, so every step page-faults fresh concat outputs in again; compare a run with
TF_CPU_ALLOCATOR_USE_BFC=true in the environment (recorded in the results).
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time

from . import bench_report  # noqa: E402
from .preamble import RESULTS, ArgumentParser, start  # noqa: E402

start()  # oneDNN kernels, BFC allocator: before TensorFlow loads

import tensorflow as tf  # noqa: E402
from tensorflow.core.protobuf import rewriter_config_pb2  # noqa: E402

from tf_cnn_benchmarks.variable_managers import allreduce  # noqa: E402

tf1 = tf.compat.v1

# (label, spec or None for the default, keyword arguments of all_reduce_gradients)
CONFIGS = [
    ('default (sum on device 0)', None, {}),
    ('pscpu', 'pscpu', {}),
    ('psgpu', 'psgpu', {}),
    ('xring', 'xring', {}),
    ('xring#2', 'xring#2', {}),
    ('pscpu:32k:xring', 'pscpu:32k:xring', {}),
    ('pscpu, repacking=2', 'pscpu', {'num_packs': 2}),
    ('xring, repacking=2', 'xring', {'num_packs': 2}),
    ('xring, agg_small<64k', 'xring', {'agg_small_grads_max_bytes': 64 * 1024}),
]


def _parse_sizes(text: str) -> list[int]:
    units = {'k': 1024, 'm': 1024 ** 2, 'g': 1024 ** 3}
    sizes = []
    for item in text.lower().split(','):
        item = item.strip()
        sizes.append(int(item[:-1]) * units[item[-1]] if item[-1] in units else int(item))
    return sizes


def _human(num_bytes: float) -> str:
    for unit, scale in (('GiB', 1024 ** 3), ('MiB', 1024 ** 2), ('KiB', 1024)):
        if num_bytes >= scale:
            return '%g %s' % (round(num_bytes / scale, 1), unit)
    return '%d B' % num_bytes


def run_size(num_devices: int, size_bytes: int, num_tensors: int, min_secs: float) -> list[dict]:
    """Times every configuration at one tensor size; returns one result per CONFIGS entry.

    All configurations share one graph, one session and the same input variables, and their steps
    run in round-robin order, so that load from other processes affects them alike.
    """
    devices = ['/cpu:%d' % i for i in range(num_devices)]
    graph = tf.Graph()
    with graph.as_default():
        tower_grads = []
        for i, device in enumerate(devices):
            with tf1.device(device):
                tower_grads.append([
                    tf1.Variable(tf.random.uniform([size_bytes // 4]), name='g%d_%d' % (i, j),
                                 use_resource=True).read_value()
                    for j in range(num_tensors)])
        steps = []
        for c, (_, spec, kwargs) in enumerate(CONFIGS):
            with tf.name_scope('config%d' % c):
                tuples = allreduce.parse_all_reduce_spec(spec) if spec else None
                out = allreduce.all_reduce_gradients(tower_grads, devices, tuples, **kwargs)
                steps.append(tf.group(*[g for grads in out for g in grads]))
        init = tf1.global_variables_initializer()
    config = tf1.ConfigProto(device_count={'CPU': num_devices})
    # Grappler's dependency optimizer turns ops that only feed control edges into no-ops, which
    # would prune the whole all-reduce here (in training the stateful updates consume it).
    config.graph_options.rewrite_options.dependency_optimization = (
        rewriter_config_pb2.RewriterConfig.OFF)
    times = [[] for _ in CONFIGS]
    with tf1.Session(graph=graph, config=config) as sess:
        sess.run(init)
        for step in steps * 2:
            sess.run(step)
        start = time.perf_counter()
        while len(times[0]) < 5 or time.perf_counter() - start < min_secs * len(CONFIGS):
            for step, config_times in zip(steps, times, strict=True):
                t0 = time.perf_counter()
                sess.run(step)
                config_times.append(time.perf_counter() - t0)
    results = []
    for (label, spec, kwargs), config_times in zip(CONFIGS, times, strict=True):
        median = statistics.median(config_times)
        results.append({
            'label': label, 'spec': spec, 'kwargs': kwargs, 'size_bytes': size_bytes,
            'num_tensors': num_tensors, 'steps': len(config_times), 'median_step_secs': median,
            'min_step_secs': min(config_times),
            'bytes_per_sec': num_tensors * size_bytes / min(config_times),
            'median_bytes_per_sec': num_tensors * size_bytes / median})
    return results


def _markdown(results: list[dict], sizes: list[int], args) -> str:
    lines = ['All-reduce bandwidth (gradient bytes per tower per second, fastest step; median step '
             'in ms) on %d logical CPU devices, %d float32 tensors per tower, TF %s, %d cores, '
             'load average %.1f before the run, TF_CPU_ALLOCATOR_USE_BFC=%s.'
             % (args.devices, args.num_tensors, tf.__version__, os.cpu_count(), args.load,
                os.environ.get('TF_CPU_ALLOCATOR_USE_BFC', 'unset')), '',
             '| algorithm | ' + ' | '.join(_human(s) for s in sizes) + ' |',
             '| --- |' + ' ---: |' * len(sizes)]
    for label, _, _ in CONFIGS:
        cells = []
        for size in sizes:
            r = next(r for r in results if r['label'] == label and r['size_bytes'] == size)
            cells.append('%s/s (%.2f ms)' % (_human(r['bytes_per_sec']),
                                             r['median_step_secs'] * 1e3))
        lines.append('| %s | %s |' % (label, ' | '.join(cells)))
    return '\n'.join(lines) + '\n'


def main(argv=None) -> int:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--devices', type=int, default=2, help='logical CPU devices (towers)')
    parser.add_argument('--sizes', default='4k,256k,4m,25m', help='tensor sizes in bytes (k/m/g)')
    parser.add_argument('--num_tensors', type=int, default=8, help='gradients per tower')
    parser.add_argument('--min_secs', type=float, default=1.0, help='timed seconds per cell')
    parser.add_argument('--out_dir', default=RESULTS)
    parser.add_argument('--tag', default='', help='suffix of the result file names')
    args = parser.parse_args(argv)
    tf1.disable_eager_execution()
    sizes = _parse_sizes(args.sizes)
    args.load = os.getloadavg()[0]
    results = []
    for size in sizes:
        for r in run_size(args.devices, size, args.num_tensors, args.min_secs):
            results.append(r)
            print('%-28s %9s  %10s/s  %8.2f ms' % (r['label'], _human(size),
                                                   _human(r['bytes_per_sec']),
                                                   r['median_step_secs'] * 1e3), flush=True)
    table = _markdown(results, sizes, args)
    return bench_report.finish(
        args.out_dir, 'allreduce' + ('_' + args.tag if args.tag else ''),
        {'devices': args.devices, 'num_tensors': args.num_tensors,
                   'tensorflow': tf.__version__, 'cpu_count': os.cpu_count(),
                   'machine': platform.machine(), 'load_average_before': args.load,
                   'tf_cpu_allocator_use_bfc': os.environ.get('TF_CPU_ALLOCATOR_USE_BFC'),
                   'load_average_after': os.getloadavg()[0], 'results': results}, table)


if __name__ == '__main__':
    sys.exit(main())

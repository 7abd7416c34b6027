"""Benchmark of the real-data input pipeline on ImageNet-format TFRecords.

Rows (all on one CPU device, --batch_size images per step, --image_size pixels):

* pipeline only: `preprocessing.make_input_pipeline(...)` built for one device; a step runs the
  staging-area get of the device batch plus the put of the next (the steady state of the
  software pipeline). RecordInput and tf.data (--use_datasets), with and without distortions.
* trivial model: the same data through `benchmark_cnn.BenchmarkCNN` with --model=trivial (a
  model that computes almost nothing, so the input pipeline is the bottleneck), where it exists,
  and on synthetic data for reference.
* ceiling: a bare tf.data loop over the same shards with the same parallelism (interleave over
  the files, map with AUTOTUNE parallel calls, batch, prefetch) that only parses, decodes the
  whole JPEG and resizes it: a plain reference, not a bound (a pipeline that decodes only its
  crop, as --fuse_decode_and_crop does, does less work per image and can beat it).
* with --resnet50: resnet50 on real data (distortions on) and on synthetic data.

Per row: images/sec from the median step time and from the fastest step (the least disturbed by
other processes on a shared machine; for a tf.data row a step may only take a batch prefetched
meanwhile, so its fastest step says little there: read the median), images/sec per core (median
/ os.cpu_count()), and images per CPU-second of this process during the timed steps, which other
processes on a shared machine disturb much less than wall time (for the model rows it includes
graph building and warm-up, so it is a lower bound). "vs ceiling" compares with the mean of the
two ceiling rows.

Usage:
    python -m bench.bench_input [--data_dir ../shared/data/imagenet_tfrecords] [--steps 40]
        [--batch_size 32] [--image_size 224] [--resnet50] [--tag T]

Writes results/*-input[_T].json and results/*-input[_T].md.
"""

from __future__ import annotations

import contextlib
import io
import os
import platform
import statistics
import sys
import time

from . import bench_report  # noqa: E402
from .preamble import REPO, RESULTS, ArgumentParser, cpu_input_pipeline, start  # noqa: E402

start()  # oneDNN kernels, BFC allocator: before TensorFlow loads

import tensorflow as tf  # noqa: E402

from tf_cnn_benchmarks import params as params_lib  # noqa: E402
from tf_cnn_benchmarks.input_data import dataset_info  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()
CORES = os.cpu_count() or 1


def _time_steps(run_step, steps: int, warmup: int) -> tuple[list[float], float]:
    """Runs warm-up then timed steps; returns (wall seconds per step, process CPU seconds)."""
    for _ in range(warmup):
        run_step()
    times = []
    cpu = time.process_time()
    for _ in range(steps):
        start = time.perf_counter()
        run_step()
        times.append(time.perf_counter() - start)
    return times, time.process_time() - cpu


def _row(label: str, batch: int, times: list[float], cpu_secs: float, **extra) -> dict:
    median = statistics.median(times)
    row = {'label': label, 'images_per_sec': batch / median,
           'images_per_sec_best': batch / min(times), 'steps': len(times),
           'images_per_sec_per_core': batch / median / CORES,
           'images_per_cpu_sec': batch * len(times) / cpu_secs if cpu_secs else None}
    row.update(extra)
    print('%-44s %8.1f img/s (best %8.1f), %s img per CPU-second' % (
        label, row['images_per_sec'], row['images_per_sec_best'],
        '%.1f' % row['images_per_cpu_sec'] if cpu_secs else '-'), flush=True)
    return row


def pipeline_only(args, use_datasets: bool, distortions: bool) -> dict:
    p = params_lib.make_params(data_dir=args.data_dir, use_datasets=use_datasets,
                               distortions=distortions)
    with tf.Graph().as_default():
        pipeline = cpu_input_pipeline(p, args.batch_size, args.image_size)
        build = time.perf_counter()
        ((images, _),) = pipeline.build(['/cpu:0'])
        build = time.perf_counter() - build
        with tf1.Session() as sess:
            sess.run(pipeline.warmup_ops)
            step = sess.make_callable([images.op] + pipeline.step_ops)
            times, cpu = _time_steps(step, args.steps, args.warmup)
    label = 'pipeline only, %s, %s' % ('tf.data' if use_datasets else 'RecordInput',
                                       'distortions' if distortions else 'no distortions')
    return _row(label, args.batch_size, times, cpu, graph_build_secs=build)


def ceiling(args) -> dict:
    files = dataset_info.get_dataset(params_lib.make_params(data_dir=args.data_dir)).scan(
        'train').files
    size = args.image_size

    def decode(record):
        parsed = tf.io.parse_single_example(
            record, {'image/encoded': tf.io.FixedLenFeature([], tf.string),
                     'image/class/label': tf.io.FixedLenFeature([], tf.int64)})
        image = tf.io.decode_jpeg(parsed['image/encoded'], channels=3)
        return tf.image.resize(image, [size, size]), parsed['image/class/label']

    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_tensor_slices(list(files)).repeat()
        ds = ds.interleave(tf.data.TFRecordDataset, cycle_length=min(64, len(files)),
                           num_parallel_calls=tf.data.AUTOTUNE)
        ds = ds.map(decode, num_parallel_calls=tf.data.AUTOTUNE)
        ds = ds.batch(args.batch_size, drop_remainder=True).prefetch(1)
        images, _ = tf1.data.make_one_shot_iterator(ds).get_next()
        with tf1.Session() as sess:
            step = sess.make_callable(images.op)
            times, cpu = _time_steps(step, args.steps, args.warmup)
    return _row('ceiling: bare tf.data read+decode+resize', args.batch_size, times, cpu)


def with_model(args, model: str, *, data_dir, use_datasets=False, distortions=True,
               batch_size=None, steps=None) -> dict | None:
    try:
        from tf_cnn_benchmarks import benchmark_cnn
    except ImportError:
        return None
    if not hasattr(benchmark_cnn, 'BenchmarkCNN'):
        return None
    batch_size = batch_size or args.batch_size
    p = params_lib.make_params(
        model=model, data_dir=data_dir, use_datasets=use_datasets, distortions=distortions,
        batch_size=batch_size, num_batches=steps or args.steps, num_warmup_batches=args.warmup,
        image_size=args.image_size, device='cpu', display_every=1000)
    with contextlib.redirect_stdout(io.StringIO()):
        result = benchmark_cnn.BenchmarkCNN(p).run()
    times = result.get('step_times') or [batch_size / result['images_per_sec']]
    cpu = 0.0  # the model's own compute shares the process: no input-only CPU figure
    label = '%s, %s' % (model, 'synthetic' if not data_dir else '%s, %s' % (
        'tf.data' if use_datasets else 'RecordInput',
        'distortions' if distortions else 'no distortions'))
    return _row(label, batch_size, times, cpu, run_images_per_sec=result['images_per_sec'])


def _markdown(rows: list[dict], args) -> str:
    ceilings = [r for r in rows if r['label'].startswith('ceiling')]
    ceiling_rate = statistics.mean(r['images_per_sec'] for r in ceilings) if ceilings else None
    ceiling_cpu = (statistics.mean(r['images_per_cpu_sec'] for r in ceilings)
                   if ceilings else None)
    lines = ['Input pipeline, %s, batch %d, %dx%d, %d CPU cores, load average %.1f' % (
        args.data_dir, args.batch_size, args.image_size, args.image_size, CORES,
        os.getloadavg()[0]), '',
        '| configuration | images/sec (median step) | best step | per core (wall / %d) | '
        'images per CPU-second | vs ceiling (wall) | vs ceiling (CPU) | vs synthetic |' % CORES,
        '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |']
    synthetic = {r['label'].split(',')[0]: r['images_per_sec'] for r in rows
                 if r['label'].endswith('synthetic')}
    for r in rows:
        wall = '%.2f' % (r['images_per_sec'] / ceiling_rate) if ceiling_rate else ''
        per_cpu = r['images_per_cpu_sec']
        cpu = '%.2f' % (per_cpu / ceiling_cpu) if ceiling_cpu and per_cpu else '-'
        model = r['label'].split(',')[0]
        vs_synthetic = ('%.2f' % (r['images_per_sec'] / synthetic[model])
                        if model in synthetic and not r['label'].endswith('synthetic') else '')
        lines.append('| %s | %.1f | %.1f | %.1f | %s | %s | %s | %s |' % (
            r['label'], r['images_per_sec'], r['images_per_sec_best'],
            r['images_per_sec_per_core'], '%.1f' % per_cpu if per_cpu else '-', wall, cpu,
            vs_synthetic))
    return '\n'.join(lines) + '\n'


def main(argv=None) -> int:
    parser = ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--data_dir', default=os.path.join(
        os.path.dirname(REPO), 'shared', 'data', 'imagenet_tfrecords'))
    parser.add_argument('--steps', type=int, default=40)
    parser.add_argument('--warmup', type=int, default=5)
    parser.add_argument('--batch_size', type=int, default=32)
    parser.add_argument('--image_size', type=int, default=224)
    parser.add_argument('--resnet50', action='store_true')
    parser.add_argument('--tag', default='')
    parser.add_argument('--out_dir', default=RESULTS)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    rows = [ceiling(args)]
    for use_datasets in (False, True):
        for distortions in (True, False):
            rows.append(pipeline_only(args, use_datasets, distortions))
    for use_datasets in (False, True):
        for distortions in (True, False):
            row = with_model(args, 'trivial', data_dir=args.data_dir,
                             use_datasets=use_datasets, distortions=distortions)
            if row:
                rows.append(row)
    row = with_model(args, 'trivial', data_dir=None)
    if row:
        rows.append(row)
    rows.append(ceiling(args))  # again: the machine may have changed meanwhile
    rows[-1]['label'] += ' (again)'
    if args.resnet50:
        for data_dir in (args.data_dir, None):
            row = with_model(args, 'resnet50', data_dir=data_dir, batch_size=8, steps=10)
            if row:
                rows.append(row)
    table = _markdown(rows, args)
    return bench_report.finish(
        args.out_dir, 'input' + ('_' + args.tag if args.tag else ''),
        {'args': vars(args), 'tensorflow': tf.__version__, 'cores': CORES,
                   'machine': platform.machine(), 'load_average_before': load_before,
                   'load_average_after': os.getloadavg()[0], 'results': rows}, table)


if __name__ == '__main__':
    sys.exit(main())

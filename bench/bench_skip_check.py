"""What --skip_corrupt_records' decode check costs the input pipeline, in CPU seconds.

    python -m bench.bench_skip_check [--images 512] [--batches 96] [--batch_size 32]
        [--repeats 3] [--image_size 224] [--shuffle_buffer_size 1024] [--nodistortions]

With --skip_corrupt_records every record read is also checked as the pipeline will use it,
its image decoded at 1/8 scale (input_data/record_schema.py `usable(decode=True)`, read by
input_data/skipped_records.py); the flag also selects the tf.data reader. This script makes
ImageNet-size JPEG shards itself (--images JPEGs of 500x375 pixels, about 80 KB each: a smooth
random field plus noise, saved by Pillow at quality 90, converted by the project's converter
`tools/build_imagenet_tfrecords.convert`) in a temporary folder, and runs the input pipeline
alone (`preprocessing.make_input_pipeline` built for one CPU device, no model step; a step is
the staging get of the device batch plus the put of the next) for --batches batches, in three
configurations side by side:

* `default`: the default reader (RecordInput), what a run without the flag reads with;
* `tf.data`: --use_datasets, the reader the flag selects, without the check;
* `skip`: --skip_corrupt_records (tf.data, each shard read alone, the decode check).

Each repeat runs the three in turn (the order alternating between repeats, so that a change of
the host's load falls on all of them), each in a fresh graph and session after --warmup
batches (the shuffle buffer, --shuffle_buffer_size records, fills before the first batch: in
the timed batches each record taken is replaced by one read, and checked, so the figure is the
steady state's whatever the buffer; 1024 rather than the flag's 10000 keeps the fill short).
Per run: this process's CPU seconds (user + system, all threads) per 1024 images and
wall seconds. The ratios are of the medians: skip / tf.data is the check's own cost, skip /
default what a run pays for switching the flag on. CPU seconds are the figure a loaded host
disturbs least. Writes results/<date>-cpu-tf<X.Y>-skip-check-cost.json and .md (the host's
load average before and after in the provenance and the data).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

from . import bench_report
from .preamble import RESULTS, ArgumentParser, cpu_input_pipeline, start_tensorflow

WHAT = 'skip_check_cost'
#: name -> the params that differ from the default pipeline.
CONFIGS = {'default': {}, 'tf.data': {'use_datasets': True},
           'skip': {'skip_corrupt_records': True}}
WIDTH, HEIGHT = 500, 375  # a typical ImageNet photo's size


def make_jpeg_shards(folder: str, images: int, seed: int = 0) -> dict:
    """Writes `images` JPEGs (WIDTH x HEIGHT, quality 90) into folder/photos/<4 classes>/ and
    converts them into folder/tfrecords (4 train shards, no validation) with the project's
    converter. Returns {'data_dir', 'images', 'mean_jpeg_bytes'}."""
    import numpy as np
    from PIL import Image

    from tf_cnn_benchmarks.tools import build_imagenet_tfrecords
    rng = np.random.default_rng(seed)
    photos = os.path.join(folder, 'photos')
    sizes = []
    for i in range(images):
        cls = os.path.join(photos, 'n%08d' % (i % 4))
        os.makedirs(cls, exist_ok=True)
        # A smooth random field (40x30 cells, bicubic) plus +-18 noise: about 80 KB at quality
        # 90, the size of an average ImageNet JPEG (uniform noise would be ~4x larger).
        base = Image.fromarray(rng.integers(0, 256, (30, 40, 3), dtype=np.uint8)).resize(
            (WIDTH, HEIGHT), Image.BICUBIC)
        pixels = np.asarray(base).astype(np.int16) + rng.integers(-18, 19, (HEIGHT, WIDTH, 3))
        path = os.path.join(cls, '%04d.jpg' % i)
        Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(path, quality=90)
        sizes.append(os.path.getsize(path))
    out = os.path.join(folder, 'tfrecords')
    build_imagenet_tfrecords.convert(photos, out, num_train_shards=4, num_validation_shards=0,
                                     validation_fraction=0.0, seed=seed, progress=False,
                                     warn=lambda line: None)
    return {'data_dir': out, 'images': images, 'mean_jpeg_bytes': statistics.mean(sizes)}


def run_pipeline(tf, data_dir: str, config: str, args) -> dict:
    """The input pipeline of `config` alone: --warmup batches, then --batches timed ones.
    Returns {'config', 'cpu_secs_per_1024', 'wall_secs', 'cpu_secs', 'images'}."""
    from tf_cnn_benchmarks import params as params_lib
    tf1 = tf.compat.v1
    p = params_lib.make_params(data_dir=data_dir, distortions=args.distortions,
                               shuffle_buffer_size=args.shuffle_buffer_size, **CONFIGS[config])
    with tf.Graph().as_default():
        pipeline = cpu_input_pipeline(p, args.batch_size, args.image_size)
        ((images, labels),) = pipeline.build(['/cpu:0'])
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            sess.run(pipeline.warmup_ops)
            step = sess.make_callable([images.op, labels.op] + list(pipeline.step_ops))
            for _ in range(args.warmup):
                step()
            cpu, wall = time.process_time(), time.perf_counter()
            for _ in range(args.batches):
                step()
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    done = args.batches * args.batch_size
    return {'config': config, 'cpu_secs': cpu, 'wall_secs': wall, 'images': done,
            'cpu_secs_per_1024': cpu / done * 1024}


def summarise(runs: list[dict]) -> dict:
    """{'median_cpu_secs_per_1024': {config: s}, 'ratio_skip_vs_tf_data': x,
    'ratio_skip_vs_default': x} from the runs (medians over the repeats)."""
    med = {c: statistics.median(r['cpu_secs_per_1024'] for r in runs if r['config'] == c)
           for c in CONFIGS}
    return {'median_cpu_secs_per_1024': med,
            'ratio_skip_vs_tf_data': med['skip'] / med['tf.data'],
            'ratio_skip_vs_default': med['skip'] / med['default']}


def markdown(data: dict) -> str:
    """The runs' table and the ratios line."""
    rows = [[r['config'], str(r['repeat']), '%.2f' % r['cpu_secs_per_1024'],
             '%.2f' % r['wall_secs'], '%.1f-%.1f' % (r['load_before'], r['load_after'])]
            for r in data['runs']]
    s, d = data['summary'], data['dataset']
    med = s['median_cpu_secs_per_1024']
    return '\n'.join([
        'Input pipeline alone, %d JPEGs of %dx%d (mean %.0f KB), batch %d, %dx%d, %s, '
        '%d batches a run, one CPU device.' % (
            d['images'], WIDTH, HEIGHT, d['mean_jpeg_bytes'] / 1000, data['args']['batch_size'],
            data['args']['image_size'], data['args']['image_size'],
            'distortions' if data['args']['distortions'] else 'no distortions',
            data['args']['batches']), '',
        bench_report.markdown_table(['configuration', 'repeat', 'CPU s per 1024 images',
                                     'wall s', 'load average'], 'lrrrr', rows), '',
        'Medians, CPU s per 1024 images: default (RecordInput) %.2f, tf.data %.2f, '
        '--skip_corrupt_records %.2f. skip / tf.data %.2f (the decode check), '
        'skip / default %.2f.' % (med['default'], med['tf.data'], med['skip'],
                                  s['ratio_skip_vs_tf_data'], s['ratio_skip_vs_default'])])


def main(argv=None) -> int:
    parser = ArgumentParser(prog='bench_skip_check', description=__doc__.split('\n')[0])
    parser.add_argument('--images', type=int, default=512, help='JPEGs in the shards')
    parser.add_argument('--batches', type=int, default=96, help='timed batches a run')
    parser.add_argument('--warmup', type=int, default=4, help='batches before timing')
    parser.add_argument('--batch_size', type=int, default=32)
    parser.add_argument('--image_size', type=int, default=224)
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--shuffle_buffer_size', type=int, default=1024,
                        help='records shuffled (filled before the first batch)')
    parser.add_argument('--nodistortions', dest='distortions', action='store_false')
    parser.add_argument('--out_dir', default=RESULTS)
    args = parser.parse_args(argv)
    for name in ('images', 'batches', 'batch_size', 'image_size', 'repeats',
                 'shuffle_buffer_size'):
        if getattr(args, name) < 1:
            parser.error('--%s must be at least 1, not %d' % (name, getattr(args, name)))
    if args.images < 4:
        parser.error('--images must be at least 4 (one a shard), not %d' % args.images)
    tf = start_tensorflow()
    tf.compat.v1.disable_eager_execution()
    load_before = os.getloadavg()[0]
    runs = []
    with tempfile.TemporaryDirectory(prefix='bench_skip_check_') as folder:
        dataset = make_jpeg_shards(folder, args.images)
        order = list(CONFIGS)
        for repeat in range(args.repeats):
            for config in (order if repeat % 2 == 0 else order[::-1]):
                before = os.getloadavg()[0]
                run = run_pipeline(tf, dataset['data_dir'], config, args)
                run.update(repeat=repeat, load_before=before, load_after=os.getloadavg()[0])
                runs.append(run)
                print('%-8s repeat %d: %.2f CPU s per 1024 images, %.2f s wall' % (
                    config, repeat, run['cpu_secs_per_1024'], run['wall_secs']), flush=True)
    dataset['data_dir'] = '(a temporary folder)'
    data = {'args': vars(args), 'dataset': dataset, 'runs': runs, 'summary': summarise(runs),
            'machine': bench_report.machine_meta(load_before)}
    return bench_report.finish(args.out_dir, WHAT, data, markdown(data))


if __name__ == '__main__':
    sys.exit(main())

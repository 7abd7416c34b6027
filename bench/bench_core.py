"""Core benchmark: images/sec per model and batch size, and the framework overhead ratio.

    python -m bench.bench_core [--models=trivial,alexnet,resnet50] [--batch_sizes=16,32]

For each configuration (synthetic data, CPU, one tower) one graph and one session serve two
loops, interleaved `--repeats` times so drifts of the machine hit both alike:

* ours: the product's timed loop (training_loop.run_loop with BenchmarkCNN's step function, step
  lines printed to /dev/null);
* bare: a callable of the same fetches (train op, loss, the pipeline's puts) in a plain Python
  loop, no logging or bookkeeping.

overhead ratio = median(ours images/sec) / median(bare images/sec); target >= 0.98.
Also reports achieved GFLOP/s = 3 x forward FLOPs per image (counted from the graph by
models/flops.py; training is about forward + 2x for the backward pass) x images/sec.
Writes results/*-core.json and results/*-core.md.
"""

import contextlib
import io
import statistics
import time

from .preamble import RESULTS, start  # noqa: E402

start()  # oneDNN kernels, BFC allocator: before TensorFlow loads

from absl import app, flags  # noqa: E402

from . import bench_report  # noqa: E402

flags.DEFINE_list('models', ['trivial', 'alexnet', 'resnet50'], 'Models to run.')
flags.DEFINE_list('batch_sizes', ['16', '32'], 'Per-device batch sizes.')
flags.DEFINE_integer('steps', 10, 'Timed steps per loop.')
flags.DEFINE_integer('warmup', 3, 'Untimed steps before the loops.')
flags.DEFINE_integer('repeats', 3, 'Interleaved repetitions of both loops.')
flags.DEFINE_string('out', RESULTS, 'Output directory.')
FLAGS = flags.FLAGS


def measure(model, batch_size, steps, warmup, repeats):
    """Returns a dict of images/sec (ours, bare), their ratio and GFLOP/s for one config."""
    import tensorflow as tf

    from tf_cnn_benchmarks import benchmark_cnn
    from tf_cnn_benchmarks.lifecycle import training_loop
    from tf_cnn_benchmarks.models import flops
    from tf_cnn_benchmarks.params import make_params

    tf.compat.v1.disable_eager_execution()
    bench = benchmark_cnn.BenchmarkCNN(make_params(
        model=model, batch_size=batch_size, num_batches=steps, num_warmup_batches=0,
        device='cpu'), gpus=0)
    info = bench.build_graph()
    ours, bare = [], []
    with info.graph.as_default(), bench.create_session(info) as sess:
        bench.initialize(sess, info)
        # The same fetches as a product step (the loss is printed, so it is fetched): the ratio
        # then measures the loop's own overhead.
        bare_step = sess.make_callable([info.train_op, info.loss]
                                       + list(info.pipeline.step_ops))
        for _ in range(warmup):
            bare_step()
        step_fn = bench.make_step_fn(sess, info)
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(steps):
                bare_step()
            bare.append(batch_size * steps / (time.perf_counter() - start))
            with contextlib.redirect_stdout(io.StringIO()):
                result = training_loop.run_loop(step_fn, num_warmup=0, num_steps=steps,
                                                images_per_step=batch_size, display_every=10)
            ours.append(result.images_per_sec)
    forward = flops.forward_flops_per_image(bench.model, bench.plan.image_size)
    ours_median, bare_median = statistics.median(ours), statistics.median(bare)
    return {
        'model': model, 'batch_size': batch_size, 'steps': steps, 'repeats': repeats,
        'images_per_sec': ours_median, 'bare_images_per_sec': bare_median,
        'overhead_ratio': ours_median / bare_median,
        'forward_gflops_per_image': forward / 1e9,
        'achieved_gflops_per_sec': 3 * forward * ours_median / 1e9,
        'ours_all': ours, 'bare_all': bare,
    }


def markdown(rows):
    return bench_report.markdown_table(
        ['model', 'batch', 'images/sec', 'bare images/sec', 'overhead ratio', 'GFLOP/s'], 'lrrrrr',
        [[r['model'], '%d' % r['batch_size'], '%.1f' % r['images_per_sec'],
          '%.1f' % r['bare_images_per_sec'], '%.3f' % r['overhead_ratio'],
          '%.1f' % r['achieved_gflops_per_sec']] for r in rows])


def main(argv):
    del argv
    rows = []
    for model in FLAGS.models:
        for batch_size in FLAGS.batch_sizes:
            steps = FLAGS.steps if model != 'resnet50' else max(3, FLAGS.steps // 2)
            row = measure(model, int(batch_size), steps, FLAGS.warmup, FLAGS.repeats)
            print('%-10s batch %3d: %8.1f images/sec (bare %8.1f) ratio %.3f' % (
                model, row['batch_size'], row['images_per_sec'], row['bare_images_per_sec'],
                row['overhead_ratio']), flush=True)
            rows.append(row)
    return bench_report.finish(FLAGS.out, 'core', rows, markdown(rows))

if __name__ == '__main__':
    app.run(main)

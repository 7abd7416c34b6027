"""Model smoke-speed table: graph build time and images/sec of every registered model on CPU.

    python -m bench.bench_models [--models=resnet50,vgg16] [--batch_size=8] [--steps=3]

For each model (synthetic data, one CPU tower, the model's default image size): the seconds to
build the training graph, forward GFLOPs per image, and the images/sec of `--steps` timed steps
after one warm-up step. Target: graph build well under the time of the timed steps, < 10 s for the
largest model. Writes results/*-models.json and models.md.
"""

import time

from .preamble import RESULTS, start  # noqa: E402

start()  # oneDNN kernels, BFC allocator: before TensorFlow loads

from absl import app, flags  # noqa: E402

from . import bench_report  # noqa: E402

flags.DEFINE_list('models', [], 'Models to run (default: every registered model).')
flags.DEFINE_integer('batch_size', 8, 'Per-device batch size.')
flags.DEFINE_integer('steps', 3, 'Timed steps per model.')
flags.DEFINE_string('out', RESULTS, 'Output directory.')
FLAGS = flags.FLAGS


def measure(name, dataset, batch_size, steps):
    """Returns build seconds, forward GFLOPs per image and images/sec of one model."""
    from tf_cnn_benchmarks import benchmark_cnn
    from tf_cnn_benchmarks.lifecycle import training_loop
    from tf_cnn_benchmarks.models import flops
    from tf_cnn_benchmarks.params import make_params

    data_name = 'cifar10' if dataset == 'cifar10' else None
    bench = benchmark_cnn.BenchmarkCNN(make_params(
        model=name, batch_size=batch_size, num_batches=steps, num_warmup_batches=1,
        device='cpu', data_name=data_name), gpus=0)
    start = time.perf_counter()
    info = bench.build_graph()
    build_secs = time.perf_counter() - start
    with info.graph.as_default(), bench.create_session(info) as sess:
        bench.initialize(sess, info)
        result = training_loop.run_loop(bench.make_step_fn(sess, info), num_warmup=1,
                                        num_steps=steps, images_per_step=batch_size,
                                        display_every=10 ** 6, log=lambda _: None)
    return {'model': name, 'dataset': dataset, 'image_size': bench.plan.image_size,
            'batch_size': batch_size, 'build_secs': build_secs,
            'timed_secs': result.elapsed_secs, 'images_per_sec': result.images_per_sec,
            'forward_gflops_per_image': flops.forward_flops_per_image(
                bench.model, bench.plan.image_size) / 1e9}


def main(argv):
    del argv
    import tensorflow as tf

    from tf_cnn_benchmarks.models import model_config
    tf.compat.v1.disable_eager_execution()
    wanted = set(FLAGS.models)
    rows = []
    for name, dataset in model_config.list_models():
        if wanted and name not in wanted:
            continue
        row = measure(name, dataset, FLAGS.batch_size, FLAGS.steps)
        print('%-16s %-8s build %5.1f s  %8.2f images/sec' % (
            name, dataset, row['build_secs'], row['images_per_sec']), flush=True)
        rows.append(row)
    table = bench_report.markdown_table(
        ['model', 'dataset', 'image', 'build s', 'timed s', 'images/sec', 'fwd GFLOPs/image'],
        'llrrrrr', [[r['model'], r['dataset'], '%d' % r['image_size'], '%.1f' % r['build_secs'],
                     '%.1f' % r['timed_secs'], '%.2f' % r['images_per_sec'],
                     '%.2f' % r['forward_gflops_per_image']] for r in rows])
    return bench_report.finish(FLAGS.out, 'models', rows, table)

if __name__ == '__main__':
    app.run(main)

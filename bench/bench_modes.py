"""Variable-manager benchmark: images/sec per --variable_update with 1 and 2 logical CPU devices.

    python bench/bench_modes.py [--models=trivial,alexnet,resnet50] [--batch_size=8]

For each model and device count, every mode (parameter_server, replicated with the default
all-reduce and with xring, independent) runs in its own graph and session; the ratio columns
compare each mode with the plain single-tower parameter_server run (1 device) and with
independent (2 devices), the targets of issue 4: with 1 device every mode within 3% of the plain
run; with 2 devices replicated within 5% of independent for resnet50. Writes
bench/results/modes.json and modes.md.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')

from absl import app, flags  # noqa: E402

flags.DEFINE_list('models', ['trivial', 'alexnet', 'resnet50'], 'Models to run.')
flags.DEFINE_integer('batch_size', 8, 'Per-device batch size.')
flags.DEFINE_integer('steps', 5, 'Timed steps per run.')
flags.DEFINE_string('out', os.path.join(HERE, 'results'), 'Output directory.')
FLAGS = flags.FLAGS

MODES = [('parameter_server', {}), ('replicated', {}),
         ('replicated', {'all_reduce_spec': 'xring'}), ('independent', {})]


def measure(model, num_devices, mode, extra, batch_size, steps):
    import training_loop
    from benchmark_cnn import BenchmarkCNN
    from params import make_params

    bench = BenchmarkCNN(make_params(model=model, batch_size=batch_size, device='cpu',
                                     num_gpus=num_devices, variable_update=mode,
                                     num_batches=steps, num_warmup_batches=2, **extra), gpus=0)
    info = bench.build_graph()
    with info.graph.as_default(), bench.create_session(info) as sess:
        bench.initialize(sess, info)
        result = training_loop.run_loop(bench.make_step_fn(sess, info), num_warmup=2,
                                        num_steps=steps, images_per_step=bench.global_batch_size,
                                        display_every=10 ** 6, log=lambda _: None)
    return result.images_per_sec


def main(argv):
    del argv
    import tensorflow as tf
    tf.compat.v1.disable_eager_execution()
    rows = []
    for model in FLAGS.models:
        for devices in (1, 2):
            results = {}
            for mode, extra in MODES:
                label = mode + (' (%s)' % extra['all_reduce_spec'] if extra else '')
                results[label] = measure(model, devices, mode, extra, FLAGS.batch_size,
                                         FLAGS.steps)
                print('%-9s %d device(s) %-24s %8.2f images/sec' % (
                    model, devices, label, results[label]), flush=True)
            base = results['parameter_server' if devices == 1 else 'independent']
            for label, rate in results.items():
                rows.append({'model': model, 'devices': devices, 'mode': label,
                             'images_per_sec': rate, 'ratio': rate / base})
    os.makedirs(FLAGS.out, exist_ok=True)
    with open(os.path.join(FLAGS.out, 'modes.json'), 'w') as f:
        json.dump(rows, f, indent=2)
    lines = ['| model | devices | mode | images/sec | ratio (1: vs ps, 2: vs independent) |',
             '| --- | ---: | --- | ---: | ---: |']
    lines += ['| %s | %d | %s | %.2f | %.3f |' % (r['model'], r['devices'], r['mode'],
                                                 r['images_per_sec'], r['ratio']) for r in rows]
    with open(os.path.join(FLAGS.out, 'modes.md'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print('\n'.join(lines))


if __name__ == '__main__':
    app.run(main)

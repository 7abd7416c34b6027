"""Precision and XLA benchmark on CPU: images/sec and achieved GFLOP/s against a measured ceiling.

    python -m bench.bench_precision [--models=resnet50,inception3,alexnet,vgg16] [--batch_size=8]
    python -m bench.bench_precision --threads     # the thread-pool table instead

Precision mode: for each model (synthetic data, one tower, training) every configuration of
{fp32, bf16, fp16 (static loss scale 128)} x {no XLA, --xla, --xla_compile} runs in its own
process (a fresh TensorFlow: --xla's CPU auto-clustering is a per-process switch, and no run
inherits another's caches or thread pools), --rounds times in round-robin order so that drifts of
the machine hit every configuration alike; the median images/sec of the rounds is reported with
its ratio to fp32 (same model, same run) and to the same precision without XLA.

Achieved GFLOP/s = 3 x forward FLOPs per image (models/flops.py; training ~ forward + 2x for the
backward pass) x images/sec. The ceiling is measured in the same run and dtype: the best of a
large matmul (2048^3) and a large 3x3 convolution (16x56x56x128 -> 128), each the best of
several timed runs.

Thread mode (--threads): trivial and resnet50 at a small batch under several (intra-op, inter-op)
thread-pool sizes, in round-robin order: the measurement behind cpu_tuning.default_thread_counts.

Writes results/*-precision.{json,md} or results/*-threads.{json,md}, with the load average
(`os.getloadavg`) before and after each configuration: other work on the machine shows there.
"""

import json
import math
import os
import statistics
import subprocess
import sys
import time

from . import bench_report  # noqa: E402
from .preamble import REPO, RESULTS, start  # noqa: E402

start()  # oneDNN kernels, BFC allocator: before TensorFlow loads

from absl import app, flags  # noqa: E402

flags.DEFINE_list('models', ['resnet50', 'inception3', 'alexnet', 'vgg16'], 'Models to run.')
flags.DEFINE_list('precisions', ['fp32', 'bf16', 'fp16'], 'Precisions to run.')
flags.DEFINE_list('xla_modes', ['off', 'xla', 'xla_compile'], 'XLA modes to run.')
flags.DEFINE_integer('batch_size', 8, 'Per-device batch size.')
flags.DEFINE_integer('steps', 3, 'Timed steps per configuration and round.')
flags.DEFINE_integer('warmup', 2, 'Untimed steps first (XLA compiles in these).')
flags.DEFINE_integer('rounds', 1, 'Round-robin repetitions of every configuration.')
flags.DEFINE_boolean('threads', False, 'Measure thread-pool sizes instead of precisions.')
flags.DEFINE_list('thread_models', ['trivial', 'resnet50'], 'Models of the thread table.')
flags.DEFINE_list('thread_settings', ['1:1', '2:1', '2:2', '0:0', '1:2', '2:1:noonednn'],
                  'intra:inter[:noonednn] settings of the thread table (0: TensorFlow decides; '
                  'noonednn: with TF_ENABLE_ONEDNN_OPTS=0, TensorFlow\'s stock kernels; the '
                  'others run with oneDNN, as the command does).')
flags.DEFINE_integer('trivial_steps', 200, 'Timed steps of the trivial model (milliseconds '
                     'each), per configuration and round.')
flags.DEFINE_string('out', RESULTS, 'Output directory.')
flags.DEFINE_string('worker', None, 'Internal: run one configuration (JSON) and print it.')
FLAGS = flags.FLAGS

PRECISION_FLAGS = {'fp32': {}, 'bf16': {'use_bf16': True}, 'fp16': {'use_fp16': True}}
XLA_FLAGS = {'off': {}, 'xla': {'xla': True}, 'xla_compile': {'xla_compile': True}}
DTYPES = {'fp32': 'float32', 'bf16': 'bfloat16', 'fp16': 'float16'}


# --- Worker side (one configuration per process).

def _train_worker(spec):
    """Times `spec['steps']` training steps after `spec['warmup']`; returns a result dict."""
    from tf_cnn_benchmarks.params import make_params
    from tf_cnn_benchmarks.runtime import cpu_tuning
    p = make_params(model=spec['model'], batch_size=spec['batch_size'], device='cpu',
                    num_batches=spec['steps'], num_warmup_batches=spec['warmup'],
                    **spec['flags'])
    cpu_tuning.configure_environment(p)  # as the entry script: before TensorFlow loads
    import tensorflow as tf
    tf.compat.v1.disable_eager_execution()
    from tf_cnn_benchmarks import benchmark_cnn
    from tf_cnn_benchmarks.models import flops
    from tf_cnn_benchmarks.runtime import xla_jit
    bench = benchmark_cnn.BenchmarkCNN(p, gpus=0)
    build_start = time.perf_counter()
    info = bench.build_graph()
    losses, times = [], []
    with info.graph.as_default(), bench.create_session(info) as sess:
        bench.initialize(sess, info)
        build_secs = time.perf_counter() - build_start
        warm_start = time.perf_counter()
        for _ in range(spec['warmup']):
            losses.append(float(sess.run([info.train_op, info.loss])[1]))
        warmup_secs = time.perf_counter() - warm_start
        for _ in range(spec['steps']):
            start = time.perf_counter()
            losses.append(float(sess.run([info.train_op, info.loss])[1]))
            times.append(time.perf_counter() - start)
    return {
        'images_per_sec': spec['batch_size'] * len(times) / sum(times),
        'step_secs': times, 'losses': losses,
        'finite': all(math.isfinite(x) for x in losses),
        'build_secs': build_secs, 'warmup_secs': warmup_secs,
        'forward_flops_per_image': flops.forward_flops_per_image(bench.model,
                                                                 bench.plan.image_size),
        'image_size': bench.plan.image_size,
        'xla_auto_active': xla_jit.auto_clustering_active() if p.xla else None,
    }


def _ceiling_worker(spec):
    """Best GFLOP/s of a large matmul and a large convolution in `spec['dtype']`."""
    import tensorflow as tf

    from tf_cnn_benchmarks.params import make_params
    from tf_cnn_benchmarks.runtime import cpu_tuning
    tf1 = tf.compat.v1
    tf1.disable_eager_execution()
    dtype = tf.as_dtype(spec['dtype'])
    intra, inter = cpu_tuning.thread_counts(make_params())
    config = tf1.ConfigProto(intra_op_parallelism_threads=intra,
                             inter_op_parallelism_threads=inter)
    shapes = {
        'matmul': (lambda a, b: tf.matmul(a, b), [2048, 2048], [2048, 2048], 2 * 2048 ** 3),
        'conv': (lambda a, b: tf.nn.conv2d(a, b, 1, 'SAME'), [16, 56, 56, 128], [3, 3, 128, 128],
                 2 * 16 * 56 * 56 * 128 * 9 * 128),
    }
    out = {}
    for name, (fn, shape_a, shape_b, flop) in shapes.items():
        graph = tf.Graph()
        with graph.as_default():
            a = tf1.get_variable('a', shape_a, dtype, tf1.random_uniform_initializer(-1, 1))
            b = tf1.get_variable('b', shape_b, dtype, tf1.random_uniform_initializer(-1, 1))
            # Fetch one element: the timing is of the op, not of copying its output.
            y = tf.reshape(fn(a, b), [-1])[0]
            with tf1.Session(config=config) as sess:
                sess.run(tf1.global_variables_initializer())
                sess.run(y)
                best = min(_timed(sess, y) for _ in range(spec['repeats']))
        out[name] = flop / best / 1e9
    out['ceiling'] = max(out['matmul'], out['conv'])
    return out


def _timed(sess, fetch):
    start = time.perf_counter()
    sess.run(fetch)
    return time.perf_counter() - start


def _worker(spec_json):
    spec = json.loads(spec_json)
    result = _ceiling_worker(spec) if spec['kind'] == 'ceiling' else _train_worker(spec)
    print('RESULT ' + json.dumps(result), flush=True)


# --- Driver side.

def run_spec(spec, timeout=3600):
    """Runs one configuration in a new process; returns its result dict plus load averages."""
    load_before = os.getloadavg()[0]
    env = dict(os.environ)
    env.update(spec.get('env', {}))
    proc = subprocess.run([sys.executable, '-m', 'bench.bench_precision', '--worker',
                           json.dumps(spec)], capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=REPO)
    lines = [x for x in proc.stdout.splitlines() if x.startswith('RESULT ')]
    if proc.returncode != 0 or not lines:
        return {'error': (proc.stderr.strip().splitlines() or ['exit %d' % proc.returncode])[-1],
                'load_before': load_before, 'load_after': os.getloadavg()[0]}
    result = json.loads(lines[-1][len('RESULT '):])
    result.update(load_before=load_before, load_after=os.getloadavg()[0])
    return result


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def precision_table(models, precisions, xla_modes, batch_size, steps, warmup, rounds):
    """Runs every configuration `rounds` times round-robin; returns (rows, ceilings)."""
    ceilings = {}
    for prec in precisions:
        spec = {'kind': 'ceiling', 'dtype': DTYPES[prec], 'repeats': 5}
        ceilings[prec] = run_spec(spec)
        print('ceiling %-5s %s' % (prec, _fmt(ceilings[prec])), flush=True)
    configs = [(m, p, x) for m in models for p in precisions for x in xla_modes]
    runs = {c: [] for c in configs}
    for round_index in range(rounds):
        for model, prec, xla in configs:
            spec = {'kind': 'train', 'model': model, 'batch_size': batch_size, 'steps': steps,
                    'warmup': warmup, 'flags': {**PRECISION_FLAGS[prec], **XLA_FLAGS[xla]}}
            result = run_spec(spec)
            runs[(model, prec, xla)].append(result)
            print('round %d %-10s %-5s %-12s %s' % (round_index, model, prec, xla,
                                                   _fmt(result)), flush=True)
    rows = []
    for model, prec, xla in configs:
        ok = [r for r in runs[(model, prec, xla)] if 'error' not in r]
        row = {'model': model, 'precision': prec, 'xla': xla, 'batch_size': batch_size,
               'steps': steps, 'rounds': rounds,
               'errors': [r['error'] for r in runs[(model, prec, xla)] if 'error' in r],
               'images_per_sec': _median([r['images_per_sec'] for r in ok]),
               'all_images_per_sec': [r['images_per_sec'] for r in ok],
               'finite_losses': all(r['finite'] for r in ok) if ok else None,
               'first_losses': ok[0]['losses'][:3] if ok else None,
               'load': [(r['load_before'], r['load_after']) for r in runs[(model, prec, xla)]],
               'xla_auto_active': ok[0].get('xla_auto_active') if ok else None,
               'build_secs': _median([r['build_secs'] for r in ok]),
               'warmup_secs': _median([r['warmup_secs'] for r in ok])}
        flop = ok[0]['forward_flops_per_image'] if ok else None
        row['gflops_per_sec'] = (3 * flop * row['images_per_sec'] / 1e9
                                 if ok and row['images_per_sec'] else None)
        ceiling = ceilings.get(prec, {}).get('ceiling')
        row['ceiling_gflops_per_sec'] = ceiling
        row['fraction_of_ceiling'] = (row['gflops_per_sec'] / ceiling
                                      if row['gflops_per_sec'] and ceiling else None)
        rows.append(row)
    by_key = {(r['model'], r['precision'], r['xla']): r for r in rows}
    for row in rows:
        fp32 = by_key.get((row['model'], 'fp32', row['xla']), {}).get('images_per_sec')
        no_xla = by_key.get((row['model'], row['precision'], 'off'), {}).get('images_per_sec')
        speed = row['images_per_sec']
        row['vs_fp32'] = speed / fp32 if speed and fp32 else None
        row['vs_no_xla'] = speed / no_xla if speed and no_xla else None
    return rows, ceilings


def thread_table(models, settings, batch_size, steps, warmup, rounds):
    """Images/sec per (model, intra:inter) setting, `rounds` round-robin repetitions."""
    runs = {}
    for _ in range(rounds):
        for model in models:
            for setting in settings:
                parts = setting.split(':')
                intra, inter = int(parts[0]), int(parts[1])
                spec = {'kind': 'train', 'model': model, 'batch_size': batch_size,
                        'steps': FLAGS.trivial_steps if model == 'trivial' else steps,
                        'warmup': warmup,
                        'flags': {'num_intra_threads': intra, 'num_inter_threads': inter},
                        # 'noonednn': TensorFlow's stock (Eigen) kernels instead of oneDNN's,
                        # which the command turns on (TensorFlow's default is off on CPUs
                        # without AVX512-VNNI/BF16/AMX).
                        'env': {'TF_ENABLE_ONEDNN_OPTS': '0' if parts[2:] == ['noonednn']
                                else '1'}}
                result = run_spec(spec)
                runs.setdefault((model, setting), []).append(result)
                print('%-10s %-5s %s' % (model, setting, _fmt(result)), flush=True)
    rows = []
    for (model, setting), results in runs.items():
        ok = [r for r in results if 'error' not in r]
        rows.append({'model': model, 'intra:inter': setting, 'batch_size': batch_size,
                     'images_per_sec': _median([r['images_per_sec'] for r in ok]),
                     'all_images_per_sec': [r['images_per_sec'] for r in ok],
                     'load': [(r['load_before'], r['load_after']) for r in results],
                     'errors': [r['error'] for r in results if 'error' in r]})
    for model in models:
        mine = [r for r in rows if r['model'] == model and r['images_per_sec']]
        best = max((r['images_per_sec'] for r in mine), default=None)
        for row in mine:
            row['vs_best'] = row['images_per_sec'] / best if best else None
    return rows


def _fmt(result):
    if 'error' in result:
        return 'error: %s' % result['error']
    if 'ceiling' in result:
        return 'matmul %.1f, conv %.1f GFLOP/s' % (result['matmul'], result['conv'])
    return '%.2f images/sec (load %.1f -> %.1f)' % (
        result['images_per_sec'], result['load_before'], result['load_after'])


def _num(value, fmt):
    return fmt % value if value is not None else 'n/a'


def precision_markdown(rows, ceilings):
    lines = ['| model | precision | XLA | images/sec | vs fp32 | vs no XLA | GFLOP/s | '
             'ceiling GFLOP/s | of ceiling | finite | load avg |',
             '| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |']
    for r in rows:
        load = ' '.join('%.1f-%.1f' % pair for pair in r['load'])
        lines.append('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
            r['model'], r['precision'], r['xla'], _num(r['images_per_sec'], '%.2f'),
            _num(r['vs_fp32'], '%.2fx'), _num(r['vs_no_xla'], '%.2fx'),
            _num(r['gflops_per_sec'], '%.1f'), _num(r['ceiling_gflops_per_sec'], '%.1f'),
            _num(r['fraction_of_ceiling'], '%.2f'),
            {True: 'yes', False: 'NO', None: 'n/a'}[r['finite_losses']],
            load if not r['errors'] else 'error: %s' % r['errors'][0][:80]))
    lines.append('')
    lines.append('Ceilings (best of 5): ' + '; '.join(
        '%s matmul %s, conv %s GFLOP/s' % (p, _num(c.get('matmul'), '%.1f'),
                                           _num(c.get('conv'), '%.1f'))
        for p, c in ceilings.items()))
    return '\n'.join(lines)


def threads_markdown(rows):
    lines = ['| model | intra:inter | images/sec | vs best | runs | load avg |',
             '| --- | --- | ---: | ---: | --- | --- |']
    for r in rows:
        lines.append('| %s | %s | %s | %s | %s | %s |' % (
            r['model'], r['intra:inter'], _num(r['images_per_sec'], '%.2f'),
            _num(r.get('vs_best'), '%.2f'),
            ', '.join('%.2f' % x for x in r['all_images_per_sec']),
            ' '.join('%.1f-%.1f' % pair for pair in r['load'])))
    return '\n'.join(lines)


def _write(name, data, table):
    bench_report.write_results(FLAGS.out, name, data, table)


def main(argv):
    del argv
    if FLAGS.worker:
        _worker(FLAGS.worker)
        return
    machine = {'load_at_start': os.getloadavg(), 'cpus': os.cpu_count(),
               'started': time.strftime('%Y-%m-%d %H:%M:%S')}
    if FLAGS.threads:
        rows = thread_table(FLAGS.thread_models, FLAGS.thread_settings, FLAGS.batch_size,
                            FLAGS.steps, FLAGS.warmup, FLAGS.rounds)
        _write('threads', {'machine': machine, 'rows': rows}, threads_markdown(rows))
        return
    rows, ceilings = precision_table(FLAGS.models, FLAGS.precisions, FLAGS.xla_modes,
                                     FLAGS.batch_size, FLAGS.steps, FLAGS.warmup, FLAGS.rounds)
    machine['load_at_end'] = os.getloadavg()
    _write('precision', {'machine': machine, 'ceilings': ceilings, 'rows': rows},
           precision_markdown(rows, ceilings))


if __name__ == '__main__':
    app.run(main)

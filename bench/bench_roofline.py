"""Hardware limit of a step: every convolution and matmul at its standalone speed, any precision.

    python -m bench.bench_roofline [--model=resnet50] [--batch_size=16] [--image_size=0] \
        [--use_bf16 | --use_fp16] [--forward_only] [--reps=10] [--steps=5] [--warmup=2] \
        [--original_dir=DIR_OF_THE_ORIGINAL --original_python=PYTHON_WITH_TF_KERAS]

1. Builds the project's graph (synthetic data, NHWC, one CPU tower; a training step, or with
   --forward_only the inference forward pass) in the run's dtype (--use_bf16: bfloat16,
   --use_fp16: float16 with static loss scale 128, else float32) and collects the
   Conv2D, Conv2DBackpropInput/Filter, DepthwiseConv2dNative(+Backprop*), MatMul and
   BatchMatMul ops the train op needs (a backwards walk over inputs and control inputs: the
   first layer's input gradient, which tf.gradients builds but nothing uses, is left out).
2. Times each distinct (type, input shapes, dtypes, attributes) op standalone in its own dtype
   (a bfloat16 run's convolutions in bfloat16: the limit is that precision's), `--reps` runs after
   `--warmup`, median: its own graph, random-valued variables as inputs (nothing to fold), the
   output assigned to a variable (a stateful target Grappler cannot prune), a session of
   intra-op = physical cores, inter-op = 1. The median of an empty session call (a no-op,
   same session) is subtracted: the call is framework, which the limit counts as free.
3. limit = sum over distinct ops of count per step x standalone time: the step time if every
   other op (batch norm, ReLU, pooling, optimizer, ...) and all scheduling were free and the
   big ops ran one after another at their standalone speed. images/sec limit = batch / limit.
4. Times the project's own step (BenchmarkCNN.make_step_fn, median of `--steps` after
   `--warmup`; half of the steps before the standalone ops, half after, in one session, so a
   drift of the machine's load hits both; `--stat=min` takes the least run of each instead of
   the median, for a busy machine) and, with `--original_dir`, the original tf_cnn_benchmarks
   as a fresh process (bench_vs_original.run_once, its `total images/sec`) with the same
   --use_fp16 and --forward_only; the original has no bfloat16: a --use_bf16 run has no
   original row.

Verdict: ours / limit (images/sec over the limit's) is the fraction of the hardware limit the
step reaches; 1 - that is what everything but the big ops costs (elementwise ops, memory
traffic, framework). Near 1: only faster kernels help; well below 1: the graph and runtime do.
A figure above 1 means the step overlaps big ops (inter-op threads) or the standalone runs
were disturbed: look at the load averages. Writes results/*-roofline_<model>_b<batch>
[_i<image size>][_bf16|_fp16][_fwd].json and .md with the CPU model and load averages.
"""

from __future__ import annotations

import collections
import math
import os
import statistics
import sys
import time

from .preamble import RESULTS, ArgumentParser, start_tensorflow  # noqa: E402

tf = start_tensorflow()  # oneDNN kernels, BFC allocator: set before it loads
from tf_cnn_benchmarks.hardware import machine  # noqa: E402
from tf_cnn_benchmarks.runtime import cpu_tuning  # noqa: E402

tf1 = tf.compat.v1
from . import bench_report, roofline_forms  # noqa: E402

CONV_TYPES = ('Conv2D', 'Conv2DBackpropInput', 'Conv2DBackpropFilter', 'DepthwiseConv2dNative',
              'DepthwiseConv2dNativeBackpropInput', 'DepthwiseConv2dNativeBackpropFilter')
MATMUL_TYPES = ('MatMul', 'BatchMatMul', 'BatchMatMulV2', 'BatchMatMulV3')

# One distinct op: inputs are (arg name, shape, dtype name, value or None); a value is kept for
# the integer size inputs of the backprops (input_sizes, filter_sizes), the rest are data.
OpSpec = collections.namedtuple('OpSpec', ['type', 'inputs', 'attrs', 'out_shape'])


def needed_ops(train_op) -> set:
    """The ops `train_op` depends on (through data and control inputs), itself included."""
    seen, todo = set(), [train_op]
    while todo:
        op = todo.pop()
        if op not in seen:
            seen.add(op)
            todo.extend(t.op for t in op.inputs)
            todo.extend(op.control_inputs)
    return seen


def _plain(value):
    """An attribute value as a hashable, JSON-friendly Python value."""
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return tuple(_plain(v) for v in value)
    if isinstance(value, tf.DType):
        return value.name
    return value


def op_spec(op) -> OpSpec:
    """The OpSpec of a graph op: what makes two ops the same standalone computation."""
    inferred = {a.type_attr for a in op.op_def.input_arg}
    inputs = []
    for arg, t in zip(op.op_def.input_arg, op.inputs):
        value = None
        if t.dtype.is_integer:  # a size argument: its value, else the output's shape
            value = tf.get_static_value(t)
            value = tuple(int(v) for v in (value if value is not None else op.outputs[0].shape))
        inputs.append((arg.name, tuple(t.shape.as_list()), t.dtype.name, value))
    attrs = tuple(sorted((a.name, _plain(op.get_attr(a.name))) for a in op.op_def.attr
                         if a.name not in inferred))
    return OpSpec(op.type, tuple(inputs), attrs, tuple(op.outputs[0].shape.as_list()))


def collect(graph, train_op) -> collections.Counter:
    """Counter OpSpec -> occurrences among the convolutions and matmuls `train_op` needs."""
    needed = needed_ops(train_op)
    return collections.Counter(op_spec(op) for op in graph.get_operations()
                               if op.type in CONV_TYPES + MATMUL_TYPES and op in needed)


def _dims(shape) -> str:
    return 'x'.join(str(d) for d in shape)


def flops(spec: OpSpec) -> int:
    """Multiply-adds x 2 of one op (layout-free: counts of the big tensor's elements)."""
    shapes = {name: shape for name, shape, _, _ in spec.inputs}
    attrs = dict(spec.attrs)
    if spec.type in MATMUL_TYPES:
        a = shapes.get('a') or shapes['x']
        trans = attrs.get('transpose_a', attrs.get('adj_x', False))
        return 2 * math.prod(spec.out_shape) * a[-2 if trans else -1]
    kernel = shapes.get('filter') or dict((n, v) for n, _, _, v in spec.inputs)['filter_sizes']
    big = shapes.get('out_backprop') or spec.out_shape  # the conv's output (or its gradient)
    per_output = kernel[0] * kernel[1] * (1 if 'Depthwise' in spec.type else kernel[2])
    return 2 * math.prod(big) * per_output


#: How the timed calls of one thing become one figure: 'median' (the default), or 'min' on a
#: busy machine (other work only ever slows a call down, so the least is nearest the quiet
#: machine's time, for the step and its standalone ops alike). main() sets it (--stat).
STAT = {'fn': statistics.median}


def median_secs(run, reps: int, warmup: int) -> float:
    """Median (or with --stat=min the least) wall seconds of `run()` over `reps` calls, after
    `warmup` untimed calls."""
    return STAT['fn'](_timed(run, reps, warmup))


def standalone_secs(spec: OpSpec, reps: int, warmup: int) -> dict:
    """Median seconds of one standalone run of `spec` (net of an empty call) and that call."""
    graph = tf.Graph()
    with graph.as_default():
        kwargs = dict(spec.attrs)
        for name, shape, dtype, value in spec.inputs:
            if value is not None:
                kwargs[name] = tf.constant(value, dtype=dtype)
            else:
                kwargs[name] = tf1.Variable(tf1.random_normal(shape, dtype=dtype), name=name)
        out = getattr(tf.raw_ops, spec.type)(**kwargs)
        sink = tf1.Variable(tf.zeros(spec.out_shape, out.dtype), name='sink')
        run_op = tf1.assign(sink, out).op
        init = tf1.global_variables_initializer()
        empty = tf.no_op()
    config = tf1.ConfigProto(intra_op_parallelism_threads=cpu_tuning.physical_cores(),
                             inter_op_parallelism_threads=1)
    with tf1.Session(graph=graph, config=config) as sess:
        sess.run(init)
        medians = {}
        for key, target in (('call', empty), ('op', run_op)):
            medians[key] = median_secs(sess.make_callable(target), reps, warmup)
    return {'secs': max(0.0, medians['op'] - medians['call']), 'call_secs': medians['call']}


def limit(counts: dict, secs: dict) -> dict:
    """The step's limit from counts (OpSpec -> ops per step) and secs (OpSpec -> seconds).

    Returns:
      {'secs': sum of count x secs, 'by_type': {type: {'secs', 'ops', 'distinct', 'flops'}}}.
    """
    by_type = {}
    for spec, count in counts.items():
        row = by_type.setdefault(spec.type, {'secs': 0.0, 'ops': 0, 'distinct': 0, 'flops': 0})
        row['secs'] += count * secs[spec]
        row['ops'] += count
        row['distinct'] += 1
        row['flops'] += count * flops(spec)
    return {'secs': sum(row['secs'] for row in by_type.values()), 'by_type': by_type}


def strict_limit(counts: dict, secs: dict, forms: dict, memory: dict) -> dict:
    """The stricter limit (bench/roofline_forms.py): each op at the least standalone time of
    its own and its other forms, plus the memory-bound ops at memory speed.

    Args:
      counts: OpSpec -> ops per step; secs: OpSpec -> seconds, for every op and form.
      forms: OpSpec -> list of its other forms' OpSpecs; memory: roofline_forms.memory_secs.

    Returns:
      {'secs': compute + memory seconds, 'compute': `limit` of the fastest forms (by the
      graph's op types), 'memory': `memory`, 'other_form_ops': ops per step whose other form
      was faster}.
    """
    fastest = {spec: min([secs[spec]] + [secs[f] for f in forms.get(spec, ())])
               for spec in counts}
    compute = limit(counts, fastest)
    switched = sum(n for spec, n in counts.items() if fastest[spec] < secs[spec])
    return {'secs': compute['secs'] + memory['secs'], 'compute': compute, 'memory': memory,
            'other_form_ops': switched}


PRECISION_FLAGS = {'fp32': {}, 'bf16': {'use_bf16': True}, 'fp16': {'use_fp16': True}}


def precision_name(use_bf16: bool = False, use_fp16: bool = False) -> str:
    """'bf16', 'fp16' or 'fp32'."""
    return 'bf16' if use_bf16 else 'fp16' if use_fp16 else 'fp32'


def build(model: str, batch_size: int, image_size: int, data_name: str | None = None, *,
          precision: str = 'fp32', forward_only: bool = False,
          graph_choices: str = 'measured', num_inter_threads: int | None = None):
    """The project's BenchmarkCNN of the configuration and its built graph.

    Args:
      precision: 'fp32', 'bf16' (--use_bf16) or 'fp16' (--use_fp16, static loss scale).
      forward_only: the inference graph (--forward_only) instead of a training step.
      graph_choices: the run's --graph_choices (graph/graph_choices.py).
      num_inter_threads: the run's --num_inter_threads (None: the project's default).

    Raises:
      ValueError: unknown model, or a model of another dataset (give `data_name`).
    """
    from tf_cnn_benchmarks import benchmark_cnn, params
    p = params.make_params(model=model, batch_size=batch_size, image_size=image_size,
                           device='cpu', data_format='NHWC', num_batches=1,
                           num_warmup_batches=0, data_name=data_name,
                           forward_only=forward_only, graph_choices=graph_choices,
                           num_inter_threads=num_inter_threads, **PRECISION_FLAGS[precision])
    params.validate_params(p)
    bench = benchmark_cnn.BenchmarkCNN(p, gpus=0)
    return bench, bench.build_graph()


def real_step_secs(bench, info, steps: int, warmup: int, between=None) -> float:
    """Median seconds of the project's step (BenchmarkCNN.make_step_fn).

    With `between` (a function), the steps are timed in two halves, `between()` runs in the
    middle (the standalone ops), and the figure is over both halves: a drift of the machine's
    load hits the step and the standalone ops alike. Returns (seconds, between's result).
    """
    with info.graph.as_default(), bench.create_session(info) as sess:
        bench.initialize(sess, info)
        step = bench.make_step_fn(sess, info)
        if between is None:
            return median_secs(step, steps, warmup)
        first = _timed(step, (steps + 1) // 2, warmup)
        middle = between()
        second = _timed(step, steps // 2, 0)
        return STAT['fn'](first + second), middle


_timed = roofline_forms.timed  # wall seconds of each call, after untimed ones


def original_rate(args) -> float | None:
    """images/sec of the original tf_cnn_benchmarks (a fresh process), or None if it failed."""
    import bench_vs_original
    flags = ['--device=cpu', '--data_format=NHWC', '--model=%s' % args.model,
             '--batch_size=%d' % args.batch_size, '--num_batches=%d' % args.steps,
             '--num_warmup_batches=%d' % args.warmup]
    flags += ['--use_fp16'] if args.use_fp16 else []
    flags += ['--forward_only'] if args.forward_only else []
    return bench_vs_original.run_once(args.original_python, args.original_dir, flags,
                                      args.timeout, 'original')


def markdown(result: dict) -> str:
    meta, lim = result['meta'], result['limit']
    lines = ['Hardware limit of a %s step in %s: %s, batch %d, %dx%d, NHWC, %s, %d cores, TF %s; '
             'standalone ops %s of %d runs; load average %.2f before, %.2f after' % (
                 'forward-only' if meta.get('forward_only') else 'training',
                 meta.get('dtype', 'float32'),
                 meta['model'], meta['batch_size'], meta['image_size'], meta['image_size'],
                 meta['cpu'], meta['cores'], meta['tensorflow'], meta.get('stat', 'median'),
                 meta['reps'],
                 meta['load_before'], meta['load_after']), '']
    rows = [[kind, '%d' % r['ops'], '%d' % r['distinct'], '%.2f' % (1e3 * r['secs']),
             '%.0f%%' % (100 * r['secs'] / lim['secs'] if lim['secs'] else 0),
             '%.1f' % (r['flops'] / r['secs'] / 1e9 if r['secs'] else 0)]
            for kind, r in sorted(lim['by_type'].items(), key=lambda kv: -kv[1]['secs'])]
    lines.append(bench_report.markdown_table(
        ['op type', 'ops per step', 'distinct', 'ms per step', 'share', 'GFLOP/s'], 'lrrrrr',
        rows))
    batch = meta['batch_size']
    rows = [['limit (standalone big ops only)', '%.2f' % (1e3 * lim['secs']),
             '%.2f' % (batch / lim['secs']) if lim['secs'] else 'inf', '1.00']]
    for who in ('ours', 'original'):
        secs = result.get(who + '_step_secs')
        if secs:
            rows.append([who, '%.2f' % (1e3 * secs), '%.2f' % (batch / secs),
                         '%.2f' % (lim['secs'] / secs)])
        elif who in result:
            rows.append([who, 'failed', '-', '-'])
    lines += ['', bench_report.markdown_table(
        ['step', 'ms/step', 'images/sec', 'fraction of limit'], 'lrrr', rows)]
    strict = result.get('strict_limit')
    if strict:
        lines += ['', _strict_markdown(result, strict, batch)]
    note = ('An empty session call (median %.3f ms) was subtracted from each standalone op.'
            % (1e3 * statistics.median(result['call_secs'])))
    if 'original' in result:
        note += ' The original is its `total images/sec` (timed loop, not a median step).'
    lines += ['', note]
    return '\n'.join(lines)


def _strict_markdown(result: dict, strict: dict, batch: int) -> str:
    """The stricter limit's tables: per op type its fastest-form or memory seconds, then the
    limit against the step (bench/roofline_forms.py)."""
    rows = [[kind, '%d' % r['ops'], '%.2f' % (1e3 * r['secs']), 'fastest form']
            for kind, r in sorted(strict['compute']['by_type'].items(),
                                  key=lambda kv: -kv[1]['secs'])]
    rows += [[kind, '%d' % r['ops'], '%.2f' % (1e3 * r['secs']),
              '%.1f MB at memory speed' % (r['bytes'] / 1e6)]
             for kind, r in sorted(strict['memory']['by_type'].items(),
                                   key=lambda kv: -kv[1]['secs'])[:12]]
    bw = result.get('bandwidth_bytes_per_sec', {})
    text = ['Stricter limit: each big op in its fastest form (%d ops per step faster as the other '
            'form), plus every other op\'s bytes at the measured bandwidth (%s GB/s streaming '
            '%s MiB operands)' % (strict['other_form_ops'], '/'.join(
                '%.1f' % (v / 1e9) for v in bw.values()), '/'.join(
                '%g' % (int(k) / 2 ** 20) for k in bw)), '']
    text.append(bench_report.markdown_table(['op type', 'ops per step', 'ms per step', 'as'],
                                            'lrrl', rows))
    ours = result.get('ours_step_secs')
    rows = [['stricter limit: compute', '%.2f' % (1e3 * strict['compute']['secs']), '', ''],
            ['stricter limit: memory-bound ops', '%.2f' % (1e3 * strict['memory']['secs']),
             '', ''],
            ['stricter limit', '%.2f' % (1e3 * strict['secs']), '%.2f' % (batch / strict['secs']),
             '1.00']]
    if ours:
        rows.append(['ours', '%.2f' % (1e3 * ours), '%.2f' % (batch / ours),
                     '%.2f' % (strict['secs'] / ours)])
    text += ['', bench_report.markdown_table(['step', 'ms/step', 'images/sec',
                                              'fraction of the stricter limit'], 'lrrr', rows)]
    return '\n'.join(text)


def main(argv=None) -> int:
    parser = ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--model', default='resnet50')
    parser.add_argument('--batch_size', type=int, default=16)
    parser.add_argument('--image_size', type=int, default=0, help='0: the model default')
    parser.add_argument('--reps', type=int, default=10, help='timed runs per standalone op')
    parser.add_argument('--steps', type=int, default=5, help='timed training steps')
    parser.add_argument('--warmup', type=int, default=2, help='untimed runs (ops and steps)')
    parser.add_argument('--data_name', choices=('imagenet', 'cifar10'),
                        help='dataset of the model (cifar10 for resnet20, ...); synthetic images')
    parser.add_argument('--stat', choices=('median', 'min'), default='median',
                        help='figure of the timed runs: min on a busy machine')
    parser.add_argument('--use_bf16', action='store_true', help='bfloat16 compute (the original '
                        'has no bfloat16: no original row)')
    parser.add_argument('--use_fp16', action='store_true', help='float16 compute, loss scale 128')
    parser.add_argument('--forward_only', action='store_true', help='inference forward pass')
    parser.add_argument('--graph_choices', default='measured',
                        help='the step\'s --graph_choices: measured, off, or choice names')
    parser.add_argument('--num_inter_threads', type=int, default=None,
                        help='the step\'s --num_inter_threads (default: the project\'s)')
    parser.add_argument('--original_dir', help='folder of the original tf_cnn_benchmarks.py')
    parser.add_argument('--original_python', default=sys.executable)
    parser.add_argument('--timeout', type=float, default=1800.0, help='seconds, original run')
    parser.add_argument('--out', default=RESULTS)
    args = parser.parse_args(argv)
    if min(args.batch_size, args.reps, args.steps) < 1 or args.warmup < 0:
        parser.error('--batch_size, --reps and --steps must be >= 1, --warmup >= 0')
    if args.use_bf16 and args.use_fp16:
        parser.error('--use_bf16 and --use_fp16 exclude each other; give one')
    if args.original_dir and args.use_bf16:
        parser.error('--original_dir: the original has no bfloat16; drop --original_dir or '
                     '--use_bf16')
    if args.original_dir and args.image_size:
        parser.error('--original_dir: the original has no --image_size; drop --image_size=%d'
                     % args.image_size)
    if args.original_dir and not os.path.isfile(
            os.path.join(args.original_dir, 'tf_cnn_benchmarks.py')):
        parser.error('no tf_cnn_benchmarks.py in --original_dir=%s' % args.original_dir)
    if args.original_dir and not os.access(args.original_python, os.X_OK):
        parser.error('--original_python=%s is not an executable' % args.original_python)
    precision = precision_name(args.use_bf16, args.use_fp16)
    tf1.disable_eager_execution()
    load_before, start = os.getloadavg()[0], time.time()
    try:
        bench, info = build(args.model, args.batch_size, args.image_size, args.data_name,
                            precision=precision, forward_only=args.forward_only,
                            graph_choices=args.graph_choices,
                            num_inter_threads=args.num_inter_threads)
    except ValueError as e:  # unknown model, wrong dataset: the library's one-line message
        parser.error(str(e).replace('--data_name', 'this script\'s --data_name'))
    counts = collect(info.graph, info.train_op)
    print('%d convolution/matmul ops per step, %d distinct' % (sum(counts.values()),
                                                                len(counts)), flush=True)
    STAT['fn'] = min if args.stat == 'min' else statistics.median
    forms = {spec: roofline_forms.other_forms(spec, OpSpec) for spec in counts}
    to_time = list(counts) + sorted({f for fs in forms.values() for f in fs} - set(counts),
                                    key=repr)

    def standalone():
        got = {spec: standalone_secs(spec, args.reps, args.warmup) for spec in to_time}
        return got, roofline_forms.measure_bandwidth(cpu_tuning.physical_cores())

    ours, (timed, bandwidth) = real_step_secs(bench, info, args.steps, args.warmup,
                                              between=standalone)
    secs = {spec: t['secs'] for spec, t in timed.items()}
    lim = limit(counts, secs)
    memory = roofline_forms.memory_secs(roofline_forms.memory_ops(
        needed_ops(info.train_op), CONV_TYPES + MATMUL_TYPES), bandwidth)
    strict = strict_limit(counts, secs, forms, memory)
    result = {'limit': lim, 'strict_limit': strict, 'ours_step_secs': ours,
              'bandwidth_bytes_per_sec': {str(k): v for k, v in bandwidth.items()},
              'call_secs': [t['call_secs'] for t in timed.values()],
              'ops': [{'type': s.type, 'count': n, 'secs': timed[s]['secs'], 'flops': flops(s),
                       'inputs': {name: _dims(value if value is not None else shape)
                                  for name, shape, _, value in s.inputs},
                       'out_shape': _dims(s.out_shape), 'attrs': dict(s.attrs)}
                      for s, n in counts.most_common()],
              'graph_choices': args.graph_choices}
    if args.original_dir:
        rate = original_rate(args)
        result['original'] = rate
        result['original_step_secs'] = args.batch_size / rate if rate else None
    result['meta'] = {
        'model': args.model, 'batch_size': args.batch_size,
        'image_size': bench.plan.image_size, 'reps': args.reps, 'steps': args.steps,
        'warmup': args.warmup, 'stat': args.stat, 'precision': precision,
        'dtype': bench.plan.compute_dtype.name, 'forward_only': args.forward_only,
        'cpu': machine.cpu_model(), 'cores': os.cpu_count(),
        'physical_cores': cpu_tuning.physical_cores(), 'tensorflow': tf.__version__,
        'load_before': load_before, 'load_after': os.getloadavg()[0],
        'elapsed_secs': time.time() - start, 'original_dir': args.original_dir}
    name = 'roofline_%s_b%d' % (args.model, args.batch_size)
    if args.image_size:
        name += '_i%d' % args.image_size
    name += '' if precision == 'fp32' else '_' + precision
    name += '_fwd' if args.forward_only else ''
    return bench_report.finish(args.out, name, result, markdown(result))


if __name__ == '__main__':
    sys.exit(main())

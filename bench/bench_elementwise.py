"""Where the memory-bound ops' time goes (ReLU, ReluGrad, AddV2, AddN, Cast), alone, with their
producers and inside a training step, in float32 and bfloat16, and what the memory forms
(--graph_choices relu_xla, residual_xla, relu_float32, residual_float32) change.

    python -m bench.bench_elementwise [--model=resnet50] [--batch_size=16] \
        [--precisions=fp32,bf16] [--choices=off,measured] [--num_inter_threads=1] \
        [--steps=3] [--reps=7] [--trace_steps=3]

1. The step: for each precision and --choices value (a --graph_choices value), the project's
   training graph (synthetic data, NHWC, one CPU tower), --steps steps timed after
   WARM_UP_STEPS (XLA compiles a cluster once it has run twice), then one step traced with
   RunOptions.FULL_TRACE and the partition graphs (the ops after Grappler and oneDNN's
   rewrite; `traced`): per op its own time, the least of --trace_steps traced steps, summed
   per op type, and per memory-bound op its dtype, shape and producers.
2. Alone: each distinct (op, dtype, shape) of the traced `off` steps' memory-bound ops on
   activations, run by itself on random-valued variables (Grappler off: nothing rewritten or
   fused), its own time from a trace, the least of --reps; and the same op alone as an XLA
   cluster (its _XlaCompile and _XlaRun, after memory_probe.warm_up).
3. With its producers: each ReLU site of the model (graph/memory_probe.py: the batch norm,
   then the ReLU or the residual add and ReLU, and their gradients, an incoming convolution
   gradient cast from float32 where the run computes those in float32) traced in today's form,
   own time per op type, the least of --reps; and the probe's factors for every form (what
   --graph_choices=measured decides from), measured now.

Writes results/<date>-cpu-tf<X.Y>-elementwise_<model>_b<batch>.json and .md (bench_report).
"""

from __future__ import annotations

import collections
import os
import statistics
import sys

from .preamble import RESULTS, ArgumentParser, start_tensorflow  # noqa: E402

tf = start_tensorflow()
from tf_cnn_benchmarks.graph import graph_choices, memory_probe  # noqa: E402
from tf_cnn_benchmarks.lifecycle import profiling  # noqa: E402
from tf_cnn_benchmarks.models import memory_forms  # noqa: E402

from . import bench_choices, bench_report, bench_roofline  # noqa: E402

tf1 = tf.compat.v1

MEMORY_OPS = ('Relu', 'ReluGrad', 'AddV2', 'AddN', 'Cast')
#: The per-op-type table's rows: (row, op types after bench_choices.kernel_type).
ROWS = (
    ('Relu', ('Relu',)), ('ReluGrad', ('ReluGrad',)), ('AddV2', ('AddV2',)),
    ('AddN', ('AddN',)), ('Cast', ('Cast',)),
    ('XLA clusters (_XlaRun, _XlaCompile)', ('XlaRun', 'XlaCompile')),
    ('batch norm', ('FusedBatchNormV3', 'FusedBatchNormEx')),
    ('batch norm gradient', ('FusedBatchNormGradV3',)),
    ('convolutions and their gradients', ('Conv2D', 'Conv2DBackpropInput', 'FusedConv2D',
                                          'Conv2DBackpropFilter')),
)


def _dtype_of(node) -> str:
    """A partition-graph node's data dtype name ('T', or a cast's 'SrcT->DstT')."""
    if 'SrcT' in node.attr:
        return '%s->%s' % (tf.as_dtype(node.attr['SrcT'].type).name,
                           tf.as_dtype(node.attr['DstT'].type).name)
    return tf.as_dtype(node.attr['T'].type).name if 'T' in node.attr else ''


def step_ops(meta, least_ms) -> list[dict]:
    """Each memory-bound op of a traced step: {'type', 'dtype', 'shape', 'inputs', 'producers',
    'ms'} (shape: its output's; inputs: its data inputs' count; ms: `least_ms[node name]`, the
    least over the traced steps)."""
    nodes = {n.name: n for g in meta.partition_graphs for n in g.node}
    out = []
    for dev in meta.step_stats.dev_stats:
        for ns in dev.node_stats:
            node = nodes.get(ns.node_name)
            kind = bench_choices.kernel_type(ns.timeline_label or ns.node_name)
            if node is None or kind not in MEMORY_OPS or not ns.output:
                continue
            inputs = [i for i in node.input if not i.startswith('^')]
            producers = [bench_choices.kernel_type(
                'x = %s(' % nodes[i.split(':')[0]].op) if i.split(':')[0] in nodes else '?'
                for i in inputs]
            shape = [d.size for d in ns.output[0].tensor_description.shape.dim]
            out.append({'type': kind, 'dtype': _dtype_of(node), 'shape': shape,
                        'inputs': len(inputs), 'producers': producers,
                        'ms': least_ms[ns.node_name]})
    return out


#: Untimed steps first: XLA compiles each cluster once it has run twice.
WARM_UP_STEPS = 4


def traced(sess, fetches, runs: int):
    """`runs` traced runs of `fetches` after memory_probe.WARM_UP_RUNS untraced ones (a new
    set of fetches is a new executor, whose XLA clusters compile again, lazily, after two runs:
    traced at once, the step's clusters took 3.5 s of compilation). Returns the RunMetadata
    of each."""
    for _ in range(memory_probe.WARM_UP_RUNS):
        sess.run(fetches)
    return [profiling.traced_step(sess, fetches, partition_graphs=True) for _ in range(runs)]


def least_per_node(metas):
    """{node name: least own ms over the traced runs `metas`}."""
    out: dict = {}
    for meta in metas:
        for dev in meta.step_stats.dev_stats:
            for ns in dev.node_stats:
                ms = ns.all_end_rel_micros / 1e3
                out[ns.node_name] = min(out.get(ns.node_name, ms), ms)
    return out


def least_per_type(metas, least_ms) -> dict:
    """{op type: ms summed over its ops, each op's least over the traced runs}: a burst of
    the machine's load during one traced step moves one op, not the table."""
    kinds = {ns.node_name: bench_choices.kernel_type(ns.timeline_label or ns.node_name)
             for dev in metas[0].step_stats.dev_stats for ns in dev.node_stats}
    out: dict = {}
    for name, kind in kinds.items():
        out[kind] = out.get(kind, 0.0) + least_ms[name]
    return out


def run_step(model, batch, prec, choice, args) -> dict:
    """Builds, times and traces one configuration (module docstring, 1)."""
    bench, info = bench_roofline.build(model, batch, 0, precision=prec, graph_choices=choice,
                                       num_inter_threads=args.num_inter_threads)
    with info.graph.as_default(), bench.create_session(info) as sess:
        bench.initialize(sess, info)
        step = bench.make_step_fn(sess, info)
        secs = statistics.median(bench_roofline._timed(step, args.steps, WARM_UP_STEPS))
        metas = traced(sess, [info.train_op, info.loss, *info.pipeline.step_ops],
                       args.trace_steps)
    least_ms = least_per_node(metas)
    return {'step_secs': secs, 'header': bench.precision_lines(),
            'per_type_ms': least_per_type(metas, least_ms),
            'ops': step_ops(metas[0], least_ms),
            'sites': [list(s) for s in graph_choices.sites(bench.plan, bench.model)
                      if isinstance(s, memory_forms.Site)]}


def _alone_op(kind, dtype_name, shape, inputs):
    """The op of one standalone row, on random-valued variables."""
    src = dtype_name.split('->')[0]

    def var():
        return tf1.Variable(tf.cast(tf1.random_normal(shape), src)).read_value()

    if kind == 'Relu':
        return tf.nn.relu(var()).op
    if kind == 'ReluGrad':
        return tf.raw_ops.ReluGrad(gradients=var(), features=var()).op
    if kind == 'AddV2':
        return tf.raw_ops.AddV2(x=var(), y=var()).op
    if kind == 'AddN':
        return tf.add_n([var() for _ in range(inputs)]).op
    return tf.cast(var(), dtype_name.split('->')[1]).op


def own_ms(sess, target, reps: int, kinds) -> float:
    """The least over `reps` traced runs of the own ms summed over ops whose type is in
    `kinds` (bench_choices.kernel_type)."""
    best = float('inf')
    for _ in range(reps):
        meta = tf1.RunMetadata()
        sess.run(target, options=tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE),
                 run_metadata=meta)
        best = min(best, sum(n.all_end_rel_micros for d in meta.step_stats.dev_stats
                             for n in d.node_stats
                             if bench_choices.kernel_type(n.timeline_label) in kinds) / 1e3)
    return best


XLA_KINDS = ('XlaRun', 'XlaCompile')


def alone(rows, intra: int, reps: int) -> tuple[dict, dict]:
    """({(type, dtype, shape tuple, inputs): least own ms} of each row run by itself, and the
    same op as an XLA cluster's: {row: least own ms of _XlaCompile + _XlaRun}; module
    docstring, 2). Casts have no XLA row."""
    graph = tf.Graph()
    with graph.as_default():
        ops = {row: _alone_op(row[0], row[1], list(row[2]), row[3]) for row in rows}
        xla = {}
        for row in rows:
            if row[0] != 'Cast':
                with tf1.xla.experimental.jit_scope():
                    out = _alone_op(row[0], row[1], list(row[2]), row[3]).outputs[0]
                # A stateful target: the cluster's output is written out, not pruned.
                sink = tf1.Variable(tf.zeros(out.shape, out.dtype), trainable=False)
                xla[row] = sink.assign(out, read_value=False)
        init = tf1.global_variables_initializer()
    config = memory_probe.probe_config(intra, 1)
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    with tf1.Session(graph=graph, config=config) as sess:
        sess.run(init)
        eigen = {row: own_ms(sess, op, reps, (row[0],)) for row, op in ops.items()}
        compiled = {}
        for row, op in xla.items():
            memory_probe.warm_up(sess, op)
            compiled[row] = own_ms(sess, op, reps, XLA_KINDS)
        return eigen, compiled


def with_producers(sites, intra: int, inter: int, reps: int) -> dict:
    """{site: {op type: least own ms}} of each site's today's form (module docstring, 3)."""
    graph = tf.Graph()
    with graph.as_default():
        targets = {s: memory_probe.site_target(s, None, memory_probe.gradients_from_float32(
            s.dtype, (intra, inter))) for s in sites}
        init = tf1.global_variables_initializer()
    with tf1.Session(graph=graph, config=memory_probe.probe_config(intra, inter)) as sess:
        sess.run(init)
        out = {}
        for site, target in targets.items():
            memory_probe.warm_up(sess, target)
            out[site] = {kind: own_ms(sess, target, reps, (kind,)) for kind in MEMORY_OPS}
        return out


def _activation_rows(ops, batch) -> set:
    return {(o['type'], o['dtype'], tuple(o['shape']), o['inputs']) for o in ops
            if len(o['shape']) == 4 and o['shape'][0] == batch}


def run(args) -> dict:
    """Every part of the module docstring; the result dict (JSON-friendly)."""
    intra = bench_roofline.cpu_tuning.physical_cores()
    steps = {}
    for prec in args.precisions:
        for choice in args.choices:
            steps['%s %s' % (prec, choice)] = run_step(args.model, args.batch_size, prec,
                                                       choice, args)
            print('stepped %s %s' % (prec, choice), flush=True)
    rows = set()
    for prec in args.precisions:
        rows |= _activation_rows(steps['%s %s' % (prec, args.choices[0])]['ops'],
                                 args.batch_size)
    alone_ms, xla_ms = alone(sorted(rows), intra, args.reps)
    sites = sorted({memory_forms.Site(*s) for key, v in steps.items() for s in v['sites']})
    producers = with_producers(sites, intra, args.num_inter_threads, args.reps)
    factors = memory_probe.measure(sites, intra, args.num_inter_threads)
    return {'steps': steps,
            'alone_ms': [[*row[:2], list(row[2]), row[3], ms] for row, ms in alone_ms.items()],
            'alone_xla_ms': [[*row[:2], list(row[2]), row[3], ms]
                             for row, ms in xla_ms.items()],
            'with_producers_ms': [[list(s), ms] for s, ms in producers.items()],
            'factors': [[list(s), form, f] for (s, form), f in factors.items()]}


def _fmt(value) -> str:
    return '-' if value is None else '%.2f' % value


def op_table(result, args) -> str:
    """Per (op, dtype, shape): ops in the step, own ms each in the step, alone and with the
    site's producers."""
    base = args.choices[0]
    alone_ms = {(t, d, tuple(s), n): ms for t, d, s, n, ms in result['alone_ms']}
    xla_ms = {(t, d, tuple(s), n): ms for t, d, s, n, ms in result.get('alone_xla_ms', [])}
    in_step = collections.defaultdict(list)
    producers = collections.defaultdict(collections.Counter)
    for prec in args.precisions:
        for o in result['steps']['%s %s' % (prec, base)]['ops']:
            key = (o['type'], o['dtype'], tuple(o['shape']), o['inputs'])
            if key in alone_ms:
                in_step[key].append(o['ms'])
                producers[key][' + '.join(o['producers'])] += 1
    site_ms = {}
    for site, per in result['with_producers_ms']:
        site = memory_forms.Site(*site)
        shape = (site.batch, site.height, site.width, site.channels)
        for kind, ms in per.items():
            if ms > 0:
                site_ms[kind, site.dtype, shape, site.kind] = ms
    rows = []
    for key in sorted(in_step, key=lambda k: (k[0], k[1], -k[2][1], k[2][3])):
        kind, dtype, shape, inputs = key
        ms = in_step[key]
        sites = [(k, v) for (t, d, s, k), v in site_ms.items()
                 if (t, d, s) == (kind, dtype, shape)]
        rows.append(['%s%s' % (kind, ' of %d' % inputs if kind == 'AddN' else ''), dtype,
                     'x'.join(map(str, shape)), str(len(ms)), _fmt(statistics.mean(ms)),
                     _fmt(alone_ms[key]), _fmt(xla_ms.get(key)),
                     ', '.join('%s %.2f' % kv for kv in sites) or '-',
                     producers[key].most_common(1)[0][0]])
    return bench_report.markdown_table(
        ['op', 'dtype', 'shape', 'in step', 'ms each, in step', 'alone', 'alone, XLA',
         'with producers (site)', 'producers in step'], 'lllrrrrll', rows)


def type_table(result) -> str:
    """ms per op type of each configuration's traced step."""
    cols = list(result['steps'])
    per = {c: result['steps'][c]['per_type_ms'] for c in cols}
    named = {t for _, types in ROWS for t in types}
    body = [[row] + ['%.1f' % sum(per[c].get(t, 0.0) for t in types) for c in cols]
            for row, types in ROWS]
    body.append(['other ops'] + ['%.1f' % sum(v for k, v in per[c].items() if k not in named)
                                 for c in cols])
    body.append(['all ops'] + ['%.1f' % sum(per[c].values()) for c in cols])
    body.append(['step, median of timed steps (ms)'] + [
        '%.0f' % (1e3 * result['steps'][c]['step_secs']) for c in cols])
    return bench_report.markdown_table(['op type'] + cols, 'l' + 'r' * len(cols), body)


def factor_table(result) -> str:
    rows = [[s[6], s[0], memory_forms.Site(*s).describe(), form, '%.2f' % f]
            for s, form, f in sorted(result['factors'], key=lambda r: (r[0][6], r[0][0],
                                                                       -r[0][2], r[1]))]
    return bench_report.markdown_table(['dtype', 'site', 'shape', 'form', 'factor'], 'lllll',
                                       rows)


def markdown(result, meta, args) -> str:
    lines = ['%s training, batch %d, synthetic, NHWC, %s (%s), TF %s, --num_inter_threads=%d; '
             'load average %.2f before, %.2f after' % (
                 meta['model'], meta['batch_size'], meta['cpu'], meta['cpu_flags'],
                 meta['tensorflow'], args.num_inter_threads, meta['load_before'],
                 meta['load_after']), '',
             'Traced steps per configuration, ms per op type (each op\'s least over the traced '
             'steps):', '', type_table(result), '',
             'The memory-bound ops of the `%s` steps on activations, own ms (alone and with '
             'producers: the least of %d traced runs):' % (args.choices[0], args.reps), '',
             op_table(result, args), '',
             'The probe\'s factors (time of the ops a form changes / today\'s, with the batch '
             'norm; below %.2f a `measured` run builds the form):' % graph_choices.FASTER_FACTOR,
             '', factor_table(result), '']
    lines += bench_report.header_lines({k: v['header'] for k, v in result['steps'].items()})
    return '\n'.join(lines)


def main(argv=None) -> int:
    parser = ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--model', default='resnet50')
    parser.add_argument('--batch_size', type=int, default=16)
    parser.add_argument('--precisions', default='fp32,bf16')
    parser.add_argument('--choices', default='off,measured',
                        help='comma-separated --graph_choices values; the first is the base')
    parser.add_argument('--num_inter_threads', type=int, default=1)
    parser.add_argument('--steps', type=int, default=3, help='timed steps per configuration')
    parser.add_argument('--reps', type=int, default=7, help='traced runs per standalone op')
    parser.add_argument('--trace_steps', type=int, default=3,
                        help='traced steps per configuration (an op\'s in-step time: the '
                        'least of them)')
    parser.add_argument('--out', default=RESULTS)
    args = parser.parse_args(argv)
    args.precisions = [p.strip() for p in args.precisions.split(',') if p.strip()]
    args.choices = [c.strip() for c in args.choices.split(',') if c.strip()]
    if set(args.precisions) - {'fp32', 'bf16'} or not args.precisions or not args.choices:
        parser.error('--precisions takes fp32 and/or bf16, --choices at least one value')
    if min(args.batch_size, args.steps, args.reps, args.num_inter_threads,
           args.trace_steps) < 1:
        parser.error('--batch_size, --steps, --reps, --trace_steps and --num_inter_threads '
                     'must be >= 1')
    tf1.disable_eager_execution()
    load_before = os.getloadavg()[0]
    try:
        result = run(args)
    except ValueError as e:  # an unknown model or --graph_choices value: one line
        parser.error(str(e))
    meta = {'model': args.model, 'batch_size': args.batch_size,
            **bench_report.machine_meta(load_before)}
    result['meta'] = meta
    return bench_report.finish(args.out, 'elementwise_%s_b%d' % (args.model, args.batch_size),
                               result, markdown(result, meta, args))


if __name__ == '__main__':
    sys.exit(main())

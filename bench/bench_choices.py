"""bfloat16 / float32 training speed with and without the graph choices, side by side in one
process, and where a step's time goes per op type.

    python -m bench.bench_choices [--model=resnet50] [--batch_size=16] [--rounds=3] \
        [--steps=3] [--warmup=2] [--num_inter_threads=1] [--choices=off,measured] [--trace]

Builds one graph and session per configuration, {float32, bfloat16} x --choices (each a
--graph_choices value: `off` is today's graph, `measured` the per-host choices), synthetic
data, NHWC, one CPU tower, all open at once in this process; then --rounds rounds, each
timing --steps steps of every configuration in turn (median per round), so a drift of the
machine's load (2 shared cores) hits every configuration alike. Reported: each configuration's
images/sec (median of the rounds, with the least and the most) and, per round, the ratio
bfloat16 / float32 of the same choices (the spread over rounds is the ratio's noise).

With --trace, one fully traced step per configuration (RunOptions.FULL_TRACE, as
lifecycle/profiling.traced_step; use --num_inter_threads=1 so that ops do not overlap) is
summed per op type group (`GROUPS`: the issue's table, the memory-bound ops one by one),
oneDNN's kernel names folded into the op's (`_MklNativeConv2D` -> Conv2D); the traced step
runs after three untraced runs of the same fetches (a new set of fetches is a new executor,
whose XLA clusters compile again after two runs).

Writes bench/results/choices_<model>_b<batch>.json and .md with the CPU model, its bfloat16
flags and the load averages.
"""

from __future__ import annotations

import os
import re
import statistics
import sys

from .preamble import RESULTS, ArgumentParser, start_tensorflow  # noqa: E402

tf = start_tensorflow()
from tf_cnn_benchmarks.lifecycle import profiling  # noqa: E402

from . import bench_report, bench_roofline  # noqa: E402

tf1 = tf.compat.v1

#: The per-op table's groups: (row, op types after `kernel_type`).
GROUPS = (
    ('Conv2D + Conv2DBackpropInput', ('Conv2D', 'Conv2DBackpropInput', 'FusedConv2D')),
    ('Conv2DBackpropFilter', ('Conv2DBackpropFilter',)),
    ('MatMul (1x1 choices, classifier)', ('MatMul', 'BatchMatMulV2', 'BatchMatMulV3',
                                          'FusedMatMul')),
    ('batch norm and its gradient', ('FusedBatchNormV3', 'FusedBatchNormGradV3',
                                     'FusedBatchNormEx', 'FusedBatchNormGradEx')),
    ('ReluGrad', ('ReluGrad',)),
    ('AddN', ('AddN',)),
    ('AddV2', ('AddV2',)),
    ('Relu', ('Relu',)),
    ('XLA clusters (relu_xla, residual_xla)', ('XlaRun', 'XlaCompile')),
    ('Cast', ('Cast',)),
    ('StridedSlice + StridedSliceGrad', ('StridedSlice', 'StridedSliceGrad')),
)
_KERNEL_PREFIX = re.compile(r'^_(MklNative|Mkl|Native)?')


def kernel_type(label: str) -> str:
    """The op type of a trace record's label, oneDNN's kernel prefixes folded:
    'x = _MklNativeConv2DBackpropFilter(a, b)' -> 'Conv2DBackpropFilter'."""
    _, _, rest = label.partition(' = ')
    name = rest.split('(', 1)[0].strip() or label.split(':', 1)[0]
    return _KERNEL_PREFIX.sub('', name)


def per_type_ms(step_stats) -> dict:
    """{op type: milliseconds summed over the traced step's ops} (each op's own duration)."""
    out: dict = {}
    for dev in step_stats.dev_stats:
        for node in dev.node_stats:
            kind = kernel_type(node.timeline_label or node.node_name)
            out[kind] = out.get(kind, 0.0) + node.all_end_rel_micros / 1e3
    return out


def grouped(per_type: dict) -> dict:
    """{GROUPS row (or 'other ops', 'all ops'): milliseconds}."""
    out = {row: sum(per_type.get(t, 0.0) for t in types) for row, types in GROUPS}
    named = {t for _, types in GROUPS for t in types}
    out['other ops'] = sum(v for k, v in per_type.items() if k not in named)
    out['all ops'] = sum(per_type.values())
    return out


def _ratios(rounds, choices):
    """Per --choices value, the per-round bfloat16 / float32 speed ratios."""
    return {c: [r[('fp32', c)] / r[('bf16', c)] for r in rounds] for c in choices}


def run(args) -> dict:
    """Builds, times and traces every configuration (module docstring); the result dict."""
    configs = [(prec, c) for c in args.choices for prec in ('fp32', 'bf16')]
    open_runs = {}
    for prec, choice in configs:
        bench, info = bench_roofline.build(args.model, args.batch_size, 0, precision=prec,
                                           graph_choices=choice,
                                           num_inter_threads=args.num_inter_threads)
        with info.graph.as_default():
            sess = bench.create_session(info)
            bench.initialize(sess, info)
            open_runs[prec, choice] = (bench, info, sess, bench.make_step_fn(sess, info),
                                       bench.precision_lines())
        print('built %s %s' % (prec, choice), flush=True)
    rounds = []
    for r in range(args.rounds):
        times = {}
        for key, (_, _, _, step, _) in open_runs.items():
            times[key] = statistics.median(bench_roofline._timed(
                step, args.steps, args.warmup if r == 0 else 1))
        rounds.append(times)
        print('round %d: %s' % (r + 1, ', '.join('%s %s %.0f ms' % (k + (1e3 * v,))
                                                   for k, v in times.items())), flush=True)
    result = {'rounds_secs': [{'%s %s' % k: v for k, v in t.items()} for t in rounds],
              'ratios': _ratios(rounds, args.choices), 'header': {}}
    for key, (_, info, sess, _, lines) in open_runs.items():
        result['header']['%s %s' % key] = lines
        if args.trace:
            fetches = [info.train_op, info.loss, *info.pipeline.step_ops]
            for _ in range(3):  # a new set of fetches: XLA clusters compile after two runs
                sess.run(fetches)
            metadata = profiling.traced_step(sess, fetches)
            result.setdefault('per_type_ms', {})['%s %s' % key] = per_type_ms(
                metadata.step_stats)
        sess.close()
    return result


def _spread(values) -> str:
    return '%.2f (%.2f-%.2f)' % (statistics.median(values), min(values), max(values))


def markdown(result: dict, meta: dict) -> str:
    batch = meta['batch_size']
    lines = ['%s training, batch %d, synthetic, NHWC, %s (%s), TF %s, --num_inter_threads=%s; '
             '%d rounds of %d steps, load average %.2f before, %.2f after' % (
                 meta['model'], batch, meta['cpu'], meta['cpu_flags'], meta['tensorflow'],
                 meta['num_inter_threads'], meta['rounds'], meta['steps'],
                 meta['load_before'], meta['load_after']), '']
    keys = list(result['rounds_secs'][0])
    rows = [[k, _spread([batch / r[k] for r in result['rounds_secs']])] for k in keys]
    lines.append(bench_report.markdown_table(['configuration', 'images/sec median (min-max)'],
                                             'lr', rows))
    rows = [['bfloat16 / float32, --graph_choices=%s' % c, _spread(v),
             ', '.join('%.2f' % x for x in v)] for c, v in result['ratios'].items()]
    lines += ['', bench_report.markdown_table(['ratio', 'median (min-max)', 'per round'],
                                              'lrl', rows)]
    if 'per_type_ms' in result:
        per = {k: grouped(v) for k, v in result['per_type_ms'].items()}
        cols = list(per)
        rows = [[row] + ['%.1f' % per[k][row] for k in cols] for row in next(iter(per.values()))]
        lines += ['', 'One traced step, ms per op type:', '',
                  bench_report.markdown_table(['op type'] + cols, 'l' + 'r' * len(cols), rows)]
    lines += [''] + bench_report.header_lines(result['header'])
    return '\n'.join(lines)


def main(argv=None) -> int:
    parser = ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--model', default='resnet50')
    parser.add_argument('--batch_size', type=int, default=16)
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--steps', type=int, default=3, help='timed steps per round')
    parser.add_argument('--warmup', type=int, default=2, help='untimed steps first')
    parser.add_argument('--num_inter_threads', type=int, default=1)
    parser.add_argument('--choices', default='off,measured',
                        help='comma-separated --graph_choices values to compare')
    parser.add_argument('--trace', action='store_true', help='per-op-type table')
    parser.add_argument('--out', default=RESULTS)
    args = parser.parse_args(argv)
    args.choices = [c.strip() for c in args.choices.split(',') if c.strip()]
    if min(args.batch_size, args.rounds, args.steps) < 1 or args.warmup < 0:
        parser.error('--batch_size, --rounds and --steps must be >= 1, --warmup >= 0')
    tf1.disable_eager_execution()
    load_before = os.getloadavg()[0]
    try:
        result = run(args)
    except ValueError as e:  # an unknown model or --graph_choices value: one line
        parser.error(str(e))
    meta = {'model': args.model, 'batch_size': args.batch_size, 'rounds': args.rounds,
            'steps': args.steps, 'num_inter_threads': args.num_inter_threads,
            **bench_report.machine_meta(load_before)}
    result['meta'] = meta
    return bench_report.finish(args.out, 'choices_%s_b%d' % (args.model, args.batch_size),
                               result, markdown(result, meta))


if __name__ == '__main__':
    sys.exit(main())

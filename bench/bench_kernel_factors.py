"""The reduced-precision kernel probe's factors on this CPU, several probes in one run.

    python -m bench.bench_kernel_factors [--probes=5] [--threads=2]
    python -m bench.bench_kernel_factors --runs=resnet20:cifar10:2,resnet50:imagenet:64 \
        --matmuls=2x64x10,64x2048x1000 --dtypes=float16 --probes=3

Runs hardware/kernel_speed.py's probe (`measure_with_spread`: the forward convolution and
matmul with their bias and ReLU, fused as in a run's graph, and their gradients, each timed in
the reduced dtype against float32 in turn) --probes times for each dtype, and writes each
kind's factors (seconds in the dtype / in float32: ratios measured side by side, so the host's
load moves both) with their median and range, and the graph's choice per kind: the gradients in
float32 beyond kernel_speed.GRADIENT_SLOWER_FACTOR, the warning beyond FAR_SLOWER_FACTOR.
Nothing is read from or written to the calibration record.

Without --runs or --matmuls it probes the default shapes (kernel_speed.DEFAULT_SHAPES): the
result is results/<date>-cpu-tf<X.Y>-kernel-factors.json and .md. --runs=MODEL:DATASET:BATCH,...
probes each run's own shapes (kernel_speed.run_shapes: its largest convolution and matmul at
that per-device batch, capped as a run's are); --matmuls=MxKxN,... the fused matmul and its
gradients at each size, uncapped (a small convolution beside it, not reported): how a factor
grows with the op. Those write results/<date>-cpu-tf<X.Y>-kernel-factors-by-shape.json and .md
(bench/bench_report.py).
"""

from __future__ import annotations

import statistics
import sys

from . import bench_report
from .preamble import RESULTS, ArgumentParser, start_tensorflow

DTYPES = ('bfloat16', 'float16')
#: The convolution probed beside a --matmuls size (its factors are not reported).
SMALL_CONV = (1, 8, 8, 16, 3, 3, 16, 1)


def probe_rows(probes: int, threads: int, dtypes=DTYPES, shapes=None) -> dict:
    """{dtype: {kind: [factor of each probe]}, 'spread': {dtype: [spread of each probe]}} at
    `shapes` (a kernel_speed.ProbeShapes; None: the default shapes)."""
    from tf_cnn_benchmarks.hardware import kernel_speed
    shapes = shapes or kernel_speed.DEFAULT_SHAPES
    out: dict = {'spread': {}}
    for dtype in dtypes:
        out[dtype] = {kind: [] for kind in kernel_speed.KINDS}
        out['spread'][dtype] = []
        for _ in range(probes):
            got, spread = kernel_speed.measure_with_spread(dtype, threads, threads,
                                                           shapes=shapes)
            for kind, factor in got.items():
                out[dtype][kind].append(round(factor, 3))
            out['spread'][dtype].append(round(spread, 3))
    return out


def choice(kind: str, dtype: str, median: float) -> str:
    """What a run does with a kind whose median factor is `median`."""
    from tf_cnn_benchmarks.hardware import kernel_speed
    if kind.endswith('_gradients'):
        return ('in float32' if median > kernel_speed.GRADIENT_SLOWER_FACTOR
                else 'in %s' % dtype)
    return 'warning' if median > kernel_speed.FAR_SLOWER_FACTOR else 'no warning'


def table_rows(data: dict, dtypes, kinds, lead=()) -> list[list[str]]:
    """One row per dtype and kind of `probe_rows`' data: `lead` cells, then dtype, kind,
    median, range and the run's choice."""
    rows = []
    for dtype in dtypes:
        for kind in kinds:
            got = data[dtype][kind]
            median = statistics.median(got)
            rows.append(list(lead) + [dtype, kind.replace('_', ' '), '%.2fx' % median,
                                      '%.2f-%.2fx' % (min(got), max(got)),
                                      choice(kind, dtype, median)])
    return rows


def by_shape(runs: list[str], matmuls: list[str], probes: int, threads: int,
             dtypes) -> tuple[dict, list[list[str]]]:
    """(data, table rows) of --runs and --matmuls (module docstring)."""
    from tf_cnn_benchmarks.hardware import kernel_speed
    from tf_cnn_benchmarks.models import flops
    data: dict = {'runs': {}, 'matmuls': {}}
    rows = []
    for run in runs:
        model, dataset, batch = run.split(':')
        _, graph, _ = flops.placeholder_graph(model, dataset)
        shapes = kernel_speed.run_shapes(graph, int(batch))
        got = probe_rows(probes, threads, dtypes, shapes)
        data['runs'][run] = dict(got, shapes=shapes.text())
        rows += table_rows(got, dtypes, kernel_speed.KINDS,
                           ['%s batch %s' % (model, batch), shapes.text()])
    for size in matmuls:
        shapes = kernel_speed.ProbeShapes(SMALL_CONV, tuple(int(d) for d in size.split('x')))
        got = probe_rows(probes, threads, dtypes, shapes)
        data['matmuls'][size] = got
        rows += table_rows(got, dtypes, ('matmul', 'matmul_gradients'),
                           ['matmul %s' % size, '%d multiply-adds' % kernel_speed.macs(
                               'matmul', shapes.matmul)])
    return data, rows


def main(argv=None) -> int:
    parser = ArgumentParser(prog='bench_kernel_factors', description=__doc__.split('\n')[0])
    parser.add_argument('--probes', type=int, default=5, help='probes per dtype')
    parser.add_argument('--threads', type=int, default=2, help='intra- and inter-op threads')
    parser.add_argument('--dtypes', default=','.join(DTYPES), help='comma-separated dtypes')
    parser.add_argument('--runs', default='', help='MODEL:DATASET:BATCH,... (their shapes)')
    parser.add_argument('--matmuls', default='', help='MxKxN,... (fused matmul sizes)')
    parser.add_argument('--out_dir', default=RESULTS, help='folder of the results file pair')
    args = parser.parse_args(argv)
    start_tensorflow()
    from tf_cnn_benchmarks.hardware import kernel_speed
    dtypes = [d for d in args.dtypes.split(',') if d]
    runs = [r for r in args.runs.split(',') if r]
    matmuls = [m for m in args.matmuls.split(',') if m]
    what = 'seconds in the dtype / in float32, measured in turn'
    if runs or matmuls:
        data, rows = by_shape(runs, matmuls, args.probes, args.threads, dtypes)
        data.update(probes=args.probes, threads=args.threads)
        markdown = '\n\n'.join([
            'The reduced-precision kernel probe (hardware/kernel_speed.py) at runs\' own shapes '
            '(their largest convolution and matmul, capped as a run\'s are) and at fused matmul '
            'sizes (uncapped), %d probes per dtype at %d intra- and inter-op threads: %s.'
            % (args.probes, args.threads, what),
            bench_report.markdown_table(['at', 'shapes', 'dtype', 'kind', 'median', 'range',
                                         'the run does'], 'llllrrl', rows)])
        return bench_report.finish(args.out_dir, 'kernel-factors-by-shape', data, markdown)
    data = probe_rows(args.probes, args.threads, dtypes)
    rows = table_rows(data, dtypes, kernel_speed.KINDS)
    data.update(probes=args.probes, threads=args.threads)
    markdown = '\n\n'.join([
        'The reduced-precision kernel probe (hardware/kernel_speed.py), %d probes per dtype at '
        '%d intra- and inter-op threads: %s.' % (args.probes, args.threads, what),
        bench_report.markdown_table(['dtype', 'kind', 'median', 'range', 'the run does'],
                                    'llrrl', rows)])
    return bench_report.finish(args.out_dir, 'kernel-factors', data, markdown)


if __name__ == '__main__':
    sys.exit(main())

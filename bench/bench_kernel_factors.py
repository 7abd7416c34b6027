"""The reduced-precision kernel probe's factors on this CPU, several probes in one run.

    python -m bench.bench_kernel_factors [--probes=5] [--threads=2]

Runs hardware/kernel_speed.py's probe (`measure_with_spread`: the forward convolution and
matmul with their bias and ReLU, fused as in a run's graph, and their gradients, each timed in
the reduced dtype against float32 in turn) --probes times for bfloat16 and float16, and writes
each kind's factors (seconds in the dtype / in float32: ratios measured side by side, so the
host's load moves both) with their median and range, and the graph's choice per kind: the
gradients in float32 beyond kernel_speed.GRADIENT_SLOWER_FACTOR, the warning beyond
FAR_SLOWER_FACTOR. Nothing is read from or written to the calibration record.

The result: results/<date>-cpu-tf<X.Y>-kernel-factors.json and .md (bench/bench_report.py).
"""

from __future__ import annotations

import statistics
import sys

from . import bench_report
from .preamble import RESULTS, ArgumentParser, start_tensorflow

DTYPES = ('bfloat16', 'float16')


def probe_rows(probes: int, threads: int) -> dict:
    """{dtype: {kind: [factor of each probe]}, 'spread': {dtype: [spread of each probe]}}."""
    from tf_cnn_benchmarks.hardware import kernel_speed
    out: dict = {'spread': {}}
    for dtype in DTYPES:
        out[dtype] = {kind: [] for kind in kernel_speed.KINDS}
        out['spread'][dtype] = []
        for _ in range(probes):
            got, spread = kernel_speed.measure_with_spread(dtype, threads, threads)
            for kind, factor in got.items():
                out[dtype][kind].append(round(factor, 3))
            out['spread'][dtype].append(round(spread, 3))
    return out


def main(argv=None) -> int:
    parser = ArgumentParser(prog='bench_kernel_factors', description=__doc__.split('\n')[0])
    parser.add_argument('--probes', type=int, default=5, help='probes per dtype')
    parser.add_argument('--threads', type=int, default=2, help='intra- and inter-op threads')
    parser.add_argument('--out_dir', default=RESULTS, help='folder of the results file pair')
    args = parser.parse_args(argv)
    start_tensorflow()
    from tf_cnn_benchmarks.hardware import kernel_speed
    data = probe_rows(args.probes, args.threads)
    rows = []
    for dtype in DTYPES:
        for kind in kernel_speed.KINDS:
            got = data[dtype][kind]
            median = statistics.median(got)
            if kind.endswith('_gradients'):
                choice = ('in float32' if median > kernel_speed.GRADIENT_SLOWER_FACTOR
                          else 'in %s' % dtype)
            else:
                choice = ('warning' if median > kernel_speed.FAR_SLOWER_FACTOR
                          else 'no warning')
            rows.append([dtype, kind.replace('_', ' '), '%.2fx' % median,
                         '%.2f-%.2fx' % (min(got), max(got)), choice])
    data.update(probes=args.probes, threads=args.threads)
    markdown = '\n\n'.join([
        'The reduced-precision kernel probe (hardware/kernel_speed.py), %d probes per dtype at '
        '%d intra- and inter-op threads: seconds in the dtype / in float32, measured in turn.'
        % (args.probes, args.threads),
        bench_report.markdown_table(['dtype', 'kind', 'median', 'range', 'the run does'],
                                    'llrrl', rows)])
    return bench_report.finish(args.out_dir, 'kernel-factors', data, markdown)


if __name__ == '__main__':
    sys.exit(main())

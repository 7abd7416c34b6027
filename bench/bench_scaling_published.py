"""The step-time model against the original's published multi-GPU results, as a results/ file.

    python -m bench.bench_scaling_published

Nothing is measured here: speed_model/published_scaling.py holds the published figures (8x K80
EC2 hosts with distributed_replicated for 1 to 64 GPUs, one EC2 p2.8xlarge host, a DGX-1 with
1 to 8 P100s, and the EC2 AlexNet parameter-server case of issue 34) with their sources, and
predicts each series from its own one-GPU figure (a placeholder build of each model, no step
runs). This script writes that comparison as
results/<date>-cpu-tf<X.Y>-scaling-published.json and .md (bench/bench_report.py), so the
tables of docs/scaling.md and the README (`python -m bench.make_performance_page`) name the file
their figures come from, like every other figure. tests/test_scaling_published.py fails when the
committed file no longer is what the model predicts: run this script again after changing the
model.
"""

from __future__ import annotations

import sys

from . import bench_report
from .preamble import RESULTS, ArgumentParser, start


def main(argv=None) -> int:
    parser = ArgumentParser(prog='bench_scaling_published', description=__doc__.split('\n')[0])
    parser.parse_args(argv)
    start()
    from tf_cnn_benchmarks.speed_model import published_scaling
    data = published_scaling.comparison_data()
    return bench_report.finish(RESULTS, 'scaling_published', data,
                               '\n'.join(published_scaling.markdown(data)))


if __name__ == '__main__':
    sys.exit(main())

"""One host's 1 to 8 GPUs: the original's published rows on NVLink and PCIe hosts against the
step-time model, and one all-reduce over NVLink, PCIe with and without peer-to-peer, as a
results/ file.

    python -m bench.bench_multi_gpu_scaling

Nothing is measured here: speed_model/one_host_scaling.py holds the published one-host series
(the DGX-1's and EC2 p2.8xlarge's of speed_model/published_scaling.py, and the page's other
one-host series) with their sources and predicts each from its own one-GPU figure (a
placeholder build of each model, no step runs). This script writes that comparison as
results/<date>-cpu-tf<X.Y>-multi-gpu-scaling.json and .md (bench/bench_report.py);
tests/test_multi_gpu_traffic.py fails when the committed file no longer is what the model
predicts: run this script again after changing the model.
"""

from __future__ import annotations

import sys

from . import bench_report
from .preamble import RESULTS, ArgumentParser, start


def main(argv=None) -> int:
    parser = ArgumentParser(prog='bench_multi_gpu_scaling', description=__doc__.split('\n')[0])
    parser.parse_args(argv)
    start()
    from tf_cnn_benchmarks.speed_model import one_host_scaling
    data = one_host_scaling.comparison_data()
    return bench_report.finish(RESULTS, 'multi_gpu_scaling', data,
                               '\n'.join(one_host_scaling.markdown(data)))


if __name__ == '__main__':
    sys.exit(main())

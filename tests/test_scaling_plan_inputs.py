"""What the flags give `--plan_scaling` (test_scaling_plan.py has the model and the report):
an explicit --num_gpus, the one-device figure and where it comes from, the knobs a figure of
the data sheet or a measured one allows, and the plan's JSON in --benchmark_log_dir.

Every figure here is the model's arithmetic on injected inputs (a given one-device figure, a
stand-in per-op step): nothing is timed on this host.
"""

from __future__ import annotations

import pytest

from tf_cnn_benchmarks.hardware import gpu_specs
from tf_cnn_benchmarks.speed_model import from_flags

import helpers

V100 = gpu_specs.lookup('V100')
TRIVIAL = ('--plan_scaling', '--model=trivial', '--gpu_model=V100',
           '--single_device_images_per_sec=380')


def _row_shapes(stdout: str) -> list[str]:
    """The 'hosts x GPUs' of each row of a printed plan."""
    return [line.split('  ')[0].strip() for line in stdout.splitlines()
            if line[:1].isdigit() and ' x ' in line.split('  ')[0]]


def test_gpus_per_host_tells_an_explicit_num_gpus_1_from_the_default():
    from tf_cnn_benchmarks import params
    p = params.make_params(plan_scaling=True)
    assert from_flags.gpus_per_host(p, V100) == 8  # not given: a full host of 8
    assert from_flags.gpus_per_host(p, V100, frozenset({'num_gpus'})) == 1
    assert from_flags.gpus_per_host(p._replace(num_gpus=4), V100) == 4
    assert from_flags.gpus_per_host(p, None) == 1  # CPU towers


@pytest.mark.cli
def test_an_explicit_num_gpus_1_plans_hosts_of_one_gpu():
    # --num_gpus=1 printed the rows '1 x 8' and '2 x 8 16' as if it had not been given.
    given = helpers.run_command(*TRIVIAL, '--num_gpus=1')
    assert given.returncode == 0, given.stderr[-2000:]
    assert _row_shapes(given.stdout) == ['1 x 1', '2 x 1', '4 x 1', '8 x 1', '16 x 1',
                                         '32 x 1', '64 x 1', '128 x 1']
    default = helpers.run_command(*TRIVIAL)
    assert default.returncode == 0, default.stderr[-2000:]
    assert _row_shapes(default.stdout)[:5] == ['1 x 1', '1 x 2', '1 x 4', '1 x 8', '2 x 8']

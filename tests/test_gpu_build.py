"""A plan for a GPU this TensorFlow's CUDA build cannot run (preflight/gpu_build.py): one
`warning:` line, the plan still printed, and no unqualified 'would work' verdict.

The build info is injected (TensorFlow 2.21's wheel lists sm_60 to compute_90; a CPU-only
build lists none), so the tests do not depend on the TensorFlow installed.
"""

from __future__ import annotations

import json
import os

import pytest

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.hardware import gpu_specs
from tf_cnn_benchmarks.params import make_params
from tf_cnn_benchmarks.preflight import dry_run, gpu_build, scaling_plan

#: TensorFlow 2.21's wheel (tf.sysconfig.get_build_info() on it).
TF221 = {'cuda_compute_capabilities': ['sm_60', 'sm_70', 'sm_80', 'sm_89', 'compute_90'],
         'cuda_version': '12.5.1', 'is_cuda_build': True}
CPU_ONLY = {'is_cuda_build': False, 'is_rocm_build': False}
K80, V100 = gpu_specs.lookup('K80'), gpu_specs.lookup('V100')


@pytest.mark.parametrize('entry, cap', [('sm_60', (6, 0)), ('compute_90', (9, 0)),
                                        ('sm_89', (8, 9)), ('sm_100a', (10, 0)),
                                        ('3.5', (3, 5)), ('compute_', None)])
def test_a_build_entry_is_read_in_each_form_tensorflow_has_used(entry, cap):
    assert gpu_build.capability_of(entry) == cap


def test_the_lowest_capability_of_a_build_and_none_for_a_build_without_cuda():
    assert gpu_build.lowest_capability(TF221) == (6, 0)
    assert gpu_build.lowest_capability({'cuda_compute_capabilities': '5.2,3.5,7.0'}) == (3, 5)
    assert gpu_build.lowest_capability(CPU_ONLY) is None
    assert gpu_build.lowest_capability({'cuda_compute_capabilities': []}) is None


def test_a_k80_under_tensorflow_2_21_is_warned_of_naming_the_gpu_the_build_and_the_way_out():
    text = gpu_build.unsupported_warning(K80, TF221)
    assert text.startswith('the K80 (compute capability 3.7) cannot run this TensorFlow: '
                           "its CUDA 12.5.1 build's lowest compute capability is 6.0"), text
    assert 'older TensorFlow' in text and '--gpu_model' in text


def test_a_gpu_the_build_covers_and_any_gpu_under_a_cpu_only_build_get_no_warning():
    assert gpu_build.unsupported_warning(V100, TF221) is None
    assert gpu_build.unsupported_warning(gpu_specs.lookup('P100'), TF221) is None  # 6.0 itself
    assert gpu_build.unsupported_warning(K80, CPU_ONLY) is None


def _make_bench(q, gpus):
    return benchmark_cnn.BenchmarkCNN(q, gpus=gpus)


def _k80_dry_run(monkeypatch, info, tmp_path):
    monkeypatch.setattr(gpu_build, 'build_info', lambda: info)
    monkeypatch.setattr(dry_run, 'largest_batch', lambda *args: dry_run.LargestBatch(64))
    p = make_params(model='trivial', image_size=16, batch_size=4, dry_run=True, num_gpus=1,
                    gpu_model='K80', benchmark_log_dir=str(tmp_path))
    assert dry_run.run(_make_bench, p, 0) == 0
    with open(os.path.join(str(tmp_path), os.listdir(tmp_path)[0])) as f:
        return json.load(f)


def test_a_k80_dry_run_under_tensorflow_2_21_warns_once_and_does_not_say_it_would_work(
        monkeypatch, tmp_path, capsys):
    data = _k80_dry_run(monkeypatch, TF221, tmp_path)
    out, err = capsys.readouterr()
    warnings = [line for line in err.splitlines() if line.startswith('warning:')]
    assert len(warnings) == 1 and 'the K80 (compute capability 3.7)' in warnings[0], err
    assert 'Predicted step' in out  # the plan still prints
    assert 'would work' not in out
    assert out.rstrip().splitlines()[-1].startswith(
        'Dry run: the graph builds and fits (every op has a kernel'), out
    assert 'cannot run on the K80' in out.rstrip().splitlines()[-1]
    assert data['warnings'] == [warnings[0][len('warning: '):]]


def test_a_k80_dry_run_under_a_cpu_only_build_has_no_warning(monkeypatch, tmp_path, capsys):
    data = _k80_dry_run(monkeypatch, CPU_ONLY, tmp_path)
    out, err = capsys.readouterr()
    assert 'warning:' not in err
    assert out.rstrip().splitlines()[-1].startswith('Dry run: the run would work as built')
    assert data['warnings'] == []


def test_a_k80_scaling_plan_under_tensorflow_2_21_warns_once_and_still_plans(
        monkeypatch, capsys):
    monkeypatch.setattr(gpu_build, 'build_info', lambda: TF221)
    p = make_params(model='trivial', image_size=16, batch_size=4, plan_scaling=True,
                    num_gpus=2, gpu_model='K80', variable_update='replicated')
    assert scaling_plan.run(_make_bench, p, 0) == 0
    out, err = capsys.readouterr()
    # (In process, the plan's builds without --plan_scaling also warn that --gpu_model has no
    # effect; the command does not print those.)
    warnings = [line for line in err.splitlines() if line.startswith('warning:')
                and 'compute capability' in line]
    assert len(warnings) == 1 and 'the K80' in warnings[0], err
    assert 'images/sec' in out, out

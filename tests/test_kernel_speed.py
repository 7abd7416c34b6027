"""speed/kernel_speed.py: what the reduced-precision kernels do here decides the header, the
up-front warning and which gradients run in float32 (CPU flags alone do not)."""

import pytest
import tensorflow as tf

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.speed import kernel_speed, precision

import helpers

# As measured on a Xeon with AVX512_FP16 where trivial ran 145x slower in float16.
SLOW_MATMUL = {'conv': 1.2, 'conv_gradients': 1.0, 'matmul': 145.0, 'matmul_gradients': 140.0}
FAST = {'conv': 0.6, 'conv_gradients': 0.9, 'matmul': 0.9, 'matmul_gradients': 1.1}


@pytest.fixture
def cpu(monkeypatch):
    """cpu(flags, measured): this process's CPU has `flags` and its kernels measure so."""
    def set_cpu(flags, measured):
        monkeypatch.setattr(precision, 'cpu_flags', lambda path='/proc/cpuinfo': set(flags))
        monkeypatch.setattr(kernel_speed, 'factors', lambda dtype, threads=(0, 0): measured)
    return set_cpu


def _gradient_matmul_dtypes(graph):
    return {op.outputs[0].dtype for op in graph.get_operations()
            if op.type == 'MatMul' and 'gradients' in op.name}


def test_a_cpu_flag_is_not_native_when_the_kernels_are_slow(cpu, capsys):
    cpu({'avx512_fp16'}, SLOW_MATMUL)
    lines = benchmark_cnn.BenchmarkCNN(helpers.tiny_params(use_fp16=True), gpus=0).info_lines()
    text = '\n'.join(lines)
    assert 'native float16' not in text
    assert 'float16 kernels measured here (time vs float32): conv 1.20x' in text
    assert 'matmul 145x' in text and 'gradients of matmul in float32' in text
    err = capsys.readouterr().err
    assert err.count('warning: --use_fp16: float16 matmuls run 145.0x slower than float32 on '
                     'this CPU (measured now); the faster choice: float32 (drop --use_fp16)') == 1


def test_fast_kernels_are_native_and_quiet(cpu, capsys):
    cpu({'avx512_bf16'}, FAST)
    lines = benchmark_cnn.BenchmarkCNN(helpers.tiny_params(use_bf16=True), gpus=0).info_lines()
    assert any('CPU has avx512_bf16, bfloat16 kernels measured here' in x for x in lines)
    assert 'warning' not in capsys.readouterr().err
    graph = helpers.tiny_bench(use_bf16=True, batch_size=2).build_graph().graph
    assert _gradient_matmul_dtypes(graph) == {tf.bfloat16}


def test_slow_gradient_kernels_run_in_float32(cpu):
    # trivial's matmuls are the builder's affine layers, whose own gradient override used to
    # hide the float32 request: every gradient matmul of the step is float32 now.
    cpu({'avx512_fp16'}, SLOW_MATMUL)
    graph = helpers.tiny_bench(use_fp16=True, batch_size=2).build_graph().graph
    assert _gradient_matmul_dtypes(graph) == {tf.float32}


def test_emulated_dtype_computes_affine_gradients_in_float32(cpu):
    cpu({'avx2'}, FAST)  # no bf16 flags: emulated, no measurement needed
    graph = helpers.tiny_bench(use_bf16=True, batch_size=2).build_graph().graph
    assert _gradient_matmul_dtypes(graph) == {tf.float32}


def test_the_probe_measures_every_kind():
    measured = kernel_speed.factors(tf.bfloat16, (1, 1))
    assert set(measured) == set(kernel_speed.KINDS)
    assert all(0 < v < 1000 for v in measured.values())
    assert kernel_speed.float32_gradient_kinds({**FAST, 'conv_gradients': 3.0}) == ('conv',)

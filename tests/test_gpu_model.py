"""The per-op model of one GPU's step (speed_model/gpu_step.py): each branch forced, and the
committed validation against published runs (bench/bench_gpu_model.py) kept current."""

import glob
import json
import math
import os

import pytest

from checkout import REPO, load

load()
from tf_cnn_benchmarks import make_params  # noqa: E402
from tf_cnn_benchmarks.hardware import gpu_specs  # noqa: E402
from tf_cnn_benchmarks.speed_model import (  # noqa: E402
    conv_algorithms,
    from_flags,
    gpu_step,
    op_profile,
    step_time,
)

A100 = gpu_specs.lookup('A100 40GB')
V100 = gpu_specs.lookup('V100')
T4 = gpu_specs.lookup('T4')
H100 = gpu_specs.lookup('H100 80GB')
GTX1080 = gpu_specs.lookup('GTX 1080')
P100 = gpu_specs.lookup('P100')
K80 = gpu_specs.lookup('K80')


@pytest.fixture(scope='module')
def resnet50():
    return op_profile.from_model('resnet50')


@pytest.fixture(scope='module')
def vgg16():
    return op_profile.from_model('vgg16')


def test_the_op_profile_holds_resnet50s_layers(resnet50):
    kinds = [op.kind for op in resnet50.ops]
    assert (kinds.count('conv'), kinds.count('batchnorm'), kinds.count('relu'),
            kinds.count('add'), kinds.count('matmul')) == (53, 53, 49, 16, 1)
    first = next(op for op in resnet50.ops if op.kind == 'conv')
    # conv0: 7x7x3 -> 64 at stride 2: 112x112 outputs, no data gradient (it reads the images).
    assert (first.gemm, first.dgrad) == ((112 * 112, 64, 147), None)
    assert sum(op.winograd for op in resnet50.ops) == 16  # the 3x3 stride-1 convolutions
    assert len(resnet50.variable_elems) == 161


def test_tf32_on_by_default_on_ampere_and_off_with_the_flag_or_environment(resnet50):
    assert gpu_step.math_path(A100, 'float32') == ('TF32 tensor cores', 156.0, 'tf32')
    assert gpu_step.math_path(A100, 'float32', tf32=False) == ('float32 CUDA cores', 19.5,
                                                               'cuda')
    assert gpu_step.math_path(V100, 'float32')[0] == 'float32 CUDA cores'  # no TF32 before 8.0
    on = gpu_step.predict_step(resnet50, A100, 'float32', batch_size=64)
    off = gpu_step.predict_step(resnet50, A100, 'float32', batch_size=64, tf32=False)
    assert on.images_per_sec > 1.5 * off.images_per_sec
    p = make_params(model='resnet50')
    assert from_flags.tf32_enabled(p, {}) is True
    assert from_flags.tf32_enabled(p._replace(tf32=False), {}) is False
    assert from_flags.tf32_enabled(p, {'NVIDIA_TF32_OVERRIDE': '0'}) is False
    assert from_flags.tf32_enabled(p, {'NVIDIA_TF32_OVERRIDE': '1'}) is True


def test_notf32_sets_the_variable_cublas_and_cudnn_read():
    from tf_cnn_benchmarks.runtime import gpu_settings
    p = make_params(model='resnet50', tf32=False)
    assert gpu_settings.environment_updates(p, {})['NVIDIA_TF32_OVERRIDE'] == '0'
    assert 'NVIDIA_TF32_OVERRIDE' not in gpu_settings.environment_updates(
        p._replace(tf32=True), {})


@pytest.mark.parametrize('gpu, dtype, path, peak', [
    (V100, 'float16', 'float16 tensor cores', 125.0),       # Volta
    (T4, 'float16', 'float16 tensor cores', 65.0),          # Turing
    (A100, 'bfloat16', 'bfloat16 tensor cores', 312.0),     # Ampere
    (H100, 'float16', 'float16 tensor cores', 989.0),       # Hopper
    (V100, 'bfloat16', 'bfloat16 data, float32 math on CUDA cores', 15.7),  # no bf16 units
    (P100, 'float16', 'float16 data, float32 math on CUDA cores', 9.3),     # TF's fp32 compute
])
def test_each_tensor_core_generation_takes_its_path(gpu, dtype, path, peak):
    assert gpu_step.math_path(gpu, dtype)[:2] == (path, peak)


def test_pascal_float16_runs_at_the_float32_rate_with_half_the_bytes(resnet50):
    # GTX 1080: 1/64-rate float16 units, which TensorFlow does not use (cuDNN computes in fp32).
    assert GTX1080.fp16_tflops < GTX1080.fp32_tflops / 60
    fp32 = gpu_step.predict_step(resnet50, GTX1080, 'float32', batch_size=64)
    fp16 = gpu_step.predict_step(resnet50, GTX1080, 'float16', batch_size=64)
    assert fp16.math_path.endswith('float32 math on CUDA cores') and fp16.peak_tflops == 8.87
    assert 1.0 < fp16.images_per_sec / fp32.images_per_sec < 1.5


def test_bfloat16_below_ampere_runs_its_convolutions_in_float32_between_casts(resnet50):
    """The V100's bfloat16 was predicted 1.23x float32 ('the float32 rate, half the bytes'):
    TensorFlow casts a bfloat16 convolution's operands to float32 below compute capability 8.0
    (conv_ops_bfloat16.cc, IsBF16SupportedInOps), so the convolutions move float32 bytes and
    the casts' on top; only the other ops move half the bytes."""
    from tf_cnn_benchmarks.speed_model import bf16_casts
    assert bf16_casts.casts_convolutions(V100, 'bfloat16')
    assert bf16_casts.casts_convolutions(T4, 'bfloat16')
    assert not bf16_casts.casts_convolutions(A100, 'bfloat16')
    assert not bf16_casts.casts_convolutions(V100, 'float16')
    kernels = gpu_step.step_kernels(resnet50, 64, 'bfloat16', conv_casts=True)
    fp32 = {k.name: k for k in gpu_step.step_kernels(resnet50, 64, 'float32')}
    bf16 = {k.name: k for k in gpu_step.step_kernels(resnet50, 64, 'bfloat16')}
    convs = [k for k in kernels if k.kind == 'conv']
    assert convs and all(k.bytes == fp32[k.name].bytes for k in convs)
    casts = [k for k in kernels if k.kind == 'cast']
    # One cast kernel group after each pass: 53 forward, 52 data gradients, 53 filter gradients.
    assert len(casts) == 53 + 52 + 53 and all(k.launches == 3 for k in casts)
    first = next(op for op in resnet50.ops if op.kind == 'conv')
    assert casts[0].bytes == 6 * (64 * first.in_elems + first.weight_elems + 64 * first.out_elems)
    others = [k for k in kernels if k.kind in ('batchnorm', 'relu')]
    assert all(k.bytes == bf16[k.name].bytes == fp32[k.name].bytes / 2 for k in others)
    v100 = gpu_step.predict_step(resnet50, V100, 'bfloat16', batch_size=64)
    v100_fp32 = gpu_step.predict_step(resnet50, V100, 'float32', batch_size=64)
    assert 'cast' in [op.kind for op in v100.bound_ops]
    assert v100.images_per_sec < v100_fp32.images_per_sec  # was 1.23x
    a100 = gpu_step.predict_step(resnet50, A100, 'bfloat16', batch_size=64)
    assert 'cast' not in [op.kind for op in a100.bound_ops]
    # XLA fuses the conversions: their bytes stay, their launches go.
    fused = gpu_step.step_kernels(resnet50, 64, 'bfloat16', xla=True, conv_casts=True)
    assert all(k.launches == 0 for k in fused if k.kind == 'cast')


def test_the_header_does_not_call_pascal_float16_slower_than_float32():
    import tensorflow as tf

    from tf_cnn_benchmarks.graph import precision
    native, text = precision.native_support(tf.float16, 'gpu', capabilities=[(6, 1)])
    assert native is True
    assert text == ('GPU compute capability 6.1 < 7.0: no float16 tensor cores; float16 data '
                    'with float32 math, half the memory traffic')
    # Unknown: no GPU seen and none planned.
    assert precision.native_support(tf.float16, 'gpu', capabilities=[])[0] is False


@pytest.mark.parametrize('dtype', ['float16', 'bfloat16'])
def test_the_header_says_of_every_gpu_what_the_model_runs_it_on(dtype):
    """Every GPU of the table, in each reduced dtype: the header's text and the per-op model
    take the same path. Where the model runs the dtype's data with float32 math (float16
    before Volta: Kepler, Pascal; bfloat16 before Ampere: those, Volta, Turing) the header
    says so and does not call it slower than float32 (the K80's float16 was 'expect it slower
    than float32' above a prediction of 89.9 images/sec against 76.4; the dry run compares the
    two: test_the_dry_run_compares_a_reduced_precision_step_with_float32)."""
    import tensorflow as tf

    from tf_cnn_benchmarks.graph import precision
    emulated = []
    for name in gpu_specs.sorted_names():
        gpu = gpu_specs.lookup(name)
        native, text = precision.native_support(getattr(tf, dtype), 'gpu',
                                                capabilities=[gpu.compute_capability_tuple])
        path, _, unit = gpu_step.math_path(gpu, dtype)
        assert native is True, (name, text)
        if unit == 'tensor':
            assert text.endswith(': native %s' % dtype), (name, text)
        else:
            assert path == '%s data, float32 math on CUDA cores' % dtype, name
            traffic = ('convolutions cast to float32 and back' if dtype == 'bfloat16'
                       else 'half the memory traffic')
            assert text.endswith('no %s tensor cores; %s data with float32 math, %s' % (
                dtype, dtype, traffic)), (name, text)
            emulated.append(gpu.compute_capability)
    # The generations covered: Kepler and Pascal, and for bfloat16 Volta and Turing too.
    assert {'3.7', '6.0', '6.1'} <= set(emulated)
    assert ({'7.0', '7.5'} <= set(emulated)) == (dtype == 'bfloat16')


def test_xla_fuses_the_elementwise_ops(resnet50):
    plain = gpu_step.step_kernels(resnet50, 32, 'float32')
    fused = gpu_step.step_kernels(resnet50, 32, 'float32', xla=True)
    relus = [k for k in fused if k.kind == 'relu']
    assert relus and all(k.launches == 0 for k in relus)
    assert sum(k.launches for k in fused) < sum(k.launches for k in plain) - 100
    assert sum(k.bytes for k in fused if k.kind in ('relu', 'add')) < 0.3 * sum(
        k.bytes for k in plain if k.kind in ('relu', 'add'))
    faster = gpu_step.predict_step(resnet50, V100, 'float16', batch_size=32, xla=True)
    assert faster.seconds < gpu_step.predict_step(resnet50, V100, 'float16',
                                                  batch_size=32).seconds


def test_a_tiny_batch_is_launch_bound():
    profile = op_profile.from_model('trivial')
    found = gpu_step.predict_step(profile, H100, 'float16', batch_size=1)
    assert found.bound_ops[0].bound == 'launch'
    assert found.seconds >= found.kernels * gpu_step.LAUNCH_SECS


def test_a_slow_host_link_bounds_the_step_with_real_data():
    profile = op_profile.from_model('trivial')
    alone = gpu_step.predict_step(profile, V100, 'float32', batch_size=64)
    batch = 64 * (3 * 224 * 224 * 4 + 4)
    slow = gpu_step.predict_step(profile, V100, 'float32', batch_size=64, batch_bytes=batch,
                                 host_link_bytes_per_sec=1e6)
    assert (alone.bound, slow.bound) == ('compute', 'input')
    assert slow.seconds == pytest.approx(batch / 1e6) and slow.compute_secs == alone.seconds


def test_tile_and_wave_quantization():
    # 108 SMs: 108 tiles of 128 x 128 fill one wave exactly; one row more needs another wave
    # (best with 64 x 64 tiles: 434 tiles in 5 waves of 108, 80% busy).
    assert gpu_step.tile_efficiency(128 * 108, 128, 64, 108) == pytest.approx(1.0)
    assert gpu_step.tile_efficiency(128 * 108 + 1, 128, 64, 108) == pytest.approx(
        (128 * 108 + 1) * 128 / (5 * 108 * 64 * 64))
    # 64 output channels: the 128 x 64 tile keeps every column busy.
    assert gpu_step.tile_efficiency(128 * 216, 64, 64, 108) == pytest.approx(1.0)
    # A small product with a long K is split along K to fill the SMs.
    assert gpu_step.tile_efficiency(128, 128, 1 << 20, 80) == pytest.approx(1.0)
    # ... but not when K is too short to split: four 64 x 64 tiles on 80 SMs.
    assert gpu_step.tile_efficiency(128, 128, 64, 80) == pytest.approx(4 / 80)


def test_winograd_serves_3x3_float32_on_cuda_cores_only(vgg16):
    direct = gpu_step.predict_step(vgg16, V100, 'float32', batch_size=64, winograd=False)
    fast = gpu_step.predict_step(vgg16, V100, 'float32', batch_size=64)
    assert fast.images_per_sec > 1.5 * direct.images_per_sec
    a = gpu_step.predict_step(vgg16, V100, 'float16', batch_size=64)
    b = gpu_step.predict_step(vgg16, V100, 'float16', batch_size=64, winograd=False)
    assert a.seconds == b.seconds  # tensor cores: implicit GEMM


def test_the_measured_shares_by_gpu_and_the_unit_default_elsewhere():
    # DeepBench's GEMM sheets and CUTLASS's A100 figures (gpu_step.MEASURED_GEMM).
    assert gpu_step.gemm_share(V100, 'cuda') == 0.94
    assert gpu_step.gemm_share(V100, 'tensor') == 0.90
    assert gpu_step.gemm_share(T4, 'cuda') == 0.58
    assert gpu_step.gemm_share(A100, 'tf32') == 0.92
    a6000 = gpu_specs.lookup('RTX A6000')  # no measurement: the unit's default
    assert gpu_step.gemm_share(a6000, 'tf32') == gpu_step.GEMM_EFFICIENCY['tf32']
    assert gpu_step.gemm_share(H100, 'tensor', conv=True) == gpu_step.CONV_EFFICIENCY['tensor']
    # On every GPU DeepBench measured, cuDNN's direct convolutions reach less than cuBLAS.
    for gpu, unit in gpu_step.MEASURED_CONV:
        spec = gpu_specs.lookup(gpu)
        assert gpu_step.gemm_share(spec, unit, conv=True) < gpu_step.gemm_share(spec, unit)


def test_a_direct_convolution_runs_at_the_conv_share_a_matmul_and_winograd_at_the_gemms():
    dims = (80 * 256 * 8, 256, 4096)
    conv = gpu_step.Kernel('c', 'conv', 'forward', 1e12, 0.0, dims)
    matmul = conv._replace(kind='matmul')
    rate, conv_rate = 10e12, 5e12
    t_conv = gpu_step.kernel_secs(conv, V100, rate, 1e12, conv_rate=conv_rate)[0]
    t_matmul = gpu_step.kernel_secs(matmul, V100, rate, 1e12, conv_rate=conv_rate)[0]
    launch = gpu_step.LAUNCH_SECS
    assert (t_conv - launch) == pytest.approx(2 * (t_matmul - launch))
    wino = gpu_step.Kernel('c/winograd_gemm', 'conv', 'forward', 1e12, 0.0, dims)
    assert gpu_step.kernel_secs(wino, V100, rate, 1e12, conv_rate=conv_rate)[0] == t_matmul


def test_float32_convolutions_stay_nchw_in_training_and_tensor_cores_pay_transposes():
    # Grappler keeps a float32 training graph in NCHW (float16 from Volta, bfloat16 from
    # Ampere go NHWC); XLA picks NHWC for every type from Hopper on.
    assert conv_algorithms.runs_nchw(A100, 'float32', xla=False)
    assert conv_algorithms.runs_nchw(A100, 'float32', xla=True)
    assert not conv_algorithms.runs_nchw(H100, 'float32', xla=True)
    assert conv_algorithms.runs_nchw(H100, 'float32', xla=False)
    assert not conv_algorithms.runs_nchw(V100, 'float16', xla=False)
    assert not conv_algorithms.runs_nchw(A100, 'bfloat16', xla=False)
    assert conv_algorithms.runs_nchw(V100, 'bfloat16', xla=False)  # no bfloat16 tensor cores
    tf32, cuda = gpu_step.conv_paths(A100, 'float32')
    assert (tf32.unit, cuda.unit) == ('tf32', 'cuda') and tf32.tensor_cores
    conv = gpu_step.Kernel('c', 'conv', 'forward', 1e12, 1e9, (108 * 256, 256, 2304),
                           transposes=4e9)
    bw = gpu_step.achieved_bandwidth(A100)
    nchw = gpu_step.best_secs(conv, A100, (tf32,), bw, nchw=True)
    nhwc = gpu_step.best_secs(conv, A100, (tf32,), bw, nchw=False)
    assert nchw[0] == pytest.approx(nhwc[0] + 4e9 / bw + 2 * gpu_step.LAUNCH_SECS)
    assert nchw[2] == nhwc[2] + 2  # the two transposes' launches
    # Only the forward and data-gradient passes pay them (NVIDIA's TF32 NHWC findings).
    kernels = [k for k in gpu_step.step_kernels(op_profile.from_model('resnet50'), 8,
                                                 'float32') if k.kind == 'conv']
    assert all((k.transposes == 0) == k.name.endswith('/wgrad') for k in kernels)


def test_tensor_cores_run_unaligned_input_channels_padded(resnet50, vgg16):
    # 16-byte vectors: 8 float16 channels, 4 TF32 ones; 3 image channels at stride 2 need 4.
    assert conv_algorithms.channel_padding(3, 1, 2) == pytest.approx(8 / 3)
    assert conv_algorithms.channel_padding(3, 2, 2) == pytest.approx(4 / 3)
    assert conv_algorithms.channel_padding(3, 1, 4) == pytest.approx(4 / 3)
    assert conv_algorithms.channel_padding(64, 1, 2) == 1.0
    assert conv_algorithms.channel_padding(0, 1, 2) == 1.0  # a depthwise convolution: not padded
    first = next(op for op in vgg16.ops if op.kind == 'conv')
    assert (first.channels_in, first.stride) == (3, 1)
    assert next(op for op in resnet50.ops if op.kind == 'conv').stride == 2
    kernels = [k for k in gpu_step.step_kernels(vgg16, 8, 'float16') if k.kind == 'conv']
    padded = [k.name for k in kernels if k.padding > 1.0]
    assert padded == [first.name, first.name + '/wgrad']  # it has no data gradient
    forward = kernels[0]
    tensor = gpu_step.conv_paths(V100, 'float16')
    cuda = gpu_step.conv_paths(V100, 'float32')
    bw = gpu_step.achieved_bandwidth(V100)
    # The padded product on tensor cores: 8/3 the FLOPs and a reduction 8/3 as deep ...
    grown = forward._replace(flops=forward.flops * 8 / 3, padding=1.0,
                             gemm=forward.gemm[:2] + (72,))
    assert forward.gemm[2] == 27
    assert gpu_step.best_secs(forward, V100, tensor, bw, winograd=False, nchw=False) == (
        gpu_step.best_secs(grown, V100, tensor, bw, winograd=False, nchw=False))
    # ... and none on the CUDA cores.
    plain = forward._replace(padding=1.0)
    assert gpu_step.best_secs(forward, V100, cuda, bw) == gpu_step.best_secs(plain, V100, cuda,
                                                                               bw)


def test_with_tf32_float32_convolutions_may_take_the_cuda_cores(vgg16):
    # On an RTX 3090 TF32 runs at the CUDA cores' float32 rate: autotuning keeps the
    # CUDA cores' Winograd kernels, which TF32's tensor cores (and their transposes) do not beat.
    rtx3090 = gpu_specs.lookup('RTX 3090')
    assert [p.unit for p in gpu_step.conv_paths(rtx3090, 'float32')] == ['tf32', 'cuda']
    assert [p.unit for p in gpu_step.conv_paths(rtx3090, 'float32', tf32=False)] == ['cuda']
    assert [p.unit for p in gpu_step.conv_paths(A100, 'float16')] == ['tensor']
    assert [p.unit for p in gpu_step.conv_paths(V100, 'float32')] == ['cuda']
    both = gpu_step.predict_step(vgg16, rtx3090, 'float32', batch_size=32)
    tf32_only = gpu_step.predict_step(vgg16, rtx3090, 'float32', batch_size=32,
                                      winograd=False)
    assert both.seconds < tf32_only.seconds
    assert both.math_path == 'TF32 tensor cores'  # the matmuls' path, reported as before


def test_3x3_stride_1_convolutions_run_at_their_measured_tensor_core_share():
    assert gpu_step.gemm_share(V100, 'tensor', conv3x3=True) == 0.62   # DeepBench V100 fp16
    assert gpu_step.gemm_share(T4, 'tensor', conv3x3=True) == 0.56
    assert gpu_step.gemm_share(V100, 'cuda', conv3x3=True) == gpu_step.gemm_share(
        V100, 'cuda', conv=True)  # CUDA cores: Winograd serves them; the direct share
    # A100: its measured GEMM share x the measured 3 x 3 / GEMM ratio.
    assert gpu_step.gemm_share(A100, 'tensor', conv3x3=True) == round(
        0.96 * gpu_step.CONV_3X3_TO_GEMM, 2)
    three = gpu_step.Kernel('c', 'conv', 'forward', 1e12, 0.0, (80 * 256, 256, 2304),
                            winograd=(gpu_step.Kernel('w', 'conv', 'forward', 0, 0),))
    path = gpu_step.conv_paths(V100, 'float16')[0]
    secs = gpu_step.best_secs(three, V100, (path,), 1e12)[0] - gpu_step.LAUNCH_SECS
    assert secs == pytest.approx(1e12 / path.conv3x3 / gpu_step.tile_efficiency(
        80 * 256, 256, 2304, V100.sm_count))


def test_a_measured_gemm_share_sets_the_convolutions_where_none_was_measured():
    rtx3090 = gpu_specs.lookup('RTX 3090')
    assert gpu_step.gemm_share(rtx3090, 'cuda') == 0.64  # GA102 (CUTLASS maintainer, A10)
    assert gpu_step.gemm_share(rtx3090, 'cuda', conv=True) == round(
        0.64 * gpu_step.CONV_TO_GEMM['cuda'], 2)
    assert gpu_step.gemm_share(V100, 'cuda', conv=True) == 0.61  # measured: kept
    # Kepler: the SGEMM bound x the same ratio, below its GEMM share like every other GPU.
    assert gpu_step.gemm_share(K80, 'kepler', conv=True) == gpu_step.CONV_EFFICIENCY['kepler']
    assert gpu_step.CONV_EFFICIENCY['kepler'] < gpu_step.gemm_share(K80, 'kepler')


def test_winogrades_batched_products_are_tiled_one_by_one():
    # 36 products of 24 rows each: every 64-row tile is three-eighths full, which one
    # product of 36 x 24 rows would hide.
    batched = gpu_step.tile_efficiency(24, 512, 4608, 80, batch=36)
    assert batched < gpu_step.tile_efficiency(36 * 24, 512, 4608, 80)
    assert batched == pytest.approx(max(
        36 * 24 * 512 * 1 / (math.ceil(36 * math.ceil(24 / tm) * math.ceil(512 / tn) / 80)
                             * 80 * tm * tn) for tm, tn in gpu_step.TILES))
    kernels = conv_algorithms.winograd_kernels(gpu_step.Kernel, 'c', 'conv', 'forward', 1e9,
                                               1e6, 1e6, 1e4, 4, (8 * 49, 512, 4608))
    assert kernels[1].gemm == (36, 8 * 49 // 16, 512, 4608)


def test_lambdas_auto_clustered_runs_are_validated_with_xla():
    import importlib
    runs = importlib.import_module('bench.published_gpu_runs')
    auto = [r for r in runs.RUNS if 'tf_xla_auto_jit' in r.source]
    assert {r.gpu for r in auto} == {'RTX 3090', 'RTX A6000', 'A100 PCIe 40GB'}
    assert len(auto) == 30 and all(r.xla for r in auto)


def test_a_vendor_stated_sustained_rate_slows_the_math_not_the_memory(vgg16):
    # The 250 W A100 PCIe card: NVIDIA rates it at 90% of the 400 W SXM4 module with the same
    # data-sheet peaks (hardware/gpu_specs.SUSTAINED): its math at 0.9 of the SXM4's rates.
    pcie = gpu_specs.lookup('A100 PCIe 40GB')
    assert (gpu_step.sustained_rate(pcie), gpu_step.sustained_rate(A100)) == (0.90, 1.0)
    for unit in ('tf32', 'tensor', 'cuda'):
        assert gpu_step.gemm_share(pcie, unit) == gpu_step.gemm_share(A100, unit)
    fast, slow = gpu_step.conv_paths(A100, 'float16')[0], gpu_step.conv_paths(pcie, 'float16')[0]
    assert slow.peak_tflops == fast.peak_tflops
    assert (slow.gemm, slow.conv, slow.conv3x3) == pytest.approx(
        (0.9 * fast.gemm, 0.9 * fast.conv, 0.9 * fast.conv3x3))
    bw = gpu_step.achieved_bandwidth(A100)
    assert gpu_step.achieved_bandwidth(pcie) == bw  # the memory keeps its clock
    relu = gpu_step.Kernel('r', 'relu', 'forward', 0.0, 1e9)
    assert gpu_step.best_secs(relu, pcie, (slow,), bw) == gpu_step.best_secs(relu, A100, (fast,),
                                                                               bw)
    a = gpu_step.predict_step(vgg16, A100, 'float16', batch_size=64)
    b = gpu_step.predict_step(vgg16, pcie, 'float16', batch_size=64)
    assert a.images_per_sec > b.images_per_sec > 0.9 * a.images_per_sec


def test_tensorflow_before_1_5_offered_no_filter_gradient_winograd(vgg16):
    # tensorflow/tensorflow#15283: a cuDNN version check left the filter gradient's non-fused
    # Winograd out with cuDNN 5.1; the original's May 2017 tables ran TF 1.1 with cuDNN 5.1.
    assert conv_algorithms.offers_winograd('wgrad') is True
    assert conv_algorithms.offers_winograd('wgrad', filter_winograd=False) is False
    assert conv_algorithms.offers_winograd('forward', filter_winograd=False) is True
    assert conv_algorithms.offers_winograd('dgrad', filter_winograd=False) is True
    assert conv_algorithms.offers_winograd('forward', winograd=False) is False
    now = gpu_step.predict_step(vgg16, P100, 'float32', batch_size=64)
    old = gpu_step.predict_step(vgg16, P100, 'float32', batch_size=64, filter_winograd=False)
    none = gpu_step.predict_step(vgg16, P100, 'float32', batch_size=64, winograd=False)
    assert now.images_per_sec > old.images_per_sec > none.images_per_sec
    kernels = gpu_step.step_kernels(vgg16, 8, 'float32')
    three = [k for k in kernels if k.winograd]
    assert {k.grad for k in three} == {'forward', 'dgrad', 'wgrad'}
    path = gpu_step.conv_paths(P100, 'float32')
    bw = gpu_step.achieved_bandwidth(P100)
    for k in three:  # the forward and data-gradient kernels keep Winograd
        if k.grad != 'wgrad':
            assert gpu_step.best_secs(k, P100, path, bw, nchw=False, filter_winograd=False) \
                == gpu_step.best_secs(k, P100, path, bw, nchw=False)
    wgrads = [k for k in three if k.grad == 'wgrad']  # the filter gradients lose it
    assert any(gpu_step.best_secs(k, P100, path, bw, nchw=False, filter_winograd=False)[0]
               > gpu_step.best_secs(k, P100, path, bw, nchw=False)[0] for k in wgrads)
    import importlib
    runs = importlib.import_module('bench.published_gpu_runs')
    tf11 = [r for r in runs.RUNS if 'TF 1.1,' in r.source]
    assert len(tf11) == 9 and not any(r.filter_winograd for r in tf11)
    assert all(r.filter_winograd for r in runs.RUNS if r not in tf11)


def test_kepler_gemms_reach_their_published_bound(resnet50):
    assert gpu_step.math_path(K80, 'float32')[2] == 'kepler'
    assert gpu_step.GEMM_EFFICIENCY['kepler'] < gpu_step.GEMM_EFFICIENCY['cuda']


def test_the_dry_run_line_says_what_bounds_the_step(resnet50):
    found = gpu_step.predict_step(resnet50, V100, 'float32', batch_size=64)
    (line,) = from_flags.gpu_model_lines(found)
    assert "one GPU's step: conv " in line and '(math)' in line and 'batchnorm' in line
    assert 'of the float32 CUDA cores peak (15.7 TFLOP/s)' in line
    assert from_flags.gpu_model_lines(None) == []
    data = json.loads(json.dumps(found.as_dict()))
    assert data['math_path'] == 'float32 CUDA cores' and data['bound_ops'][0]['kind'] == 'conv'
    assert data['kernels'] == found.kernels and data['bound_ops'][0]['bound'] == 'math'
    assert sum(op.share for op in found.bound_ops) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="batch_size must be >= 1. Received: 0"):
        gpu_step.predict_step(resnet50, V100, 'float32', batch_size=0)


def _committed():
    paths = sorted(glob.glob(os.path.join(REPO, 'results', '*-gpu-model-validation.json')))
    assert paths, 'no results/*-gpu-model-validation.json: python -m bench.bench_gpu_model'
    with open(paths[-1]) as f:
        return json.load(f)['data']


@pytest.fixture(scope='module')
def committed():
    return _committed()


def test_the_committed_validation_is_what_the_model_predicts(committed):
    import importlib
    bench = importlib.import_module('bench.bench_gpu_model')
    rows = bench.comparison_rows()
    assert len(rows) == len(committed['rows']) >= 30
    for now, then in zip(rows, committed['rows']):
        assert (now['gpu'], now['model'], now['batch_size'], now['dtype']) == (
            then['gpu'], then['model'], then['batch_size'], then['dtype'])
        assert now['predicted'] == pytest.approx(then['predicted'], rel=1e-3), now
    assert len({r['gpu'] for r in rows}) >= 8


def test_rows_predicted_as_tensorflow_1_1_ran_are_marked_with_the_commands_figure(committed):
    # The K80 and P100 SXM2 rows are predicted without the filter gradient's Winograd (TF 1.1);
    # the table showed 67 where `--dry_run --gpu_model=K80 --model=resnet50 --batch_size=64`
    # prints 76.4, said in one parenthesis of the page only.
    import importlib
    bench = importlib.import_module('bench.bench_gpu_model')
    old = [r for r in committed['rows'] if not r['filter_winograd']]
    assert {r['gpu'] for r in old} == {'K80', 'P100 SXM2'}
    k80 = next(r for r in old if (r['gpu'], r['model'], r['batch_size']) == ('K80', 'resnet50',
                                                                             64))
    dry = step_time.compute_from_gpu_model(gpu_specs.lookup('K80'), 'float32',
                                           op_profile.from_model('resnet50'), 64)
    assert k80['dry_run_predicted'] == pytest.approx(dry.step.images_per_sec, rel=1e-3)
    assert (round(k80['predicted']), round(k80['dry_run_predicted'])) == (67, 76)
    text = bench.markdown(committed)
    assert '| 67 (TF 1.1) | 52 |' in text
    assert ('* K80 resnet50 batch 64: 76 (here 67): `tf_cnn_benchmarks --dry_run '
            '--gpu_model="K80" --model=resnet50 --batch_size=64`') in text
    assert text.count(' (TF 1.1) |') == len(old)
    assert all(r['dry_run_predicted'] == r['predicted'] for r in committed['rows']
               if r['filter_winograd'])


def test_a_suspect_published_figure_stays_in_the_table_and_the_statistics(committed):
    suspect = [r for r in committed['rows'] if r['suspect']]
    assert [(r['gpu'], r['model'], r['dtype'], r['published']) for r in suspect] == [
        ('A100 40GB', 'vgg16', 'float16', 70.27)]
    assert 'broken run' in suspect[0]['suspect']
    assert committed['after']['overall']['max'] == abs(suspect[0]['error'])
    assert committed['after']['overall']['rows'] == len(committed['rows'])


def test_every_published_batch_fits_the_memory_check(committed):
    assert all(row['fits'] for row in committed['rows']), [
        (r['gpu'], r['model'], r['batch_size']) for r in committed['rows'] if not r['fits']]


def test_the_model_beats_the_flat_estimate_where_that_was_worst(committed):
    # Tensor cores (float16, TF32) and VGG/AlexNet were the flat 50%-of-peak estimate's worst
    # rows (issue 40: 0.2x to 3.7x); the per-op model's errors there are a fraction of them.
    rows = [r for r in committed['rows'] if not r['suspect'] and (
        r['dtype'] == 'float16' or r['gpu'].startswith('A100') or r['model'] in ('vgg16',
                                                                                 'alexnet'))]
    assert len(rows) >= 8
    assert max(abs(r['error']) for r in rows) < 0.7 * max(abs(r['before_error']) for r in rows)
    assert sum(abs(r['error']) for r in rows) < 0.5 * sum(abs(r['before_error']) for r in rows)


_TARGET = ('issue 40 target not reached by the data-sheet model: Lambda\'s A100 float16 rows and '
           'the Quadro RTX 8000\'s are predicted too fast, one A100 row is a broken run, the '
           'P100\'s AlexNet too slow (docs/estimate-vs-reality.md says where and why, row by '
           'row)')


def test_the_median_error_target_holds(committed):
    # Reached with the measured GEMM and convolution shares (issue 40, second pass).
    assert committed['after']['overall']['median'] <= 0.15
    assert committed['after']['overall']['rows'] >= 60


@pytest.mark.xfail(strict=True, reason=_TARGET)
def test_no_row_beyond_35_percent(committed):
    assert committed['after']['overall']['max'] <= 0.35


#: How docs/estimate-vs-reality.md's prose names the GPUs and models of its rows beyond 35%.
_PROSE_GPUS = {'A100 SXM4': 'A100 40GB', 'A100 PCIe': 'A100 PCIe 40GB',
               'Quadro RTX 8000': 'Quadro RTX 8000', 'GTX 1080 Ti': 'GTX 1080 Ti',
               'P100 SXM2': 'P100 SXM2'}
_PROSE_MODELS = {'AlexNet': 'alexnet', 'Inception-v3': 'inception3', 'VGG16': 'vgg16',
                 'ResNet-50': 'resnet50', 'ResNet-152': 'resnet152'}


def _page_prose() -> str:
    with open(os.path.join(REPO, 'docs', 'estimate-vs-reality.md')) as f:
        return f.read().split('<!-- gpu-model:end -->')[1]


def test_the_pages_figures_of_the_rows_beyond_35_percent_are_the_committed_ones(committed):
    # The prose said +133% (A100 SXM4 AlexNet float16), +77% (A100 PCIe AlexNet float16) and
    # +48% (Quadro AlexNet float16) where the table and the results file say +129%, +74%, +46%.
    # Each bold heading of the list names a GPU, a model and a precision before its figure
    # (a heading of several rows names the GPU once: '... VGG16 float16 (+67%), 9.
    # Inception-v3 float16 (+57%), ...').
    import re
    section = _page_prose().split('Each row beyond 35%')[1].split("The issue's targets")[0]
    word = re.compile(r'(%s)|(%s)|(float16|float32)|([+-]\d+%%)' % (
        '|'.join(map(re.escape, _PROSE_GPUS)), '|'.join(map(re.escape, _PROSE_MODELS))))
    quoted = []
    for heading in re.findall(r'\*\*(.+?)\*\*', section, re.S):
        named = [None, None, None]
        for match in word.finditer(heading):
            gpu, model, dtype, figure = match.groups()
            if figure:
                quoted.append((tuple(named), figure))
            else:
                slot = 0 if gpu else 1 if model else 2
                named[slot] = (_PROSE_GPUS[gpu] if gpu else _PROSE_MODELS[model] if model
                               else dtype)
    beyond = {(r['gpu'], r['model'], r['dtype']): '%+.0f%%' % (100 * r['error'])
              for r in committed['rows'] if abs(r['error']) > 0.35}
    assert len(beyond) == committed['after']['overall']['beyond_35']
    assert sorted(quoted) == sorted(beyond.items())


def test_the_pages_overall_figures_are_the_committed_ones(committed):
    import re
    overall = committed['after']['overall']
    errors = sorted((abs(r['error']) for r in committed['rows']), reverse=True)
    prose = ' '.join(_page_prose().split())
    found = re.search(r'\*\*Overall\*\*: (\d+) rows of (\d+) GPU types .*? median \|error\| '
                      r'(\d+)% \(the flat 50%-of-peak estimate: (\d+)%\); (\d+) rows beyond 35%',
                      prose)
    assert found, 'the Overall line of docs/estimate-vs-reality.md changed its wording'
    assert found.groups() == (
        str(overall['rows']), str(len({r['gpu'] for r in committed['rows']})),
        '%.0f' % (100 * overall['median']),
        '%.0f' % (100 * committed['before']['overall']['median']), str(overall['beyond_35']))
    assert "largest error is that broken run's, +%.0f%%; without it, +%.0f%%." % (
        100 * errors[0], 100 * errors[1]) in prose

"""One GPU's training step from its data sheet: a roofline per op, plus a launch cost per kernel.

    profile = op_profile.from_model('resnet50')
    found = gpu_step.predict_step(profile, gpu_specs.lookup('V100'), 'float32', batch_size=64)
    found.seconds, found.images_per_sec, found.share_of_peak, found.bound_ops

The model (docs/estimate-vs-reality.md has it with its errors against published runs):

  * The step's kernels: every forward op of the model (speed_model/op_profile.py) and what its
    backward pass must do (a convolution or matrix product: a data-gradient GEMM, none for the
    first layer, and a weight-gradient GEMM; a batch norm: its gradient; a ReLU: its mask; an
    addition: the sum of the two gradients where the branches met; a pooling: its gradient),
    then one update per trainable variable (momentum, weight decay; with float16 the casts and
    the loss-scale division).
  * A kernel's time: max(math, bytes) + LAUNCH_SECS. Math: FLOPs over the rate its kind
    reaches: the data-sheet peak of the path the dtype takes on that GPU (`math_path`) x the
    share of the peak a large GEMM reaches there (`gemm_share`: cuBLAS's measured by DeepBench
    and CUTLASS, MEASURED_GEMM; cuDNN's direct convolutions' measured by DeepBench,
    MEASURED_CONV, those of 3 x 3 stride-1 layers on tensor cores MEASURED_CONV_3X3) x the
    share of the GPU's SMs its output tiles keep busy (`tile_efficiency`: tile and wave
    quantization). Bytes: what it reads and writes over the data-sheet bandwidth x the share
    a streaming copy reaches on that GPU (`achieved_bandwidth`).
  * A convolution takes the fastest of the algorithms TensorFlow's autotuning chooses among
    (`best_secs`, speed_model/conv_algorithms.py): the direct kernel on each path
    (`conv_paths`: with TF32 the CUDA cores' float32 kernels too), Winograd on CUDA cores; a
    tensor-core kernel of a step that runs in NCHW (float32 on TF32: Grappler keeps a float32
    training graph in NCHW) pays the transposes to NHWC and back; bf16 below Ampere: bf16_casts.py.
  * XLA (--xla_compile): elementwise ops (ReLU, bias, residual additions) fuse into the batch
    norm or convolution before them: their intermediate tensors are neither written nor read
    again and they launch no kernel of their own; in the backward pass a ReLU's mask and the
    sum of two gradients fuse into the batch norm's gradient.
  * The input: real data's batch crosses PCIe while the previous step computes (staged); the
    step is the longer of the two. Synthetic data crosses nothing.

Every constant below names its source. Nothing is fitted to published throughput figures.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from . import bf16_casts, conv_algorithms

#: Launch cost per kernel, seconds: the CUDA launch overhead of an empty kernel is about 5 us
#: (NVIDIA CUDA C++ Best Practices Guide, "kernel launch overhead"; Jia et al. 2018,
#: arXiv:1804.06826, measured 5-7 us per launch through the runtime API on P100 and V100).
LAUNCH_SECS = 5e-6

#: Baidu DeepBench's published training results (github.com/baidu-research/DeepBench,
#: results/train/DeepBench_NV_<GPU>.xlsx; read for their figures): its dense GEMM rows give
#: each GPU's time for M x N x K products; its convolution rows the forward, data-gradient
#: and filter-gradient times of cuDNN's kernels. Software: P100, GTX 1080 Ti, Titan Xp with
#: CUDA 8.0.88 and cuDNN 6.0.21 (driver 375.66); V100 (DGX-1) and T4 with CUDA 10.1.243 and
#: cuDNN 7.6.2.
DEEPBENCH = 'Baidu DeepBench training results, results/train/DeepBench_NV_%s.xlsx'

#: Share of the data-sheet peak a large GEMM reaches, measured, by GPU and math unit: the
#: fastest dense GEMM of DeepBench's sheet, 2MNK / time over the data-sheet peak:
#:   V100 SXM2 (DGX-1) float32 M=4096 N=7000 K=4096 15.894 ms, 14.78 of 15.7 TFLOP/s: 0.94;
#:     float16 data with float32 accumulation (tensor cores) the same product 2.092 ms,
#:     112.3 of 125: 0.90;
#:   P100 (a PCIe card: the sheet's host is an ASUS X99-E WS board) M=7680 N=48000 K=2560
#:     206.884 ms, 9.12 of 9.3: 0.98;
#:   GTX 1080 Ti M=2048 N=7000 K=2048 4.845 ms, 12.12 of 11.34: 1.07 (GeForce cards run
#:     above their rated boost clock under GPU Boost 3.0 when power and heat allow);
#:   Titan Xp the same product 5.167 ms, 11.36 of 12.15: 0.93;
#:   T4 M=1024 N=48000 K=2048 43.086 ms, 4.67 of 8.1: 0.58 (a 70 W card: its clock drops
#:     under load); float16 tensor cores M=4096 N=7000 K=4096 5.049 ms, 46.5 of 65: 0.72;
#:   A100 SXM4 TF32: CUTLASS's TF32 GEMM 143 TFLOP/s of 156, 0.92; float16 298 of 312, 0.96
#:     (NVIDIA CUTLASS maintainers, github.com/NVIDIA/cutlass/discussions/241, CUDA 11.3);
#:     float32 on CUDA cores: cuBLAS SGEMM M=5120 N=4096 K=4096 18.88 of 19.49 TFLOP/s on an
#:     A100 80GB PCIe, 0.97 (github.com/Yinghan-Li/YHs_Sample/issues/4);
#:   GA102 (A10, RTX 3080, RTX 3090, RTX A6000) float32 on CUDA cores: "around 20 tflops
#:     should be possible" of an A10's 31.2 (NVIDIA's CUTLASS maintainer, an expectation for
#:     multistage SIMT kernels with CUDA 11.8+: github.com/NVIDIA/cutlass/issues/941), 0.64:
#:     GA102's data-sheet FP32 rate counts a second datapath that also issues the integer
#:     instructions of the GEMM's address arithmetic;
#:   Ada (L4, L40S, RTX 4090) float32 on CUDA cores: cuBLAS SGEMM 29.17 of 35.48 TFLOP/s on
#:     an RTX 4070 Ti (AD104; YHs_Sample#4 above), 0.82.
#: A P100 SXM2 is taken at the P100 PCIe's share, a V100 PCIe, 32GB or V100S at the V100 SXM2's (the
#: same chip; the share of its own clock's peak), every GA102 and Ada board at its chip's, the
#: A100 PCIe cards at the SXM4's (the same chip and data-sheet peaks; a card whose vendor states
#: a lower sustained rate, the 250 W A100 PCIe 40GB, runs at that share of them:
#: hardware/gpu_specs.SUSTAINED, `sustained_rate`).
_GV100 = ('V100 16GB', 'V100 32GB', 'V100 PCIe 16GB', 'V100 PCIe 32GB', 'V100S PCIe 32GB')  # SXM2's
MEASURED_GEMM = {
    ('P100', 'cuda'): 0.98, ('P100 SXM2', 'cuda'): 0.98,
    **{(v, 'cuda'): 0.94 for v in _GV100}, **{(v, 'tensor'): 0.90 for v in _GV100},
    ('GTX 1080 Ti', 'cuda'): 1.07, ('Titan Xp', 'cuda'): 0.93,
    ('T4', 'cuda'): 0.58, ('T4', 'tensor'): 0.72,
    ('A100 40GB', 'tf32'): 0.92, ('A100 80GB', 'tf32'): 0.92, ('A100 PCIe 80GB', 'tf32'): 0.92,
    ('A100 40GB', 'tensor'): 0.96, ('A100 80GB', 'tensor'): 0.96,
    ('A100 PCIe 80GB', 'tensor'): 0.96,
    ('A100 40GB', 'cuda'): 0.97, ('A100 80GB', 'cuda'): 0.97, ('A100 PCIe 80GB', 'cuda'): 0.97,
    ('A100 PCIe 40GB', 'tf32'): 0.92, ('A100 PCIe 40GB', 'tensor'): 0.96,
    ('A100 PCIe 40GB', 'cuda'): 0.97,
    ('A10', 'cuda'): 0.64, ('RTX 3080', 'cuda'): 0.64, ('RTX 3090', 'cuda'): 0.64,
    ('RTX A6000', 'cuda'): 0.64,
    ('L4', 'cuda'): 0.82, ('L40S', 'cuda'): 0.82, ('RTX 4090', 'cuda'): 0.82,
}
#: Where no measurement of that GPU was found: the median of the measured shares of its unit
#: above ('cuda' 0.94 of P100, V100, 1080 Ti, Titan Xp, T4; 'tensor' 0.90 of V100, T4, A100;
#: 'tf32' A100's 0.92), an assumption stated as such; 'kepler': float32 on Kepler's CUDA
#: cores, whose SGEMM is bounded near 58% of peak by register-bank conflicts and dual issue
#: (Lai and Seznec 2013, "Performance upper bound analysis and optimization of SGEMM on Fermi
#: and Kepler GPUs", CGO 2013: 57.6% on GK104; no DeepBench sheet of a Kepler GPU).
GEMM_EFFICIENCY = {'cuda': 0.94, 'tensor': 0.90, 'tf32': 0.92, 'kepler': 0.58}

#: Share of the data-sheet peak cuDNN's direct (implicit-GEMM) convolution kernels reach,
#: measured: over DeepBench's training convolutions that are no 3 x 3 stride-1 layer (1 x 1
#: and strided; those take Winograd, below), each forward, data-gradient and filter-gradient
#: kernel that this model calls clearly math-bound (math over twice its bytes' time) and that
#: takes over 50 us, FLOPs / (time x peak x tile_efficiency), the median: V100 float32 0.61
#: (127 kernels), float16 tensor cores 0.45 (33); P100 0.57 (137); GTX 1080 Ti 0.68 (114);
#: Titan Xp 0.59 (119); T4 float32 0.51 (97), float16 0.39 (27). The quartiles are wide
#: (V100 float32 0.47-0.83): the median is a typical kernel, not a bound. DeepBench's
#: convolutions run at batch 4 to 32, smaller than training batches, which may understate the
#: share at batch 64 and more.
MEASURED_CONV = {
    ('P100', 'cuda'): 0.57, ('P100 SXM2', 'cuda'): 0.57,
    **{(v, 'cuda'): 0.61 for v in _GV100}, **{(v, 'tensor'): 0.45 for v in _GV100},
    ('GTX 1080 Ti', 'cuda'): 0.68, ('Titan Xp', 'cuda'): 0.59,
    ('T4', 'cuda'): 0.51, ('T4', 'tensor'): 0.39,
}
#: A GPU with a measured GEMM share but no convolution measurement: its GEMM share times the
#: median of the measured GPUs' conv / GEMM ratios of that unit (CUDA cores: P100 0.58, V100
#: 0.65, GTX 1080 Ti 0.64, Titan Xp 0.63, T4 0.88: 0.64; tensor cores: V100 0.50, T4 0.54:
#: 0.52, taken for TF32 too), an assumption: the GEMM share carries the GPU's clock under load
#: and the ratio cuDNN's direct kernels against cuBLAS's.
CONV_TO_GEMM = {'cuda': 0.64, 'kepler': 0.64, 'tensor': 0.52, 'tf32': 0.52}
#: Elsewhere: the median of the measured conv shares of the unit ('cuda' 0.59; 'tensor' 0.42
#: of V100 and T4, taken for TF32 too: no convolution measurement of an Ampere or later GPU was
#: found), an assumption; Kepler: its SGEMM bound (0.58) x CONV_TO_GEMM, 0.37.
CONV_EFFICIENCY = {'cuda': 0.59, 'tensor': 0.42, 'tf32': 0.42, 'kepler': 0.37}

#: Share of the peak cuDNN's direct (implicit-GEMM) tensor-core kernels reach on 3 x 3
#: convolutions of stride 1, measured the same way as MEASURED_CONV over DeepBench's float16
#: sheets (those layers' forward algorithm there is IMPLICIT_PRECOMP_GEMM): V100 0.62 (48
#: kernels, quartiles 0.48-0.72), T4 0.56 (30). On CUDA cores cuDNN runs these layers with
#: Winograd or FFT (the sheets' float32 kernels reach 1.2-1.4x the direct peak), so their
#: direct share is not measured there: the unit's MEASURED_CONV / CONV_EFFICIENCY is taken.
MEASURED_CONV_3X3 = {**{(v, 'tensor'): 0.62 for v in _GV100}, ('T4', 'tensor'): 0.56}
#: A GPU with a measured tensor-core GEMM share: that share x the measured 3 x 3 / GEMM
#: ratios' median (V100 0.69, T4 0.78: 0.73), as CONV_TO_GEMM; elsewhere on tensor cores the
#: median of the two shares (0.59), taken for TF32 too (no measurement of an Ampere or later
#: GPU), assumptions.
CONV_3X3_TO_GEMM = 0.73
CONV_3X3_EFFICIENCY = {'tensor': 0.59, 'tf32': 0.59}


def gemm_share(gpu, unit: str, conv: bool = False, conv3x3: bool = False) -> float:
    """Share of the data-sheet peak a large product reaches on `gpu` by `unit` ('cuda',
    'tensor', 'tf32', 'kepler'): a cuBLAS GEMM (MEASURED_GEMM, else GEMM_EFFICIENCY); with
    `conv` a cuDNN direct convolution kernel (MEASURED_CONV, else CONV_EFFICIENCY); with
    `conv3x3` one of a 3 x 3 convolution of stride 1 (on tensor cores MEASURED_CONV_3X3, else
    CONV_3X3_EFFICIENCY; on CUDA cores the `conv` share); a GPU with a measured GEMM share
    but no convolution measurement: that share x CONV_TO_GEMM (CONV_3X3_TO_GEMM)."""
    key = (gpu.name, unit)
    if conv3x3 and unit in CONV_3X3_EFFICIENCY:
        if key in MEASURED_CONV_3X3:
            return MEASURED_CONV_3X3[key]
        if key in MEASURED_GEMM:
            return round(MEASURED_GEMM[key] * CONV_3X3_TO_GEMM, 2)
        return CONV_3X3_EFFICIENCY[unit]
    if conv or conv3x3:
        if key in MEASURED_CONV:
            return MEASURED_CONV[key]
        if key in MEASURED_GEMM:
            return round(MEASURED_GEMM[key] * CONV_TO_GEMM[unit], 2)
        return CONV_EFFICIENCY[unit]
    return MEASURED_GEMM.get(key, GEMM_EFFICIENCY[unit])

#: Share of the data-sheet memory bandwidth a streaming copy reaches, measured, by GPU:
#: K80 (one GK210) 191 of 240 GB/s, P100 510 of 732, V100 750 of 900 (Jia et al. 2018,
#: arXiv:1804.06826, Table 3.1, global memory bandwidth); T4 220 of 320 (Jia et al. 2019,
#: "Dissecting the NVidia Turing T4 GPU via Microbenchmarking", arXiv:1903.07486, Table 3.2).
MEASURED_BANDWIDTH = {'K80': 191 / 240, 'P100': 510 / 732, 'P100 SXM2': 510 / 732,
                      'V100 16GB': 750 / 900, 'V100 32GB': 750 / 900,
                      'V100 PCIe 16GB': 750 / 900, 'V100 PCIe 32GB': 750 / 900, 'T4': 220 / 320}
#: Where no measurement of that GPU was found: the median of the measured shares above (0.78),
#: an assumption stated as such.
DEFAULT_BANDWIDTH_SHARE = 0.78

#: GEMM output tiles (rows x columns) the libraries choose from, and the K step of one
#: main-loop iteration (NVIDIA, "Matrix Multiplication Background User's Guide", "Tile
#: Quantization" and "Wave Quantization": cuBLAS picks among tiles such as 256x128, 128x128,
#: 128x64 and 64x64; 32 is CUTLASS's default threadblock K). A product is timed with the tile
#: that keeps the most of the GPU busy (the libraries' heuristics and TensorFlow's autotuning
#: pick the fastest kernel), larger tiles first among equals.
TILES = ((256, 128), (128, 256), (128, 128), (128, 64), (64, 128), (64, 64))
TILE_K = 32
#: A product with fewer tiles than SMs is split along K (split-K, as cuBLAS and cuDNN's weight
#: gradients do) while each slice keeps at least this many main-loop iterations (assumption:
#: the pipeline prologue of a slice is then under 1/8 of its time).
MIN_K_ITERATIONS = 8

#: Kernels per step outside the model's layers: the loss, its gradient, the learning rate and
#: the global step (counted in a tf_cnn_benchmarks resnet50 step graph: softmax cross entropy
#: and its gradient, the L2 sum, the step increment).
FIXED_KERNELS = 12


class Kernel(NamedTuple):
    """One kernel of the step: name, kind, phase ('forward', 'backward', 'update'), flops,
    bytes, gemm (M, N, K for the whole batch; (batch, M, N, K) for a batched product; or
    None), launches (0 when XLA fused it);
    winograd: the kernels of the same convolution by Winograd's algorithm (a 3 x 3
    convolution of stride 1: speed_model/conv_algorithms.py), or (); transposes: the bytes
    of the NCHW <-> NHWC transposes a tensor-core kernel of this pass needs when the
    convolution runs in NCHW (0: none); grad: which pass of a convolution or matrix product
    this is ('forward', 'dgrad', 'wgrad'; '' for other kernels); padding: how many times its
    products grow on tensor cores from padded input channels (conv_algorithms.channel_padding;
    1.0: aligned, or no convolution)."""
    name: str
    kind: str
    phase: str
    flops: float
    bytes: float
    gemm: tuple | None = None
    launches: int = 1
    winograd: tuple = ()
    transposes: float = 0.0
    grad: str = ''
    padding: float = 1.0


class Path(NamedTuple):
    """One way a GPU computes products: unit (a GEMM_EFFICIENCY key), name (e.g. 'TF32
    tensor cores'), peak_tflops (data sheet), gemm, conv and conv3x3 (FLOP/s a large cuBLAS
    product, a cuDNN direct convolution kernel and one of a 3 x 3 stride-1 convolution reach:
    peak x gemm_share x sustained_rate)."""
    unit: str
    name: str
    peak_tflops: float
    gemm: float
    conv: float
    conv3x3: float

    @property
    def tensor_cores(self) -> bool:
        return self.unit in ('tensor', 'tf32')


class OpTime(NamedTuple):
    """One kind of op's share of the step: kind, seconds, the bound that dominates it ('math',
    'memory' or 'launch'), share of the step, kernels."""
    kind: str
    seconds: float
    bound: str
    share: float
    kernels: int


class StepPrediction(NamedTuple):
    """One GPU's step.

    seconds: the step; images_per_sec; compute_secs: the kernels alone; input_secs: the
    batch's host-to-GPU copy (0 for synthetic data); bound_ops: OpTime per kind, longest
    first; share_of_peak: the step's model FLOPs (3 x forward, or 1 x forward-only) per second
    over the peak of its math path; math_path: e.g. 'TF32 tensor cores'; peak_tflops: that
    path's data-sheet peak; kernels: launches per step; bound: 'compute' or 'input'."""
    seconds: float
    images_per_sec: float
    compute_secs: float
    input_secs: float
    bound_ops: tuple
    share_of_peak: float
    math_path: str
    peak_tflops: float
    kernels: int
    bound: str

    def as_dict(self) -> dict:
        """The prediction as plain data (for a JSON file): seconds, images_per_sec,
        share_of_peak, math_path, peak_tflops, kernels, bound and bound_ops as
        [{'kind', 'seconds', 'bound', 'share', 'kernels'}], longest first."""
        out = {k: v for k, v in self._asdict().items() if k != 'bound_ops'}
        out['bound_ops'] = [op._asdict() for op in self.bound_ops]
        return out

    def describe(self, top: int = 3) -> str:
        """'conv 61% (math), batchnorm 22% (memory), relu 8% (memory)'."""
        return ', '.join('%s %.0f%% (%s)' % (op.kind, 100 * op.share, op.bound)
                         for op in self.bound_ops[:top])


def math_path(gpu, dtype: str, tf32: bool = True) -> tuple[str, float, str]:
    """(path name, data-sheet peak TFLOP/s, math unit: a GEMM_EFFICIENCY key) of convolutions
    and matrix products in `dtype` on `gpu` (hardware/gpu_specs.GpuSpec) as TensorFlow 2.21
    runs them:

      * float32: TF32 tensor cores on compute capability >= 8.0 unless TF32 is off
        (`tf.config.experimental.enable_tensor_float_32_execution`, default on since TF 2.4;
        NVIDIA_TF32_OVERRIDE=0), else the CUDA cores;
      * float16: tensor cores from compute capability 7.0 (float32 accumulation: the table's
        float16 rate); below 7.0 TensorFlow asks cuDNN and cuBLAS for float32 compute on
        float16 data (TF_FP16_CONV_USE_FP32_COMPUTE and TF_FP16_MATMUL_USE_FP32_COMPUTE,
        default on), so the math runs at the float32 rate whatever the GPU's float16 rate
        (1/64 on compute capability 6.1, 2x on the P100);
      * bfloat16: tensor cores from compute capability 8.0; before, float32 compute (and
        float32 bytes in the convolutions, which TensorFlow casts: bf16_casts.py).

    Raises:
      ValueError: another dtype.
    """
    if dtype not in ('float32', 'float16', 'bfloat16'):
        raise ValueError('math_path takes float32, float16 or bfloat16. Received: %r' % (dtype,))
    if dtype == 'float32':
        if tf32 and gpu.tf32_tflops:
            return 'TF32 tensor cores', gpu.tf32_tflops, 'tf32'
        return 'float32 CUDA cores', gpu.fp32_tflops, _cuda_unit(gpu)
    if dtype == 'float16' and gpu.tensor_cores:
        return 'float16 tensor cores', gpu.fp16_tflops, 'tensor'
    if dtype == 'bfloat16' and gpu.bf16_tflops and gpu.tensor_cores not in ('', 'volta',
                                                                           'turing'):
        return 'bfloat16 tensor cores', gpu.bf16_tflops, 'tensor'
    return '%s data, float32 math on CUDA cores' % dtype, gpu.fp32_tflops, _cuda_unit(gpu)


def _cuda_unit(gpu) -> str:
    return 'kepler' if gpu.compute_capability_tuple[0] == 3 else 'cuda'


def achieved_bandwidth(gpu) -> float:
    """Bytes/s a streaming kernel reaches on `gpu`: data sheet x MEASURED_BANDWIDTH (or the
    default share)."""
    return gpu.bandwidth_gbs * 1e9 * MEASURED_BANDWIDTH.get(gpu.name, DEFAULT_BANDWIDTH_SHARE)


def _tile_share(m: int, n: int, k: int, sm_count: int, tm: int, tn: int,
                batch: int = 1) -> float:
    tiles = batch * math.ceil(m / tm) * math.ceil(n / tn)
    slices = 1
    if tiles < sm_count:
        slices = max(1, min(sm_count // tiles, k // (TILE_K * MIN_K_ITERATIONS)))
    waves = math.ceil(tiles * slices / sm_count)
    return (batch * m * n * slices) / (waves * sm_count * tm * tn)


def tile_efficiency(m: int, n: int, k: int, sm_count: int, batch: int = 1) -> float:
    """Share of the GPU's SMs x tile area a GEMM of m x n outputs (k deep) keeps busy:
    m x n / (waves x SMs x tile area), the tiles in waves of one per SM, split along K when
    there are fewer tiles than SMs (MIN_K_ITERATIONS), with the best tile of TILES. `batch`
    independent products of that size (a batched GEMM: Winograd's 36) tile each
    product on its own. 1 for an SM count of 0 (a GPU without the fact)."""
    if sm_count <= 0:
        return 1.0
    return max(_tile_share(m, n, k, sm_count, tm, tn, batch) for tm, tn in TILES)


def _gemm_kernels(op, b: int, e: int, forward_only: bool) -> list[Kernel]:
    m, n, k = op.gemm
    act = e * b * (op.in_elems + op.out_elems)
    w = op.weight_elems

    def kernel(suffix, phase, dims, src, dst, which):
        name = op.name + suffix
        wino = (conv_algorithms.winograd_kernels(Kernel, name, op.kind, phase, b * op.flops,
                                                 src, dst, w, e, dims) if op.winograd else ())
        turns = (conv_algorithms.transpose_bytes(src, dst, e)
                 if op.kind == 'conv' and which in conv_algorithms.TRANSPOSED_PASSES else 0.0)
        padding = (conv_algorithms.channel_padding(op.channels_in, op.stride, e)
                   if op.kind == 'conv' and which in ('forward', 'wgrad') else 1.0)
        return Kernel(name, op.kind, phase, b * op.flops, act + e * w, dims, winograd=wino,
                      transposes=turns, grad=which, padding=padding)

    out = [kernel('', 'forward', (b * m, n, k), b * op.in_elems, b * op.out_elems, 'forward')]
    if forward_only:
        return out
    if op.dgrad is not None:
        dm, dn, dk = op.dgrad
        out.append(kernel('/dgrad', 'backward', (b * dm, dn, dk), b * op.out_elems,
                          b * op.in_elems, 'dgrad'))
    wm, wn, wk = op.wgrad
    # The filter gradient's Winograd transforms both the input and the gradient (the output
    # side); its product runs over the tiles (K), its result is the small filter.
    out.append(kernel('/wgrad', 'backward', (wm, wn, b * wk), b * (op.in_elems + op.out_elems),
                      w, 'wgrad'))
    return out


#: Passes over the op's output (o) and input (i) elements, forward and backward, and whether
#: XLA fuses the op into its producer. Batch norm: statistics, then normalise (x read twice,
#: y written); its gradient reads dy and x for the reductions and again to write dx (cuDNN's
#: training kernels). ReLU: read, write; gradient: dy and y read, dx written. Addition: two
#: reads (its input elements are both operands'), one write; gradient: the two gradients
#: summed where the branches met (3 passes over its output); with XLA only the other branch's
#: tensor is read.
_PASSES = {
    #  kind:      (fwd o, fwd i, bwd o, bwd i, xla: fwd o, fwd i, bwd o, bwd i, fused)
    'batchnorm': (1, 2, 2, 3, 1, 2, 2, 3, False),
    'relu': (1, 1, 2, 1, 0, 0, 1, 0, True),
    'add': (1, 1, 3, 0, 1, 0, 1, 0, True),
    'bias': (1, 1, 1, 0, 0, 0, 1, 0, True),
    'pool': (1, 1, 2, 2, 1, 1, 2, 2, False),
    'concat': (1, 1, 1, 1, 1, 1, 1, 1, False),
    'pad': (1, 1, 1, 1, 1, 1, 1, 1, False),
    'mean': (0, 1, 0, 1, 0, 1, 0, 1, False),
    'other': (1, 1, 2, 1, 1, 1, 2, 1, False),
}


def _memory_kernels(op, b: int, e: int, xla: bool, forward_only: bool) -> list[Kernel]:
    passes = _PASSES[op.kind]
    fo, fi, bo, bi = passes[4:8] if xla else passes[:4]
    fused = xla and passes[8]
    out = [Kernel(op.name, op.kind, 'forward', 0.0, e * b * (fo * op.out_elems + fi * op.in_elems),
                  launches=0 if fused else 1)]
    if not forward_only:
        out.append(Kernel(op.name + '/grad', op.kind, 'backward', 0.0,
                          e * b * (bo * op.out_elems + bi * op.in_elems),
                          launches=0 if fused else 1))
    return out


def update_kernels(variable_elems, dtype: str, forward_only: bool = False) -> list[Kernel]:
    """One step's updates of float32 master variables: momentum reads the variable, its
    gradient and its slot and writes both (5 x 4 bytes an element); weight decay reads the
    variable and adds to its gradient (4 x 4 bytes); float16 and bfloat16 add the variable's
    cast (4 + 2 bytes) and the gradient's cast back (2 + 4), float16 the loss scale's division
    (4 + 4)."""
    if forward_only:
        return []
    reduced = dtype != 'float32'
    per_elem = 5 * 4 + 4 * 4 + (12 if reduced else 0) + (8 if dtype == 'float16' else 0)
    launches = 3 + (2 if reduced else 0) + (1 if dtype == 'float16' else 0)
    return [Kernel('update %d' % i, 'update', 'update', 0.0, per_elem * n, launches=launches)
            for i, n in enumerate(variable_elems)]


def step_kernels(profile, batch_size: int, dtype: str, xla: bool = False,
                 forward_only: bool = False, conv_casts: bool = False) -> list[Kernel]:
    """Every kernel of one training step of `profile` (op_profile.OpProfile) at `batch_size`;
    with `conv_casts` the convolutions run in float32 between casts (bf16_casts.py)."""
    e = 4 if dtype == 'float32' else 2
    kernels = []
    for op in profile.ops:
        if op.gemm is not None and conv_casts and bf16_casts.cast_op(op):
            kernels += bf16_casts.with_casts(_gemm_kernels(op, batch_size, 4, forward_only), op,
                                             batch_size, xla)
        elif op.gemm is not None:
            kernels += _gemm_kernels(op, batch_size, e, forward_only)
        else:
            kernels += _memory_kernels(op, batch_size, e, xla, forward_only)
    kernels += update_kernels(profile.variable_elems, dtype, forward_only)
    kernels.append(Kernel('loss and step', 'other', 'update', 0.0, 0.0,
                          launches=FIXED_KERNELS))
    return kernels


def kernel_secs(kernel: Kernel, gpu, rate_flops: float, bandwidth: float,
                winograd: bool = False, conv_rate: float | None = None) -> tuple[float, str]:
    """(seconds, bound) of one kernel on one path: max(math, bytes) + launches x LAUNCH_SECS;
    the bound is 'math', 'memory' or 'launch', whichever of the three is largest. rate_flops:
    a GEMM's FLOP/s; conv_rate: a direct convolution kernel's (kind 'conv' without an
    algorithm's suffix; None: rate_flops). With `winograd` (the product runs on CUDA cores,
    where cuDNN offers it) a convolution that has Winograd kernels takes the faster of the two
    algorithms, as TensorFlow's autotuning does; Winograd's 36 batched products run at
    rate_flops. (`best_secs` weighs every algorithm and path.)"""
    if winograd and kernel.winograd:
        direct = kernel_secs(kernel._replace(winograd=()), gpu, rate_flops, bandwidth,
                             conv_rate=conv_rate)
        parts = [kernel_secs(k, gpu, rate_flops, bandwidth) for k in kernel.winograd]
        total = sum(secs for secs, _ in parts)
        if total < direct[0]:
            return total, max(parts)[1]
        return direct
    math_secs = 0.0
    if kernel.flops:
        batch, (m, n, k) = (kernel.gemm[0], kernel.gemm[1:]) if len(kernel.gemm) == 4 else (
            1, kernel.gemm)
        direct_conv = (conv_rate is not None and kernel.kind == 'conv'
                       and '/winograd' not in kernel.name)
        rate = conv_rate if direct_conv else rate_flops
        math_secs = kernel.flops / (rate * tile_efficiency(m, n, k, gpu.sm_count, batch))
    memory_secs = kernel.bytes / bandwidth
    launch = kernel.launches * LAUNCH_SECS
    parts = {'math': math_secs, 'memory': memory_secs, 'launch': launch}
    return max(math_secs, memory_secs) + launch, max(parts, key=parts.get)


def sustained_rate(gpu) -> float:
    """Share of its data-sheet arithmetic rates `gpu` sustains under load: its vendor's
    statement where there is one (hardware/gpu_specs.SUSTAINED: the 250 W A100 PCIe 40GB, 0.90
    of the SXM4 module's), else 1.0. Memory-bound kernels are not slowed: a power limit lowers
    the SM clock, the memory keeps its own."""
    return getattr(gpu, 'sustained', 1.0) or 1.0


def conv_paths(gpu, dtype: str, tf32: bool = True) -> tuple[Path, ...]:
    """The paths TensorFlow's autotuning may run a convolution of `dtype` on, the math path's
    first (`math_path`): with TF32, float32 convolutions may also take cuDNN's float32 kernels
    on the CUDA cores (cuDNN's default math type offers both; NVIDIA cuDNN developer guide,
    cudnnMathType_t: CUDNN_DEFAULT_MATH "Tensor Core operations are permitted" on TF32, not
    required). float16 and bfloat16 keep their tensor cores (their CUDA-core kernels run at
    an eighth of the rate or less)."""
    def path(name, peak, unit):
        rates = [peak * 1e12 * gemm_share(gpu, unit, **kw) * sustained_rate(gpu)
                 for kw in ({}, {'conv': True}, {'conv3x3': True})]
        return Path(unit, name, peak, *rates)

    name, peak, unit = math_path(gpu, dtype, tf32)
    out = [path(name, peak, unit)]
    if dtype == 'float32' and unit == 'tf32':
        out.append(path('float32 CUDA cores', gpu.fp32_tflops, _cuda_unit(gpu)))
    return tuple(out)


def _padded(kernel: Kernel) -> Kernel:
    """`kernel` with its input channels padded (Kernel.padding): more FLOPs, and the
    product's reduction (forward: K) or rows (filter gradient: M) as long."""
    m, n, k = kernel.gemm
    x = kernel.padding
    dims = (m, n, math.ceil(k * x)) if kernel.grad == 'forward' else (math.ceil(m * x), n, k)
    return kernel._replace(flops=kernel.flops * x, gemm=dims)


def best_secs(kernel: Kernel, gpu, paths, bandwidth: float, *, winograd: bool = True,
              nchw: bool = True, filter_winograd: bool = True) -> tuple[float, str, int]:
    """(seconds, bound, launches) of one kernel as TensorFlow's autotuning runs it: a
    convolution takes the fastest of its algorithms on each of `paths` (conv_paths): the
    direct kernel (on tensor cores in NCHW, `nchw`, with its two transposes:
    conv_algorithms.TRANSPOSED_PASSES), and on CUDA cores Winograd (with `winograd`; for a
    filter gradient also `filter_winograd`: conv_algorithms.offers_winograd); any other kernel
    runs on the first path (cuBLAS takes TF32 where it is allowed)."""
    first = paths[0]
    if kernel.kind != 'conv' or not kernel.flops:
        secs, bound = kernel_secs(kernel, gpu, first.gemm, bandwidth)
        return secs, bound, kernel.launches
    plain = kernel._replace(winograd=())
    options = []
    for path in paths:
        direct = _padded(plain) if path.tensor_cores and kernel.padding > 1.0 else plain
        secs, bound = kernel_secs(direct, gpu, path.gemm, bandwidth,
                                  conv_rate=path.conv3x3 if kernel.winograd else path.conv)
        if path.tensor_cores and nchw and kernel.transposes:
            secs += kernel.transposes / bandwidth + 2 * LAUNCH_SECS
            options.append((secs, bound, kernel.launches + 2))
        else:
            options.append((secs, bound, kernel.launches))
        if (kernel.winograd and not path.tensor_cores
                and conv_algorithms.offers_winograd(kernel.grad, winograd, filter_winograd)):
            timed = [kernel_secs(k, gpu, path.gemm, bandwidth) for k in kernel.winograd]
            options.append((sum(t for t, _ in timed), max(timed)[1],
                            sum(k.launches for k in kernel.winograd)))
    return min(options, key=lambda option: option[0])


def predict_step(profile, gpu, dtype: str, *, batch_size: int, xla: bool = False,
                 tf32: bool = True, forward_only: bool = False, winograd: bool = True,
                 filter_winograd: bool = True, batch_bytes: int = 0,
                 host_link_bytes_per_sec: float = 0.0) -> StepPrediction:
    """One GPU's step of `profile` (op_profile.OpProfile) on `gpu` (gpu_specs.GpuSpec).

    Args:
      dtype: the compute dtype, 'float32', 'float16' or 'bfloat16'.
      batch_size: images per step on this GPU.
      xla: --xla_compile (elementwise fusion; the convolutions' layout on Hopper).
      tf32: TF32 allowed for float32 (False: --notf32 or NVIDIA_TF32_OVERRIDE=0).
      forward_only: --forward_only (no backward pass, no update).
      winograd: cuDNN may use its non-fused Winograd kernels (--winograd_nonfused, the
        original's default; TF_ENABLE_WINOGRAD_NONFUSED).
      filter_winograd: TensorFlow offers the non-fused Winograd for filter gradients too
        (True from TensorFlow 1.5; False for a run of TensorFlow 1.4 or older with cuDNN 5.1:
        conv_algorithms.offers_winograd). The dry run plans TensorFlow 2.21: True.
      batch_bytes, host_link_bytes_per_sec: real data's batch and the host link's rate; the
        copy overlaps the step (StagingArea), so the step is the longer of the two.

    Raises:
      ValueError: batch_size < 1 or an unknown dtype.
    """
    if batch_size < 1:
        raise ValueError('batch_size must be >= 1. Received: %r' % (batch_size,))
    paths = conv_paths(gpu, dtype, tf32)
    nchw = conv_algorithms.runs_nchw(gpu, dtype, xla)
    bandwidth = achieved_bandwidth(gpu)
    by_kind, total, launches = {}, 0.0, 0
    casts = bf16_casts.casts_convolutions(gpu, dtype)
    for kernel in step_kernels(profile, batch_size, dtype, xla, forward_only, casts):
        secs, bound, count = best_secs(kernel, gpu, paths, bandwidth, winograd=winograd,
                                       nchw=nchw, filter_winograd=filter_winograd)
        kind = by_kind.setdefault(kernel.kind, {'secs': 0.0, 'bounds': {}, 'kernels': 0})
        kind['secs'] += secs
        kind['bounds'][bound] = kind['bounds'].get(bound, 0.0) + secs
        kind['kernels'] += count
        total += secs
        launches += count
    input_secs = (batch_bytes / host_link_bytes_per_sec
                  if batch_bytes and host_link_bytes_per_sec else 0.0)
    step = max(total, input_secs)
    ops = sorted((OpTime(k, v['secs'], max(v['bounds'], key=v['bounds'].get),
                         v['secs'] / total, v['kernels']) for k, v in by_kind.items()),
                 key=lambda op: -op.seconds)
    work = batch_size * (1 if forward_only else 3) * profile.forward_flops
    first = paths[0]
    return StepPrediction(step, batch_size / step, total, input_secs, tuple(ops),
                          work / step / (first.peak_tflops * 1e12), first.name,
                          first.peak_tflops, launches,
                          'input' if input_secs > total else 'compute')

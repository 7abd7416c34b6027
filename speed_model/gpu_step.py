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
    share of the peak a large GEMM reaches there (GEMM_EFFICIENCY) x the share of the GPU's
    SMs its 128 x 128 output tiles keep busy (`tile_efficiency`: tile and wave quantization).
    Bytes: what it reads and writes over the data-sheet bandwidth x the share a streaming copy
    reaches on that GPU (`achieved_bandwidth`).
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

#: Launch cost per kernel, seconds: the CUDA launch overhead of an empty kernel is about 5 us
#: (NVIDIA CUDA C++ Best Practices Guide, "kernel launch overhead"; Jia et al. 2018,
#: arXiv:1804.06826, measured 5-7 us per launch through the runtime API on P100 and V100).
LAUNCH_SECS = 5e-6

#: Share of the data-sheet peak a large GEMM reaches, by the unit that computes it:
#: 'cuda': float32 FMA on CUDA cores, cuBLAS SGEMM on large square matrices about 90% of peak
#: (Jia et al. 2018, arXiv:1804.06826, Section 4, P100 and V100 SGEMM); 'tensor': tensor cores,
#: cuBLAS HGEMM with float32 accumulation 83 of 112 TFLOP/s on a V100 PCIe, 74% (Markidis et
#: al. 2018, "NVIDIA Tensor Core Programmability, Performance & Precision", arXiv:1803.04014).
#: The tensor-core share is taken for TF32 and for later generations too (no other published
#: measurement was found).
#: 'kepler': float32 on Kepler's CUDA cores, whose SGEMM is bounded near 58% of peak by
#: register-bank conflicts and dual issue (Lai and Seznec 2013, "Performance upper bound
#: analysis and optimization of SGEMM on Fermi and Kepler GPUs", CGO 2013: 57.6% on GK104).
GEMM_EFFICIENCY = {'cuda': 0.90, 'tensor': 0.74, 'kepler': 0.58}

#: Share of the data-sheet memory bandwidth a streaming copy reaches, measured, by GPU:
#: K80 (one GK210) 191 of 240 GB/s, P100 510 of 732, V100 750 of 900 (Jia et al. 2018,
#: arXiv:1804.06826, Table 3.1, global memory bandwidth); T4 220 of 320 (Jia et al. 2019,
#: "Dissecting the NVidia Turing T4 GPU via Microbenchmarking", arXiv:1903.07486, Table 3.2).
MEASURED_BANDWIDTH = {'K80': 191 / 240, 'P100': 510 / 732, 'P100 SXM2': 510 / 732,
                      'V100 16GB': 750 / 900, 'V100 32GB': 750 / 900,
                      'V100 PCIe 16GB': 750 / 900, 'T4': 220 / 320}
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
    bytes, gemm (M, N, K for the whole batch, or None), launches (0 when XLA fused it),
    winograd: the kernels of the same product by Winograd's algorithm (a 3 x 3 convolution of
    stride 1), or ()."""
    name: str
    kind: str
    phase: str
    flops: float
    bytes: float
    gemm: tuple | None = None
    launches: int = 1
    winograd: tuple = ()


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
    """(path name, data-sheet peak TFLOP/s, GEMM_EFFICIENCY key) of convolutions and matrix
    products in `dtype` on `gpu` (hardware/gpu_specs.GpuSpec) as TensorFlow 2.21 runs them:

      * float32: TF32 tensor cores on compute capability >= 8.0 unless TF32 is off
        (`tf.config.experimental.enable_tensor_float_32_execution`, default on since TF 2.4;
        NVIDIA_TF32_OVERRIDE=0), else the CUDA cores;
      * float16: tensor cores from compute capability 7.0 (float32 accumulation: the table's
        float16 rate); below 7.0 TensorFlow asks cuDNN and cuBLAS for float32 compute on
        float16 data (TF_FP16_CONV_USE_FP32_COMPUTE and TF_FP16_MATMUL_USE_FP32_COMPUTE,
        default on), so the math runs at the float32 rate whatever the GPU's float16 rate
        (1/64 on compute capability 6.1, 2x on the P100);
      * bfloat16: tensor cores from compute capability 8.0; before, float32 compute.

    Raises:
      ValueError: another dtype.
    """
    if dtype not in ('float32', 'float16', 'bfloat16'):
        raise ValueError('math_path takes float32, float16 or bfloat16. Received: %r' % (dtype,))
    if dtype == 'float32':
        if tf32 and gpu.tf32_tflops:
            return 'TF32 tensor cores', gpu.tf32_tflops, 'tensor'
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


def _tile_share(m: int, n: int, k: int, sm_count: int, tm: int, tn: int) -> float:
    tiles = math.ceil(m / tm) * math.ceil(n / tn)
    slices = 1
    if tiles < sm_count:
        slices = max(1, min(sm_count // tiles, k // (TILE_K * MIN_K_ITERATIONS)))
    waves = math.ceil(tiles * slices / sm_count)
    return (m * n * slices) / (waves * sm_count * tm * tn)


def tile_efficiency(m: int, n: int, k: int, sm_count: int) -> float:
    """Share of the GPU's SMs x tile area a GEMM of m x n outputs (k deep) keeps busy:
    m x n / (waves x SMs x tile area), the tiles in waves of one per SM, split along K when
    there are fewer tiles than SMs (MIN_K_ITERATIONS), with the best tile of TILES. 1 for an
    SM count of 0 (a GPU without the fact)."""
    if sm_count <= 0:
        return 1.0
    return max(_tile_share(m, n, k, sm_count, tm, tn) for tm, tn in TILES)


#: Winograd's minimal filtering F(4x4, 3x3) (Lavin and Gray 2016, "Fast Algorithms for
#: Convolutional Neural Networks", arXiv:1509.09308): a 4 x 4 output tile from a 6 x 6 input
#: tile takes 36 multiplies per input and output channel pair instead of 144, 4x fewer; the
#: transformed input and output are 36/16 = 2.25x the tensors and the transformed filter 36/9
#: = 4x the weights. cuDNN's non-fused Winograd (CUDNN_CONVOLUTION_*_ALGO_WINOGRAD_NONFUSED,
#: forward, data and filter gradients) writes them to memory between three kernels: input
#: transform, 36 batched GEMMs, output transform.
WINOGRAD = {'multiply_reduction': 4.0, 'tile_expansion': 36 / 16, 'filter_expansion': 36 / 9,
            'tile_outputs': 16}


def winograd_kernels(name: str, kind: str, phase: str, flops: float, src: float, dst: float,
                     weights: float, e: int, gemm: tuple) -> tuple:
    """The three kernels of a non-fused Winograd F(4x4, 3x3) product (WINOGRAD) reading
    `src` and writing `dst` elements; gemm: the (M, N, K) of the direct product, whose M
    (the output positions) becomes M / 16 tiles x 36 batched products."""
    x = WINOGRAD['tile_expansion']
    m, n, k = gemm
    tiles = max(1, m // WINOGRAD['tile_outputs'])
    return (Kernel(name + '/winograd_in', kind, phase, 0.0, e * src * (1 + x)),
            Kernel(name + '/winograd_gemm', kind, phase, flops / WINOGRAD['multiply_reduction'],
                   e * (x * src + x * dst + WINOGRAD['filter_expansion'] * weights),
                   (36 * tiles, n, k)),
            Kernel(name + '/winograd_out', kind, phase, 0.0, e * dst * (1 + x)))


def _gemm_kernels(op, b: int, e: int, forward_only: bool) -> list[Kernel]:
    m, n, k = op.gemm
    act = e * b * (op.in_elems + op.out_elems)
    w = op.weight_elems

    def kernel(suffix, phase, dims, src, dst):
        alt = (winograd_kernels(op.name + suffix, op.kind, phase, b * op.flops, src, dst, w, e,
                                dims) if op.winograd else ())
        return Kernel(op.name + suffix, op.kind, phase, b * op.flops, act + e * w, dims,
                      winograd=alt)

    out = [kernel('', 'forward', (b * m, n, k), b * op.in_elems, b * op.out_elems)]
    if forward_only:
        return out
    if op.dgrad is not None:
        dm, dn, dk = op.dgrad
        out.append(kernel('/dgrad', 'backward', (b * dm, dn, dk), b * op.out_elems,
                          b * op.in_elems))
    wm, wn, wk = op.wgrad
    # The filter gradient's Winograd transforms both the input and the gradient (the output
    # side); its product runs over the tiles (K), its result is the small filter.
    out.append(kernel('/wgrad', 'backward', (wm, wn, b * wk), b * (op.in_elems + op.out_elems),
                      w))
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
                 forward_only: bool = False) -> list[Kernel]:
    """Every kernel of one training step of `profile` (op_profile.OpProfile) at `batch_size`."""
    e = 4 if dtype == 'float32' else 2
    kernels = []
    for op in profile.ops:
        if op.gemm is not None:
            kernels += _gemm_kernels(op, batch_size, e, forward_only)
        else:
            kernels += _memory_kernels(op, batch_size, e, xla, forward_only)
    kernels += update_kernels(profile.variable_elems, dtype, forward_only)
    kernels.append(Kernel('loss and step', 'other', 'update', 0.0, 0.0,
                          launches=FIXED_KERNELS))
    return kernels


def kernel_secs(kernel: Kernel, gpu, rate_flops: float, bandwidth: float,
                winograd: bool = False) -> tuple[float, str]:
    """(seconds, bound) of one kernel: max(math, bytes) + launches x LAUNCH_SECS; the bound is
    'math', 'memory' or 'launch', whichever of the three is largest. With `winograd` (the
    product runs on CUDA cores, where cuDNN offers it) a convolution that has Winograd kernels
    takes the faster of the two algorithms, as TensorFlow's autotuning does."""
    if winograd and kernel.winograd:
        direct = kernel_secs(kernel._replace(winograd=()), gpu, rate_flops, bandwidth)
        parts = [kernel_secs(k, gpu, rate_flops, bandwidth) for k in kernel.winograd]
        total = sum(secs for secs, _ in parts)
        if total < direct[0]:
            return total, max(parts)[1]
        return direct
    math_secs = 0.0
    if kernel.flops:
        m, n, k = kernel.gemm
        math_secs = kernel.flops / (rate_flops * tile_efficiency(m, n, k, gpu.sm_count))
    memory_secs = kernel.bytes / bandwidth
    launch = kernel.launches * LAUNCH_SECS
    parts = {'math': math_secs, 'memory': memory_secs, 'launch': launch}
    return max(math_secs, memory_secs) + launch, max(parts, key=parts.get)


def predict_step(profile, gpu, dtype: str, *, batch_size: int, xla: bool = False,
                 tf32: bool = True, forward_only: bool = False, winograd: bool = True,
                 batch_bytes: int = 0, host_link_bytes_per_sec: float = 0.0) -> StepPrediction:
    """One GPU's step of `profile` (op_profile.OpProfile) on `gpu` (gpu_specs.GpuSpec).

    Args:
      dtype: the compute dtype, 'float32', 'float16' or 'bfloat16'.
      batch_size: images per step on this GPU.
      xla: --xla_compile (elementwise fusion).
      tf32: TF32 allowed for float32 (False: --notf32 or NVIDIA_TF32_OVERRIDE=0).
      forward_only: --forward_only (no backward pass, no update).
      winograd: cuDNN may use its non-fused Winograd kernels (--winograd_nonfused, the
        original's default; TF_ENABLE_WINOGRAD_NONFUSED).
      batch_bytes, host_link_bytes_per_sec: real data's batch and the host link's rate; the
        copy overlaps the step (StagingArea), so the step is the longer of the two.

    Raises:
      ValueError: batch_size < 1 or an unknown dtype.
    """
    if batch_size < 1:
        raise ValueError('batch_size must be >= 1. Received: %r' % (batch_size,))
    path, peak, unit = math_path(gpu, dtype, tf32)
    rate = peak * 1e12 * GEMM_EFFICIENCY[unit]
    bandwidth = achieved_bandwidth(gpu)
    by_kind, total, launches = {}, 0.0, 0
    for kernel in step_kernels(profile, batch_size, dtype, xla, forward_only):
        secs, bound = kernel_secs(kernel, gpu, rate, bandwidth, winograd and unit != 'tensor')
        kind = by_kind.setdefault(kernel.kind, {'secs': 0.0, 'bounds': {}, 'kernels': 0})
        kind['secs'] += secs
        kind['bounds'][bound] = kind['bounds'].get(bound, 0.0) + secs
        kind['kernels'] += kernel.launches
        total += secs
        launches += kernel.launches
    input_secs = (batch_bytes / host_link_bytes_per_sec
                  if batch_bytes and host_link_bytes_per_sec else 0.0)
    step = max(total, input_secs)
    ops = sorted((OpTime(k, v['secs'], max(v['bounds'], key=v['bounds'].get),
                         v['secs'] / total, v['kernels']) for k, v in by_kind.items()),
                 key=lambda op: -op.seconds)
    work = batch_size * (1 if forward_only else 3) * profile.forward_flops
    return StepPrediction(step, batch_size / step, total, input_secs, tuple(ops),
                          work / step / (peak * 1e12), path, peak, launches,
                          'input' if input_secs > total else 'compute')

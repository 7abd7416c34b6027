"""The ways cuDNN can compute one convolution kernel, and the layout it runs in.

TensorFlow times every algorithm cuDNN offers for a convolution's shape and keeps the fastest
(autotuning, on by default: TF_CUDNN_USE_AUTOTUNE); speed_model/gpu_step.py times each
candidate below from the GPU's data sheet and takes the fastest too:

  * implicit GEMM, the op profile's GEMM at the share of the peak cuDNN's direct kernels reach
    (gpu_step.MEASURED_CONV), on the dtype's math path;
  * non-fused Winograd F(4x4, 3x3) for 3 x 3 convolutions of stride 1 (`winograd_kernels`),
    where TensorFlow offers it (`offers_winograd`: not for the filter gradient before
    TensorFlow 1.5);
  * with TF32, the float32 kernels of the CUDA cores as well as the TF32 tensor-core ones
    (cuDNN's default math type allows both, gpu_step.conv_paths).

A tensor-core kernel reads its input channels padded to its vectors (`channel_padding`).

A tensor-core kernel works on NHWC tensors; a convolution that runs in NCHW is transposed to
NHWC and back around it (`transpose_bytes`, `runs_nchw`).

Not modelled: cuDNN's FFT algorithms (FFT, FFT_TILING), modelled, checked and left out (issue
40). Where cuDNN offers them: stride 1, the filter larger than the padding, NCHW, float32 or
float16 data with float32 compute (no tensor cores); FFT where height and width plus twice the
padding are 256 or less, FFT_TILING for filters of 32 or less (cuDNN v5.1 User Guide,
cudnnConvolutionForward; transcribed in Theano's test module
theano/gpuarray/tests/check_dnn_doc): AlexNet's 11 x 11 layer (stride 4) never takes them, its 5
x 5 and 3 x 3 layers can. TensorFlow 1.x (stream_executor/cuda/cuda_dnn.cc) times FFT for the
forward pass and both gradients, FFT_TILING for the data gradient, and for the forward pass only
with TF_ENABLE_FFT_TILING_FORWARD (default off with cuDNN 5.1 and 6, on from cuDNN 7). The model
tried: R2C FFTs of the input and the filters (2.5 N log2 N FLOPs for N points, half the complex
5 N log2 N), one complex product per frequency (8 FLOPs a complex multiply-add, batched, at the
CUDA cores' GEMM share), the inverse FFTs, each transformed tensor written and read once; FFT's
size the next power of two, FFT_TILING's tiles 32 x 32 (assumed: cuDNN says only "tiles").
Against DeepBench's forward rows that cuDNN's autotuner (cudnnFindConvolutionForwardAlgorithm)
ran with them, it is 1.7-5.7x too slow (median 3.2x; 0.77-4.1x, median 2.0x, without tile
quantization of the batched products): FFT, 56 x 56 x 128 -> 256, 3 x 3, batch 8 and 16, cuDNN
6.0 on the P100, GTX 1080 Ti and Titan Xp: its 64 x 33 transformed filters alone (553 MB) take
2.2 ms to write and read on a P100, whose whole convolution measured 1.18 ms, so cuDNN's kernels
do not work as modelled; FFT_TILING, 28 x 28 x 192 -> 32, 5 x 5, batch 16, cuDNN 7.6 on the V100
(1.7x) and T4 (2.3x). Untiled, it beats by 1.9-2.6x the direct kernel cuDNN 6's autotuner chose
over FFT for that 5 x 5 layer on Pascal. In the validation (bench/bench_gpu_model.py's 105 rows)
it turned AlexNet on CUDA cores from too slow to too fast on every GPU, +12% to +61% (P100 -47%
-> +22%, K80 -32% -> +51%, GTX 1080 Ti -10% -> +42%, RTX A6000 -3% -> +25%, A100 PCIe +21% ->
+40%): median |error| 9.7% -> 12.3%, rows beyond 35% 12 -> 19.

Not modelled either: non-fused Winograd for 5 x 5 filters, modelled, checked and left out
(issue 40). cuDNN offers WINOGRAD_NONFUSED for 3 x 3 and 5 x 5 filters of stride 1 from 5.1 on,
forward, data and filter gradients, 5 x 5 not with true float16 math (cuDNN 5.1 release notes;
v5.1 User Guide, cudnnConvolutionForward, in check_dnn_doc above); TensorFlow 1.x lists it
whatever the filter (stream_executor's GetConvolveAlgorithms takes only the
TF_ENABLE_WINOGRAD_NONFUSED switch and the compute capability; `offers_winograd`) and its
autotuning skips what cuDNN refuses. Its 5 x 5 kernels are named
winogradForwardData9x9_5x5, winogradForwardOutput9x9_5x5, winogradWgradDelta9x9_5x5 (TensorFlow
2 profiles of 5 x 5 layers, AlexNet's among them, on Volta); no source says what 9 x 9 is. The
3 x 3 kernels, "...4x4", are F(4x4, 3x3): an Nsight Compute trace of one (batch 16, 224 x 224,
32 -> 4 channels) reads 235 MB in its GEMM, 3192 tiles x 16 x 32 x 36 floats; so 9 x 9 may be the
output tile, F(9x9, 5x5), or the input tile, F(5x5, 5x5) (81 multiplies for 25 outputs, 7.7x
fewer; tensors and filters 3.24x), assumed. The model tried `winograd_kernels` with those sizes
(81 batched products at the CUDA cores' GEMM share). DeepBench's forward rows that cuDNN's
autotuner (cudnnFindConvolutionForwardAlgorithm) ran with it, cuDNN 7.6, batch 16, 14 x 14 x 512
-> 48 and 7 x 7 x 832 -> 128: it is 2.1-4.3x too fast, model / measured V100 0.48 and 0.23, T4 0.52
and 0.23 (F(2x2, 5x5) 0.95, 0.32, 1.21, 0.39; F(9x9, 5x5) 0.35-0.47); with cuDNN 6 on the P100,
GTX 1080 Ti and Titan Xp the autotuner chose IMPLICIT_PRECOMP_GEMM for all three 5 x 5 layers,
measured 0.50-1.39 ms, where the model's Winograd takes 0.11-0.48 of that. In the validation it
brought AlexNet on CUDA cores closer on some GPUs (P100 -47% -> -33%, K80 -32% -> -13%, RTX 2080
Ti -35% -> +8%, Quadro RTX 8000 -28% -> +19%, RTX 3080 -30% -> +14%, RTX 3090 -24% -> +19%) and
further on others (GTX 1080 Ti -10% -> +34%, float16 -7% -> +59%; RTX A6000 -3% -> +13%; A100
PCIe +21% -> +31%), and Inception-v3's 5 x 5 layers took the K80 from +33% to +37%: median
|error| 9.7% -> 10.1%, rows beyond 35% 12 -> 13 (14 rows better, 11 worse; F(2x2, 5x5) 9.3%
and 13, F(4x4, 5x5) 9.5% and 13, F(9x9, 5x5) 10.3% and 14).

Every constant names its source; nothing here was fitted to published throughput figures.
"""

from __future__ import annotations

import math

#: Winograd's minimal filtering F(4x4, 3x3) (Lavin and Gray 2016, "Fast Algorithms for
#: Convolutional Neural Networks", arXiv:1509.09308): a 4 x 4 output tile from a 6 x 6 input
#: tile takes 36 multiplies per input and output channel pair instead of 144, 4x fewer; the
#: transformed input and output are 36/16 = 2.25x the tensors and the transformed filter 36/9
#: = 4x the weights. cuDNN's non-fused Winograd (CUDNN_CONVOLUTION_*_ALGO_WINOGRAD_NONFUSED,
#: forward, data and filter gradients) writes them to memory between three kernels: input
#: transform, 36 batched GEMMs, output transform.
WINOGRAD = {'multiply_reduction': 4.0, 'tile_expansion': 36 / 16, 'filter_expansion': 36 / 9,
            'tile_outputs': 16}

def winograd_kernels(kernel_type, name: str, kind: str, phase: str, flops: float, src: float,
                     dst: float, weights: float, e: int, gemm: tuple) -> tuple:
    """The three kernels of a non-fused Winograd F(4x4, 3x3) product (WINOGRAD) reading
    `src` and writing `dst` elements; gemm: the (M, N, K) of the direct product, whose M
    (the output positions) becomes 36 batched products of M / 16 tiles each."""
    x = WINOGRAD['tile_expansion']
    m, n, k = gemm
    tiles = max(1, m // WINOGRAD['tile_outputs'])
    return (kernel_type(name + '/winograd_in', kind, phase, 0.0, e * src * (1 + x)),
            kernel_type(name + '/winograd_gemm', kind, phase,
                        flops / WINOGRAD['multiply_reduction'],
                        e * (x * src + x * dst + WINOGRAD['filter_expansion'] * weights),
                        (36, tiles, n, k)),
            kernel_type(name + '/winograd_out', kind, phase, 0.0, e * dst * (1 + x)))


def offers_winograd(grad: str, winograd: bool = True, filter_winograd: bool = True) -> bool:
    """Whether TensorFlow's autotuning may time cuDNN's non-fused Winograd for a convolution
    pass `grad` ('forward', 'dgrad', 'wgrad'): with `winograd` (TF_ENABLE_WINOGRAD_NONFUSED,
    the original's --winograd_nonfused), and for the filter gradient only with
    `filter_winograd` too. TensorFlow built with cuDNN 5.1 never offered the filter gradient's
    (CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED): a typo in the cuDNN version check of
    CudnnSupport::GetConvolveBackwardFilterAlgorithms left it out until NVIDIA's fix,
    tensorflow/tensorflow pull request #15283 ("Fix minor typo in CUDNN_VERSION check:
    effectively enables ... BWD_FILTER_ALGO_WINOGRAD_NONFUSED ... for cuDNN v5.1", merged
    2017-12-19, first released in TensorFlow 1.5). The original's published tables of May
    2017 ran TensorFlow 1.1 with cuDNN 5.1."""
    if not winograd:
        return False
    return filter_winograd or grad != 'wgrad'


#: Which convolution passes of a tensor-core kernel in NCHW pay a transpose of their input
#: and output: cuDNN's tensor-core convolutions work on NHWC tensors and transpose NCHW ones
#: to NHWC and back (NVIDIA Deep Learning Performance Guide, "Convolutional Layers User's
#: Guide", Tensor Layouts In Memory: NCHW vs NHWC, which XLA's gpu_layout_assignment.cc cites
#: for its layout choice; MosaicML Composer's "Channels Last" method card: "Every time a
#: convolution operation is called ... the cuDNN library performs a transpose to convert the
#: tensor into NHWC format"; nvprof of float16 NCHW convolutions on a V100 in
#: tensorflow/tensorflow#15897: nchwToNhwcKernel 21.6% of the GPU time). For TF32, NVIDIA's
#: TensorFlow pull request #58054 (2022) found NHWC faster for the forward and data-gradient
#: convolutions only ("cuDNN can provide improved performance only for the fwd and bwd_data
#: convolutions"): the filter gradient is taken to run as fast in NCHW.
TRANSPOSED_PASSES = ('forward', 'dgrad')


def transpose_bytes(src: float, dst: float, e: int) -> float:
    """Bytes two transposes move around one kernel: its input (`src` elements) to NHWC and
    its output (`dst`) back, each read once and written once."""
    return 2.0 * e * (src + dst)


def runs_nchw(gpu, dtype: str, xla: bool) -> bool:
    """Whether TensorFlow 2.21 runs a training step's convolutions of `dtype` on `gpu` in
    NCHW, the layout this project builds for GPUs:

      * without XLA, Grappler's layout optimizer moves a graph to NHWC when at least half of
        its GPU convolutions are float16 on compute capability 7.0 or later, bfloat16 on 8.0
        or later, or TF32 float32 without a float32 backward convolution (inference only),
        and to NCHW otherwise (tensorflow/core/grappler/optimizers/generic_layout_optimizer.cc,
        GetSrcAndDstDataFormats): a float32 training step stays NCHW;
      * with XLA, gpu_layout_assignment.cc (HeuristicLayoutAssignment) picks NHWC on Hopper
        (9.0) and later for every type but float64, NHWC for float16 and bfloat16 from Volta,
        NCHW otherwise.
    """
    major = gpu.compute_capability_tuple[0]
    if dtype == 'float16' and major >= 7:
        return False
    if dtype == 'bfloat16' and major >= 8:
        return False
    if xla and major >= 9:
        return False
    return True


#: Tensor-core convolution kernels read their input channels in 16-byte vectors: channels in
#: a multiple of 8 for float16 and bfloat16, of 4 for TF32 (NVIDIA Deep Learning Performance
#: Guide, "Convolutional Layers User's Guide", Quick Start Checklist and "Channels In And
#: Out"); other channel counts are padded up to it (cuDNN's tensor transformations: "the cuDNN
#: library may use padding, folding, and NCHW-to-NHWC transformations to call the Tensor Core
#: operations", cuDNN developer guide, Tensor Core requirements). The same guide's exception
#: for 3-channel images: "padding to 4 channels is sufficient if a stride of 2 is used"
#: (special first-layer kernels), here for any stride of 2 or more.
TENSOR_CORE_VECTOR_BYTES = 16
FIRST_LAYER_CHANNELS = 4


def channel_padding(channels_in: int, stride: int, e: int) -> float:
    """How many times a convolution's products grow on tensor cores from padding its
    `channels_in` input channels of `e`-byte elements to the kernels' alignment: 1.0 when
    they are aligned (or unknown, 0); 8/3 for 3 float16 channels at stride 1, 4/3 at stride 2
    or for TF32."""
    if channels_in <= 0:
        return 1.0
    vector = TENSOR_CORE_VECTOR_BYTES // e
    if stride >= 2 and channels_in <= FIRST_LAYER_CHANNELS:
        vector = min(vector, FIRST_LAYER_CHANNELS)
    return math.ceil(channels_in / vector) * vector / channels_in

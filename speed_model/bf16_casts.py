"""bfloat16 convolutions on a GPU below compute capability 8.0: TensorFlow runs them in float32.

TensorFlow 2.x's GPU kernels of Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter in
bfloat16 ask whether the GPU computes in bfloat16 (`IsBF16SupportedInOps`, formerly
`IsBF16NotSupportedInOps`, tensorflow/core/kernels/gpu_utils.cc: true from compute capability
8.0, `CudaComputeCapability::kAmpere`: "Performant bfloat16 operations are supported for
Ampere+ GPUs. For pre-Ampere GPUs, we cast inputs to float and outputs back to bfloat16").
Below, each of them

  * casts its two bfloat16 operands to float32 temporaries (one CastFunctor kernel each:
    read 2 bytes, write 4 bytes an element),
  * runs the float32 convolution on them (cuDNN's float32 algorithms at the float32 rate,
    reading and writing float32: 4 bytes an element),
  * casts the float32 result back to bfloat16 (one kernel: read 4, write 2 an element).

Sources: tensorflow/core/kernels/conv_ops_bfloat16.cc (LaunchConv2DOp<GPUDevice, bfloat16>:
input and filter cast, LaunchConvOpImpl<float>, output cast back),
tensorflow/core/kernels/conv_grad_filter_ops_launcher.cc (LaunchConv2DBackpropFilterOp<GpuDevice,
bfloat16>: input and output gradient cast, the float32 filter gradient cast back). The data
gradient is modelled the same way (its operands the output gradient and the filter, its result
the input gradient): TensorFlow's 3-D data gradient does so in conv_ops_3d.cc
(LaunchConvBackpropInputOp<bfloat16>); the 2-D one's source was not read.

So a bfloat16 step there moves float32 bytes in its convolutions plus the casts' bytes, and
only its other kernels (batch norm, ReLU, pooling, additions) move half the bytes of float32.
Depthwise convolutions (DepthwiseConv2dNative) have other kernels and are left as they are.
With XLA (--xla_compile) the conversions are XLA's (xla/service/gpu/gpu_float_support.cc lists
no convolution among its bfloat16 operations, so it converts around them); XLA fuses a
conversion into a neighbouring kernel: the casts' bytes are kept, their launches are not.
"""

from __future__ import annotations

#: The first compute capability whose convolutions TensorFlow runs in bfloat16.
NATIVE_FROM = (8, 0)

#: Bytes an element of one cast moves: read bfloat16 (2) and write float32 (4), or back.
CAST_BYTES = 2 + 4


def casts_convolutions(gpu, dtype: str) -> bool:
    """Whether TensorFlow runs `dtype`'s convolutions on `gpu` (hardware/gpu_specs.GpuSpec) as
    float32 between casts: bfloat16 below compute capability 8.0."""
    return dtype == 'bfloat16' and gpu.compute_capability_tuple < NATIVE_FROM


def cast_op(op) -> bool:
    """Whether op_profile.Op `op` is a convolution TensorFlow casts (Conv2D; not a depthwise
    one, whose channels_in is 0)."""
    return op.kind == 'conv' and op.channels_in > 0


def with_casts(kernels, op, batch_size: int, xla: bool = False) -> list:
    """The float32 kernels of convolution `op` (gpu_step._gemm_kernels at 4 bytes an element:
    forward, then '/dgrad' and '/wgrad' where present), each followed by the casts of its pass:
    forward: the input and the filter to float32, the output back; data gradient: the output
    gradient and the filter, the input gradient back; filter gradient: the input and the
    output gradient, the filter gradient back. A cast is a memory-bound kernel of kind 'cast'
    (CAST_BYTES an element), three launches a pass (none with `xla`: fused)."""
    b, w = batch_size, op.weight_elems
    elems = {'forward': (b * op.in_elems, w, b * op.out_elems),
             'dgrad': (b * op.out_elems, w, b * op.in_elems),
             'wgrad': (b * op.in_elems, b * op.out_elems, w)}
    out = []
    for kernel in kernels:
        out.append(kernel)
        moved = elems.get(kernel.grad)
        if moved is None:
            continue
        out.append(kernel._replace(
            name=kernel.name + '/casts', kind='cast', flops=0.0, bytes=CAST_BYTES * sum(moved),
            gemm=None, launches=0 if xla else len(moved), winograd=(), transposes=0.0, grad='',
            padding=1.0))
    return out

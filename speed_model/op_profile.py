"""A model's forward ops with the shapes the per-op GPU step model times (speed_model/gpu_step.py).

    profile = op_profile.from_model('resnet50')
    profile.ops[0]       # Op('v/cg/conv0/conv2d/Conv2D', 'conv', out=802816, ...)

One fast placeholder build at batch 1 (variables recorded, not created: models/flops.py), the
same build layer_profile.py makes; every size here is per image (the batch scales it) except a
weight's, which the batch does not change. The backward pass and the optimizer are derived from
these ops by gpu_step.py (a convolution's two gradient GEMMs, a batch norm's gradient, a ReLU's
mask, one update per variable): the forward graph holds every shape they need.

The kinds:

  * 'conv', 'matmul': GEMMs, with their forward dimensions per image (M grows with the batch; N,
    K do not) and those of the two gradient GEMMs (data and weights);
  * 'batchnorm', 'relu', 'add', 'bias', 'pool', 'concat', 'pad', 'mean', 'other': memory-bound
    ops with the elements they read and write per image.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

_KINDS = {
    'Conv2D': 'conv', '_FusedConv2D': 'conv', 'DepthwiseConv2dNative': 'conv',
    'MatMul': 'matmul', '_FusedMatMul': 'matmul',
    'FusedBatchNorm': 'batchnorm', 'FusedBatchNormV2': 'batchnorm',
    'FusedBatchNormV3': 'batchnorm',
    'Relu': 'relu', 'Relu6': 'relu', 'Elu': 'relu', 'Tanh': 'relu', 'Sigmoid': 'relu',
    'AddV2': 'add', 'Add': 'add', 'BiasAdd': 'bias',
    'MaxPool': 'pool', 'AvgPool': 'pool', 'ConcatV2': 'concat', 'Pad': 'pad', 'Mean': 'mean',
    'LRN': 'other', 'Transpose': 'other',
}


class Op(NamedTuple):
    """One forward op, sizes per image.

    name, kind (see the module docstring); out_elems: output elements; in_elems: elements of
    the activation inputs read; weight_elems: elements of its weight (0 for none);
    gemm: (M per image, N, K) of the forward product, or None; dgrad: (M per image, N, K) of
    the gradient with respect to its input, None where no gradient flows to the input (the
    first layer reads the images); wgrad: (M, N, K per image) of the weight gradient, or None;
    flops: forward FLOPs per image (2 x multiply-adds); winograd: a 3 x 3 convolution of
    stride 1, which cuDNN can compute with Winograd's minimal filtering (gpu_step.py);
    channels_in, stride: a convolution's input channels and its stride (0 and 1 for other
    ops), which decide the channel padding of its tensor-core kernels (gpu_step.py)."""
    name: str
    kind: str
    out_elems: int
    in_elems: int
    weight_elems: int = 0
    gemm: tuple | None = None
    dgrad: tuple | None = None
    wgrad: tuple | None = None
    flops: int = 0
    winograd: bool = False
    channels_in: int = 0
    stride: int = 1


class OpProfile(NamedTuple):
    """The forward ops of one tower in graph order, and the trainable variables' elements
    (one update each). model: the name; source: how it was made."""
    model: str
    ops: tuple
    variable_elems: tuple
    source: str

    @property
    def forward_flops(self) -> int:
        """Forward FLOPs per image of the GEMMs."""
        return sum(op.flops for op in self.ops)


def _shape(tensor) -> list[int]:
    return [1 if d is None else int(d) for d in tensor.shape.as_list()]


def _elems(tensor) -> int:
    return int(np.prod(_shape(tensor), dtype=np.int64))


def _reads_images(op) -> bool:
    source = op.inputs[0].op
    for _ in range(4):
        if source.type == 'Placeholder':
            return source.name == 'images'
        if source.type not in ('Cast', 'Identity', 'Transpose', 'Pad') or not source.inputs:
            return False
        source = source.inputs[0].op
    return False


def _conv(op) -> Op:
    x, w, y = _shape(op.inputs[0]), _shape(op.inputs[1]), _shape(op.outputs[0])
    kh, kw, c_in, c_out = w
    depthwise = op.type == 'DepthwiseConv2dNative'
    # NHWC builds (the shapes of an NCHW build are the same numbers).
    out_hw, in_hw = y[1] * y[2], x[1] * x[2]
    taps = kh * kw * (1 if depthwise else c_in)
    n_out = c_out * (c_in if depthwise else 1)
    flops = 2 * out_hw * n_out * taps
    gemm = (out_hw, n_out, taps)
    dgrad = None if _reads_images(op) else (in_hw, c_in, kh * kw * (1 if depthwise else c_out))
    wgrad = (taps, n_out, out_hw)
    strides = op.get_attr('strides') if 'strides' in op.node_def.attr else [1, 1, 1, 1]
    winograd = (kh, kw) == (3, 3) and all(int(s) == 1 for s in strides) and not depthwise
    return Op(op.name, 'conv', _elems(op.outputs[0]), _elems(op.inputs[0]),
              int(np.prod(w)), gemm, dgrad, wgrad, flops, winograd,
              0 if depthwise else c_in, max(int(s) for s in strides))


def _matmul(op) -> Op:
    b = _shape(op.inputs[1])
    transpose_b = op.get_attr('transpose_b') if 'transpose_b' in op.node_def.attr else False
    k, n = (b[1], b[0]) if transpose_b else (b[0], b[1])
    return Op(op.name, 'matmul', n, _elems(op.inputs[0]), k * n, (1, n, k), (1, k, n),
              (k, n, 1), 2 * n * k)


def _memory_op(op, kind: str) -> Op:
    def activation(t):
        if not t.dtype.is_floating or t.op.type == 'Const':
            return False
        return t.op.type != 'Placeholder' or t.op.name == 'images'
    data = [t for t in op.inputs if activation(t)]
    reads = sum(_elems(t) for t in data) if kind in ('add', 'concat') else (
        _elems(data[0]) if data else 0)
    return Op(op.name, kind, _elems(op.outputs[0]), reads)


@functools.lru_cache(maxsize=None)
def from_model(model_name: str, dataset: str = 'imagenet', image_size: int | None = None,
               num_classes: int | None = None) -> OpProfile:
    """The op profile of a registered model (one placeholder build at batch 1, cached).

    Raises:
      models.model_config.UnknownModelError: an unknown model name.
    """
    from ..models import flops
    model, graph, recorder = flops.placeholder_graph(model_name, dataset, image_size,
                                                     num_classes)
    return from_graph(graph, model_name, recorder, model.image_size if not image_size
                      else image_size, dataset)


def from_graph(graph, model_name: str, recorder, size: int, dataset: str) -> OpProfile:
    """The profile of a forward graph built at batch 1 (see from_model)."""
    ops = []
    for op in graph.get_operations():
        kind = _KINDS.get(op.type)
        if kind is None or not op.outputs:
            continue
        if kind == 'conv':
            ops.append(_conv(op))
        elif kind == 'matmul':
            ops.append(_matmul(op))
        else:
            ops.append(_memory_op(op, kind))
    variables = tuple(int(np.prod(shape, dtype=np.int64))
                      for shape, trainable in recorder.shapes.values() if trainable)
    return OpProfile(model_name, tuple(ops), variables,
                     'placeholder build of %s (%s, %dx%d)' % (model_name, dataset, size, size))

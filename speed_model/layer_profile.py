"""A model's variables in forward order, with the bytes each moves and the compute that needs it.

The step-time model (speed_model/step_time.py) overlaps communication with computation layer by
layer: a tower cannot start a layer before its weights arrived, and a gradient can be sent once
the backward pass made it. For that it needs, per trainable variable in the order the forward
pass uses it, its bytes and the forward FLOPs of the convolution or matrix product that reads
it (models/flops.py's count; biases and batch-norm scales get no FLOPs of their own).

    profile = layer_profile.from_model('resnet50', 'imagenet')
    profile.model_bytes          # 102236324: one float32 copy of the trainable variables
    profile.layers[0]            # Layer('v/cg/conv0/conv2d/kernel', 37632, 236027904)

One fast placeholder build (variables recorded, not created: models/flops.py) at batch 1: a
fraction of a second for resnet50.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

_WEIGHT_OPS = ('Conv2D', '_FusedConv2D', 'DepthwiseConv2dNative', 'MatMul', 'BatchMatMul',
               'BatchMatMulV2', 'BatchMatMulV3', '_FusedMatMul')
#: Ops a weight goes through between its variable and the op that uses it.
_PASS_THROUGH = ('Cast', 'Identity', 'ReadVariableOp', 'Reshape', 'Transpose')


class Layer(NamedTuple):
    """One trainable variable: `name`, `bytes` (as stored: float32 unless --fp16_vars) and
    `flops` (forward FLOPs per image of the op that reads it; 0 for biases and scales)."""
    name: str
    bytes: int
    flops: int


class LayerProfile(NamedTuple):
    """The trainable variables of one tower in forward (creation) order.

    model: the model's name; layers: [Layer]; source: how the profile was made; ops: the
    ops of the one-forward build it was read from (0: not built; the dry run's progress line
    estimates a step's build from it)."""
    model: str
    layers: tuple
    source: str
    ops: int = 0

    @property
    def model_bytes(self) -> int:
        """Bytes of one copy of the trainable variables."""
        return sum(layer.bytes for layer in self.layers)

    @property
    def forward_flops(self) -> int:
        """Forward FLOPs per image counted on the layers (convolutions and matrix products)."""
        return sum(layer.flops for layer in self.layers)

    def scaled(self, factor: float) -> LayerProfile:
        """The profile with every variable's bytes times `factor` (0.5: float16 variables)."""
        return self._replace(layers=tuple(layer._replace(bytes=int(layer.bytes * factor))
                                          for layer in self.layers))


def _weight_source(tensor, names: set) -> str | None:
    """The recorded variable's placeholder behind `tensor` (through casts and reads), or None."""
    op = tensor.op
    for _ in range(8):
        if op.type == 'Placeholder':
            return op.name if op.name in names else None
        if op.type not in _PASS_THROUGH or not op.inputs:
            return None
        op = op.inputs[0].op
    return None


def _op_flops(op) -> int:
    from ..models import flops
    if op.type in ('Conv2D', '_FusedConv2D'):
        return flops._conv_flops(op)
    if op.type == 'DepthwiseConv2dNative':
        return flops._depthwise_flops(op)
    return flops._matmul_flops(op)


@functools.lru_cache(maxsize=None)
def from_model(model_name: str, dataset: str = 'imagenet', image_size: int | None = None,
               num_classes: int | None = None, variable_bytes_per_element: int = 4
               ) -> LayerProfile:
    """The profile of a registered model (one fast placeholder build at batch 1, once per
    process for the same arguments: the docs' comparisons plan several cases of one model).

    Args:
      model_name, dataset: the registry's names (models/model_config.py).
      image_size: input height and width (None: the model's default).
      num_classes: classifier width (None: the dataset's, 1001 for ImageNet).
      variable_bytes_per_element: 4 for float32 variables, 2 for --fp16_vars.

    Raises:
      models.model_config.UnknownModelError: an unknown model name.
    """
    from ..models import flops
    model, graph, recorder = flops.placeholder_graph(model_name, dataset, image_size,
                                                     num_classes)
    placeholders = {name.replace('/', '_'): name for name in recorder.shapes}
    by_variable = {}
    for op in graph.get_operations():
        if op.type not in _WEIGHT_OPS:
            continue
        for tensor in op.inputs:
            source = _weight_source(tensor, set(placeholders))
            if source is not None:
                by_variable[placeholders[source]] = (by_variable.get(placeholders[source], 0)
                                                     + _op_flops(op))
                break
    layers = tuple(
        Layer(name, int(np.prod(shape, dtype=np.int64)) * variable_bytes_per_element,
              int(by_variable.get(name, 0)))
        for name, (shape, trainable) in recorder.shapes.items() if trainable)
    size = image_size or model.image_size
    return LayerProfile(model_name, layers, 'placeholder build of %s (%s, %dx%d)' % (
        model_name, dataset, size, size), len(graph.get_operations()))


def uniform(model_name: str, model_bytes: int, forward_flops: int, layers: int = 1
            ) -> LayerProfile:
    """`layers` equal layers holding `model_bytes` and `forward_flops` together (tests, and
    models known only by their totals)."""
    size, work = model_bytes // layers, forward_flops // layers
    return LayerProfile(model_name, tuple(Layer('layer%d' % i, size, work)
                                          for i in range(layers)), 'uniform')

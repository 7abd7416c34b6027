"""Forward FLOPs and trainable parameters of a model, counted from its built graph.

FLOPs convention: one multiply-add is 2 FLOPs. Counted ops: Conv2D (and its fused variants),
DepthwiseConv2dNative, MatMul and BatchMatMul; the count is that of the multiply-adds of the
convolutions and fully connected layers. Elementwise work (biases, batch norm, activations,
pooling, residual additions, concatenation, LRN) is ignored, as in the published per-network
figures (He et al. 2016 Table 1, Howard et al. 2017 Table 8, Huang et al. 2017 Figure 3), where it
is a fraction of a percent of the total for these networks.
"""

from __future__ import annotations

import functools

import numpy as np
import tensorflow as tf

tf1 = tf.compat.v1

_CONV_OPS = ('Conv2D', '_FusedConv2D')
_MATMUL_OPS = ('MatMul', 'BatchMatMul', 'BatchMatMulV2', 'BatchMatMulV3', '_FusedMatMul')


class VariableRecorder:
    """A variable-scope custom getter that records each requested variable and hands back a
    placeholder of the same shape instead of creating it.

    Building a model this way is several times faster than creating real variables (each costs
    about ten graph ops), which is all that counting parameters and FLOPs needs. Only inference
    graphs can be built so: training batch norm assigns to its moving averages.

    Attributes:
      shapes: {variable name: (shape list, trainable)} in creation order.
    """

    def __init__(self):
        self.shapes: dict[str, tuple[list[int], bool]] = {}

    def __call__(self, getter, name, *args, **kwargs):
        del getter, args
        shape = tf.TensorShape(kwargs.get('shape')).as_list()
        trainable = kwargs.get('trainable')
        self.shapes[name] = (shape, True if trainable is None else bool(trainable))
        dtype = kwargs.get('dtype') or tf.float32
        return tf1.placeholder(dtype, shape, name=name.replace('/', '_'))

    def trainable_parameters(self) -> int:
        """Sum of the sizes of the recorded trainable variables."""
        return int(sum(np.prod(shape, dtype=np.int64)
                       for shape, trainable in self.shapes.values() if trainable))


def build_graph(model, *, image_size=None, data_format='NHWC', batch_size=1, phase_train=False,
                num_classes=None, dtype=tf.float32, recorder=None):
    """Builds `model` on a placeholder batch in a new graph.

    Args:
      model: a models.model.CNNModel.
      image_size: input height and width; None uses the model's default.
      data_format: 'NHWC' ([batch, size, size, 3] input) or 'NCHW' ([batch, 3, size, size]).
      batch_size: static batch size of the input placeholder.
      phase_train: build the training graph (dropout on, batch statistics) or inference.
      num_classes: classifier width; None uses `model.default_num_classes()`.
      dtype: compute dtype.
      recorder: a VariableRecorder to stand in for the variables (fast; inference only), or None
        to create real variables.

    Returns:
      (graph, images placeholder, BuildNetworkResult).

    Raises:
      ValueError: a recorder with phase_train=True.
    """
    if recorder is not None and phase_train:
        raise ValueError('a VariableRecorder can only build inference graphs (phase_train=False)')
    size = image_size or model.image_size
    classes = num_classes or model.default_num_classes()
    shape = ([batch_size, size, size, 3] if data_format == 'NHWC'
             else [batch_size, 3, size, size])
    graph = tf.Graph()
    with graph.as_default():
        images = tf1.placeholder(dtype, shape, name='images')
        with tf1.variable_scope('', custom_getter=recorder):
            result = model.build_network(images, phase_train=phase_train, num_classes=classes,
                                         data_format=data_format, dtype=dtype)
    return graph, images, result


def measure(model, image_size=None, data_format='NHWC') -> tuple[int, int]:
    """Trainable parameters and forward FLOPs per image of `model`, from one fast build (batch 1,
    inference graph, variables recorded rather than created).

    Returns:
      (trainable parameters, FLOPs per image).
    """
    recorder = VariableRecorder()
    graph, _, _ = build_graph(model, image_size=image_size, data_format=data_format,
                              batch_size=1, phase_train=False, recorder=recorder)
    return recorder.trainable_parameters(), count_flops(graph)


def _static_shape(tensor):
    shape = tensor.shape.as_list()
    if any(d is None for d in shape):
        raise ValueError('cannot count FLOPs of %s: shape %s is not fully defined'
                         % (tensor.name, shape))
    return shape


def _conv_flops(op):
    """2 x output elements x (kernel height x width x input channels per output)."""
    out = _static_shape(op.outputs[0])
    kh, kw, c_in, _ = _static_shape(op.inputs[1])
    return 2 * int(np.prod(out, dtype=np.int64)) * kh * kw * c_in


def _depthwise_flops(op):
    """2 x output elements x (kernel height x width): each output sees one input channel."""
    out = _static_shape(op.outputs[0])
    kh, kw, _, _ = _static_shape(op.inputs[1])
    return 2 * int(np.prod(out, dtype=np.int64)) * kh * kw


def _matmul_flops(op):
    """2 x output elements x the contracted dimension."""
    out = _static_shape(op.outputs[0])
    a = _static_shape(op.inputs[0])
    transpose = False
    for attr in ('transpose_a', 'adj_x'):
        if attr in op.node_def.attr:
            transpose = op.get_attr(attr)
    inner = a[-2] if transpose else a[-1]
    return 2 * int(np.prod(out, dtype=np.int64)) * inner


def count_flops(graph) -> int:
    """Forward FLOPs of every convolution and matrix product in `graph` (whole batch)."""
    total = 0
    for op in graph.get_operations():
        if op.type in _CONV_OPS:
            total += _conv_flops(op)
        elif op.type == 'DepthwiseConv2dNative':
            total += _depthwise_flops(op)
        elif op.type in _MATMUL_OPS:
            total += _matmul_flops(op)
    return int(total)


def forward_flops_per_image(model, image_size=None, data_format='NHWC') -> int:
    """Forward FLOPs of one image through `model` (multiply-add = 2 FLOPs; see module docstring).

    Builds the inference graph at batch 1 with `model.default_num_classes()` outputs (variables
    recorded, not created: see `VariableRecorder`).

    Args:
      model: a models.model.CNNModel.
      image_size: input height and width; None uses the model's default.
      data_format: 'NHWC' or 'NCHW' (the count is the same for both).

    Returns:
      FLOPs per image as an int.
    """
    return measure(model, image_size, data_format)[1]


@functools.lru_cache(maxsize=None)
def placeholder_graph(model_name: str, dataset: str = 'imagenet', image_size: int | None = None,
                      num_classes: int | None = None):
    """(model, graph, recorder) of a registered model's inference build at batch 1 with its
    variables as placeholders (`VariableRecorder`), built once per process for the same
    arguments: the speed model's layer and op profiles both read it.

    Raises:
      models.model_config.UnknownModelError: an unknown model name.
    """
    from . import model_config
    model = model_config.get_model(model_name, dataset)
    recorder = VariableRecorder()
    graph, _, _ = build_graph(model, image_size=image_size, batch_size=1,
                              num_classes=num_classes, recorder=recorder)
    return model, graph, recorder

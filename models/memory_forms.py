"""Other forms of a training step's memory-bound ops: the ReLUs and their gradients.

Two sites of a network ask the builder's graph choices (fast_paths.BuildOptions.choose;
decided by graph/graph_choices.py) how to build them, each by its `Site`:

  * 'relu': the ReLU after a training batch norm (ConvNetBuilder.conv's conv-BN-ReLU); its
    gradient is ReluGrad.
  * 'residual': the join of a post-activation residual unit (ResNet v1), relu(shortcut +
    branch); its gradient is the sum of the output's gradients (the AddN tf.gradients builds
    where the output feeds the next unit's shortcut and its first convolution), then ReluGrad,
    which goes to both inputs.

The forms (None: today's ops, `tf.nn.relu(shortcut + branch)`):

  * 'xla': the forward ops as one XLA cluster (`tf.compat.v1.xla.experimental.jit_scope`) and
    the gradient (the sum and ReluGrad) as another: one pass over memory instead of two (AddV2
    then Relu; AddN then ReluGrad), in XLA's arithmetic (bfloat16 read, computed in float32,
    rounded once) instead of Eigen's per-op kernels. TensorFlow's own ops and compiler only.
  * 'float32': computed in float32, cast from and back to the compute dtype (reduced precision
    only; a float32 graph is unchanged). A summand of the gradient that is a cast from float32
    (a convolution gradient computed in float32, graph/precision.py gradient_scope) is read
    before its cast.

Both keep the mathematics: ReLU selects, the add and the sum round once to the dtype in every
form; only a summand read before its bfloat16 cast ('float32') skips one rounding. No form adds
a variable: checkpoints load across the choices.

Not built, because TensorFlow 2.21 has no CPU kernel for them (measured, docs/speed-choices.md):
the ReLU inside the fused batch norm (Grappler's remapper already builds oneDNN's
_FusedBatchNormEx wherever oneDNN takes the dtype; the CPU's own _FusedBatchNormEx refuses
activations) and the residual add inside it (oneDNN's refuses side inputs).
"""

from __future__ import annotations

from typing import NamedTuple

import tensorflow as tf
from tensorflow.python.ops import gen_nn_ops

tf1 = tf.compat.v1

KINDS = ('relu', 'residual')
FORMS = ('xla', 'float32')

_XLA_GRADIENT = 'TfCnnBenchmarksReluOfSumInXla'
_FLOAT32_GRADIENT = 'TfCnnBenchmarksReluOfSumInFloat32'


class Site(NamedTuple):
    """Where a memory-bound form can be built, what a graph choice is decided for.

    Attributes:
      kind: 'relu' (after a batch norm) or 'residual' (relu(shortcut + branch)).
      batch, height, width, channels: the activation's shape (NHWC order whatever the layout).
      data_format: 'NHWC' or 'NCHW' (the batch norm's, in the probe).
      dtype: the compute dtype's name ('bfloat16', 'float32', 'float16').
    """
    kind: str
    batch: int
    height: int
    width: int
    channels: int
    data_format: str
    dtype: str

    def describe(self) -> str:
        """'16x56x56x256' (NHWC order whatever the layout)."""
        return '%dx%dx%dx%d' % (self.batch, self.height, self.width, self.channels)

    def forms(self) -> tuple[str, ...]:
        """The forms that change this site's graph: 'float32' only in reduced precision."""
        return FORMS if self.dtype != 'float32' else ('xla',)

    @staticmethod
    def of(kind: str, x, data_format: str) -> Site | None:
        """The site of activation `x` ([N, H, W, C] or [N, C, H, W], static shape), or None
        when its shape is not fully known."""
        if not x.shape.is_fully_defined() or x.shape.rank != 4:
            return None
        n, a, b, c = (int(d) for d in x.shape)
        dims = (n, a, b, c) if data_format == 'NHWC' else (n, b, c, a)
        return Site(kind, *dims, data_format, x.dtype.name)


def choice_name(kind: str, form: str) -> str:
    """The --graph_choices name of building a `kind` site in `form`: 'residual_xla', ..."""
    return '%s_%s' % (kind, form)


def _sum_parts(grad, readers=()):
    """The summands of `grad` when it is the sum tf.gradients just built for several consumers
    of one tensor (an AddN read by nothing but `readers` yet), else [grad]."""
    if grad.op.type == 'AddN' and all(op in readers for op in grad.consumers()):
        return list(grad.op.inputs)
    return [grad]


def _before_cast(t):
    """`t`'s float32 source when `t` is a cast from float32, else `t` cast to float32."""
    if t.op.type == 'Cast' and t.op.inputs[0].dtype == tf.float32:
        return t.op.inputs[0]
    return tf.cast(t, tf.float32)


def _total(parts):
    return parts[0] if len(parts) == 1 else tf.add_n(parts)


@tf.RegisterGradient(_XLA_GRADIENT)
def _relu_grad_of_sum(op, grad):
    """ReluGrad of the summed gradient, the sum rebuilt here so that it joins ReluGrad's XLA
    cluster (tf.gradients builds this function's ops in the forward op's gradient scope)."""
    return gen_nn_ops.relu_grad(_total(_sum_parts(grad)), op.outputs[0])


@tf.RegisterGradient(_FLOAT32_GRADIENT)
def _relu_grad_of_sum_in_float32(op, grad):
    """ReluGrad in float32 of a float32 ReLU whose output was cast to the compute dtype: the
    gradient arrives as a cast of the dtype's gradient (the cast's own gradient); that one's
    summands are summed in float32, each read before its cast where it is a cast from
    float32."""
    if grad.op.type == 'Cast':
        parts = _sum_parts(grad.op.inputs[0], readers=(grad.op,))
    else:
        parts = _sum_parts(grad)
    parts = [_before_cast(p) for p in parts]
    return gen_nn_ops.relu_grad(_total(parts), op.outputs[0])


def _xla_scope():
    """A new XLA cluster for the ops built inside; their gradients in a cluster of their own."""
    return tf1.xla.experimental.jit_scope(compile_ops=True, separate_compiled_gradients=True)


def _in_xla_tower() -> bool:
    """Whether an enclosing scope already compiles the ops built here (--xla_compile's tower
    scope): a cluster of our own would split the tower's."""
    attrs = getattr(tf1.get_default_graph(), '_attr_scope_map', {})
    return '_XlaCompile' in attrs


def relu(x, form: str | None):
    """tf.nn.relu(x) in `form` (module docstring; None or a form that does not apply here:
    exactly today's op).

    Args:
      x: a batch norm's output, any shape, float32/bfloat16/float16.
      form: None, 'xla' or 'float32'.

    Returns:
      max(x, 0), x's shape and dtype.
    """
    if form == 'xla' and not _in_xla_tower():
        graph = tf1.get_default_graph()
        with _xla_scope(), graph.gradient_override_map({'Relu': _XLA_GRADIENT}):
            return tf.nn.relu(x)
    if form == 'float32' and x.dtype != tf.float32:
        with tf1.get_default_graph().gradient_override_map({'Relu': _FLOAT32_GRADIENT}):
            return tf.cast(tf.nn.relu(tf.cast(x, tf.float32)), x.dtype)
    return tf.nn.relu(x)


def residual_relu(shortcut, branch, form: str | None):
    """relu(shortcut + branch) in `form` (module docstring; None: exactly today's two ops).

    Args:
      shortcut, branch: the same shape and dtype ([N, H, W, C] or [N, C, H, W]).
      form: None, 'xla' or 'float32'.

    Returns:
      max(shortcut + branch, 0), their shape and dtype.
    """
    dtype = branch.dtype
    if form == 'xla' and not _in_xla_tower():
        graph = tf1.get_default_graph()
        with _xla_scope(), graph.gradient_override_map({'Relu': _XLA_GRADIENT}):
            return tf.nn.relu(shortcut + branch)
    if form == 'float32' and dtype != tf.float32:
        with tf1.get_default_graph().gradient_override_map({'Relu': _FLOAT32_GRADIENT}):
            y = tf.nn.relu(tf.cast(shortcut, tf.float32) + tf.cast(branch, tf.float32))
        return tf.cast(y, dtype)
    return tf.nn.relu(shortcut + branch)

"""Graph choices made for the kernels' speed, used by ConvNetBuilder's layers.

  * `dense_matmul`: a fully connected layer whose input gradient is computed in the layout
    oneDNN's CPU matmul runs fastest (and in float32 where graph/precision.py asks);
  * folded batch norm: inference batch norm folded into the convolutions (`conv_folded`,
    with the epsilon and scale of the model's own batch norm; reduced precision on the CPU,
    graph/precision.py folds_batch_norm), each folded kernel optionally computed once per
    session (`once_per_session`);
  * float32 norm and pool: batch norm and pooling in float32 inside a reduced-precision graph
    (float16 on a CPU without float16 arithmetic, graph/precision.py float32_norm_and_pool);
  * the graph choices of a training graph (graph/graph_choices.py): a 1x1 convolution as one
    MatMul (`conv1x1_matmul`, stride 1; a stride-2 shortcut as a strided slice and a MatMul),
    or only its filter gradient as one (`conv1x1_filter_matmul`), decided per convolution
    shape (`Conv1x1`).

Which of them a network is built with is one `BuildOptions` value, passed explicitly to the
model's build_network and on to its ConvNetBuilder (graph/tower.py makes it from the run plan);
nothing here holds a run's choices between calls.
"""

from __future__ import annotations

from typing import NamedTuple

import tensorflow as tf

tf1 = tf.compat.v1

_DENSE_GRADIENT = 'DenseMatMulKernelFirst'
_DENSE_GRADIENT_FLOAT32 = 'DenseMatMulKernelFirstInFloat32'


def _dense_products(x, w, grad):
    dx = tf.transpose(tf.matmul(w, grad, transpose_b=True))
    dw = tf.matmul(x, grad, transpose_a=True)
    return dx, dw


@tf.RegisterGradient(_DENSE_GRADIENT)
def _dense_matmul_grad(op, grad):
    """Gradients of y = x @ w (x [batch, in], w [in, out], grad [batch, out]).

    dw = x^T @ grad as usual; dx = grad @ w^T is computed as (w @ grad^T)^T, the same products
    in a layout oneDNN's CPU matmul handles several times faster (the transpose of an
    [in, batch] result is small; docs/performance-notes.md, "Measurements once in the code").
    """
    return _dense_products(op.inputs[0], op.inputs[1], grad)


@tf.RegisterGradient(_DENSE_GRADIENT_FLOAT32)
def _dense_matmul_grad_in_float32(op, grad):
    """`_dense_matmul_grad` computed in float32, returned in the op's dtype: where the reduced
    dtype's matmul kernels are slow (graph/precision.py, float32_gradient_kinds)."""
    x, w = op.inputs
    dx, dw = _dense_products(*(tf.cast(t, tf.float32) for t in (x, w, grad)))
    return tf.cast(dx, x.dtype), tf.cast(dw, w.dtype)


def dense_matmul(x, kernel):
    """x @ kernel ([batch, in] x [in, out] -> [batch, out]) with `_dense_matmul_grad`, in
    float32 where an enclosing precision.gradient_scope asks MatMul gradients in float32."""
    graph = tf1.get_default_graph()
    # The enclosing gradient_override_map (TF keeps it in this attribute): this inner one
    # would otherwise hide a float32 request for MatMul.
    outer = getattr(graph, '_gradient_override_map', {}).get('MatMul')
    name = (_DENSE_GRADIENT_FLOAT32 if outer and 'InFloat32' in outer else _DENSE_GRADIENT)
    with graph.gradient_override_map({'MatMul': name}):
        return tf.matmul(x, kernel)


class BuildOptions(NamedTuple):
    """How a ConvNetBuilder builds its layers, beyond the data format and dtypes.

    Attributes:
      fold_batch_norm: inference graphs fold batch norm into the convolutions
        (ConvNetBuilder.conv; graph/precision.py folds_batch_norm).
      fold_once: with `fold_batch_norm`, each folded kernel is computed by the first step of
        a session and read from a local variable after (`once_per_session`).
      float32_norm_and_pool: batch norm (with the activation after it) and pooling computed in
        float32 when the compute dtype is not float32, cast back after (graph/precision.py
        float32_norm_and_pool).
      choose: training graphs only: Conv1x1 -> 'matmul' (`conv1x1_matmul`), 'filter_matmul'
        (`conv1x1_filter_matmul`) or None (a convolution); memory_forms.Site -> 'xla',
        'float32' or None (graph/graph_choices.py Choices.chooser). None: today's graph.
    """
    fold_batch_norm: bool = False
    fold_once: bool = False
    float32_norm_and_pool: bool = False
    choose: object = None


def once_per_session(compute, shape, dtype, name):
    """compute() on the first run of a session, its stored value on every later run.

    For values that cannot change within a session, like an inference graph's folded kernels:
    two local variables (not saved, not trainable, made with tf.Variable so that no variable
    manager's getter moves them), zeros and False at initialisation, and a tf.cond that
    computes, stores and returns the value while the flag is False. A session initialises its
    local variables before its first step, so the first step after a restore computes from the
    restored weights.

    Args:
      compute: () -> tensor of `shape` and `dtype`, built inside the cond's branch.
      shape, dtype: its static shape and dtype.
      name: the variables' name prefix.

    Returns:
      A tensor of `shape` and `dtype`.
    """
    local = [tf1.GraphKeys.LOCAL_VARIABLES]
    cache = tf1.Variable(tf.zeros(shape, dtype), trainable=False, collections=local,
                         name=name)
    ready = tf1.Variable(False, trainable=False, collections=local, name=name + '_ready')

    def store():
        value = compute()
        with tf.control_dependencies([cache.assign(value, read_value=False),
                                      ready.assign(True, read_value=False)]):
            return tf.identity(value)

    return tf.cond(ready.read_value(), cache.read_value, store)


def conv_folded(x, kernel, norm, epsilon, conv, data_format, dtype, fold_once):
    """conv2d then inference batch norm, as one convolution and a bias add.

    With s = gamma / sqrt(moving_variance + epsilon), batch norm of y = x * w is
    s (y - moving_mean) + beta = x * (w s) + (beta - s moving_mean): the kernel [kh, kw,
    in, channels] is scaled per output channel in float32 (the variables' dtype) and cast
    once to the compute dtype, and the bias add (plus the activation and a residual add
    after it) is what Grappler's remapper fuses into oneDNN's convolution in every dtype,
    where a bfloat16 convolution followed by a batch norm is not fused. With `fold_once` the
    folded kernel is computed by a session's first step only (`once_per_session`): made every
    step, the multiply and the cast of every kernel are a fifth of a bfloat16 inference step
    (docs/performance-notes.md, "Measurements once in the code").

    Args:
      x: the input, `data_format`, in `dtype`.
      kernel: the stored kernel [kh, kw, in, channels] (not its cast: rounded only once).
      norm: (gamma, beta, moving_mean, moving_variance), float32 [channels] (gamma a constant
        1 for a batch norm without scale).
      epsilon: the batch norm's epsilon.
      conv: (strides, padding) of tf.nn.conv2d.
      data_format: 'NHWC' or 'NCHW'; dtype: the compute dtype.
      fold_once: compute the folded kernel once per session.

    Returns:
      The batch norm's output before its activation, `data_format`, in `dtype`.
    """
    gamma, beta, mean, var = norm
    factor = gamma * tf1.rsqrt(tf1.convert_to_tensor(var) + epsilon)
    bias = beta - factor * mean

    def folded_kernel():
        w = tf.cast(kernel, tf.float32) * factor  # broadcasts over the last axis (channels)
        return w if dtype == tf.float32 else tf.cast(w, dtype)

    w = (once_per_session(folded_kernel, kernel.shape, dtype, 'folded_weights') if fold_once
         else folded_kernel())
    y = tf.nn.conv2d(x, w, *conv, data_format=data_format)
    bias = bias if dtype == tf.float32 else tf.cast(bias, dtype)
    return tf.nn.bias_add(y, bias, data_format=data_format)


class Conv1x1(NamedTuple):
    """One 1x1 convolution's shape, what a graph choice is decided for.

    Attributes:
      batch, height, width: the input's (not the output's: a stride-2 shortcut halves them).
      c_in, c_out: channels in and out.
      stride: 1 or 2 (the same in height and width).
      data_format: 'NHWC' or 'NCHW'.
      dtype: the compute dtype's name ('bfloat16', 'float32').
    """
    batch: int
    height: int
    width: int
    c_in: int
    c_out: int
    stride: int
    data_format: str
    dtype: str

    def describe(self) -> str:
        """'16x56x56x64->256' (NHWC order whatever the layout), '/2' for a stride of 2."""
        return '%dx%dx%dx%d->%d%s' % (self.batch, self.height, self.width, self.c_in,
                                      self.c_out, '/%d' % self.stride if self.stride > 1 else '')

    @property
    def choice(self) -> str:
        """The graph choice that makes this convolution a MatMul: 'conv1x1_matmul' (stride 1)
        or 'shortcut_matmul' (stride 2)."""
        return 'conv1x1_matmul' if self.stride == 1 else 'shortcut_matmul'


def conv1x1_matmul(x, kernel, stride: int, data_format: str):
    """A 1x1 convolution (no padding needed: SAME and VALID agree) as one MatMul.

    y[n, h, w, :] = x[n, s h, s w, :] @ kernel[0, 0]: in NHWC, x [N, H, W, C_in] viewed as
    [N H W, C_in] (a reshape, no copy) times the kernel [C_in, C_out]; its gradients are the
    MatMuls dx = dy kernel^T and dkernel = x^T dy. In NCHW, x [N, C_in, H, W] viewed as
    [N, C_in, H W] and kernel^T [C_out, C_in] broadcast over N (one BatchMatMul; the kernel's
    gradient sums over N). A stride s > 1 takes every s-th row and column first (a strided
    slice, whose gradient scatters back into zeros): the positions a 1x1 kernel with stride s
    reads under SAME or VALID padding (output size ceil(H / s) = floor((H - 1) / s) + 1).

    Args:
      x: [N, H, W, C_in] (NHWC) or [N, C_in, H, W] (NCHW), static shape.
      kernel: [1, 1, C_in, C_out], x's dtype (the variable's shape is kept: checkpoints load
        across the choice).
      stride: the convolution's stride in height and width.
      data_format: 'NHWC' or 'NCHW'.

    Returns:
      The convolution's output, [N, H', W', C_out] or [N, C_out, H', W'], H' = ceil(H / stride).
    """
    c_in, c_out = int(kernel.shape[2]), int(kernel.shape[3])
    w = tf.reshape(kernel, [c_in, c_out])
    if data_format == 'NHWC':
        if stride > 1:
            x = x[:, ::stride, ::stride, :]
        n, h, width = (int(d) for d in x.shape[:3])
        y = tf.matmul(tf.reshape(x, [n * h * width, c_in]), w)
        return tf.reshape(y, [n, h, width, c_out])
    if stride > 1:
        x = x[:, :, ::stride, ::stride]
    n, h, width = int(x.shape[0]), int(x.shape[2]), int(x.shape[3])
    y = tf.matmul(tf.expand_dims(tf.transpose(w), 0), tf.reshape(x, [n, c_in, h * width]))
    return tf.reshape(y, [n, c_out, h, width])


_FILTER_MATMUL_GRADIENT = 'TfCnnBenchmarksConv1x1FilterGradientAsMatMul'


@tf.RegisterGradient(_FILTER_MATMUL_GRADIENT)
def _conv1x1_filter_matmul_grad(op, grad):
    """Gradients of a 1x1 Conv2D: the input's as Conv2DBackpropInput (as TensorFlow's own),
    the filter's as one MatMul, dw = x_s^T dy (x_s: the positions the stride reads, viewed as
    [N H' W', C_in]; dy [N H' W', C_out]); NCHW: the sum over N of x_s[n] dy[n]^T."""
    x, w = op.inputs
    data_format = op.get_attr('data_format').decode()
    strides = op.get_attr('strides')
    kwargs = dict(strides=strides, padding=op.get_attr('padding'),
                  explicit_paddings=op.get_attr('explicit_paddings'), data_format=data_format,
                  dilations=op.get_attr('dilations'))
    dx = tf.raw_ops.Conv2DBackpropInput(input_sizes=tf.shape(x), filter=w, out_backprop=grad,
                                        **kwargs)
    c_in, c_out = int(w.shape[2]), int(w.shape[3])
    if data_format == 'NHWC':
        s = strides[1]
        xs = x[:, ::s, ::s, :] if s > 1 else x
        dw = tf.matmul(tf.reshape(xs, [-1, c_in]), tf.reshape(grad, [-1, c_out]),
                       transpose_a=True)
    else:
        s = strides[2]
        xs = x[:, :, ::s, ::s] if s > 1 else x
        n = int(x.shape[0])
        dw = tf.reduce_sum(tf.matmul(tf.reshape(xs, [n, c_in, -1]),
                                     tf.reshape(grad, [n, c_out, -1]), transpose_b=True), 0)
    return dx, tf.reshape(dw, [1, 1, c_in, c_out])


def conv1x1_filter_matmul(x, kernel, strides, padding, data_format):
    """tf.nn.conv2d of a 1x1 kernel whose filter gradient is one MatMul
    (`_conv1x1_filter_matmul_grad`); the forward pass and the input gradient stay oneDNN's
    convolutions. Not inside an enclosing Conv2D gradient override (precision.gradient_scope's
    float32 gradients): that one is kept (the caller checks `conv_gradient_overridden`)."""
    with tf1.get_default_graph().gradient_override_map({'Conv2D': _FILTER_MATMUL_GRADIENT}):
        return tf.nn.conv2d(x, kernel, strides, padding, data_format=data_format)


def conv_gradient_overridden() -> bool:
    """Whether an enclosing gradient_override_map already replaces Conv2D's gradient."""
    graph = tf1.get_default_graph()
    return bool(getattr(graph, '_gradient_override_map', {}).get('Conv2D'))

"""Graph choices made for the kernels' speed, used by ConvNetBuilder's layers.

  * `dense_matmul`: a fully connected layer whose input gradient is computed in the layout
    oneDNN's CPU matmul runs fastest (and in float32 where graph/precision.py asks);
  * `folded_batch_norm`: inference batch norm folded into the convolutions (reduced precision
    on the CPU, graph/precision.py folds_batch_norm), each folded kernel optionally computed
    once per session (`once_per_session`);
  * `float32_norm_and_pool`: batch norm and pooling in float32 inside a reduced-precision graph
    (float16 on a CPU without float16 arithmetic, graph/precision.py float32_norm_and_pool).

The scopes are context variables read when a ConvNetBuilder is made (`fold_settings`,
`norm_and_pool_in_float32`).
"""

from __future__ import annotations

import contextlib
import contextvars

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
    in a layout oneDNN's CPU matmul handles 2-4.5x faster here: for batch 32, a 9216x4096
    layer's dx took 64 ms as grad @ w^T and 18 ms this way (4096x1001: 3.8 -> 2.1 ms; the
    transpose of a [in, batch] result is small).
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


_FOLD_BATCH_NORM = contextvars.ContextVar('fold_batch_norm', default=(False, False))
_FLOAT32_NORM_AND_POOL = contextvars.ContextVar('float32_norm_and_pool', default=False)


@contextlib.contextmanager
def folded_batch_norm(fold: bool = True, once_per_session: bool = False):
    """Builders made inside fold inference batch norm into the convolutions (`conv`); with
    `once_per_session`, each folded kernel is computed by the first step of a session and read
    from a local variable after (`once_per_session`)."""
    token = _FOLD_BATCH_NORM.set((bool(fold), bool(once_per_session)))
    try:
        yield
    finally:
        _FOLD_BATCH_NORM.reset(token)


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


@contextlib.contextmanager
def float32_norm_and_pool(on: bool = True):
    """Builders made inside compute batch norm (with the activation after it) and pooling in
    float32 when their compute dtype is not float32, cast back after: where the reduced dtype's
    kernels for them are slow (graph/precision.py, float32_norm_and_pool)."""
    token = _FLOAT32_NORM_AND_POOL.set(bool(on))
    try:
        yield
    finally:
        _FLOAT32_NORM_AND_POOL.reset(token)


def fold_settings() -> tuple[bool, bool]:
    """(fold, once_per_session) of the enclosing `folded_batch_norm` scope."""
    return _FOLD_BATCH_NORM.get()


def norm_and_pool_in_float32() -> bool:
    """Whether an enclosing `float32_norm_and_pool` scope is on."""
    return _FLOAT32_NORM_AND_POOL.get()

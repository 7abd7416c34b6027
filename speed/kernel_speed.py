"""What a reduced precision's CPU kernels actually do here: each big op timed against float32.

A CPU flag (avx512_fp16, avx512_bf16, amx_bf16) says what the hardware can do, not what
TensorFlow's kernels do with it: on a Xeon with AVX512_FP16, TensorFlow 2.21 ran the trivial
model's float16 training step about 145x slower than float32 (its float16 matmul gradients are
not oneDNN's), and alexnet did not finish its warm-up in 10 minutes. So where a CPU flag claims
native support, the run measures, once per process and dtype, the op kinds a training step is
made of, each in the reduced dtype and in float32, and

  * computes the gradients of an op kind in float32 (precision.gradient_scope) where its
    reduced-precision gradient kernels are more than GRADIENT_SLOWER_FACTOR slower;
  * says in the header what the kernels do ('float16 kernels measured here: ...');
  * warns up front, naming the measured factor and the faster choice, when the forward kernels
    (which stay in the reduced dtype) are more than FAR_SLOWER_FACTOR slower.

The probe: a 3x3 convolution 4x28x28x64 -> 64 (forward, input gradient, filter gradient) and a
32x1024 by 1024x1024 matmul (forward and its two gradients), float32 and the reduced dtype
called in turn after one warm-up, the least of 5 runs (a busy machine slows runs, never speeds
them up), in a graph and session of its own with the run's thread counts (TensorFlow's intra-op
pool is created once per process, by the first session: the probe must not size it differently
from the run's). It takes about 0.3 s where the kernels are fast (measured on an AMD EPYC with
AVX512_BF16: bfloat16 0.9-1.3x float32's time, float16 2-4x).
"""

from __future__ import annotations

import functools
import time

import tensorflow as tf

tf1 = tf.compat.v1

#: Gradient kernels this much slower than float32's run in float32 instead (two casts per op
#: cost far less: a cast of a 16x56x56x256 tensor took 2 ms, a convolution gradient 30-60 ms).
GRADIENT_SLOWER_FACTOR = 2.0
#: Forward kernels this much slower than float32's make the run warn up front.
FAR_SLOWER_FACTOR = 2.0

#: The probe's op kinds: (kind, what the gradient override replaces).
KINDS = ('conv', 'conv_gradients', 'matmul', 'matmul_gradients')

_CONV_INPUT = (4, 28, 28, 64)
_CONV_FILTER = (3, 3, 64, 64)
_MATMUL = (32, 1024, 1024)


def _kind_ops(dtype):
    """{kind: op} of the probe in `dtype`, inputs random-valued variables cast once."""
    def var(shape):
        v = tf1.Variable(tf1.random_normal(shape), name='probe')
        cached = tf1.Variable(tf.zeros(shape, dtype), name='probe_%s' % dtype.name)
        return v, cached
    x, xc = var(_CONV_INPUT)
    w, wc = var(_CONV_FILTER)
    m, k, n = _MATMUL
    a, ac = var((m, k))
    b, bc = var((k, n))
    g, gc = var((m, n))
    setup = tf.group(*[c.assign(tf.cast(v, dtype)) for v, c in
                       ((x, xc), (w, wc), (a, ac), (b, bc), (g, gc))])
    conv = dict(strides=[1, 1, 1, 1], padding='SAME')
    xr, wr, ar, br, gr = (c.read_value() for c in (xc, wc, ac, bc, gc))
    y = tf.nn.conv2d(xr, wr, **conv)
    dy = tf.stop_gradient(y)
    ops = {
        'conv': y,
        'conv_gradients': tf.group(
            tf.raw_ops.Conv2DBackpropInput(input_sizes=_CONV_INPUT, filter=wr, out_backprop=dy,
                                           **conv),
            tf.raw_ops.Conv2DBackpropFilter(input=xr, filter_sizes=_CONV_FILTER,
                                            out_backprop=dy, **conv)),
        'matmul': tf.matmul(ar, br),
        'matmul_gradients': tf.group(tf.matmul(gr, br, transpose_b=True),
                                     tf.matmul(ar, gr, transpose_a=True)),
    }
    return setup, ops


def _min_secs(fns, reps=5):
    """Per function, the least wall seconds of `reps` calls, the functions called in turn (so
    a burst of other work on the machine hits each alike), after one warm-up call each."""
    for fn in fns:
        fn()
    best = [float('inf')] * len(fns)
    for _ in range(reps):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


@functools.lru_cache(maxsize=None)
def _measure(dtype_name: str, intra: int, inter: int) -> tuple:
    graph = tf.Graph()
    targets = {}
    with graph.as_default():
        setups = []
        for dtype in (tf.float32, tf.as_dtype(dtype_name)):
            with tf.name_scope(dtype.name):
                setup, ops = _kind_ops(dtype)
            setups.append(setup)
            for kind, op in ops.items():
                targets[kind, dtype.name] = op if isinstance(op, tf.Operation) else (
                    tf.reduce_sum(tf.cast(op[..., :1], tf.float32)).op)
        init = tf1.global_variables_initializer()
    config = tf1.ConfigProto(intra_op_parallelism_threads=intra,
                             inter_op_parallelism_threads=inter)
    out = []
    with tf1.Session(graph=graph, config=config) as sess:
        sess.run(init)
        sess.run(setups)
        for kind in KINDS:
            base, reduced = _min_secs([sess.make_callable(targets[kind, name])
                                       for name in ('float32', dtype_name)])
            out.append((kind, reduced / max(base, 1e-9)))
    return tuple(out)


def factors(dtype: tf.DType, threads: tuple[int, int] = (0, 0)) -> dict[str, float]:
    """{kind: this dtype's seconds / float32's} for each of KINDS, measured once per process.

    Args:
      dtype: tf.bfloat16 or tf.float16.
      threads: the run's (intra-op, inter-op) thread counts (cpu_tuning.thread_counts).

    Returns:
      e.g. {'conv': 0.9, 'conv_gradients': 0.8, 'matmul': 1.3, 'matmul_gradients': 1.4}: below 1
      the reduced dtype is faster.
    """
    return dict(_measure(dtype.name, int(threads[0]), int(threads[1])))


def float32_gradient_kinds(measured: dict[str, float]) -> tuple[str, ...]:
    """The op kinds ('conv', 'matmul') whose gradients should run in float32: their
    reduced-precision gradient kernels measured more than GRADIENT_SLOWER_FACTOR slower."""
    return tuple(kind for kind in ('conv', 'matmul')
                 if measured[kind + '_gradients'] > GRADIENT_SLOWER_FACTOR)


def _factor(value: float) -> str:
    """'0.59x', '1.20x', '145x'."""
    return '%.2fx' % value if value < 10 else '%.0fx' % value


def describe(dtype: tf.DType, measured: dict[str, float]) -> str:
    """The header's text, e.g. 'float16 kernels measured here (time vs float32): conv 1.90x,
    conv gradients 40x, matmul 4.00x, matmul gradients 145x; gradients of conv, matmul in
    float32'."""
    text = '%s kernels measured here (time vs float32): %s' % (dtype.name, ', '.join(
        '%s %s' % (kind.replace('_', ' '), _factor(measured[kind])) for kind in KINDS))
    kinds = float32_gradient_kinds(measured)
    if kinds:
        text += '; gradients of %s in float32' % ', '.join(kinds)
    return text


def far_slower_warning(flag: str, dtype: tf.DType, measured: dict[str, float]) -> str | None:
    """The up-front warning when a forward kernel is FAR_SLOWER_FACTOR slower, else None."""
    slow = {kind: measured[kind] for kind in ('conv', 'matmul')
            if measured[kind] > FAR_SLOWER_FACTOR}
    if not slow:
        return None
    faster = 'float32 (drop %s)' % flag
    if dtype == tf.float16:
        faster += ' or --use_bf16 where the CPU has avx512_bf16/amx_bf16'
    return ('%s: %s %s run %s slower than float32 on this CPU (measured now); the faster '
            'choice: %s' % (flag, dtype.name, ' and '.join(
                '%ss' % ('convolution' if k == 'conv' else k) for k in slow),
                ' and '.join('%.1fx' % v for v in slow.values()), faster))

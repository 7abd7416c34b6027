"""The stricter limit of bench_roofline: each big op's math in its fastest form, and the
memory-bound ops' bytes at the host's measured memory bandwidth.

  * Forms (`other_forms`): a 1x1 convolution (Conv2D, Conv2DBackpropInput,
    Conv2DBackpropFilter of a [1, 1, C_in, C_out] filter, no dilation) is one MatMul of the
    same multiply-adds, with M = N H' W' rows (H', W' the output's: a stride takes every s-th
    row and column, which is memory traffic, counted below when the graph has it): Conv2D is
    x [M, C_in] w [C_in, C_out], the input gradient dy [M, C_out] w^T, the filter gradient
    x^T [C_in, M] dy [M, C_out]. Conversely a 2-D MatMul is such a 1x1 convolution of a
    [1, M, 1, K] image. The limit takes, per op, the least standalone time of its forms: so a
    graph choice that makes an op the other form (graph/graph_choices.py) cannot run faster
    than the limit counts it.
  * Memory (`memory_ops`, `memory_secs`): every other op the train op needs (batch norm and
    its gradient, ReLU, ReluGrad, AddN, AddV2, Cast, the optimizer's updates, strided slices,
    ...) reads its inputs and writes its outputs once: its bytes (static shapes x dtype sizes)
    at the bandwidth a streaming AddV2 reaches on this host for the largest measured size not
    above the op's bytes (`measure_bandwidth`: a small tensor that lives in a cache streams
    faster than DRAM, and the limit must not count it slower than it can be). Ops that move no
    data (Const, Identity, Reshape, ReadVariableOp, shape arithmetic, ...) are free.

The limit is then a roofline of the graph as built: the big ops at their fastest standalone
form's speed, one after another, plus the remaining ops at memory speed, nothing overlapped.
"""

from __future__ import annotations

import math
import time

import tensorflow as tf

tf1 = tf.compat.v1

#: Ops that move no tensor data (views, variable handles, shape arithmetic, control).
FREE_TYPES = frozenset((
    'Const', 'Identity', 'IdentityN', 'Reshape', 'NoOp', 'Shape', 'ShapeN', 'Size', 'Rank',
    'Placeholder', 'PlaceholderWithDefault', 'VarHandleOp', 'VariableV2', 'ReadVariableOp',
    'StopGradient', 'Squeeze', 'ExpandDims', 'BroadcastGradientArgs', 'Range', 'Snapshot',
    'PreventGradient', 'Switch', 'Merge', 'Enter', 'Exit', 'NextIteration', 'LoopCond',
    'VarIsInitializedOp'))
#: Streaming sizes (bytes of each AddV2 operand) the bandwidth is measured at.
BANDWIDTH_SIZES = (1 << 18, 1 << 21, 1 << 24, 1 << 27)


def timed(run, reps: int, warmup: int) -> list:
    """Wall seconds of each of `reps` calls of `run()`, after `warmup` untimed calls."""
    for _ in range(warmup):
        run()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return times


def _shapes(spec) -> dict:
    return {name: (shape, value) for name, shape, _, value in spec.inputs}


def _dtype(spec) -> str:
    return next(d for _, _, d, v in spec.inputs if v is None)


def _layout_nhw(shape, nhwc: bool):
    """(N, H, W, C) of a 4-D shape in its layout."""
    return tuple(shape) if nhwc else (shape[0], shape[2], shape[3], shape[1])


def other_forms(spec, make_spec) -> list:
    """The other forms of one big op's math (module docstring), as OpSpecs built by
    `make_spec(type, inputs, attrs, out_shape)`; [] when it has none."""
    attrs = dict(spec.attrs)
    shapes = _shapes(spec)
    dtype = _dtype(spec)
    if spec.type in ('Conv2D', 'Conv2DBackpropInput', 'Conv2DBackpropFilter'):
        filt = shapes.get('filter', shapes.get('filter_sizes'))
        kernel = filt[0] if filt[1] is None else filt[1]
        if tuple(kernel[:2]) != (1, 1) or any(d != 1 for d in attrs.get('dilations', (1,))):
            return []
        if attrs.get('padding') == 'EXPLICIT':
            return []
        nhwc = attrs.get('data_format', 'NHWC') == 'NHWC'
        out = spec.out_shape if spec.type == 'Conv2D' else shapes['out_backprop'][0]
        n, h, w, _ = _layout_nhw(out, nhwc)
        m, c_in, c_out = n * h * w, kernel[2], kernel[3]

        def mm(a, b, ta, tb, out_shape):
            return make_spec('MatMul', (('a', a, dtype, None), ('b', b, dtype, None)),
                             (('transpose_a', ta), ('transpose_b', tb)), out_shape)
        if spec.type == 'Conv2D':
            return [mm((m, c_in), (c_in, c_out), False, False, (m, c_out))]
        if spec.type == 'Conv2DBackpropInput':
            return [mm((m, c_out), (c_in, c_out), False, True, (m, c_in))]
        return [mm((m, c_in), (m, c_out), True, False, (c_in, c_out))]
    if spec.type == 'MatMul':
        (a, _), (b, _) = shapes['a'], shapes['b']
        ta, tb = attrs.get('transpose_a', False), attrs.get('transpose_b', False)
        conv = (('strides', (1, 1, 1, 1)), ('padding', 'VALID'), ('data_format', 'NHWC'),
                ('dilations', (1, 1, 1, 1)), ('explicit_paddings', ()),
                ('use_cudnn_on_gpu', True))
        if not ta and not tb:  # x [M, K] w [K, N]
            m, k, n = a[0], a[1], b[1]
            return [make_spec('Conv2D', (('input', (1, m, 1, k), dtype, None),
                                         ('filter', (1, 1, k, n), dtype, None)), conv,
                              (1, m, 1, n))]
        if not ta and tb:  # dy [M, N] w^T, w [K, N]
            m, n, k = a[0], a[1], b[0]
            return [make_spec('Conv2DBackpropInput', (
                ('input_sizes', (4,), 'int32', (1, m, 1, k)),
                ('filter', (1, 1, k, n), dtype, None),
                ('out_backprop', (1, m, 1, n), dtype, None)), conv, (1, m, 1, k))]
        if ta and not tb:  # x^T dy, x [M, K], dy [M, N]
            m, k, n = a[0], a[1], b[1]
            return [make_spec('Conv2DBackpropFilter', (
                ('input', (1, m, 1, k), dtype, None),
                ('filter_sizes', (4,), 'int32', (1, 1, k, n)),
                ('out_backprop', (1, m, 1, n), dtype, None)), conv, (1, 1, k, n))]
    return []


def tensor_bytes(t) -> int | None:
    """Bytes of a tensor of static shape; None when its shape or size is unknown."""
    if not t.shape.is_fully_defined() or t.dtype.size is None:
        return None
    try:
        return int(math.prod(t.shape.as_list())) * t.dtype.size
    except (TypeError, ValueError):
        return None


#: Elementwise ops one loop can chain (XLA does, `--graph_choices=residual_xla`): a tensor
#: one of them makes and only such ops read never goes to memory in the fused form.
FUSABLE_TYPES = frozenset(('Relu', 'ReluGrad', 'AddV2', 'Add', 'AddN', 'Cast'))


def _internal(t, needed) -> bool:
    """Whether `t` stays inside a chain of FUSABLE_TYPES: made by one, read (within
    `needed`) only by them."""
    readers = [op for op in t.consumers() if op in needed]
    return (t.op.type in FUSABLE_TYPES and bool(readers)
            and all(op.type in FUSABLE_TYPES for op in readers))


def memory_ops(needed, big_types) -> list:
    """(type, bytes) of each op in `needed` that is neither big nor free: its inputs' and
    outputs' bytes, plus a read and a write of each variable behind a resource handle (the
    size of the op's largest tensor); unknown shapes count 0. A tensor passed between
    FUSABLE_TYPES ops (relu(a + b), ReluGrad(AddN(...))) counts nothing, as in one fused pass,
    whatever form the graph has (a tensor two ops of one chain both read still counts twice)."""
    rows = []
    needed = set(needed)
    for op in needed:
        if op.type in big_types or op.type in FREE_TYPES:
            continue
        total, handles, largest = 0, 0, 0
        for t in list(op.inputs) + list(op.outputs):
            if t.dtype in (tf.resource, tf.variant, tf.string):
                handles += t.dtype == tf.resource
                continue
            nbytes = tensor_bytes(t) or 0
            largest = max(largest, nbytes)
            if not _internal(t, needed):
                total += nbytes
        # A variable behind a handle (an optimizer's variable and slots, an assignment's
        # target) is read and written: twice the largest tensor the op is given.
        total += 2 * handles * largest
        if total:
            rows.append((op.type, total))
    return rows


def measure_bandwidth(threads: int, sizes=BANDWIDTH_SIZES, reps: int = 10) -> dict:
    """{operand bytes: bytes/sec} of a float32 AddV2 (reads two operands, writes one: 3x the
    operand's bytes per call), least of `reps` after a warm-up, an empty call's time
    subtracted; Grappler off (nothing pruned), `threads` intra-op threads, one inter-op."""
    graph = tf.Graph()
    with graph.as_default():
        targets = {}
        for size in sizes:
            n = size // 4
            x, y = (tf1.Variable(tf1.random_normal([n])).value() for _ in range(2))
            targets[size] = (tf.group(x + y), tf.group(x, y))
        init = tf1.global_variables_initializer()
    config = tf1.ConfigProto(intra_op_parallelism_threads=threads,
                             inter_op_parallelism_threads=1)
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    out = {}
    with tf1.Session(graph=graph, config=config) as sess:
        sess.run(init)
        for size, (add, inputs) in targets.items():
            best = {}
            for name, target in (('inputs', inputs), ('add', add)):
                best[name] = min(timed(sess.make_callable(target), reps, 1))
            out[size] = 3 * size / max(best['add'] - best['inputs'], 1e-9)
    return out


def bandwidth_for(nbytes: int, bandwidth: dict) -> float:
    """The bandwidth (bytes/sec) of the largest measured size whose traffic (3x the operand)
    is not above `nbytes`; the smallest size's for smaller ops."""
    fitting = [size for size in bandwidth if 3 * size <= nbytes]
    return bandwidth[max(fitting) if fitting else min(bandwidth)]


def memory_secs(rows, bandwidth: dict) -> dict:
    """{'secs', 'bytes', 'by_type': {type: {'secs', 'ops', 'bytes'}}} of memory_ops' rows."""
    by_type = {}
    for kind, nbytes in rows:
        row = by_type.setdefault(kind, {'secs': 0.0, 'ops': 0, 'bytes': 0})
        row['secs'] += nbytes / bandwidth_for(nbytes, bandwidth)
        row['ops'] += 1
        row['bytes'] += nbytes
    return {'secs': sum(r['secs'] for r in by_type.values()),
            'bytes': sum(r['bytes'] for r in by_type.values()), 'by_type': by_type}

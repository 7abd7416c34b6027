"""The shapes the reduced-precision kernel probe times (hardware/kernel_speed.py, which
re-exports these): a run's largest convolution and matmul at its per-device batch
(`run_shapes`), cut to the probe's bound where larger (`capped`: DEFAULT_SHAPES' size, or
NATIVE_BOUND times it for a dtype whose kernels run near float32's speed), the run's own op
kept beside what was timed so that every line names both (`ProbeShapes.run_text`).
"""

from __future__ import annotations

import math
from typing import NamedTuple


class ProbeShapes(NamedTuple):
    """The shapes the probe times, NHWC.

    Attributes:
      conv: (batch, height, width, input channels, kernel height, kernel width, output
        channels, stride) of a convolution with SAME padding.
      matmul: (rows, inner, columns) of a [rows, inner] x [inner, columns] product.
      of_run: True when they are a run's (`run_shapes`), False for DEFAULT_SHAPES.
      absent: the kinds ('conv', 'matmul') the run has none of (its shape is then the
        default's, timed for the record's key but deciding nothing: `_decides`).
      run_conv, run_matmul: the run's own op where it was larger than the probe's bound and
        `conv` or `matmul` is it cut (`capped`); () where the timed shape is the run's.
      inference: True for a forward-only or eval run's (graph/precision.probe_shapes): it
        runs no gradient kernel, so the probe's announcement names only the forward ops (the
        probe still times the gradients: its record, one per shapes, serves training runs).
        Not in the record's key (`text`).
    """

    conv: tuple
    matmul: tuple
    of_run: bool = False
    absent: tuple = ()
    run_conv: tuple = ()
    run_matmul: tuple = ()
    inference: bool = False

    def conv_text(self) -> str:
        """'4x28x28x64 3x3->64' (' stride 2' after it where the stride is 2)."""
        return shape_text('conv', self.conv)

    def matmul_text(self) -> str:
        """'32x1024x1024' (rows x inner x columns)."""
        return shape_text('matmul', self.matmul)

    def run_text(self, kind: str) -> str:
        """The run's op of `kind` ('conv', 'matmul') and what was timed where it was cut:
        '8x9216x4096', or '8x13x13x384 3x3->384 timed at 5x13x13x384 3x3->384'."""
        timed = self.conv_text() if kind == 'conv' else self.matmul_text()
        whole = self.run_conv if kind == 'conv' else self.run_matmul
        return '%s timed at %s' % (shape_text(kind, whole), timed) if whole else timed

    def text(self) -> str:
        """'conv 4x28x28x64 3x3->64, matmul 32x1024x1024' (the record key's last part)."""
        return 'conv %s, matmul %s' % (self.conv_text(), self.matmul_text())


def shape_text(kind: str, shape: tuple) -> str:
    """'4x28x28x64 3x3->64' (a 'conv', ' stride 2' after it where the stride is 2) or
    '32x1024x1024' (a 'matmul': rows x inner x columns)."""
    if kind == 'matmul':
        return 'x'.join(str(d) for d in shape)
    n, h, w, c, kh, kw, k, stride = shape
    return '%dx%dx%dx%d %dx%d->%d%s' % (n, h, w, c, kh, kw, k,
                                        ' stride %d' % stride if stride != 1 else '')


#: The probe's shapes where a run's are not known (and its bound: `capped`).
DEFAULT_SHAPES = ProbeShapes((4, 28, 28, 64, 3, 3, 64, 1), (32, 1024, 1024))
#: A probe whose dtype's kernels run near float32's speed (bfloat16 on a CPU with its units)
#: times a run's op whole up to this many times DEFAULT_SHAPES' multiply-adds (`run_shapes`'
#: `bound`): alexnet's 8x9216x4096 matmul at batch 8 is 9x, and the probe stays within its
#: announced 3 s (docs/performance-notes.md, "Measurements once in the code"). float16's
#: kernels (up to 670x float32's time) and emulated ones keep the default's size.
NATIVE_BOUND = 10
#: A cut matmul keeps at least this many of its rows (the batch; fewer where the run has
#: fewer), its inner dimension cut instead: cut to one row (alexnet at batch 8 was timed at
#: 1x8192x4096), a matmul is a matrix-vector product, bound by reading the weights, unlike
#: the run's.
MIN_ROWS = 8


def macs(kind: str, shape: tuple) -> int:
    """Multiply-adds of a forward 'conv' (ProbeShapes.conv, SAME padding) or 'matmul'."""
    if kind == 'matmul':
        return math.prod(shape)
    n, h, w, c, kh, kw, k, stride = shape
    return n * -(-h // stride) * -(-w // stride) * c * kh * kw * k


def capped(kind: str, shape: tuple, limit: int | None = None) -> tuple:
    """`shape` ('conv' or 'matmul', as ProbeShapes holds them) cut to at most `limit`
    multiply-adds (default: DEFAULT_SHAPES' of the kind): its batch (a matmul's rows) first,
    a matmul's down to MIN_ROWS, then a convolution's height and width alike, a matmul's inner
    dimension, each at least 1 (a convolution's at least its kernel's)."""
    default = DEFAULT_SHAPES.conv if kind == 'conv' else DEFAULT_SHAPES.matmul
    limit = macs(kind, default) if limit is None else limit
    if macs(kind, shape) <= limit:
        return tuple(shape)
    one = (1,) + tuple(shape[1:])
    per_item = macs(kind, one)
    keep = min(shape[0], MIN_ROWS) if kind == 'matmul' else 1
    if per_item * keep <= limit:
        return (limit // per_item,) + tuple(shape[1:])
    if kind == 'matmul':
        _, inner, columns = shape
        keep = max(1, min(keep, limit // columns))
        return (keep, max(1, min(inner, limit // (keep * columns))), columns)
    _, h, w, c, kh, kw, k, stride = shape
    scale = math.sqrt(limit / per_item)
    return (1, max(kh, int(h * scale)), max(kw, int(w * scale)), c, kh, kw, k, stride)


def run_shapes(graph, batch: int, bound: int = 1) -> ProbeShapes:
    """The probe's shapes of a run: its largest Conv2D and MatMul by multiply-adds at
    `batch` images (the per-device batch), each `capped` at `bound` times DEFAULT_SHAPES'
    multiply-adds (the run's own kept in ProbeShapes.run_conv/run_matmul where cut);
    DEFAULT_SHAPES' of a kind the run has none of. A convolution of the images (4 input
    channels or fewer: a stem, which has no input gradient and whose filter gradient reads 3
    channels) counts only where the model has no other (resnet50's 7x7 stem has a few more
    multiply-adds than its 3x3 layers).

    Args:
      graph: a tf.Graph of the model's forward pass built NHWC at batch 1 (with static
        shapes: models/flops.placeholder_graph).
      batch: the run's per-device batch.
      bound: 1, or NATIVE_BOUND for a dtype whose kernels run near float32's speed
        (graph/precision.probe_shapes).
    """
    convs, matmuls = [], []
    for op in graph.get_operations():
        if op.type == 'Conv2D':
            x, f = (t.shape.as_list() for t in op.inputs[:2])
            stride = int(op.get_attr('strides')[1])
            convs.append((batch, x[1], x[2], x[3], f[0], f[1], f[3], stride))
        elif op.type == 'MatMul':
            a, b = (t.shape.as_list() for t in op.inputs[:2])
            inner = a[0] if op.get_attr('transpose_a') else a[1]
            columns = b[0] if op.get_attr('transpose_b') else b[1]
            matmuls.append((batch, inner, columns))
    convs = [s for s in convs if s[3] > 4] or convs
    conv = max(convs, key=lambda s: macs('conv', s), default=None)
    matmul = max(matmuls, key=lambda s: macs('matmul', s), default=None)
    cut = {kind: capped(kind, s, bound * macs(kind, getattr(DEFAULT_SHAPES, kind)))
           for kind, s in (('conv', conv), ('matmul', matmul)) if s is not None}
    return ProbeShapes(cut.get('conv', DEFAULT_SHAPES.conv),
                       cut.get('matmul', DEFAULT_SHAPES.matmul), True,
                       tuple(k for k, s in (('conv', conv), ('matmul', matmul)) if s is None),
                       tuple(conv) if conv and cut['conv'] != tuple(conv) else (),
                       tuple(matmul) if matmul and cut['matmul'] != tuple(matmul) else ())

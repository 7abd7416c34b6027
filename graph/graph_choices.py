"""Measured graph choices of a training step (--graph_choices, docs/speed-choices.md).

A choice builds the same mathematics as other ops: `conv1x1_matmul` a 1x1 convolution of
stride 1 as one MatMul (so its input and filter gradients are MatMuls too), `shortcut_matmul`
a stride-2 1x1 convolution (a projection shortcut) as a strided slice and one MatMul
(models/fast_paths.py conv1x1_matmul), `conv1x1_filter_matmul` only the filter gradient of a
1x1 convolution as one MatMul (fast_paths.conv1x1_filter_matmul). The variables, their names
and shapes stay those of the convolution: checkpoints load across the choices, parameter
counts are the same.

With --graph_choices=measured (the default) a CPU training run decides per convolution shape:
the shapes of the run's own 1x1 convolutions (`conv_shapes`: the model's training forward
pass built once in a scratch graph at the run's batch and image size), each timed in both
forms (forward, input gradient and filter gradient together, in the run's dtype, data format
and thread counts; `measure`: the larger factor of two passes), the factor = the MatMul
form's seconds / the convolution's,
cached per CPU model, TF version, threads and shape (hardware/kernel_speed.py choice_factors).
Each shape is built in the faster of the two forms (FORMS) where its factor is below
FASTER_FACTOR, else as a convolution. GPU graphs are not
changed (cuDNN's convolutions are not what was measured); --graph_choices=off is today's
graph; a list of names forces those on wherever they apply (any device).

Why (measurements in ../shared/measurements/README.md): on an Intel Xeon with AMX oneDNN's
bfloat16 filter gradient of resnet50's 1x1 shapes ran 1.6-3.9x slower than the same product
as a MatMul; on an AMD EPYC with AVX512_BF16 (no AMX) float32 filter gradients were 1.06-1.76x
slower than the MatMul and bfloat16 ones 0.76-1.40x (docs/speed-choices.md).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import tensorflow as tf

from ..hardware import kernel_speed
from ..models import fast_paths
from ..params import graph_choice_flag

tf1 = tf.compat.v1

#: A shape is built as a MatMul where that form's training time is below this fraction of
#: the convolution's (a margin for the probe's noise on a shared machine).
FASTER_FACTOR = 0.90
#: Repetitions per shape, form and pass (the least counts), at least kernel_speed.MIN_REPS
#: within BUDGET_SECS for all shapes and passes together; PASSES passes over the shapes.
REPS = 5
PASSES = 2
BUDGET_SECS = 10.0


#: The measured forms of a 1x1 convolution: the whole op as a MatMul, or only its filter
#: gradient (models/fast_paths.py conv1x1_matmul, conv1x1_filter_matmul).
FORMS = ('matmul', 'filter_matmul')


def choice_name(shape: fast_paths.Conv1x1, form: str) -> str:
    """The --graph_choices name of building `shape` in `form`."""
    return shape.choice if form == 'matmul' else 'conv1x1_filter_matmul'


class Choices(NamedTuple):
    """A run's graph choices.

    Attributes:
      mode: 'measured', 'off' or the frozenset of forced choice names.
      factors: measured: {(fast_paths.Conv1x1, form of FORMS): that form's time / the
        convolution's, forward and both gradients}.
      when: 'measured here', 'measured <UTC time>, cached', or '' (nothing measured).
    """
    mode: object
    factors: dict
    when: str

    def decide(self, shape: fast_paths.Conv1x1) -> str | None:
        """How the 1x1 convolution of `shape` is built: 'matmul', 'filter_matmul' or None
        (a convolution). Measured: the faster form below FASTER_FACTOR; forced: the whole op
        where its name is given, else the filter gradient where conv1x1_filter_matmul is."""
        if self.mode == graph_choice_flag.OFF:
            return None
        if self.mode == graph_choice_flag.MEASURED:
            got = [(self.factors[shape, form], form) for form in FORMS
                   if (shape, form) in self.factors]
            best = min(got, default=None)
            return best[1] if best is not None and best[0] < FASTER_FACTOR else None
        for form in FORMS:
            if choice_name(shape, form) in self.mode:
                return form
        return None

    def scope(self, phase_train: bool):
        """The fast_paths.graph_choices scope of a tower (training graphs only)."""
        return fast_paths.graph_choices(self.decide if phase_train and self.mode !=
                                        graph_choice_flag.OFF else None)


def item(shape: fast_paths.Conv1x1, form: str) -> str:
    """The cache key's part for a shape and form: 'conv1x1 matmul bfloat16 NHWC
    16x56x56x64->256, 2 passes' (the passes: a factor of another method is not reused)."""
    return 'conv1x1 %s %s %s %s, %d passes, v3' % (form, shape.dtype, shape.data_format,
                                                   shape.describe(), PASSES)


def conv_shapes(plan, model) -> list[fast_paths.Conv1x1]:
    """The distinct 1x1 convolution shapes (stride 1 or 2) of the run's training forward pass,
    in build order: the model built once in a scratch graph at the run's per-device batch,
    image size, data format and dtypes."""
    seen: dict = {}

    def record(shape):
        seen.setdefault(shape, None)
        return None

    size, batch = plan.image_size, plan.per_device_batch_size
    dims = [batch, size, size, 3] if plan.data_format == 'NHWC' else [batch, 3, size, size]
    with tf.Graph().as_default(), fast_paths.graph_choices(record):
        images = tf1.placeholder(plan.compute_dtype, dims)
        model.build_network(images, phase_train=True, num_classes=plan.num_classes,
                            data_format=plan.data_format, dtype=plan.compute_dtype,
                            variable_dtype=plan.variable_dtype)
    return list(seen)


def _forms(shape: fast_paths.Conv1x1):
    """(convolution, MatMul, convolution with a MatMul filter gradient) training targets of
    one shape: each the forward output and both gradients (dy a variable), inputs
    random-valued variables of the dtype."""
    dtype = tf.as_dtype(shape.dtype)
    nhwc = shape.data_format == 'NHWC'
    x_dims = ([shape.batch, shape.height, shape.width, shape.c_in] if nhwc else
              [shape.batch, shape.c_in, shape.height, shape.width])

    def var(dims):
        return tf1.Variable(tf.cast(tf1.random_normal(dims), dtype)).read_value()

    x, w = var(x_dims), var([1, 1, shape.c_in, shape.c_out])
    s = shape.stride
    strides = [1, s, s, 1] if nhwc else [1, 1, s, s]
    targets = []
    for y in (tf.nn.conv2d(x, w, strides, 'VALID', data_format=shape.data_format),
              fast_paths.conv1x1_matmul(x, w, s, shape.data_format),
              fast_paths.conv1x1_filter_matmul(x, w, strides, 'VALID', shape.data_format)):
        dy = var(y.shape.as_list())
        dx, dw = tf.gradients(y, [x, w], grad_ys=dy)
        targets.append(tf.group(y, dx, dw))
    return targets


def probe_config(intra: int, inter: int):
    """The probe session's ConfigProto: the run's thread counts, Grappler off (its dependency
    optimizer drops a group's side-effect-free inputs: the targets then ran nothing, 0.03 ms
    each, and every factor came out 1.00x); oneDNN's rewrite, a runtime pass, still applies."""
    config = tf1.ConfigProto(intra_op_parallelism_threads=intra,
                             inter_op_parallelism_threads=inter)
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    return config


def measure(shapes, intra: int, inter: int, budget_secs: float = BUDGET_SECS) -> dict:
    """{(shape, form): that form's seconds / the convolution's} for each shape and form of
    FORMS (forward and both gradients), one graph and session with the run's thread counts.

    Two passes over all shapes, each timing the three forms of a shape in turn
    (kernel_speed.min_secs, the least of REPS); a shape's factor is the larger of its two
    passes' (on a shared machine one pass alone gave the same shape 0.50x in bfloat16 and
    1.18x in float32: a choice is made only where both passes find it faster).
    """
    graph = tf.Graph()
    with graph.as_default():
        pairs = {shape: _forms(shape) for shape in shapes}
        init = tf1.global_variables_initializer()
    config = probe_config(intra, inter)
    out: dict = {}
    with tf1.Session(graph=graph, config=config) as sess:
        sess.run(init)
        calls = {shape: [sess.make_callable(t) for t in pair] for shape, pair in pairs.items()}
        end = time.perf_counter() + budget_secs
        todo = [shape for _ in range(PASSES) for shape in calls]
        for i, shape in enumerate(todo):
            now = time.perf_counter()
            conv, *others = kernel_speed.min_secs(
                calls[shape], REPS, deadline=now + max(0.0, end - now) / (len(todo) - i))
            for form, secs in zip(FORMS, others):
                out[shape, form] = max(out.get((shape, form), 0.0), secs / max(conv, 1e-9))
    return out


_MEMO: dict = {}


def resolve(plan, model, *, measure_fn=None) -> Choices:
    """The run's Choices, once per process for the same configuration.

    Args:
      plan: the run's run_plan.RunPlan; model: its CNNModel.
      measure_fn: (shapes, intra, inter) -> {(shape, form): factor}; default `measure` (a
        test seam).
    """
    p = plan.params
    mode = graph_choice_flag.parse(p.graph_choices)
    if mode != graph_choice_flag.MEASURED:
        return Choices(mode, {}, '')
    if p.device != 'cpu' or not plan.training:  # GPU graphs and inference stay as they are
        return Choices(graph_choice_flag.OFF, {}, '')
    threads = plan.threads
    memo_key = (p.model, plan.per_device_batch_size, plan.image_size, plan.data_format,
                plan.compute_dtype.name, threads, bool(p.refresh_peak))
    if memo_key in _MEMO:
        return _MEMO[memo_key]
    shapes = conv_shapes(plan, model)
    if not shapes:
        choices = Choices(mode, {}, '')
    else:
        by_item = {item(s, form): (s, form) for s in shapes for form in FORMS}
        fn = measure_fn or measure

        def measure_items(items, intra, inter):
            got = fn(list(dict.fromkeys(by_item[i][0] for i in items)), intra, inter)
            return {item(*key): f for key, f in got.items()}

        factors, when = kernel_speed.choice_factors(list(by_item), threads, measure_items,
                                                    refresh=bool(p.refresh_peak))
        choices = Choices(mode, {by_item[i]: f for i, f in factors.items()}, when)
    _MEMO[memo_key] = choices
    return choices


def describe(choices: Choices) -> list[str]:
    """The header's lines of the choices (none when nothing is chosen or measured), e.g.
    'graph choices measured here (time vs the convolution, forward + gradients):
    conv1x1_matmul on 16x14x14x1024->256 0.81x; off 16x56x56x64->256 1.12x; ...' or
    'graph choices forced (--graph_choices): conv1x1_matmul'. A shape is listed 'on' under the
    form built, 'off' under each other form with its factor."""
    if choices.mode == graph_choice_flag.OFF:
        return []
    if choices.mode != graph_choice_flag.MEASURED:
        return ['graph choices forced (--graph_choices): %s' % ', '.join(sorted(choices.mode))]
    if not choices.factors:
        return []
    parts = []
    for name in graph_choice_flag.CHOICES:
        rows = [(s, form, f) for (s, form), f in choices.factors.items()
                if choice_name(s, form) == name]
        if not rows:
            continue
        on = ['%s %.2fx' % (s.describe(), f) for s, form, f in rows if choices.decide(s) == form]
        off = ['%s %.2fx' % (s.describe(), f) for s, form, f in rows if choices.decide(s) != form]
        parts.append('%s on %s%s' % (name, ', '.join(on) or 'none',
                                     '; off ' + ', '.join(off) if off else ''))
    return ['graph choices %s (time vs the convolution, forward + gradients): %s' % (
        choices.when, '; '.join(parts))]

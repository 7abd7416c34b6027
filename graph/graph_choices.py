"""Measured graph choices of a training step (--graph_choices, docs/speed-choices.md).

A choice builds the same mathematics as other ops: `conv1x1_matmul` a 1x1 convolution of
stride 1 as one MatMul (so its input and filter gradients are MatMuls too), `shortcut_matmul`
a stride-2 1x1 convolution (a projection shortcut) as a strided slice and one MatMul
(models/fast_paths.py conv1x1_matmul), `conv1x1_filter_matmul` only the filter gradient of a
1x1 convolution as one MatMul (fast_paths.conv1x1_filter_matmul); `relu_xla`,
`residual_xla`, `relu_float32` and `residual_float32` a batch norm's ReLU or a residual unit's
add and ReLU, with their gradients, as XLA clusters or in float32 (models/memory_forms.py).
The variables, their names and shapes stay the same: checkpoints load across the choices,
parameter counts are the same.

With --graph_choices=measured (the default) a CPU training run decides per site: the run's
own 1x1 convolution shapes and ReLU sites (`sites`: the model's training forward pass built
once in a scratch graph at the run's batch and image size), each timed in today's form and in
each other form (forward and gradients together, in the run's dtype, data format and thread
counts; `measure`: the larger factor of two passes, its spread their difference; the
memory-bound sites with their batch norm, graph/memory_probe.py), the factor = the form's
seconds / today's, kept per CPU model, TF version, threads and site in the host's calibration
record when measured on a quiet host (hardware/kernel_speed.py choice_factors,
hardware/calibration.py). The probe (about a minute for resnet50) runs only with --calibrate or
--refresh_peak: a run without a quiet calibration builds today's graph and its header says how
to calibrate. Each site is built in the fastest of its forms (`forms_of`) where that factor is
below FASTER_FACTOR and faster by more than its spread, else as today (the decision, `Choices`,
and its text, the header's line and table, are graph/choice_lines.py's, re-exported here). A
site is a distinct shape; `site_places` counts the places of the graph each is at. GPU
graphs are not changed (cuDNN's kernels are not what was measured); with --xla or
--xla_compile the ReLU sites are not measured (XLA compiles them already);
--graph_choices=off is today's graph; a list of names forces those on wherever they apply
(any device; a site given two forms takes the first of FORMS / memory_forms.FORMS).

Why (measurements in ../shared/measurements/README.md): on an Intel Xeon with AMX oneDNN's
bfloat16 filter gradient of resnet50's 1x1 shapes ran 1.6-3.9x slower than the same product
as a MatMul; on an AMD EPYC with AVX512_BF16 (no AMX) float32 filter gradients were 1.06-1.76x
slower than the MatMul and bfloat16 ones 0.76-1.40x (docs/speed-choices.md).
"""

from __future__ import annotations

import inspect
import time

import tensorflow as tf

from .. import cnn_util
from ..hardware import calibration, host_memory, kernel_speed
from ..models import fast_paths
from ..params import graph_choice_flag
from . import memory_probe, precision
from .choice_lines import (  # noqa: F401  (the decision and its text, re-exported)
    BRIEF_WIDTH,
    BUSY_WHEN,
    FASTER_FACTOR,
    FORMS,
    Choices,
    brief,
    choice_name,
    describe,
    forms_of,
    idle_reason,
    table,
)

tf1 = tf.compat.v1

#: Repetitions per shape, form and pass (the least counts), at least kernel_speed.MIN_REPS
#: within BUDGET_SECS for all shapes and passes together; PASSES passes over the shapes.
REPS = 5
PASSES = 2
BUDGET_SECS = 10.0
#: The probe holds every site's tensors at once (`probe_bytes`; freed before the run): it runs
#: only within this share of the memory the process can still allocate (hardware/host_memory.py).
#: Above it (resnet50 at batch 512: 44 GiB; the probe ran minutes, then ran out of memory before
#: the run's memory check could say the run does not fit), the run builds today's graph, warns.
PROBE_MEMORY_SHARE = 0.5
PROBE_TENSORS_A_SITE = 6


def item(site, form: str, threads: tuple[int, int] = (0, 0), kernel_shapes=None) -> str:
    """The cache key's part for a site and form: 'conv1x1 matmul bfloat16 NHWC
    16x56x56x64->256, gradients in the dtype, 2 passes, v4' or 'residual xla bfloat16 NHWC
    16x56x56x256, gradients from float32, 2 passes, v1' (the passes and version: a factor of
    another method is not reused; `threads` and `kernel_shapes`, the run's
    kernel_speed.ProbeShapes, decide whether the run computes convolution gradients in
    float32, which the probe then does too)."""
    source = ('from float32' if memory_probe.gradients_from_float32(site.dtype, threads,
                                                                    kernel_shapes)
              else 'in the dtype')
    if isinstance(site, fast_paths.Conv1x1):
        return 'conv1x1 %s %s %s %s, gradients %s, %d passes, v4' % (
            form, site.dtype, site.data_format, site.describe(), source, PASSES)
    return '%s %s %s %s %s, gradients %s, %d passes, v1' % (
        site.kind, form, site.dtype, site.data_format, site.describe(), source,
        memory_probe.PASSES)


def site_places(plan, model) -> dict:
    """{site: the places of the run's training forward pass it is at}, the distinct sites in
    build order: 1x1 convolution shapes (stride 1 or 2, fast_paths.Conv1x1) and ReLU sites
    (memory_forms.Site), the model built once in a scratch graph at the run's per-device
    batch, image size, data format and dtypes (the builder asks its `choose` once a place:
    resnet20's 3 residual-join shapes are at 9 places)."""
    seen: dict = {}

    def record(shape):
        seen[shape] = seen.get(shape, 0) + 1
        return None

    size, batch = plan.image_size, plan.per_device_batch_size
    dims = [batch, size, size, 3] if plan.data_format == 'NHWC' else [batch, 3, size, size]
    with tf.Graph().as_default():
        images = tf1.placeholder(plan.compute_dtype, dims)
        model.build_network(images, phase_train=True, num_classes=plan.num_classes,
                            data_format=plan.data_format, dtype=plan.compute_dtype,
                            variable_dtype=plan.variable_dtype,
                            options=fast_paths.BuildOptions(choose=record))
    return seen


def sites(plan, model) -> list:
    """The distinct sites of the run's training forward pass, in build order (`site_places`'
    keys)."""
    return list(site_places(plan, model))


def probe_bytes(shapes) -> int:
    """Bytes the probe of `shapes` holds at its peak, at 4 bytes an element (float32
    gradients, the widest): every site's input and output gradient kept as variables for the
    whole probe, plus PROBE_TENSORS_A_SITE activations of the largest site while it runs
    (its forward output, input gradient and the forms' copies)."""
    sizes = []
    for s in shapes:
        if isinstance(s, fast_paths.Conv1x1):
            rows_out = s.batch * -(-s.height // s.stride) * -(-s.width // s.stride)
            sizes.append(s.batch * s.height * s.width * s.c_in + rows_out * s.c_out)
        else:
            sizes.append(2 * s.batch * s.height * s.width * s.channels)
    return 4 * (sum(sizes) + PROBE_TENSORS_A_SITE * max(sizes, default=0))


class _ProbeTooLarge(Exception):
    """The probe of the sites not cached yet would not fit in memory (`probe_memory_problem`)."""


def probe_memory_problem(shapes, batch: int) -> str | None:
    """Why probing `shapes` would not fit (more than PROBE_MEMORY_SHARE of the memory this
    process can still allocate), or None."""
    needed, (available, limit) = probe_bytes(shapes), host_memory.host_available_bytes()
    if needed <= PROBE_MEMORY_SHARE * available:
        return None
    return ('the probe at batch %d would hold about %.1f GiB, more than %d%% of the %.1f GiB '
            'this process can still allocate (%s)' % (batch, needed / 2**30,
                                                      100 * PROBE_MEMORY_SHARE,
                                                      available / 2**30, limit))


def _forms(shape: fast_paths.Conv1x1, threads: tuple[int, int] = (0, 0), kernel_shapes=None):
    """(convolution, MatMul, convolution with a MatMul filter gradient) training targets of
    one shape: each the forward output and both gradients (dy a variable), inputs
    random-valued variables of the dtype. Built in the run's precision.gradient_scope (its
    thread counts `threads`, its kernel_speed.ProbeShapes `kernel_shapes`): where the run
    computes convolution and MatMul gradients in float32, so does the probe, and the
    filter-gradient form is then a convolution, as ConvNetBuilder builds it."""
    dtype = tf.as_dtype(shape.dtype)
    with precision.gradient_scope(dtype, 'cpu', threads, kernel_shapes):
        return _form_targets(shape, dtype)


def _form_targets(shape, dtype):
    """`_forms`' targets, in the enclosing gradient scope."""
    nhwc = shape.data_format == 'NHWC'
    x_dims = ([shape.batch, shape.height, shape.width, shape.c_in] if nhwc else
              [shape.batch, shape.c_in, shape.height, shape.width])

    def var(dims):
        return tf1.Variable(tf.cast(tf1.random_normal(dims), dtype)).read_value()

    x, w = var(x_dims), var([1, 1, shape.c_in, shape.c_out])
    s = shape.stride
    strides = [1, s, s, 1] if nhwc else [1, 1, s, s]
    targets = []
    filter_matmul = (tf.nn.conv2d if fast_paths.conv_gradient_overridden() else
                     fast_paths.conv1x1_filter_matmul)
    for y in (tf.nn.conv2d(x, w, strides, 'VALID', data_format=shape.data_format),
              fast_paths.conv1x1_matmul(x, w, s, shape.data_format),
              filter_matmul(x, w, strides, 'VALID', data_format=shape.data_format)):
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


def measure(shapes, intra: int, inter: int, budget_secs: float = BUDGET_SECS,
            spreads: dict | None = None, kernel_shapes=None) -> dict:
    """{(site, form): that form's seconds / today's} for each site and form of `forms_of`:
    the 1x1 convolution shapes here (`measure_convs`), the ReLU sites with their batch norms
    by graph/memory_probe.py (each within `budget_secs`); `spreads` receives each factor's
    spread over the passes; `kernel_shapes`: the run's kernel_speed.ProbeShapes
    (RunPlan.kernel_shapes), for its gradients' dtypes."""
    convs = [s for s in shapes if isinstance(s, fast_paths.Conv1x1)]
    others = [s for s in shapes if not isinstance(s, fast_paths.Conv1x1)]
    out = (measure_convs(convs, intra, inter, budget_secs, spreads, kernel_shapes) if convs
           else {})
    if others:
        out.update(memory_probe.measure(others, intra, inter, budget_secs, spreads,
                                        kernel_shapes))
    return out


def measure_secs(shapes) -> float:
    """At most about how long `measure` of `shapes` takes: both budgets where both kinds of
    site are there (caps: each stops after its REPS repetitions, so small shapes take a
    fraction: resnet20 at batch 8, announced 16 s, took 1.2-2.5 s), and about a second a site
    for the graph, the session and the warm-ups. Announced as 'up to N s'."""
    convs = sum(isinstance(s, fast_paths.Conv1x1) for s in shapes)
    others = len(shapes) - convs
    return ((BUDGET_SECS if convs else 0) + (memory_probe.BUDGET_SECS if others else 0)
            + 1.0 * len(shapes))


def measure_convs(shapes, intra: int, inter: int, budget_secs: float = BUDGET_SECS,
                  spreads: dict | None = None, kernel_shapes=None) -> dict:
    """{(shape, form): that form's seconds / the convolution's} for each shape and form of
    FORMS (forward and both gradients), one graph and session with the run's thread counts.

    Two passes over all shapes, each timing the three forms of a shape in turn
    (kernel_speed.min_secs, the least of REPS); a shape's factor is the larger of its two
    passes' (on a shared machine one pass alone gave the same shape 0.50x in bfloat16 and
    1.18x in float32: a choice is made only where both passes find it faster); `spreads`,
    when given, receives {(shape, form): the largest pass's factor - the least's};
    `kernel_shapes`: the run's kernel_speed.ProbeShapes, for its gradients' dtypes (`_forms`).
    """
    graph = tf.Graph()
    with graph.as_default():
        pairs = {shape: _forms(shape, (intra, inter), kernel_shapes) for shape in shapes}
        init = tf1.global_variables_initializer()
    config = probe_config(intra, inter)
    out: dict = {}
    passes: dict = {}
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
                factor = secs / max(conv, 1e-9)
                passes.setdefault((shape, form), []).append(factor)
                out[shape, form] = max(out.get((shape, form), 0.0), factor)
    if spreads is not None:
        spreads.update({key: max(v) - min(v) for key, v in passes.items()})
    return out


def resolve(plan, model, *, measure_fn=None) -> Choices:
    """The run's Choices. Called once per run, before its graph is built (the run's settled
    plan holds them, preflight/settled_run.py; the towers read them: graph/tower.py); nothing
    is kept here between calls (the measured factors are cached by hardware/kernel_speed.py).

    From the host's calibration record only (hardware/calibration.py): the probe (about a
    minute for resnet50) runs with --calibrate, or --refresh_peak, never by default; a site
    without a quiet factor is built as today.

    Args:
      plan: the run's run_plan.RunPlan; model: its CNNModel.
      measure_fn: (shapes, intra, inter) -> {(shape, form): factor or (factor, spread)};
        default `measure` (a test seam).
    """
    p = plan.params
    mode = graph_choice_flag.parse(p.graph_choices)
    if mode == graph_choice_flag.OFF:
        return Choices(mode, {}, '')
    if mode != graph_choice_flag.MEASURED:
        return _forced(plan, model, mode)
    if p.device != 'cpu' or not plan.training:  # GPU graphs and inference stay as they are
        return Choices(graph_choice_flag.OFF, {}, '')
    if not calibration.record_path():
        # TF_CNN_CALIBRATION=off: no factor to read, measure or keep and no note (what
        # _measured returns then), so the model is not built in a scratch graph for its sites.
        return Choices(mode, {}, '')
    threads = plan.threads
    calibrate = bool(getattr(p, 'calibrate', False))
    refresh = bool(p.refresh_peak) or calibrate
    places = {s: n for s, n in site_places(plan, model).items()
              if isinstance(s, fast_paths.Conv1x1) or not (p.xla or p.xla_compile)}
    return _measured(plan, places, threads, refresh, measure_fn) if places else Choices(
        mode, {}, '')


def _forced(plan, model, mode) -> Choices:
    """`resolve`'s Choices of forced names, each with the count of the places of the run's
    graph it changes (Choices.forced_sites; a name that changes none gets one `warning:` line
    saying why, per name: idle_reason)."""
    p = plan.params
    places = site_places(plan, model)  # a training run's (settled_run: others' choices are off)
    float32_grads = 'conv1x1_filter_matmul' in mode and p.device == 'cpu' and 'conv' in (
        precision.float32_gradient_kinds(plan.compute_dtype, p.device, plan.threads,
                                         plan.kernel_shapes))  # keeps the convolution
    choices = Choices(mode, {}, '', places=places)
    counts = {name: 0 for name in mode}
    for site, n in places.items():
        form = choices.decide(site)
        name = choice_name(site, form) if form else None
        if name in counts and not (p.xla_compile and form == 'xla') and not (
                float32_grads and form == 'filter_matmul'):
            counts[name] += n
    idle = {name: idle_reason(name, places, p.model, xla_compile=bool(p.xla_compile),
                              float32_conv_gradients=float32_grads,
                              float32_norm=precision.float32_norm_and_pool(plan.compute_dtype,
                                                                           p.device))
            for name in sorted(mode) if not counts[name]}
    if idle:
        cnn_util.warn('--graph_choices: %s change%s nothing in this run (%s)' % (
            ', '.join(idle), 's' if len(idle) == 1 else '',
            '; '.join('%s: %s' % kv for kv in idle.items()) if len(idle) > 1
            else next(iter(idle.values()))))
    return choices._replace(forced_sites=counts, idle=idle)


def _measured(plan, places: dict, threads, refresh: bool, measure_fn) -> Choices:
    """`resolve`'s Choices of the sites `places` ({site: places}) from the record (measured
    first with `refresh`); a measurement on a busy host, not stored, is kept as the
    Choices' `unkept` (the note counts what it would change; the table lists it)."""
    mode, shapes = graph_choice_flag.MEASURED, list(places)
    by_item = {item(s, form, threads, plan.kernel_shapes): (s, form)
               for s in shapes for form in forms_of(s)}
    fn = measure_fn or measure

    def measure_items(items, intra, inter):
        todo = list(dict.fromkeys(by_item[i][0] for i in items))
        problem = probe_memory_problem(todo, plan.per_device_batch_size)
        if problem:
            raise _ProbeTooLarge(problem)
        spreads: dict = {}
        accepts = inspect.signature(fn).parameters
        extra = {name: value for name, value in (('spreads', spreads),
                                                 ('kernel_shapes', plan.kernel_shapes))
                 if name in accepts}
        got = fn(todo, intra, inter, **extra)
        out = {}
        for key, f in got.items():
            factor, spread = f if isinstance(f, tuple) else (f, spreads.get(key, 0.0))
            out[item(*key, threads, plan.kernel_shapes)] = (factor, spread)
        return out

    secs = measure_secs(shapes)
    mark = len(calibration.JOURNAL)
    try:
        got, when = kernel_speed.choice_factors(
            list(by_item), threads, measure_items, refresh=refresh,
            # In the report's unit: factors (--calibrate's 'calibration: stored graph
            # choice: 39 factors'), one per form of a site.
            what='graph choices of %s at batch %d (%d factors: each form of its %d sites '
                 'against today\'s)' % (plan.params.model, plan.per_device_batch_size,
                                       len(by_item), len(shapes)), secs=secs)
    except _ProbeTooLarge as e:  # only what is not recorded yet needs the probe
        cnn_util.warn('graph choices not measured: %s; building today\'s graph '
                      '(--graph_choices=off builds it without this line)' % e)
        return Choices(graph_choice_flag.OFF, {}, '')
    busy = [m.value for m in calibration.journal_since(mark)
            if m.kind == kernel_speed.CHOICE_KIND and not m.quiet]
    unkept = None
    if busy:
        unkept = Choices(mode, {by_item[i]: float(f) for i, (f, _) in busy[-1].items()},
                         BUSY_WHEN, {by_item[i]: float(sp) for i, (_, sp) in busy[-1].items()},
                         places=places)
    if not got:
        note = ''
        if unkept is not None:
            note = 'graph choices: none (measured on a busy host, not stored%s)' % (
                '; would change %d of %d places' % unkept.changed())
            if len(note) > BRIEF_WIDTH:
                note = 'graph choices: none (measured on a busy host, not stored)'
        elif calibration.record_path():
            note = ('graph choices: none (not calibrated; add --calibrate to this command: up '
                    'to %.0f s)' % secs)
        return Choices(mode, {}, '', {}, note, places=places, unkept=unkept)
    return Choices(mode, {by_item[i]: f for i, (f, _) in got.items()}, when,
                   {by_item[i]: sp for i, (_, sp) in got.items()}, places=places,
                   unkept=unkept)

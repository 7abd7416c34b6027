"""What a reduced precision's CPU kernels actually do here: each big op timed against float32.

A CPU flag (avx512_fp16, avx512_bf16, amx_bf16) says what the hardware can do, not what
TensorFlow's kernels do with it: on a Xeon with AVX512_FP16, TensorFlow 2.21 ran the trivial
model's float16 training step about 145x slower than float32 (its fused float16 MatMul:
400-580x float32's time at the default shapes below), and alexnet did not finish its warm-up
in 10 minutes. So where a CPU flag claims native support, the run measures (once per host,
dtype, thread counts and shapes: cached, see below) the op kinds a training step is made of,
at the run's shapes, each in the reduced dtype and in float32, and

  * computes the gradients of an op kind in float32 (precision.gradient_scope) where its
    reduced-precision gradient kernels are more than GRADIENT_SLOWER_FACTOR slower;
  * says in the header what the kernels do and when they were measured ('time vs float32 on
    2026-12-05: conv fwd 1.30x, grad 45x; matmul ...', graph/precision_block.py;
    --forward_only and --eval: the forward kernels only);
  * warns up front, naming the measured factor and the faster choice, when the forward kernels
    (which stay in the reduced dtype) are more than FAR_SLOWER_FACTOR slower.

The probe: the run's largest convolution (by multiply-adds, at its per-device batch) with its
bias and ReLU (forward; Grappler fuses them into one kernel as in a run's graph), its input and
filter gradients, and the run's largest matmul with its bias and ReLU (forward) and its two
gradients (`ProbeShapes`, `run_shapes`), float32 and the reduced dtype called in turn after
one warm-up, the least of REPS (9) runs (a busy machine slows runs, never speeds them up), the
repetitions of all kinds bounded by BUDGET_SECS (0.8 s; at least MIN_REPS each), in a graph
and session of its own with the run's thread counts (TensorFlow's intra-op pool is created
once per process, by the first session: the probe must not size it differently from the
run's) and Grappler's rewrites but its dependency optimizer (`probe_config`). An op larger
than DEFAULT_SHAPES' (a 3x3 convolution 4x28x28x64 -> 64, a 32x1024 by 1024x1024 matmul) is
timed at that size (`capped`: its batch, then its image or inner dimension, cut), so that the
slow kernels below never make the probe longer than it was.

Why the run's own shapes: a factor depends on the op's size. On an Intel Xeon with AMX_BF16
and AVX512_FP16 (TensorFlow 2.21, 2 threads; results/2026-12-06-cpu-tf2.21-kernel-factors-by-
shape.md, `python -m bench.bench_kernel_factors --runs=... --matmuls=...`) TensorFlow's fused
float16 MatMul (with its bias) took 1.3x float32's time at resnet20's 2x64x10 (batch 2), 5.5x
at 32x64x10, 20x at 128x64x10, 38x at lenet's 2x3136x512, 280x at 32x1024x1024 and 670x at
resnet50's 64x2048x1000 (batch 64): its kernel does not get faster with the size, float32's
does. The convolution gradients likewise: 29x at resnet20's batch-2 shapes, 52x at lenet's,
125x and 143x at the largest the probe times. The one fixed probe of before (the default
shapes) made a resnet20 run at batch 2 warn that float16 matmuls ran 284x slower, where its
one matmul costs microseconds. bfloat16's factors: 0.2-0.7x float32's time at the default
shapes (results/2026-12-06-cpu-tf2.21-kernel-factors.md).

A single probe on a loaded machine is noisy (conv gradients 0.17x-1.44x across runs of one
command), and it decides the graph; so its factors are measured once per host and kept in the
host's calibration record (hardware/calibration.py), one entry per '<cpu model>|tf
<version>|kernel factors|probe 2|<dtype>|<intra> intra, <inter> inter threads' with its spread
and the host's load while it ran: a probe taken while other processes used more than a quarter
of the cores is not kept (the run then uses the last quiet one, or none: the CPU flags decide,
`fallback_gradient_kinds`, and float16 counts as not native: graph/precision.py).
`refresh=True` (--refresh_peak, --calibrate) measures again, once per process. The graph
choices' factors (`choice_factors`) are kept in the same record. The key names the shapes
timed: a run of other shapes (another model or batch) probes once more (PROBE_VERSION 3:
probes of one fixed shape are not read). Which shapes: hardware/probe_shapes.py.
"""

from __future__ import annotations

import contextlib
import functools
import statistics
import time

import tensorflow as tf

from . import calibration, machine
from .probe_shapes import (  # noqa: F401  (the probe's shapes, re-exported)
    DEFAULT_SHAPES,
    MIN_ROWS,
    NATIVE_BOUND,
    ProbeShapes,
    capped,
    macs,
    run_shapes,
    shape_text,
)

tf1 = tf.compat.v1

#: Gradient kernels this much slower than float32's run in float32 instead (two casts per op
#: cost far less: a cast of a 16x56x56x256 tensor took 2 ms, a convolution gradient 30-60 ms).
GRADIENT_SLOWER_FACTOR = 2.0
#: Forward kernels this much slower than float32's make the run warn up front.
FAR_SLOWER_FACTOR = 2.0
#: A factor of an op smaller than this many multiply-adds decides nothing (no warning, its
#: gradients in the dtype): its time is the call's own cost, tens of microseconds, and its
#: factor that cost's noise (resnet20's 2x64x10 matmul at batch 2: forward 1.0-2.4x, gradients
#: 0.7-2.5x in six probes, results/2026-12-06-cpu-tf2.21-kernel-factors-by-shape.md); at
#: 100,000 even the slow fused float16 matmul kernel takes only about a millisecond.
MIN_MACS = 100_000


def _decides(kind: str, shapes) -> bool:
    """Whether a factor of `kind` at `shapes` (a ProbeShapes; None: the default, large)
    decides anything: the op has at least MIN_MACS multiply-adds."""
    if shapes is not None and kind in shapes.absent:
        return False  # the model has no such op (the trivial model's convolutions)
    return shapes is None or macs(kind, getattr(shapes, kind)) >= MIN_MACS

#: The probe's op kinds: (kind, what the gradient override replaces).
KINDS = ('conv', 'conv_gradients', 'matmul', 'matmul_gradients')

#: The probe's repetitions per kind and dtype (the least counts), at least MIN_REPS within
#: BUDGET_SECS (seconds, all kinds' repetitions together).
REPS = 9
MIN_REPS = 3
BUDGET_SECS = 0.8
#: What the announcement says the probe takes: graph, session, warm-ups and the budget.
MEASURE_SECS = 3.0
KIND = 'reduced-precision kernel factors'


def _kind_ops(dtype, shapes: ProbeShapes):
    """{kind: op} of the probe in `dtype` at `shapes`, inputs random-valued variables cast
    once."""
    def var(shape):
        v = tf1.Variable(tf1.random_normal(shape), name='probe')
        cached = tf1.Variable(tf.zeros(shape, dtype), name='probe_%s' % dtype.name)
        return v, cached
    n, h, wd, c, kh, kw, k, stride = shapes.conv
    conv_input, conv_filter = (n, h, wd, c), (kh, kw, c, k)
    x, xc = var(conv_input)
    w, wc = var(conv_filter)
    m, inner, cols = shapes.matmul
    a, ac = var((m, inner))
    b, bc = var((inner, cols))
    g, gc = var((m, cols))
    cb, cbc = var((k,))
    mb, mbc = var((cols,))
    setup = tf.group(*[c.assign(tf.cast(v, dtype)) for v, c in
                       ((x, xc), (w, wc), (a, ac), (b, bc), (g, gc), (cb, cbc), (mb, mbc))])
    conv = dict(strides=[1, stride, stride, 1], padding='SAME')
    xr, wr, ar, br, gr, cbr, mbr = (c.read_value() for c in (xc, wc, ac, bc, gc, cbc, mbc))
    y = tf.nn.conv2d(xr, wr, **conv)
    dy = tf.stop_gradient(y)
    ops = {  # the forward ops as models build them: bias and ReLU after (fused by Grappler)
        'conv': tf.nn.relu(tf.nn.bias_add(y, cbr)),
        'conv_gradients': tf.group(
            tf.raw_ops.Conv2DBackpropInput(input_sizes=conv_input, filter=wr, out_backprop=dy,
                                           **conv),
            tf.raw_ops.Conv2DBackpropFilter(input=xr, filter_sizes=conv_filter,
                                            out_backprop=dy, **conv)),
        'matmul': tf.nn.relu(tf.nn.bias_add(tf.matmul(ar, br), mbr)),
        'matmul_gradients': tf.group(tf.matmul(gr, br, transpose_b=True),
                                     tf.matmul(ar, gr, transpose_a=True)),
    }
    return setup, ops


def probe_graph(dtype_name: str, shapes: ProbeShapes = DEFAULT_SHAPES):
    """The probe's graph at `shapes`: (graph, init op, setup ops, {(kind, 'float32' or
    dtype_name): target op}), each target running its kind's ops (`_kind_ops`) in that
    dtype."""
    graph = tf.Graph()
    targets = {}
    with graph.as_default():
        setups = []
        for dtype in (tf.float32, tf.as_dtype(dtype_name)):
            with tf.name_scope(dtype.name):
                setup, ops = _kind_ops(dtype, shapes)
            setups.append(setup)
            for kind, op in ops.items():
                targets[kind, dtype.name] = op if isinstance(op, tf.Operation) else (
                    tf.reduce_sum(tf.cast(op[..., :1], tf.float32)).op)
        init = tf1.global_variables_initializer()
    return graph, init, setups, targets


def probe_config(intra: int, inter: int):
    """The probe session's ConfigProto: the run's thread counts and Grappler's rewrites but its
    dependency optimizer. That one turns a group of side-effect-free ops into NoOps: the
    gradient targets (groups of two kernels whose outputs nothing reads) ran nothing, and
    float16 convolution gradients measured 1.05x float32's where they take 160-250x. The other
    rewrites stay: the remapper fuses the forward targets' bias and ReLU into the kernels a
    run's graph has (_FusedConv2D, _FusedMatMul: in float16 the fused MatMul took 96% of a
    lenet step here, the plain one 1.1x float32's time)."""
    config = tf1.ConfigProto(intra_op_parallelism_threads=intra,
                             inter_op_parallelism_threads=inter)
    config.graph_options.rewrite_options.dependency_optimization = (
        config.graph_options.rewrite_options.OFF)
    return config


def _min_secs(fns, reps: int = REPS, deadline: float | None = None,
              times: list | None = None) -> list[float]:
    """Per function, the least wall seconds of `reps` calls, the functions called in turn (so
    a burst of other work on the machine hits each alike), after one warm-up call each; fewer
    rounds (at least MIN_REPS) once time.perf_counter() passes `deadline`. `times`, when
    given, receives every round's seconds per function ([[fn 0's, fn 1's, ...], ...])."""
    for fn in fns:
        fn()
    best = [float('inf')] * len(fns)
    for done in range(1, reps + 1):
        row = []
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            row.append(time.perf_counter() - start)
            best[i] = min(best[i], row[-1])
        if times is not None:
            times.append(row)
        if deadline is not None and done >= MIN_REPS and time.perf_counter() >= deadline:
            break
    return best


def ratio_spread(times) -> float:
    """The spread of a ratio of two functions' least times (`_min_secs` rounds [[a, b], ...]):
    the ratio of their medians against the ratio of their least, |median ratio / least
    ratio - 1|; 0.0 for fewer than two rounds."""
    if len(times) < 2:
        return 0.0
    least = min(r[1] for r in times) / max(min(r[0] for r in times), 1e-9)
    median = statistics.median(r[1] for r in times) / max(statistics.median(
        r[0] for r in times), 1e-9)
    return abs(median / max(least, 1e-9) - 1)


def measure_with_spread(dtype_name: str, intra: int, inter: int,
                        budget_secs: float = BUDGET_SECS,
                        shapes: ProbeShapes = DEFAULT_SHAPES) -> tuple[dict, float]:
    """`measure`'s factors and their spread (the largest `ratio_spread` of the kinds)."""
    spreads: list = []
    got = measure(dtype_name, intra, inter, budget_secs, spreads=spreads, shapes=shapes)
    return got, max(spreads, default=0.0)


def measure(dtype_name: str, intra: int, inter: int,
            budget_secs: float = BUDGET_SECS, spreads: list | None = None,
            shapes: ProbeShapes = DEFAULT_SHAPES) -> dict[str, float]:
    """Runs the probe (see the module docstring): {kind: seconds in dtype / in float32};
    `spreads`, when given, receives each kind's `ratio_spread`.

    Args:
      dtype_name: 'bfloat16' or 'float16'.
      intra, inter: the session's intra-op and inter-op threads (0: TensorFlow's default).
      budget_secs: seconds the timed repetitions of all kinds may take together.
      shapes: the ProbeShapes to time (a run's: `run_shapes`).
    """
    graph, init, setups, targets = probe_graph(dtype_name, shapes)
    out = {}
    with tf1.Session(graph=graph, config=probe_config(intra, inter)) as sess:
        sess.run(init)
        sess.run(setups)
        end = time.perf_counter() + budget_secs
        for i, kind in enumerate(KINDS):
            now = time.perf_counter()
            times: list = []
            base, reduced = _min_secs([sess.make_callable(targets[kind, name])
                                       for name in ('float32', dtype_name)],
                                      deadline=now + max(0.0, end - now) / (len(KINDS) - i),
                                      times=times)
            out[kind] = reduced / max(base, 1e-9)
            if spreads is not None:
                spreads.append(ratio_spread(times))
    return out


#: This process's probes {(record path, key): Measurement or None}: every caller of a run sees
#: one answer, a busy probe (not kept in the record) included.
_MEMO: dict = {}
#: The (record path, key) pairs this process measured (quiet or busy): a refresh's not again.
_TRIED: set = set()
#: Whether every probe in this process is a refresh now (`refreshing`).
_REFRESHING = [False]


@contextlib.contextmanager
def refreshing(on: bool = True):
    """Within it every `probe` refreshes (--refresh_peak, --calibrate: the graph's build asks
    for the factors before the header does, and must not back off)."""
    before, _REFRESHING[0] = _REFRESHING[0], bool(on) or _REFRESHING[0]
    try:
        yield
    finally:
        _REFRESHING[0] = before


#: The probe's version in the record's key: records of an older probe are not read (probe 1
#: timed its gradient groups under Grappler, which ran none of their kernels: probe_config;
#: probe 2 timed one fixed shape for every run, whose factors were not the run's).
PROBE_VERSION = 3


def cache_key(cpu_model: str, tf_version: str, dtype_name: str, intra: int, inter: int,
              shapes: ProbeShapes = DEFAULT_SHAPES) -> str:
    """'AMD EPYC 7B13|tf 2.21.0|kernel factors|probe 3|bfloat16|2 intra, 1 inter threads|conv
    2x32x32x16 3x3->16, matmul 2x64x10'; '... threads on 1 CPU|...' when the process may run
    on fewer CPUs than its intra-op threads (calibration.on_cpus: the CPU peak's rule)."""
    return calibration.host_key(cpu_model, tf_version, 'kernel factors',
                                'probe %d' % PROBE_VERSION, dtype_name,
                                '%d intra, %d inter threads' % (intra, inter)
                                + calibration.on_cpus(intra), shapes.text())


def _valid(m) -> bool:
    got = getattr(m, 'value', None)
    try:
        return isinstance(got, dict) and all(float(got[kind]) > 0 for kind in KINDS)
    except (KeyError, TypeError, ValueError):
        return False


def probe(dtype: tf.DType, threads: tuple[int, int] = (0, 0), *, refresh: bool = False,
          path: str | None = None, measure_fn=None, cpu_model: str | None = None,
          tf_version: str | None = None, meter=None,
          shapes: ProbeShapes | None = None) -> calibration.Measurement | None:
    """The host's quiet factors for this CPU model, TF version, dtype, thread counts and
    shapes: from the record, else measured now (announced; kept when quiet); one answer per
    process.

    Args:
      dtype: tf.bfloat16 or tf.float16.
      threads: the run's (intra-op, inter-op) thread counts (cpu_tuning.thread_counts).
      refresh: measure again even when recorded (--refresh_peak, --calibrate).
      path: the record (default calibration.record_path()).
      measure_fn: (dtype name, intra, inter) -> ({kind: factor}, spread); default
        `measure_with_spread` at `shapes` (a test seam).
      cpu_model, tf_version: the key's (default: machine.cpu_model(), tf.__version__).
      meter: a metrics.host_load.Meter (tests: a fake /proc).
      shapes: the run's ProbeShapes (`run_shapes`: RunPlan.kernel_shapes); None:
        DEFAULT_SHAPES.

    Returns:
      a calibration.Measurement whose value is {kind: factor} of KINDS, or None (the record
      is off, or the probe shared the host and no quiet one is recorded).
    """
    path = calibration.record_path() if path is None else path
    refresh = refresh or _REFRESHING[0]
    intra, inter = int(threads[0]), int(threads[1])
    shapes = shapes or DEFAULT_SHAPES
    key = cache_key(cpu_model or machine.cpu_model(), tf_version or tf.__version__,
                    dtype.name, intra, inter, shapes)
    # A refresh measures unless this process measured the key already (quiet or busy): an
    # earlier call's None may be a back-off that measured nothing (calibration.BUSY_RETRY_SECS),
    # which --refresh_peak and --calibrate must not inherit.
    if (path, key) in _MEMO and (not refresh or (path, key) in _TRIED):
        return _MEMO[path, key]
    fn = measure_fn or functools.partial(measure_with_spread, shapes=shapes)
    mark = len(calibration.JOURNAL)
    got = calibration.figure(
        KIND, key, lambda: fn(dtype.name, intra, inter),
        what='%s kernels against float32 (%s: convolution %s, matmul %s%s)'
        % (dtype.name, 'this run\'s largest' if shapes.of_run else 'the default shapes',
           shapes.run_text('conv'), shapes.run_text('matmul'),
           '' if shapes.inference else ', and their gradients'),
        secs=MEASURE_SECS, cores=calibration.cores(intra), refresh=refresh, path=path,
        meter=meter)
    got = got if _valid(got) else None
    _MEMO[path, key] = got
    if any(m.key == key for m in calibration.journal_since(mark)) or (
            got is not None and got.measured_now):
        _TRIED.add((path, key))
    busy = [m for m in calibration.journal_since(mark) if m.key == key and not m.quiet]
    if got is None and busy and _valid(busy[-1]):
        _BUSY[dtype.name] = {k: float(v) for k, v in busy[-1].value.items()}
    elif got is not None:
        _BUSY.pop(dtype.name, None)
    return got


#: This process's busy probes that left no quiet factors: {dtype name: {kind: factor}}.
_BUSY: dict = {}
#: A busy probe's factor above this is not the load's doing: the two dtypes' kernels are timed
#: in turn, so other work slows both alike (a busy probe's ratios here: 0.17x-1.44x for one
#: kind whose quiet factor is 0.8x); a float16 matmul measured 491x on a busy host, 400-580x
#: quietly.
BEYOND_LOAD_FACTOR = 10.0


def busy_probe(dtype: tf.DType) -> dict[str, float] | None:
    """{kind: factor} of KINDS of this process's probe of `dtype` on a busy host that left no
    quiet factors (measured, not kept: the header says so instead of 'unmeasured'), or None."""
    got = _BUSY.get(dtype.name)
    return dict(got) if got else None


def busy_far_slower(dtype: tf.DType) -> dict[str, float]:
    """{kind: factor} of KINDS above BEYOND_LOAD_FACTOR in this process's busy probe of
    `dtype` that left no quiet factors (`probe` returned None), largest first; {} when none."""
    got = _BUSY.get(dtype.name, {})
    return dict(sorted(((k, v) for k, v in got.items() if v > BEYOND_LOAD_FACTOR),
                       key=lambda kv: -kv[1]))


def when(speed: calibration.Measurement) -> str:
    """'measured here' (this process) or 'calibrated 2026-12-01 19:30 UTC'."""
    return 'measured here' if speed.measured_now else 'calibrated %s' % speed.date()


def factors(dtype: tf.DType, threads: tuple[int, int] = (0, 0),
            shapes: ProbeShapes | None = None) -> dict[str, float] | None:
    """{kind: this dtype's seconds / float32's} for each of KINDS (`probe`'s), or None when
    the host has no quiet probe (or the record is off).

    Args:
      dtype: tf.bfloat16 or tf.float16.
      threads: the run's (intra-op, inter-op) thread counts (cpu_tuning.thread_counts).
      shapes: the run's ProbeShapes (RunPlan.kernel_shapes); None: DEFAULT_SHAPES.

    Returns:
      e.g. {'conv': 0.9, 'conv_gradients': 0.8, 'matmul': 1.3, 'matmul_gradients': 1.4}: below 1
      the reduced dtype is faster.
    """
    got = probe(dtype, threads, shapes=shapes)
    return {k: float(v) for k, v in got.value.items()} if got is not None else None


def fallback_gradient_kinds(dtype: tf.DType, shapes: ProbeShapes | None = None
                            ) -> tuple[str, ...]:
    """The op kinds whose gradients run in float32 on a CPU with the dtype's flags but no
    quiet probe: both for float16 (TensorFlow 2.21's float16 convolution gradients took
    160-250x float32's time on a Xeon with AVX512_FP16, module docstring), none
    for bfloat16 (oneDNN's bfloat16 kernels cover them wherever the flags are); not a kind
    the run has none of (`shapes.absent`)."""
    kinds = ('conv', 'matmul') if dtype == tf.float16 else ()
    return tuple(k for k in kinds if shapes is None or k not in shapes.absent)


def float32_gradient_kinds(measured: dict[str, float],
                           shapes: ProbeShapes | None = None) -> tuple[str, ...]:
    """The op kinds ('conv', 'matmul') whose gradients should run in float32: their
    reduced-precision gradient kernels measured more than GRADIENT_SLOWER_FACTOR slower (at
    `shapes`, the run's ProbeShapes, an op of at least MIN_MACS multiply-adds)."""
    return tuple(kind for kind in ('conv', 'matmul')
                 if measured[kind + '_gradients'] > GRADIENT_SLOWER_FACTOR
                 and _decides(kind, shapes))


def factor_text(value: float) -> str:
    """'0.59x', '1.20x', '145x'."""
    return '%.2fx' % value if value < 10 else '%.0fx' % value


def describe(dtype: tf.DType, measured: dict[str, float], *, when: str = 'measured here',
             gradients: bool = True, shapes: ProbeShapes | None = None) -> str:
    """The header's text, e.g. 'float16 kernels measured here (time vs float32): conv 1.90x,
    conv gradients 40x, matmul 4.00x, matmul gradients 145x; gradients of conv, matmul in
    float32'. `when`: 'measured here' or 'calibrated <UTC time>' (see `when`);
    `gradients` False (--forward_only, --eval): the forward kinds only; `shapes`: the
    ProbeShapes `measured` was timed at (`float32_gradient_kinds`)."""
    kinds = KINDS if gradients else ('conv', 'matmul')
    text = '%s kernels %s (time vs float32): %s' % (dtype.name, when, ', '.join(
        '%s %s' % (kind.replace('_', ' '), factor_text(measured[kind])) for kind in kinds))
    slow = float32_gradient_kinds(measured, shapes) if gradients else ()
    if slow:
        text += '; gradients of %s in float32' % ', '.join(slow)
    return text


def far_slower_warning(flag: str, dtype: tf.DType, measured: dict[str, float],
                       when: str = 'measured now', faster: str | None = None,
                       shapes: ProbeShapes | None = None) -> str | None:
    """The up-front warning when a forward kernel is FAR_SLOWER_FACTOR slower (at `shapes`, an
    op of at least MIN_MACS multiply-adds), else None; `when` goes in its parentheses
    ('measured now', 'calibrated <UTC time>'), after the shapes timed where they are a run's
    (`shapes`: "this run's largest matmul, timed at 16x2048x1000; "), `faster` after 'the
    faster choice: ' (graph/precision.cpu_faster_choice: from the CPU's flags; default
    'float32 (drop <flag>)')."""
    slow = {kind: measured[kind] for kind in ('conv', 'matmul')
            if measured[kind] > FAR_SLOWER_FACTOR and _decides(kind, shapes)}
    if not slow:
        return None
    faster = faster or 'float32 (drop %s)' % flag
    names = {'conv': 'convolution', 'matmul': 'matmul'}
    where = ''
    if shapes is not None and shapes.of_run:  # the run's own op where it was cut
        whole = {'conv': shapes.run_conv, 'matmul': shapes.run_matmul}
        where = 'this run\'s largest %s, timed at %s; ' % (' and '.join(
            names[k] + (' ' + shape_text(k, whole[k]) if whole[k] else '') for k in slow),
            ' and '.join(shapes.conv_text() if k == 'conv' else shapes.matmul_text()
                         for k in slow))
    return ('%s: %s %s run %s slower than float32 on this CPU (%s%s); the faster choice: %s' % (
        flag, dtype.name, ' and '.join('%ss' % names[k] for k in slow),
        ' and '.join('%.1fx' % v for v in slow.values()), where, when, faster))


# --- Graph choices: each shape's factor (the choice's seconds / today's graph's), cached.

#: min_secs is the probe's timing rule, shared with graph/graph_choices.py's measurement.
min_secs = _min_secs


# The graph choices' factors live in choice_speed.py (the same record; re-exported here).
from .choice_speed import CHOICE_KIND, choice_factors, choice_key  # noqa: E402,F401

"""What a reduced precision's CPU kernels actually do here: each big op timed against float32.

A CPU flag (avx512_fp16, avx512_bf16, amx_bf16) says what the hardware can do, not what
TensorFlow's kernels do with it: on a Xeon with AVX512_FP16, TensorFlow 2.21 ran the trivial
model's float16 training step about 145x slower than float32 (its float16 matmul gradients are
not oneDNN's), and alexnet did not finish its warm-up in 10 minutes. So where a CPU flag claims
native support, the run measures (once per host, dtype and thread counts: cached, see below)
the op kinds a training step is made of, each in the reduced dtype and in float32, and

  * computes the gradients of an op kind in float32 (precision.gradient_scope) where its
    reduced-precision gradient kernels are more than GRADIENT_SLOWER_FACTOR slower;
  * says in the header what the kernels do ('float16 kernels measured here: ...', or
    'measured <UTC time>, cached'; --forward_only and --eval: the forward kernels only);
  * warns up front, naming the measured factor and the faster choice, when the forward kernels
    (which stay in the reduced dtype) are more than FAR_SLOWER_FACTOR slower.

The probe: a 3x3 convolution 4x28x28x64 -> 64 (forward, input gradient, filter gradient) and a
32x1024 by 1024x1024 matmul (forward and its two gradients), float32 and the reduced dtype
called in turn after one warm-up, the least of REPS (9) runs (a busy machine slows runs, never
speeds them up), the repetitions of all kinds bounded by BUDGET_SECS (0.8 s; at least MIN_REPS
each), in a graph and session of its own with the run's thread counts (TensorFlow's intra-op
pool is created once per process, by the first session: the probe must not size it differently
from the run's). Measured on an AMD EPYC with AVX512_BF16: bfloat16 0.9-1.3x float32's time,
float16 2-4x.

A single probe on a loaded machine is noisy (conv gradients 0.17x-1.44x across runs of one
command), and it decides the graph; so its factors are measured once per host and cached like
the CPU peak (hardware/cpu_peak.py), in `$XDG_CACHE_HOME/tf_cnn_benchmarks/kernel_speed.json`,
one entry per '<cpu model>|tf <version>|<dtype>|<intra> intra, <inter> inter threads';
`refresh=True` (--refresh_peak) measures again, once per process.
"""

from __future__ import annotations

import datetime
import os
import time
from typing import NamedTuple

import tensorflow as tf

from . import cpu_peak, machine

tf1 = tf.compat.v1

#: Gradient kernels this much slower than float32's run in float32 instead (two casts per op
#: cost far less: a cast of a 16x56x56x256 tensor took 2 ms, a convolution gradient 30-60 ms).
GRADIENT_SLOWER_FACTOR = 2.0
#: Forward kernels this much slower than float32's make the run warn up front.
FAR_SLOWER_FACTOR = 2.0

#: The probe's op kinds: (kind, what the gradient override replaces).
KINDS = ('conv', 'conv_gradients', 'matmul', 'matmul_gradients')

#: The probe's repetitions per kind and dtype (the least counts), at least MIN_REPS within
#: BUDGET_SECS (seconds, all kinds' repetitions together).
REPS = 9
MIN_REPS = 3
BUDGET_SECS = 0.8
CACHE_NAME = 'kernel_speed.json'

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


def _min_secs(fns, reps: int = REPS, deadline: float | None = None) -> list[float]:
    """Per function, the least wall seconds of `reps` calls, the functions called in turn (so
    a burst of other work on the machine hits each alike), after one warm-up call each; fewer
    rounds (at least MIN_REPS) once time.perf_counter() passes `deadline`."""
    for fn in fns:
        fn()
    best = [float('inf')] * len(fns)
    for done in range(1, reps + 1):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
        if deadline is not None and done >= MIN_REPS and time.perf_counter() >= deadline:
            break
    return best


def measure(dtype_name: str, intra: int, inter: int,
            budget_secs: float = BUDGET_SECS) -> dict[str, float]:
    """Runs the probe (see the module docstring): {kind: seconds in dtype / in float32}.

    Args:
      dtype_name: 'bfloat16' or 'float16'.
      intra, inter: the session's intra-op and inter-op threads (0: TensorFlow's default).
      budget_secs: seconds the timed repetitions of all kinds may take together.
    """
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
    out = {}
    with tf1.Session(graph=graph, config=config) as sess:
        sess.run(init)
        sess.run(setups)
        end = time.perf_counter() + budget_secs
        for i, kind in enumerate(KINDS):
            now = time.perf_counter()
            base, reduced = _min_secs([sess.make_callable(targets[kind, name])
                                       for name in ('float32', dtype_name)],
                                      deadline=now + max(0.0, end - now) / (len(KINDS) - i))
            out[kind] = reduced / max(base, 1e-9)
    return out


class KernelSpeed(NamedTuple):
    """The probe's factors for one dtype and thread counts.

    Attributes:
      factors: {kind: seconds in the dtype / in float32} for each of KINDS.
      key: the cache key they are stored under.
      measured_utc: when they were measured, ISO 8601 ('2026-12-01T19:30:00Z').
      measured_now: True when this process measured them (False: read from the cache).
      measure_secs: seconds the measurement took (0.0 when read from the cache).
    """
    factors: dict
    key: str
    measured_utc: str
    measured_now: bool
    measure_secs: float


#: This process's probes {(cache path, key): KernelSpeed}: every caller of a run sees one.
_MEMO: dict = {}


def cache_key(cpu_model: str, tf_version: str, dtype_name: str, intra: int, inter: int) -> str:
    """'AMD EPYC 7B13|tf 2.21.0|bfloat16|2 intra, 1 inter threads' (0: TensorFlow's default)."""
    return '%s|tf %s|%s|%d intra, %d inter threads' % (cpu_model, tf_version, dtype_name,
                                                        intra, inter)


def _cached_factors(entry) -> dict[str, float] | None:
    """The entry's {kind: factor} when it has every kind, positive; else None."""
    got = entry.get('factors') if isinstance(entry, dict) else None
    if not isinstance(got, dict):
        return None
    try:
        out = {kind: float(got[kind]) for kind in KINDS}
    except (KeyError, TypeError, ValueError):
        return None
    return out if all(v > 0 for v in out.values()) else None


def probe(dtype: tf.DType, threads: tuple[int, int] = (0, 0), *, refresh: bool = False,
          cache_path: str | None = None, measure_fn=None, cpu_model: str | None = None,
          tf_version: str | None = None) -> KernelSpeed:
    """The cached factors for this CPU model, TF version, dtype and thread counts, measured
    when not cached (or with `refresh`, once per process); one answer per process after that.

    Args:
      dtype: tf.bfloat16 or tf.float16.
      threads: the run's (intra-op, inter-op) thread counts (cpu_tuning.thread_counts).
      refresh: measure again even when cached (--refresh_peak).
      cache_path: the cache file (default: cpu_peak.cache_dir()/kernel_speed.json).
      measure_fn: (dtype name, intra, inter) -> {kind: factor}; default `measure` (a test seam).
      cpu_model, tf_version: the key's (default: machine.cpu_model(), tf.__version__).

    Returns:
      KernelSpeed.
    """
    path = cache_path or os.path.join(cpu_peak.cache_dir(), CACHE_NAME)
    intra, inter = int(threads[0]), int(threads[1])
    key = cache_key(cpu_model or machine.cpu_model(), tf_version or tf.__version__,
                    dtype.name, intra, inter)
    known = _MEMO.get((path, key))
    if known is not None and (known.measured_now or not refresh):
        return known
    entry = None if refresh else cpu_peak.load_cache(path).get(key)
    cached = _cached_factors(entry)
    if cached is not None:
        result = KernelSpeed(cached, key, str(entry.get('measured_utc', '?')), False, 0.0)
    else:
        start = time.perf_counter()
        measured = dict((measure_fn or measure)(dtype.name, intra, inter))
        seconds = time.perf_counter() - start
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
        cpu_peak.store(path, key, {'factors': measured, 'measured_utc': stamp,
                                   'measure_secs': round(seconds, 2)})
        result = KernelSpeed(measured, key, stamp, True, seconds)
    _MEMO[path, key] = result
    return result


def when(speed: KernelSpeed) -> str:
    """'measured here' (this process) or 'measured 2026-12-01T19:30:00Z, cached'."""
    return 'measured here' if speed.measured_now else 'measured %s, cached' % speed.measured_utc


def factors(dtype: tf.DType, threads: tuple[int, int] = (0, 0)) -> dict[str, float]:
    """{kind: this dtype's seconds / float32's} for each of KINDS (`probe`'s, cached per host).

    Args:
      dtype: tf.bfloat16 or tf.float16.
      threads: the run's (intra-op, inter-op) thread counts (cpu_tuning.thread_counts).

    Returns:
      e.g. {'conv': 0.9, 'conv_gradients': 0.8, 'matmul': 1.3, 'matmul_gradients': 1.4}: below 1
      the reduced dtype is faster.
    """
    return dict(probe(dtype, threads).factors)


def float32_gradient_kinds(measured: dict[str, float]) -> tuple[str, ...]:
    """The op kinds ('conv', 'matmul') whose gradients should run in float32: their
    reduced-precision gradient kernels measured more than GRADIENT_SLOWER_FACTOR slower."""
    return tuple(kind for kind in ('conv', 'matmul')
                 if measured[kind + '_gradients'] > GRADIENT_SLOWER_FACTOR)


def _factor(value: float) -> str:
    """'0.59x', '1.20x', '145x'."""
    return '%.2fx' % value if value < 10 else '%.0fx' % value


def describe(dtype: tf.DType, measured: dict[str, float], *, when: str = 'measured here',
             gradients: bool = True) -> str:
    """The header's text, e.g. 'float16 kernels measured here (time vs float32): conv 1.90x,
    conv gradients 40x, matmul 4.00x, matmul gradients 145x; gradients of conv, matmul in
    float32'. `when`: 'measured here' or 'measured <UTC time>, cached' (see `when`);
    `gradients` False (--forward_only, --eval): the forward kinds only."""
    kinds = KINDS if gradients else ('conv', 'matmul')
    text = '%s kernels %s (time vs float32): %s' % (dtype.name, when, ', '.join(
        '%s %s' % (kind.replace('_', ' '), _factor(measured[kind])) for kind in kinds))
    slow = float32_gradient_kinds(measured) if gradients else ()
    if slow:
        text += '; gradients of %s in float32' % ', '.join(slow)
    return text


def far_slower_warning(flag: str, dtype: tf.DType, measured: dict[str, float],
                       when: str = 'measured now') -> str | None:
    """The up-front warning when a forward kernel is FAR_SLOWER_FACTOR slower, else None;
    `when` goes in its parentheses ('measured now', 'measured <UTC time>, cached')."""
    slow = {kind: measured[kind] for kind in ('conv', 'matmul')
            if measured[kind] > FAR_SLOWER_FACTOR}
    if not slow:
        return None
    faster = 'float32 (drop %s)' % flag
    if dtype == tf.float16:
        faster += ' or --use_bf16 where the CPU has avx512_bf16/amx_bf16'
    return ('%s: %s %s run %s slower than float32 on this CPU (%s); the faster choice: %s' % (
        flag, dtype.name, ' and '.join('%ss' % ('convolution' if k == 'conv' else k)
                                       for k in slow),
        ' and '.join('%.1fx' % v for v in slow.values()), when, faster))


# --- Graph choices: each shape's factor (the choice's seconds / today's graph's), cached.

CHOICES_CACHE_NAME = 'graph_choices.json'
#: min_secs is the probe's timing rule, shared with graph/graph_choices.py's measurement.
min_secs = _min_secs


def choice_key(cpu_model: str, tf_version: str, intra: int, inter: int, item: str) -> str:
    """'AMD EPYC 7B13|tf 2.21.0|2 intra, 1 inter threads|conv1x1 bfloat16 NHWC 16x56x56x64->256'."""
    return '%s|tf %s|%d intra, %d inter threads|%s' % (cpu_model, tf_version, intra, inter, item)


def choice_factors(items, threads: tuple[int, int], measure_fn, *, refresh: bool = False,
                   cache_path: str | None = None, cpu_model: str | None = None,
                   tf_version: str | None = None) -> tuple[dict, str]:
    """{item: factor} for every item, read from the cache where there, the rest measured at
    once (`measure_fn(missing items, intra, inter) -> {item: factor}`) and stored; with
    `refresh` (--refresh_peak) all measured again, once per process.

    Args:
      items: distinct strings naming what is measured (e.g. 'conv1x1 bfloat16 NHWC 16x56x56x64
        ->256'), the cache key's last part.
      threads: the run's (intra-op, inter-op) thread counts.
      cache_path: default cpu_peak.cache_dir()/graph_choices.json.

    Returns:
      ({item: factor > 0}, when): 'measured here' if any item was measured now, else
      'measured <UTC time of the oldest>, cached'.
    """
    path = cache_path or os.path.join(cpu_peak.cache_dir(), CHOICES_CACHE_NAME)
    intra, inter = int(threads[0]), int(threads[1])
    keys = {item: choice_key(cpu_model or machine.cpu_model(), tf_version or tf.__version__,
                             intra, inter, item) for item in items}
    cache = cpu_peak.load_cache(path)
    out, stamps, missing, now = {}, [], [], False
    for item, key in keys.items():
        known = _MEMO.get((path, key))
        entry = known if known is not None else (None if refresh else cache.get(key))
        try:
            out[item] = float(entry['factor'])
            stamps.append(str(entry.get('measured_utc', '?')))
        except (KeyError, TypeError, ValueError):
            missing.append(item)
        now = now or known is not None
    if not missing:
        return out, 'measured here' if now or not stamps else 'measured %s, cached' % min(stamps)
    measured = measure_fn(missing, intra, inter)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
    for item in missing:
        entry = {'factor': float(measured[item]), 'measured_utc': stamp}
        cpu_peak.store(path, keys[item], entry)
        _MEMO[path, keys[item]] = entry
        out[item] = entry['factor']
    return out, 'measured here'

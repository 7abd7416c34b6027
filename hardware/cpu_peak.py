"""This host's measured CPU peak FLOP/s, per CPU model, TF version, dtype and threads.

A CPU has no data-sheet peak that TensorFlow reaches (clocks, vector units and oneDNN's kernels
decide), so the utilisation of a CPU run is measured against the best rate of standalone dense
kernels here, in a dtype and with the run's intra-op threads:

  * a chain of 8 square matrix products (1024 x 1024, scaled to keep values near 1), and
  * a 3x3 convolution, NHWC [8, 56, 56, 64] -> 64 channels (a ResNet-50 stage-1 layer),

each run once to warm up and then repeated for at most `budget_secs / 2`; the best single run
of the two kernels (FLOPs / seconds, multiply-add = 2 FLOPs) is the peak, its spread the best
rate over the median rate of that kernel's repeats, less 1. The whole measurement takes at
most about `budget_secs` (2 s by default) plus the two warm-up runs (MEASURE_SECS in all).

The figure lives in the host's calibration record (hardware/calibration.py: one entry per
'<cpu model>|tf <version>|cpu peak|<dtype>|<threads> threads', with the host's load while it
was measured); a measurement taken while other processes used more than a quarter of the
cores is not kept. The peak is the median of the last calibration.SAMPLES quiet measurements
(a best rate of a few seconds still moves by several percent between quiet measurements on a
cloud VM; the median of several moves less). `refresh=True` (--refresh_peak, --calibrate)
measures again.
"""

from __future__ import annotations

import statistics
import time

from .. import cnn_util
from . import calibration

MATMUL_SIZE = 1024
MATMUL_CHAIN = 8
CONV_SHAPE = (8, 56, 56, 64)  # NHWC input of the convolution kernel; 64 output channels
BUDGET_SECS = 2.0
#: What `announce` says the measurement takes: the budget, the graph, the warm-up runs.
MEASURE_SECS = 3.0
KIND = 'CPU peak'


def cache_key(cpu_model: str, tf_version: str, dtype: str, threads: int) -> str:
    """'AMD EPYC 7B13|tf 2.21.0|cpu peak|float32|2 threads' (threads 0: TensorFlow's pool);
    '...|2 threads on 1 CPU' when the affinity mask allows fewer CPUs than threads
    (`threads_phrase`; the rule: calibration.on_cpus)."""
    return calibration.host_key(cpu_model, tf_version, 'cpu peak', dtype,
                                '%d threads' % threads + calibration.on_cpus(threads))


def threads_phrase(threads: int) -> str:
    """'2 threads', 'default threads' (0: TensorFlow's pool), or '2 threads on 1 CPU' where
    the process may run on fewer CPUs than its intra-op threads (taskset, numactl, a cpuset:
    calibration.cores): such a peak is the allowed CPUs', kept apart from the host's."""
    if not threads:
        return 'default threads'
    return cnn_util.counted(threads, 'thread') + calibration.on_cpus(threads)


def _kernels(tf, dtype):
    """[(name, fetch, FLOPs of one run)] built in the default graph."""
    tf1 = tf.compat.v1
    n = MATMUL_SIZE
    a = tf.Variable(tf1.random_normal([n, n], dtype=tf.float32), name='peak_a')
    b = tf.Variable(tf1.random_normal([n, n], stddev=n ** -0.5, dtype=tf.float32), name='peak_b')
    x, w = tf.cast(a, dtype), tf.cast(b, dtype)
    for _ in range(MATMUL_CHAIN):
        x = tf.matmul(x, w)
    matmul = tf.reduce_sum(tf.cast(x[:1, :1], tf.float32))
    batch, height, width, channels = CONV_SHAPE
    images = tf.Variable(tf1.random_normal(list(CONV_SHAPE)), name='peak_images')
    kernel = tf.Variable(tf1.random_normal([3, 3, channels, 64], stddev=0.05), name='peak_k')
    conv = tf.nn.conv2d(tf.cast(images, dtype), tf.cast(kernel, dtype), [1, 1, 1, 1], 'SAME')
    conv_out = tf.reduce_sum(tf.cast(conv[:1, :1, :1, :1], tf.float32))
    return [('matmul', matmul, 2 * n ** 3 * MATMUL_CHAIN),
            ('conv3x3', conv_out, 2 * batch * height * width * 64 * 9 * channels)]


def measure(dtype: str, threads: int, budget_secs: float = BUDGET_SECS) -> tuple[dict, float]:
    """Measures the best rate of the standalone kernels (see the module docstring).

    Args:
      dtype: 'float32', 'float16' or 'bfloat16'.
      threads: intra-op threads of the session (0: TensorFlow's default).
      budget_secs: seconds the timed repetitions may take in all.

    Returns:
      ({'flops_per_sec': the best rate, 'kernel': 'matmul' or 'conv3x3'}, spread: the best
      rate / the median rate of that kernel's repeats - 1).
    """
    import tensorflow as tf
    tf1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        kernels = _kernels(tf, tf.as_dtype(dtype))
        init = tf1.global_variables_initializer()
    config = tf1.ConfigProto(intra_op_parallelism_threads=threads,
                             inter_op_parallelism_threads=1, device_count={'GPU': 0})
    rates = {}
    with tf1.Session(graph=graph, config=config) as sess:
        sess.run(init)
        for name, fetch, flops in kernels:
            run = sess.make_callable(fetch)
            run()  # warm-up: oneDNN primitives, the executor
            deadline = time.perf_counter() + budget_secs / len(kernels)
            rates[name] = []
            while True:
                start = time.perf_counter()
                run()
                seconds = time.perf_counter() - start
                if seconds > 0:
                    rates[name].append(flops / seconds)
                if time.perf_counter() >= deadline:
                    break
    name = max(rates, key=lambda n: max(rates[n], default=0.0))
    best = max(rates[name], default=0.0)
    median = statistics.median(rates[name]) if rates[name] else 0.0
    return {'flops_per_sec': best, 'kernel': name}, (best / median - 1 if median else 0.0)


def cpu_peak(dtype: str, threads: int, *, cpu_model: str, tf_version: str,
             refresh: bool = False, measure_missing: bool = True, path: str | None = None,
             measure_fn=None, meter=None, floor: float | None = None
             ) -> calibration.Measurement | None:
    """The host's quiet peak for (cpu_model, tf_version, dtype, threads): from the record,
    else measured now (announced) and kept when quiet (hardware/calibration.py figure).

    Args:
      dtype: 'float32', 'float16' or 'bfloat16'.
      threads: the run's intra-op threads (0: TensorFlow's default).
      cpu_model: the CPU's model name (machine.cpu_model()); tf_version: tf.__version__.
      refresh: measure again even when recorded (--refresh_peak, --calibrate).
      measure_missing: False: only read the record.
      path: the record (default calibration.record_path()).
      measure_fn: (dtype, threads) -> (value dict, spread); default `measure` (a test seam).
      meter: a metrics.host_load.Meter (tests: a fake /proc).
      floor: FLOP/s this host just achieved (a run's model FLOP/s above its recorded peak):
        the recorded samples below it are dropped when the new one is kept, as no peak can
        be below a rate reached (calibration.figure).

    Returns:
      a calibration.Measurement whose value is {'flops_per_sec', 'kernel'}, or None (the
      record is off, or the only measurement shared the host with others).
    """
    fn = measure_fn or measure
    return calibration.figure(
        KIND, cache_key(cpu_model, tf_version, dtype, threads), lambda: fn(dtype, threads),
        what='the CPU peak (%s, %s: a matmul chain and a 3x3 convolution)' % (
            dtype, threads_phrase(threads)),
        secs=MEASURE_SECS, cores=calibration.cores(threads),
        refresh=refresh, measure_missing=measure_missing, path=path, meter=meter,
        median_by=lambda value: float(value['flops_per_sec']), label='%s (%s)' % (KIND, dtype),
        floor=floor)


def flops_per_sec(m: calibration.Measurement | None) -> float | None:
    """The peak of a Measurement `cpu_peak` returned (None for None or a bad value)."""
    try:
        value = float(m.value['flops_per_sec'])
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    return value if value > 0 else None

"""This host's measured CPU peak FLOP/s, cached per CPU model, TF version, dtype and threads.

A CPU has no data-sheet peak that TensorFlow reaches (clocks, vector units and oneDNN's kernels
decide), so the utilisation of a CPU run is measured against the best rate of standalone dense
kernels here, in the run's dtype and with the run's intra-op threads:

  * a chain of 8 square matrix products (1024 x 1024, scaled to keep values near 1), and
  * a 3x3 convolution, NHWC [8, 56, 56, 64] -> 64 channels (a ResNet-50 stage-1 layer),

each run once to warm up and then repeated for at most `budget_secs / 2`; the best single run
of the two kernels (FLOPs / seconds, multiply-add = 2 FLOPs) is the peak. The whole measurement
takes at most about `budget_secs` (2 s by default) plus the two warm-up runs.

The figure is cached as JSON in `$XDG_CACHE_HOME/tf_cnn_benchmarks/cpu_peak.json` (default
`~/.cache/tf_cnn_benchmarks/cpu_peak.json`), one entry per key
'<cpu model>|tf <version>|<dtype>|<threads> threads'; `refresh=True` (--refresh_peak) measures
again. A loaded machine measures a lower peak: refresh it on an idle one.
"""

from __future__ import annotations

import datetime
import json
import os
import tempfile
import time
from typing import NamedTuple

CACHE_NAME = 'cpu_peak.json'
MATMUL_SIZE = 1024
MATMUL_CHAIN = 8
CONV_SHAPE = (8, 56, 56, 64)  # NHWC input of the convolution kernel; 64 output channels


class CpuPeak(NamedTuple):
    """A measured CPU peak.

    Attributes:
      flops_per_sec: the best rate, FLOP/s.
      kernel: 'matmul' or 'conv3x3', the kernel that reached it.
      key: the cache key it is stored under.
      measured_utc: when it was measured, ISO 8601 ('2026-12-01T19:30:00Z').
      measured_now: True when this call measured it (False: read from the cache).
      measure_secs: seconds the measurement took (0.0 when read from the cache).
    """
    flops_per_sec: float
    kernel: str
    key: str
    measured_utc: str
    measured_now: bool
    measure_secs: float


def cache_dir(environ=None) -> str:
    """`$XDG_CACHE_HOME/tf_cnn_benchmarks`, else `~/.cache/tf_cnn_benchmarks`."""
    environ = os.environ if environ is None else environ
    base = environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return os.path.join(base, 'tf_cnn_benchmarks')


def cache_key(cpu_model: str, tf_version: str, dtype: str, threads: int) -> str:
    """'AMD EPYC 7B13|tf 2.21.0|float32|2 threads' (threads 0: TensorFlow's default pool)."""
    return '%s|tf %s|%s|%d threads' % (cpu_model, tf_version, dtype, threads)


def load_cache(path: str) -> dict:
    """The cache file's entries {key: {...}}; {} when missing or unreadable."""
    try:
        with open(path, encoding='utf-8') as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def store(path: str, key: str, entry: dict) -> None:
    """Adds or replaces one entry, writing the file atomically (a rename); OSError is ignored
    (a read-only home loses only the cache)."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        data = load_cache(path)
        data[key] = entry
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix='.cpu_peak_', suffix='.tmp')
        with os.fdopen(fd, 'w', encoding='utf-8') as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass


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


def measure(dtype: str, threads: int, budget_secs: float = 2.0) -> tuple[float, str]:
    """Measures the best rate of the standalone kernels (see the module docstring).

    Args:
      dtype: 'float32', 'float16' or 'bfloat16'.
      threads: intra-op threads of the session (0: TensorFlow's default).
      budget_secs: seconds the timed repetitions may take in all.

    Returns:
      (FLOP/s, name of the kernel that reached it).
    """
    import tensorflow as tf
    tf1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        kernels = _kernels(tf, tf.as_dtype(dtype))
        init = tf1.global_variables_initializer()
    config = tf1.ConfigProto(intra_op_parallelism_threads=threads,
                             inter_op_parallelism_threads=1, device_count={'GPU': 0})
    best, best_name = 0.0, kernels[0][0]
    with tf1.Session(graph=graph, config=config) as sess:
        sess.run(init)
        for name, fetch, flops in kernels:
            run = sess.make_callable(fetch)
            run()  # warm-up: oneDNN primitives, the executor
            deadline = time.perf_counter() + budget_secs / len(kernels)
            while True:
                start = time.perf_counter()
                run()
                seconds = time.perf_counter() - start
                if seconds > 0 and flops / seconds > best:
                    best, best_name = flops / seconds, name
                if time.perf_counter() >= deadline:
                    break
    return best, best_name


def cpu_peak(dtype: str, threads: int, *, cpu_model: str, tf_version: str,
             refresh: bool = False, cache_path: str | None = None, measure_fn=None) -> CpuPeak:
    """The cached peak for (cpu_model, tf_version, dtype, threads), measured when not cached.

    Args:
      dtype: 'float32', 'float16' or 'bfloat16'.
      threads: the run's intra-op threads (0: TensorFlow's default).
      cpu_model: the CPU's model name (machine.cpu_model()).
      tf_version: tf.__version__.
      refresh: measure again even when cached (--refresh_peak).
      cache_path: the cache file (default: cache_dir()/cpu_peak.json).
      measure_fn: (dtype, threads) -> (FLOP/s, kernel); default `measure` (a test seam).

    Returns:
      CpuPeak.
    """
    path = cache_path or os.path.join(cache_dir(), CACHE_NAME)
    key = cache_key(cpu_model, tf_version, dtype, threads)
    entry = None if refresh else load_cache(path).get(key)
    if isinstance(entry, dict) and entry.get('flops_per_sec', 0) > 0:
        return CpuPeak(float(entry['flops_per_sec']), str(entry.get('kernel', '?')), key,
                       str(entry.get('measured_utc', '?')), False, 0.0)
    start = time.perf_counter()
    rate, kernel = (measure_fn or measure)(dtype, threads)
    seconds = time.perf_counter() - start
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
    store(path, key, {'flops_per_sec': rate, 'kernel': kernel, 'measured_utc': stamp,
                      'measure_secs': round(seconds, 2)})
    return CpuPeak(rate, kernel, key, stamp, True, seconds)

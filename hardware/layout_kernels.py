"""Whether this CPU runs a dtype's NCHW kernels: a reduced precision in NCHW on the CPU.

TensorFlow's own CPU convolution-gradient and pooling kernels are NHWC only; NCHW runs on the
CPU through oneDNN's kernels (TF_ENABLE_ONEDNN_OPTS=1, runtime/runtime_env.py). oneDNN takes
bfloat16 and float16 only on some CPUs: on an AMD EPYC with AVX2 and no AVX-512, a bfloat16
NCHW step fails after the graph is built with "Default AvgPoolingOp only supports NHWC on device
type CPU" (TensorFlow's graph rewrite left the op to the NHWC-only kernel), while float32 NCHW
runs. The CPU flags do not say it reliably (TensorFlow decides inside its oneDNN layout pass), so
`nchw_runs` runs the ops once: a tiny step of a 3x3 convolution, fused batch norm, average and
max pooling and their gradients (about 0.1 s), remembered for the process. `check_cpu_layout`
is the usage check of an NCHW run on the CPU once TensorFlow has loaded
(preflight/usage.check_with_tensorflow).
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf

from ..params import ParamsError

tf1 = tf.compat.v1

_MEMO: dict[str, bool] = {}


def check_cpu_layout(p, device: str) -> None:
    """Refuses --data_format=NCHW on the CPU where it cannot run: without oneDNN
    (TF_ENABLE_ONEDNN_OPTS=0), or with --use_bf16 or --use_fp16 where `nchw_runs` says this
    CPU runs no NCHW kernels in that dtype. Any other run passes (NHWC, or GPUs).

    Args:
      p: the checked Params; device: the run's device ('cpu' or 'gpu', params.default_device).

    Raises:
      ParamsError: one line naming the problem and --data_format=NHWC as the fix.
    """
    if device != 'cpu' or p.data_format != 'NCHW':
        return
    if os.environ.get('TF_ENABLE_ONEDNN_OPTS') == '0':
        raise ParamsError(
            '--data_format=NCHW on the CPU needs oneDNN, which TF_ENABLE_ONEDNN_OPTS=0 turns '
            'off; unset it or use --data_format=NHWC.')
    if not (p.use_bf16 or p.use_fp16):
        return
    flag, dtype = ('--use_fp16', 'float16') if p.use_fp16 else ('--use_bf16', 'bfloat16')
    if not nchw_runs(dtype):
        raise ParamsError(
            '--data_format=NCHW with %s: this CPU runs no %s NCHW kernels (tried: oneDNN '
            'does not take %s here, and TensorFlow\'s own CPU kernels are NHWC only); use '
            '--data_format=NHWC' % (flag, dtype, dtype))


def nchw_runs(dtype) -> bool:
    """Whether a training step's NCHW ops run on this CPU in `dtype`.

    Args:
      dtype: a tf.DType (float32, bfloat16, float16) or its name.

    Returns:
      True where a [1, 4, 6, 6] NCHW convolution, fused batch norm, pooling and their gradients
      ran on /cpu:0 in `dtype`; False where TensorFlow raised InvalidArgumentError or
      UnimplementedError (no kernel for that layout and dtype).
    """
    dtype = tf.as_dtype(dtype)
    if dtype.name not in _MEMO:
        _MEMO[dtype.name] = _run_probe(dtype)
    return _MEMO[dtype.name]


def _run_probe(dtype) -> bool:
    graph = tf.Graph()
    with graph.as_default(), tf1.device('/cpu:0'):
        # Fed, so that Grappler's constant folding cannot compute the step before it runs.
        x = tf1.placeholder(dtype, [1, 4, 6, 6])
        kernel = tf1.placeholder(dtype, [3, 3, 4, 4])
        y = tf.nn.conv2d(x, kernel, 1, 'SAME', data_format='NCHW')
        y = tf1.nn.fused_batch_norm(y, tf.ones([4]), tf.zeros([4]), data_format='NCHW',
                                    is_training=True)[0]
        y = tf.nn.avg_pool2d(y, 2, 2, 'VALID', data_format='NCHW')
        y = tf.nn.max_pool2d(y, 2, 1, 'VALID', data_format='NCHW')
        grads = tf.gradients(tf.reduce_sum(tf.cast(y, tf.float32)), [x, kernel])
    with tf1.Session(graph=graph) as sess:
        try:
            sess.run(grads, {x: np.ones([1, 4, 6, 6]), kernel: np.ones([3, 3, 4, 4])})
        except (tf.errors.InvalidArgumentError, tf.errors.UnimplementedError):
            return False
    return True

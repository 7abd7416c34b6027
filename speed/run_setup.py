"""The speed set-up of a run, before its first session: precision, XLA and NUMA checks, and
the header's texts for them."""

from __future__ import annotations

import tensorflow as tf

from .. import cnn_util
from . import cpu_tuning, gpu_specs, kernel_speed, precision, xla_jit


def prepare(p, dtype) -> dict:
    """Precision, XLA and NUMA set-up of a run (before its first session); the header's texts.

    Warns (one line each) when the device has no native `dtype` arithmetic or its kernels
    measured far slower than float32 (speed/kernel_speed.py), when --xla cannot
    auto-cluster on the CPU in this process, when NUMA affinity does not apply, or when the
    CPU runs NCHW (slower than NHWC).

    Args:
      p: the run's resolved Params.
      dtype: the compute dtype (tf.float32, tf.float16 or tf.bfloat16).

    Returns:
      {'precision_lines': the header's 'Precision:' line(s), 'xla': the 'XLA:' text}.
    """
    if p.device == 'cpu' and p.data_format == 'NCHW':
        cnn_util.warn('--data_format=NCHW on the CPU: oneDNN converts the layout around its '
                      'ops, and training ran 30-45% slower than NHWC on the development host; '
                      'NHWC is the CPU default (drop --data_format)')
    lines = ['Precision:   %s' % precision.describe(p, dtype, precision.compute_dtypes(p)[1])]
    if dtype != tf.float32:
        flag = '--use_%s' % ('bf16' if dtype == tf.bfloat16 else 'fp16')
        measured, when = None, 'measured here'
        if p.device == 'cpu':
            speed = kernel_speed.probe(dtype, cpu_tuning.thread_counts(p),
                                       refresh=bool(p.refresh_peak))
            measured, when = speed.factors, kernel_speed.when(speed)
        capabilities, planned = None, ''
        if p.device == 'gpu' and p.gpu_model and not precision.gpu_compute_capabilities():
            spec = gpu_specs.lookup(p.gpu_model)  # a dry run planning a GPU that is not here
            capabilities = [tuple(int(x) for x in spec.compute_capability.split('.'))]
            planned = ' (--gpu_model=%s)' % spec.name
        native, support = precision.native_support(
            dtype, p.device, measured=measured, capabilities=capabilities, when=when,
            gradients=not (p.forward_only or p.eval))
        support += planned
        lines.append('             %s' % support)
        slow = measured and kernel_speed.far_slower_warning(
            flag, dtype, measured, 'measured now' if when == 'measured here' else when)
        if slow:
            cnn_util.warn(slow)
        elif not native:
            cnn_util.warn('%s: %s; expect it slower than float32' % (flag, support))
    cpu_tuning.check_numa(p)
    return {'precision_lines': lines, 'xla': xla_jit.prepare(p)}

"""Session options of a run, from its speed settings: devices, thread pools, NUMA, XLA.

`make_session_config` is the one place a run's `tf.compat.v1.ConfigProto` is made (training,
evaluation, cluster servers); `num_visible_gpus` asks TensorFlow how many GPUs this host has.
"""

from __future__ import annotations

import tensorflow as tf

from . import cpu_tuning, gpu_settings, runtime_env, xla_jit

tf1 = tf.compat.v1


def num_visible_gpus() -> int:
    """Number of GPUs TensorFlow can use on this host (the first call probes the CUDA driver
    with its log lines kept off stderr: runtime_env.quiet_stderr)."""
    with runtime_env.quiet_stderr():
        return len(tf.config.list_physical_devices('GPU'))


def make_session_config(p, num_devices: int) -> tf1.ConfigProto:
    """Session options for a run of `num_devices` towers.

    Logical CPU devices (`--device=cpu --num_gpus=N` gives /cpu:0 ... /cpu:N-1), thread pools and
    NUMA (runtime/cpu_tuning.py), XLA (runtime/xla_jit.py), the GPU and graph-rewriter options
    (runtime/gpu_settings.py: GPU memory growth by default), and soft placement on GPU hosts only
    (on the CPU every op must be where the graph says).

    Raises:
      params.ParamsError: --rewriter_config does not parse.
    """
    config = tf1.ConfigProto(allow_soft_placement=p.device == 'gpu')
    if p.device == 'cpu':
        config.device_count['CPU'] = max(1, num_devices)
    cpu_tuning.configure_session(config, p)
    xla_jit.configure_session(config, p, num_devices)
    gpu_settings.configure_session(config, p)
    return config

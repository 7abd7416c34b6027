"""Session options of a run, from its speed settings: devices, thread pools, NUMA, XLA.

`make_session_config` is the one place a run's `tf.compat.v1.ConfigProto` is made (training,
evaluation, cluster servers); `settle` resolves a run plan's run-time values once, before the
first session (XLA's flags, the NUMA check, the session options); `num_visible_gpus` asks
TensorFlow how many GPUs this host has.
"""

from __future__ import annotations

import dataclasses

import tensorflow as tf

from .. import cnn_util
from . import cpu_tuning, gpu_settings, runtime_env, xla_jit

tf1 = tf.compat.v1


def num_visible_gpus() -> int:
    """Number of GPUs TensorFlow can use on this host (the first call probes the CUDA driver
    with its log lines kept off stderr: runtime_env.quiet_stderr)."""
    with runtime_env.quiet_stderr():
        return len(tf.config.list_physical_devices('GPU'))


def make_session_config(p, num_devices: int, threads=None) -> tf1.ConfigProto:
    """Session options for a run of `num_devices` towers, with `threads` = (intra-op,
    inter-op) pool sizes (the run plan's; None: cpu_tuning.thread_counts(p), for callers
    without a plan).

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
    cpu_tuning.configure_session(config, p,
                                 cpu_tuning.thread_counts(p) if threads is None else threads)
    xla_jit.configure_session(config, p, num_devices)
    gpu_settings.configure_session(config, p)
    return config


def settle(plan):
    """The run plan with its run-time values resolved, once, before the run's first session.

    Warns (one line) about NCHW on the CPU and about --use_numa_affinity on a host with one
    NUMA node; sets XLA's flags (xla_jit.prepare); makes the ConfigProto of the run's sessions
    (`make_session_config` with the plan's towers and thread counts) and, for a cluster task,
    of its server (its own --num_gpus devices).

    Args:
      plan: the run_plan.RunPlan of run_plan.make_plan.

    Returns:
      A new RunPlan with `xla`, `session_config` and `server_config` set.

    Raises:
      params.ParamsError: --rewriter_config does not parse.
    """
    p = plan.params
    if p.device == 'cpu' and p.data_format == 'NCHW':
        # The figure is resnet50's, the one model measured both ways: named as its own, not
        # passed off as this run's model's.
        cnn_util.warn('--data_format=NCHW on the CPU: oneDNN converts the layout around its '
                      'ops, which slows training (resnet50\'s figure, the one model measured: 5.2 '
                      'against 7.45 images/sec in NHWC at batch 16, 30% slower, '
                      'docs/performance-notes.md); '
                      'NHWC is the CPU default (drop --data_format)')
    cpu_tuning.check_numa(p)
    xla = xla_jit.prepare(p)
    config = make_session_config(p, len(plan.devices), plan.threads)
    server = make_session_config(p, p.num_gpus, plan.threads) if plan.cluster_role else None
    return dataclasses.replace(plan, xla=xla, session_config=config, server_config=server)

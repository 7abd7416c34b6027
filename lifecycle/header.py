"""The header block a run prints before it starts (README "Output"), and the set-up that gives
its texts: the run-time set-up before the first session (`runtime_notes`: XLA, NUMA) and the
precision lines (`precision_lines`: the reduced-precision kernel probe):

    TensorFlow:  2.21.0
    Model:       resnet50
    ...
    Variables:   parameter_server
    ==========
"""

from __future__ import annotations

import tensorflow as tf

from .. import cnn_util
from ..graph import fused_decay, graph_choices, precision
from ..hardware import gpu_specs, kernel_speed
from ..runtime import cpu_tuning, xla_jit


def header_lines(plan, dataset, precision: list[str], xla: str) -> list[str]:
    """The header block, one string per line.

    Args:
      plan: the run's run_plan.RunPlan.
      dataset: the run's input_data.dataset_info.Dataset.
      precision: `precision_lines`' lines.
      xla: `runtime_notes`' text.
    """
    p = plan.params
    device_note = ''
    if p.device == 'cpu' and not plan.visible_gpus:
        device_note = '  (no GPU visible: running on the CPU)'
    return [
        'TensorFlow:  %s' % tf.__version__,
        'Model:       %s' % p.model,
        'Dataset:     %s' % dataset.describe(plan.subset),
        'Classes:     %s' % dataset.describe_classes(),
        'Mode:        %s' % plan.mode,
        *batch_lines(plan),
        'Devices:     %s%s' % (list(plan.devices), device_note),
        'Data format: %s' % p.data_format,
        *precision,
        'XLA:         %s' % xla,
        'Threads:     %s' % cpu_tuning.describe(p),
        *(['Optimizer:   %s%s' % (p.optimizer, ', weight decay %g inside the updates (fused)'
                                 % p.weight_decay if fused_decay.applies(p, plan.devices)
                                 else '')]
          if plan.training else []),  # forward-only and eval apply no updates
        'Variables:   %s' % p.variable_update,
        *(['Cluster:     %s' % plan.cluster_source] if plan.cluster_source else []),
        '==========',
    ]


def batch_lines(plan) -> list[str]:
    """The header's batch, image size, batches and epochs lines: an evaluation's (its EvalPlan)
    with --eval, else the timed steps', then an 'Eval:' line when the training evaluates."""
    image = 'Image size:  %dx%d' % (plan.image_size, plan.image_size)
    ev = plan.eval
    if plan.mode == 'evaluation':
        return ['Batch size:  %d global (eval)' % ev.global_batch_size,
                '             %d per device' % ev.per_device_batch_size, image,
                'Num batches: %d per evaluation' % ev.num_batches,
                'Num epochs:  %.2f per evaluation' % ev.epochs,
                'Eval:        %s' % ev.describe()]
    lines = ['Batch size:  %d global' % plan.global_batch_size,
             '             %d per device' % plan.per_device_batch_size, image,
             'Num batches: %d' % plan.num_batches,
             'Num epochs:  %.2f' % plan.epochs]
    if ev is not None:
        lines.append('Eval:        %s, per evaluation during training' % ev.describe())
    return lines


def runtime_notes(p) -> str:
    """The run-time set-up before a run's first session: XLA's flags (runtime/xla_jit.py), the
    NUMA check, the NCHW-on-CPU warning; returns the header's 'XLA:' text. Measures nothing.

    Args:
      p: the run's resolved Params.
    """
    if p.device == 'cpu' and p.data_format == 'NCHW':
        cnn_util.warn('--data_format=NCHW on the CPU: oneDNN converts the layout around its '
                      'ops, and training ran 30-45% slower than NHWC on the development host; '
                      'NHWC is the CPU default (drop --data_format)')
    cpu_tuning.check_numa(p)
    return xla_jit.prepare(p)


def precision_lines(p, dtype, choices=None) -> list[str]:
    """The header's 'Precision:' line(s). On a CPU with reduced precision this measures its
    kernels against float32 (hardware/kernel_speed.py, cached per CPU model, TF version,
    dtype and threads); with `choices` (graph/graph_choices.py Choices, measured or forced)
    a line names the graph choices made and their measured factors.

    Warns (one line) when the device has no native `dtype` arithmetic or its kernels measured
    far slower than float32.

    Args:
      p: the run's resolved Params.
      dtype: the compute dtype (tf.float32, tf.float16 or tf.bfloat16).
      choices: the run's graph choices, or None.
    """
    lines = ['Precision:   %s' % precision.describe(p, dtype, precision.compute_dtypes(p)[1])]
    chosen = ['             %s' % line for line in
              (graph_choices.describe(choices) if choices is not None else [])]
    if dtype == tf.float32:
        return lines + chosen
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
    lines += chosen
    slow = measured and kernel_speed.far_slower_warning(
        flag, dtype, measured, 'measured now' if when == 'measured here' else when)
    if slow:
        cnn_util.warn(slow)
    elif not native:
        cnn_util.warn('%s: %s; expect it slower than float32' % (flag, support))
    return lines

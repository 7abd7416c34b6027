"""The header block a run prints before it starts (README "Output"):

    TensorFlow:  2.21.0
    Model:       resnet50
    ...
    Variables:   parameter_server
    ==========
"""

from __future__ import annotations

import tensorflow as tf

from ..speed import cpu_tuning, fused_decay


def header_lines(plan, dataset, speed_notes: dict) -> list[str]:
    """The header block, one string per line.

    Args:
      plan: the run's run_plan.RunPlan.
      dataset: the run's input_data.dataset_info.Dataset.
      speed_notes: speed.run_setup.prepare's texts (precision lines, XLA).
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
        *speed_notes['precision_lines'],
        'XLA:         %s' % speed_notes['xla'],
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

"""The GPU a plan of GPUs that are not here plans (--dry_run, --plan_scaling on a host where
TensorFlow sees no GPU), from the GPU table (gpu_specs.py) and the host presets (links.py).

    planned_gpu(p, visible_gpus)   the GpuSpec planned, or None

The usage check decides a run's device with it once (preflight/usage.py: the GPUs planned
count as one for params.default_device), and the warnings of the flags a plan does not read
name its GPU (preflight/ineffective_flags.py); preflight/planned_step.plan_device follows the
same rule for the dry run's build.
"""

from __future__ import annotations

from . import gpu_specs, links


def planned_gpu(p, visible_gpus: int):
    """The GPU (gpu_specs.GpuSpec) a plan of GPUs that are not here plans: where no GPU is
    visible and --device is not cpu, --dry_run or --plan_scaling with --gpu_model, or with a
    host preset's GPU (--gpu_interconnect=dgx1_v100: its V100s); None for any other run.

    Args:
      p: the checked Params (params.Params); visible_gpus: GPUs TensorFlow sees.

    Raises:
      gpu_specs.UnknownGpuError: an unknown --gpu_model (usage.check_gpu_model refuses it
        first).
    """
    if visible_gpus or p.device == 'cpu' or not (p.dry_run or p.plan_scaling):
        return None
    if p.gpu_model:
        return gpu_specs.lookup(p.gpu_model)
    preset = links.preset_of(p.gpu_interconnect)
    return gpu_specs.lookup(preset.gpu) if preset is not None else None

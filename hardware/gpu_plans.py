"""The GPU a plan of GPUs that are not here plans (--dry_run, --plan_scaling on a host where
TensorFlow sees no GPU), from the GPU table (gpu_specs.py) and the host presets (links.py).

    named_gpu(p)                   the GpuSpec the flags name (--gpu_model, a preset host's)
    planned_gpu(p, visible_gpus)   the GpuSpec planned, or None

The usage check decides both once, after TensorFlow loaded (preflight/usage.py
check_with_tensorflow: the GPUs planned count as one for params.default_device, and the
warnings of the flags a plan does not read name its GPU: preflight/ineffective_flags.py), and
hands the named GPU to the dry run (preflight/planned_step.plan_named_device plans with it).
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
    return named_gpu(p) if plans_gpus(p, visible_gpus) else None


def plans_gpus(p, visible_gpus: int) -> bool:
    """True for a plan of GPUs that are not here: --dry_run or --plan_scaling where no GPU is
    visible and --device is not cpu (its GPU is `named_gpu`'s, or none: the CPU is planned).

    Args:
      p: the checked Params; visible_gpus: GPUs TensorFlow sees.
    """
    return not visible_gpus and p.device != 'cpu' and bool(p.dry_run or p.plan_scaling)


def named_gpu(p):
    """The GPU (gpu_specs.GpuSpec) the flags name: --gpu_model, else the GPU of a host preset
    (--gpu_interconnect=dgx1_v100: its V100s) where --device is not cpu; None without either.
    A plan of GPUs that are not here plans it (`planned_gpu`); the dry run also names a
    visible GPU the table lacks by it (preflight/planned_step.plan_named_device).

    Args:
      p: the checked Params (params.Params).

    Raises:
      gpu_specs.UnknownGpuError: an unknown --gpu_model (usage.check_gpu_model refuses it
        first).
    """
    if p.gpu_model:
        return gpu_specs.lookup(p.gpu_model)
    preset = links.preset_of(p.gpu_interconnect) if p.device != 'cpu' else None
    return gpu_specs.lookup(preset.gpu) if preset is not None else None

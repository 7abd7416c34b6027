"""Whether this TensorFlow's CUDA build can run on the GPU a run is planned for.

A TensorFlow wheel carries GPU code for the compute capabilities it was built for, listed by
`tf.sysconfig.get_build_info()['cuda_compute_capabilities']` (TensorFlow 2.21's wheel: sm_60,
sm_70, sm_80, sm_89, compute_90). A GPU whose compute capability is below the lowest listed
has no code in it (the CUDA programming guide, "binary compatibility": SASS runs on the
capability it was built for and later minor versions of the same major; PTX is compiled for
later ones only): TensorFlow leaves such a GPU out of its devices. A plan for it (--dry_run,
--plan_scaling with --gpu_model) still prints, since the published runs of those GPUs used
older TensorFlows, with one `warning:` line naming the GPU, its capability, the build's lowest
and what to do.

A build that lists no capabilities (a CPU-only build, a ROCm build, a build without the key)
gives no warning: there is nothing to compare with, and a CPU-only build runs no GPU at all.
"""

from __future__ import annotations

import re


def build_info() -> dict:
    """This TensorFlow's `tf.sysconfig.get_build_info()` ({} when it has none)."""
    import tensorflow as tf
    try:
        return dict(tf.sysconfig.get_build_info())
    except (AttributeError, RuntimeError):
        return {}


def capability_of(entry: str) -> tuple[int, int] | None:
    """One `cuda_compute_capabilities` entry as (major, minor): 'sm_60' -> (6, 0),
    'compute_90' -> (9, 0), 'sm_100a' -> (10, 0), '3.5' (older builds' form) -> (3, 5);
    None for an entry without two digits."""
    digits = re.sub(r'\D', '', str(entry))
    if len(digits) < 2:
        return None
    return int(digits[:-1]), int(digits[-1])


def lowest_capability(info: dict) -> tuple[int, int] | None:
    """The lowest compute capability the build info `info` lists, or None when it lists none
    (a CPU-only or ROCm build, or no 'cuda_compute_capabilities' key)."""
    entries = info.get('cuda_compute_capabilities') or []
    if isinstance(entries, str):
        entries = entries.split(',')
    found = [cap for cap in (capability_of(e) for e in entries) if cap is not None]
    return min(found) if found else None


def unsupported_warning(gpu, info: dict | None = None) -> str | None:
    """The warning (without 'warning: ') when this TensorFlow's build cannot run on `gpu` (a
    hardware/gpu_specs.GpuSpec), else None.

    Args:
      gpu: the GPU planned for.
      info: the build info (default: this TensorFlow's `build_info()`; tests inject one).
    """
    info = build_info() if info is None else info
    lowest = lowest_capability(info)
    if lowest is None or gpu.compute_capability_tuple >= lowest:
        return None
    return ('the %s (compute capability %s) cannot run this TensorFlow: its CUDA %s build\'s '
            'lowest compute capability is %d.%d, and TensorFlow leaves the GPU out. The plan '
            'still prints; to run it, use an older TensorFlow built for %s (as the published %s '
            'runs did) or plan another GPU (--gpu_model)'
            % (gpu.name, gpu.compute_capability, info.get('cuda_version') or '?', lowest[0],
               lowest[1], gpu.compute_capability, gpu.name))

"""The original's GPU-only flags (params/original_flags.GPU_ONLY_FLAGS) where they change
nothing: on the CPU (`gpu_only_on_cpu`), and in a --dry_run or --plan_scaling plan of a GPU
whose speed model and memory estimate do not read them (`planned_gpu_flags`); one message per
flag, as preflight/ineffective_flags.py prints them."""

from __future__ import annotations

from ..params import original_flags

#: The GPU-only flags that size GPU threads, whose CPU counterparts the message names (a user
#: found the thread advice under --tf32=false, a precision switch).
GPU_THREAD_FLAGS = ('gpu_thread_mode', 'per_gpu_thread_count')
THREAD_ADVICE = '; use --num_intra_threads/--num_inter_threads for the CPU'
#: Why a GPU-only flag does nothing on the CPU, where the general reason is not the whole one:
#: TF_SYNC_ON_FINISH makes each step end with Device::Sync, which a CPU device answers at once
#: (TensorFlow's ThreadPoolDevice::Sync, common_runtime/threadpool_device.h).
CPU_REASONS = {'sync_on_finish': "it waits for the GPUs' queued work at each step's end; a CPU "
                                 "step's work is done when its ops return"}

def gpu_only_on_cpu(p, where: str = 'with --device=cpu') -> list[str]:
    """One message per GPU-only flag (original_flags.GPU_ONLY_FLAGS) set to another value than
    its default, for a run on the CPU.

    Args:
      p: the Params as given.
      where: how the run came to be on the CPU, as the message says it: 'with --device=cpu'
        when the user asked for it, 'on the CPU, where this run is because no GPU is
        visible' when it was resolved so.
    """
    return ['%s has no effect %s (%s)%s' % (
        as_set(p, name), where, CPU_REASONS.get(name, 'it sets GPU options'),
        THREAD_ADVICE if name in GPU_THREAD_FLAGS else '')
        for name in gpu_only_set(p)]


def as_set(p, name: str) -> str:
    """The flag `name` as its value in `p` is written: '--tf32=false (--notf32)' for a boolean
    set false (the Params do not say which form the user typed: both are named, so that
    neither --tf32=false nor absl's negation --notf32 reads as another flag),
    '--winograd_nonfused' set true, '--gpu_thread_mode=gpu_shared' otherwise."""
    value = getattr(p, name)
    if isinstance(value, bool):
        return '--%s' % name if value else '--%s=false (--no%s)' % (name, name)
    return '--%s=%s' % (name, value)


def gpu_only_set(p) -> list[str]:
    """The GPU-only flags of `p` at another value than their default
    (original_flags.GPU_ONLY_DEFAULTS), in original_flags.GPU_ONLY_FLAGS' order."""
    return [name for name, default in original_flags.GPU_ONLY_DEFAULTS.items()
            if getattr(p, name) != default]


def planned_gpu_flags(p, gpu) -> list[str]:
    """The GPU-only flags (original_flags.GPU_ONLY_FLAGS) set in a plan of `gpu` that do not
    change it, one message each: the plan's speed model (speed_model/gpu_step.py, fed by
    speed_model/from_flags.py) reads --winograd_nonfused (cuDNN's non-fused Winograd on CUDA
    cores) and --tf32 (TF32 tensor cores for float32 on compute capability 8.0+), and
    neither the speed model nor the memory estimate reads the others (thread pools, memory
    options, kernel trackers, persistent batch norm, the autotuning threshold), which set
    options of a run on a GPU. With --single_device_images_per_sec no flag changes the
    compute.

    Args:
      p: the checked Params as given; gpu: the GpuSpec planned
      (hardware/gpu_plans.planned_gpu).
    """
    mode = '--plan_scaling' if p.plan_scaling else '--dry_run'
    dtype = 'float16' if p.use_fp16 else 'bfloat16' if p.use_bf16 else 'float32'
    out = []
    for name, flag in [(name, as_set(p, name)) for name in gpu_only_set(p)]:
        why = _unplanned(name, p, gpu, dtype)
        if why:
            out.append('%s does not change the %s plan of the %s: %s'
                       % (flag, mode, gpu.name, why))
    return out


def _unplanned(name: str, p, gpu, dtype: str) -> str | None:
    """Why the GPU-only flag `name` does not change the plan of `gpu` in `dtype`; None when
    it may (planned_gpu_flags)."""
    if p.single_device_images_per_sec and name in ('winograd_nonfused', 'tf32'):
        return ('the compute is --single_device_images_per_sec=%g, not the speed model\'s'
                % p.single_device_images_per_sec)
    if name == 'winograd_nonfused':
        from ..speed_model import gpu_step
        if dtype == 'float32' or gpu_step.math_path(gpu, dtype)[2] not in ('tensor', 'tf32'):
            return None  # a CUDA-core path, where autotuning may pick the Winograd kernels
        return ('its %s convolutions run on tensor cores, where cuDNN\'s non-fused Winograd '
                'is not among the algorithms' % dtype)
    if name == 'tf32':
        if not gpu.tf32_tflops:
            return 'compute capability %s < 8.0 has no TF32' % gpu.compute_capability
        if dtype != 'float32':
            return '%s compute does not use TF32 (a float32 math mode)' % dtype
        return None
    return ('neither the speed model nor the memory estimate reads it (it sets an option of a '
            'run on a GPU)')

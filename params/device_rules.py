"""The flags' rules that depend on the run's device: the default device (--device, else the
GPUs visible or planned), NCCL, which runs on GPUs only, and the logical CPU devices (towers)
a run on the CPU may ask for. Used before TensorFlow loads (the device a host without a driver
will get, preflight/usage.py) and after (params.resolve_params, with the GPUs TensorFlow
counts). Loads no TensorFlow."""

from __future__ import annotations

import os

from ..variable_managers import allreduce_spec
from .errors import ParamsError

# Logical CPU devices (towers) a run may ask for: one per CPU the process may use, and at
# least 16, the most GPUs one host holds (DGX-2, HGX-2), so that any one-host GPU layout can be
# emulated with --device=cpu anywhere. Beyond one per CPU a tower adds graph to build (time
# and memory grow with each tower: --num_gpus=1000 built for minutes) and no compute.
#: The most GPUs one host holds (NVIDIA DGX-2 and HGX-2: 16 V100s on NVSwitches): a plan of
#: GPUs without a visible one (--dry_run or --plan_scaling with --gpu_model) plans at most
#: this many per host.
MAX_GPUS_PER_HOST = 16
MIN_CPU_TOWER_LIMIT = MAX_GPUS_PER_HOST

#: The --variable_update modes that all-reduce the gradients of several devices, the only ones
#: that read --use_nccl and --all_reduce_spec (their managers are built on
#: variable_managers/one_host.VariableMgrReplicated); any other mode ignores them with a warning
#: (preflight/ineffective_flags.py), NCCL on the CPU included: it would never run.
ALL_REDUCE_MODES = ('replicated', 'distributed_all_reduce')


def default_device(p, num_visible_gpus: int) -> str:
    """The device a run's towers use: --device, else 'gpu' where a GPU is visible (or
    planned: preflight/planned_step.py), else 'cpu'. The one definition of the default."""
    return p.device or ('gpu' if num_visible_gpus else 'cpu')


def uses_nccl(p) -> bool:
    """True when --use_nccl or an --all_reduce_spec entry with nccl asks for NCCL."""
    spec = allreduce_spec.parse_all_reduce_spec(p.all_reduce_spec) if p.all_reduce_spec else []
    return bool(p.use_nccl) or any('nccl' in entry.alg for entry in spec)


def one_tower_all_reduce(p) -> bool:
    """True for `replicated` on one device of one host (--num_gpus=1) outside --plan_scaling
    (which plans it on more devices): one tower, nothing to all-reduce, so the all-reduce flags
    have no effect (variable_managers/allreduce.py returns one device's gradients as they are)
    and warn (preflight/ineffective_flags.py), NCCL on the CPU too, as the original ran NCCL
    on one GPU."""
    return p.variable_update == 'replicated' and p.num_gpus == 1 and not p.plan_scaling


def check_nccl(p, device: str) -> None:
    """NCCL (--use_nccl, an --all_reduce_spec with nccl) only on GPUs: `device` is the run's
    ('cpu' or 'gpu', default_device). A mode that does not all-reduce (ALL_REDUCE_MODES), or
    replicated on one device (`one_tower_all_reduce`), never runs NCCL: there the flags warn
    instead (preflight/ineffective_flags.py, whose line says that NCCL needs GPUs too).

    Raises:
      ParamsError: NCCL asked for on the CPU, naming the CPU's all-reduce to use instead.
    """
    if p.variable_update not in ALL_REDUCE_MODES or one_tower_all_reduce(p):
        return
    # A plan (--dry_run, --plan_scaling) of CPU towers may have meant GPUs.
    plan = ', or give --gpu_model=NAME to plan GPUs' if p.dry_run or p.plan_scaling else ''
    if p.use_nccl and device != 'gpu':
        raise ParamsError('--use_nccl needs GPUs (NCCL has no CPU kernels); drop it or use '
                          '--all_reduce_spec=xring on CPU%s.' % plan)
    spec = allreduce_spec.parse_all_reduce_spec(p.all_reduce_spec) if p.all_reduce_spec else []
    if device != 'gpu' and any('nccl' in entry.alg for entry in spec):
        raise ParamsError('--all_reduce_spec=%s uses nccl, which needs GPUs; on the CPU use pscpu '
                          'or xring%s.' % (p.all_reduce_spec, plan))


def all_reduce_flags_read(p, device: str):
    """`p` with the all-reduce flags that have no effect (a warning says so:
    preflight/ineffective_flags.py) turned off, so that the manager
    (variable_managers/allreduce.py) is given none of them: --hierarchical_copy where
    --all_reduce_spec or --use_nccl chooses the all-reduce (the original ignored it there), and
    NCCL on the CPU with one tower (`one_tower_all_reduce`), which all-reduces nothing.

    Args:
      p: the checked Params; device: the run's ('cpu' or 'gpu', default_device).
    """
    if p.hierarchical_copy and (p.all_reduce_spec or p.use_nccl):
        p = p._replace(hierarchical_copy=False)
    if device != 'gpu' and one_tower_all_reduce(p) and uses_nccl(p):
        p = p._replace(use_nccl=False, all_reduce_spec=None)
    return p


def usable_cpus() -> int:
    """The CPUs this process may run on (os.sched_getaffinity; os.cpu_count where the
    affinity cannot be read)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def cpu_tower_limit(cpus: int | None = None) -> int:
    """The most logical CPU devices a run may ask for (MIN_CPU_TOWER_LIMIT's reason).

    Args:
      cpus: the CPUs this process may run on; default `usable_cpus`.
    """
    return max(MIN_CPU_TOWER_LIMIT, usable_cpus() if cpus is None else cpus)


def check_cpu_towers(p, device: str, cpus: int | None = None) -> None:
    """Refuses more logical CPU devices than `cpu_tower_limit` before the graph is built.

    Args:
      p: the Params; device: the run's device (`default_device`).
      cpus: the CPUs this process may run on; default `usable_cpus`.

    Raises:
      ParamsError: --num_gpus above the limit on the CPU (a ps task builds no towers).
    """
    if device != 'cpu' or p.job_name == 'ps' or p.num_gpus <= MIN_CPU_TOWER_LIMIT:
        return  # within any host's limit: its CPUs need not be counted
    limit = cpu_tower_limit(cpus)
    if p.num_gpus <= limit:
        return
    raise ParamsError(
        '--num_gpus=%d asks for %d logical CPU devices (towers), and this process may use %d '
        'CPUs: beyond one tower per CPU (and beyond 16, the most GPUs of one host) a tower '
        'only adds graph to build, not compute; give --num_gpus <= %d'
        % (p.num_gpus, p.num_gpus, cpus if cpus is not None else usable_cpus(), limit))


def cpu_towers_warning(p, device: str, cpus: int | None = None) -> str | None:
    """The warning of a run that asks for GPUs (--num_gpus > 1, no --device) and gets logical
    CPU devices, because no GPU is visible; None for any other run (--device=cpu asks for
    them on purpose; a ps task builds no towers).

    Args:
      p: the checked Params; device: the run's device (`default_device`).
      cpus: the CPUs this process may run on; default `usable_cpus`.
    """
    if device != 'cpu' or p.device or p.num_gpus <= 1 or p.job_name == 'ps':
        return None
    return ('--num_gpus=%d and no GPU is visible: its %d towers run as logical CPU devices on '
            'the %d CPU cores this process may use; --device=cpu asks for this on purpose'
            % (p.num_gpus, p.num_gpus, cpus if cpus is not None else usable_cpus()))

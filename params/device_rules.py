"""The flags' rules that depend on the run's device: the default device (--device, else the
GPUs visible or planned), NCCL, which runs on GPUs only, the all-reduce flags that do
nothing on one device or in a mode without an all-reduce (`all_reduce_reasons`: why, for the
warnings), and the logical CPU devices (towers) a run on the CPU may ask for. Used before
TensorFlow loads (the device a host without a driver will get, preflight/usage.py) and after
(params.resolve_params, with the GPUs TensorFlow counts). Loads no TensorFlow."""

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


# The flags that choose `replicated`'s all-reduce (variable_managers/allreduce.py
# all_reduce_gradients), read only by the managers of ALL_REDUCE_MODES (one_host.py's
# VariableMgrReplicated and distributed.py's VariableMgrDistributedAllReduce, its subclass), in
# the table's order: the algorithm's own two flags first (ALGORITHM_FLAGS). With one tower
# (one host, --num_gpus=1) all_reduce_gradients returns each gradient as it is, before any
# spec, pack, group, hierarchy or NCCL is used (its `len(devices) == 1`). Every mode without
# an all-reduce ignores them all alike.
ALGORITHM_FLAGS = ('use_nccl', 'all_reduce_spec')
ALL_REDUCE_FLAGS = ('gradient_repacking', 'agg_small_grads_max_bytes',
                    'agg_small_grads_max_group', 'hierarchical_copy')
ONE_TOWER_FLAGS = ALGORITHM_FLAGS + ALL_REDUCE_FLAGS
# Said after the line of an NCCL flag (--use_nccl, an --all_reduce_spec with nccl) that a
# mode without all-reduce, or replicated on one device, ignores, when the run is on the CPU:
# the run the line advises would refuse it there (`check_nccl`).
NCCL_ON_CPU = ('; NCCL also needs GPUs, and this run is on the CPU, where replicated '
               'all-reduces with --all_reduce_spec=xring or pscpu')
# What each other --variable_update does with the towers' gradients instead
# (variable_managers/one_host.py, variable_managers/distributed.py).
OWN_AGGREGATION = {
    'parameter_server': 'the towers\' gradients are summed into one update of the shared '
                        'variables',
    'independent': 'each tower applies its own gradients: nothing is exchanged',
    'distributed_replicated': 'each worker sums its towers\' gradients on its CPU and sends '
                              'them to the ps',
    'collective_all_reduce': 'it packs the gradients into one tensor per dtype for its own '
                             'collective all-reduce',
}


def all_reduce_reasons(p, device: str) -> dict[str, str]:
    """{flag: why it has no effect} for the all-reduce flags (ONE_TOWER_FLAGS) of a training
    run `p` on `device`, whatever their values (the caller warns only for flags the user
    chose: preflight/ineffective_flags.py): all of them in a mode without an all-reduce
    (ALL_REDUCE_MODES) or replicated on one device (`one_tower_all_reduce`; an NCCL flag's
    reason adds NCCL_ON_CPU on the CPU), else --hierarchical_copy where --all_reduce_spec or
    --use_nccl chooses the all-reduce (`all_reduce_flags_read` turns it off there). {} for
    --forward_only and --eval (their own rules name these flags).

    Args:
      p: the Params as given; device: the run's ('cpu' or 'gpu': `default_device`).

    Returns:
      The reasons, each the rest of a line '--NAME has no effect ...', in the table's order.
    """
    if p.forward_only or p.eval:
        return {}
    why = ''
    if p.variable_update not in ALL_REDUCE_MODES:
        why = ('with --variable_update=%s (%s; only %s all-reduce the gradients of several '
               'devices: use one of them)'
               % (p.variable_update, OWN_AGGREGATION.get(p.variable_update, 'no all-reduce'),
                  ' and '.join(ALL_REDUCE_MODES)))
    elif one_tower_all_reduce(p):  # not with --plan_scaling, which plans more devices
        why = ('with --variable_update=replicated on one device (one tower: there is no '
               'all-reduce, nothing to pack, merge or copy; --num_gpus=N gives N towers)')
    if why:  # the ONE_TOWER_FLAGS alike; NCCL on the CPU: the advised run would refuse it
        nccl = {'use_nccl': p.use_nccl,
                'all_reduce_spec': p.all_reduce_spec and 'nccl' in p.all_reduce_spec}
        return {name: why + (NCCL_ON_CPU if nccl.get(name) and device == 'cpu' else '')
                for name in ONE_TOWER_FLAGS}
    if p.all_reduce_spec or p.use_nccl:  # either chooses the all-reduce, as originally
        return {'hierarchical_copy': '%s; --hierarchical_copy is the spec psgpu/psgpu)' % (
            'with --all_reduce_spec (the spec chooses the all-reduce, as in the original'
            if p.all_reduce_spec else 'with --use_nccl (NCCL all-reduces every gradient')}
    return {}


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

"""The flags' rules that depend on the run's device: the default device (--device, else the
GPUs visible or planned) and NCCL, which runs on GPUs only. Used before TensorFlow loads (the
device a host without a driver will get, preflight/usage.py) and after (params.resolve_params,
with the GPUs TensorFlow counts). Loads no TensorFlow."""

from __future__ import annotations

from ..variable_managers import allreduce_spec
from .errors import ParamsError

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


def check_nccl(p, device: str) -> None:
    """NCCL (--use_nccl, an --all_reduce_spec with nccl) only on GPUs: `device` is the run's
    ('cpu' or 'gpu', default_device). A mode that does not all-reduce (ALL_REDUCE_MODES) never
    runs NCCL: there the flags warn instead (preflight/ineffective_flags.py, whose line says
    that NCCL needs GPUs too).

    Raises:
      ParamsError: NCCL asked for on the CPU, naming the CPU's all-reduce to use instead.
    """
    if p.variable_update not in ALL_REDUCE_MODES:
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

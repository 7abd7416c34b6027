"""Variable managers: where each tower's variables live, and how gradients become updates.

The entry of variable management (the package variable_managers/ holds the rest): the
`--variable_update` tables and one factory, `make_variable_mgr`, for a run on one host and for
a cluster task. Every manager subclasses `VariableMgr` (variable_managers/base.py, which gives
the order the graph builder calls its hooks in: tower scopes -> gradients -> apply ->
post-init); the graph calls only the base class's methods.

  one host      parameter_server, replicated, independent (variable_managers/one_host.py)
  cluster task  parameter_server, distributed_replicated, collective_all_reduce,
                distributed_all_reduce (variable_managers/distributed.py)

Checkpoint names never depend on the mode or the tower count (`checkpoint_name`); where the
towers train apart (independent), the other towers' own copies are saved besides, under
'tower_<i>/' names (`copy_tower`).
"""

from __future__ import annotations

from .variable_managers import distributed, one_host
from .variable_managers.base import (  # noqa: F401  (re-exported)
    VariableMgr,
    checkpoint_name,
    copy_tower,
)

# --variable_update -> manager class: on one host, and in a cluster task.
ONE_HOST = one_host.MANAGERS
CLUSTER = distributed.MANAGERS


def make_variable_mgr(params, devices, param_device='/cpu:0', cluster=None) -> VariableMgr:
    """Returns the manager of `params.variable_update`.

    Args:
      params: the run's Params.
      devices: the towers' devices, e.g. ['/cpu:0', '/cpu:1'].
      param_device: the device of shared variables and the global step.
      cluster: this task's cluster.topology.Cluster for a cluster task (--job_name set), else
        None (one host).

    Raises:
      ValueError: the mode is unknown or does not run here (the message lists the valid names),
        or, in a cluster, this task builds no graph in it.
    """
    if cluster is None:
        cls = ONE_HOST.get(params.variable_update)
        if cls is None:
            raise ValueError('--variable_update=%r is not available here; valid on one host: %s'
                             % (params.variable_update, ', '.join(sorted(ONE_HOST))))
        return cls(devices=devices, param_device=param_device, params=params)
    cls = CLUSTER.get(params.variable_update)
    if cls is None:
        raise ValueError('--variable_update=%r does not run in a cluster; valid there: %s'
                         % (params.variable_update, ', '.join(sorted(CLUSTER))))
    if (cls is distributed.VariableMgrDistributedAllReduce) != (params.job_name == 'controller'):
        raise ValueError('with --variable_update=distributed_all_reduce only the controller '
                         'builds a graph (and only in that mode). Received: job_name=%r'
                         % params.job_name)
    return cls(devices=devices, param_device=param_device, params=params, cluster=cluster)

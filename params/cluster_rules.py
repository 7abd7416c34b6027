"""Flag rules of a cluster task: --job_name, --task_index, the host lists, the distributed
variable-update modes, --server_protocol, and the one-host-only features refused in a cluster.

Each rule gives the message of the first broken rule, or None; params.validate_params raises it
as a ParamsError (this module does not import params, so params can call it: no import cycle).
Loads no TensorFlow.
"""

from __future__ import annotations

import re

_HOST_PORT = re.compile(r'^[A-Za-z0-9_.\-]+:(\d{1,5})$|^\[[0-9a-fA-F:]+\]:(\d{1,5})$')


_LOOPBACK = ('localhost', '127.0.0.1', '[::1]', 'ip6-localhost')
#: The flags that say which task of which cluster a process is (its role, its peers, where
#: they come from): not part of what a run measures, and dead once the cluster is gone
#: (`tf_cnn_results show` leaves them out of a run's flags: history/run_flags.py).
TASK_FLAGS = ('cluster_resolver', 'num_ps', 'slurm_port_base', 'job_name', 'task_index',
              'ps_hosts', 'worker_hosts', 'controller_host')


def is_chief_task(job_name: str | None, task_index: int, variable_update: str) -> bool:
    """True for the task that initialises, restores, saves and reports a run's totals (and so
    holds its --train_dir): the one task of a run on one host (no --job_name), the controller
    with distributed_all_reduce, else worker 0. cluster/topology.Cluster.is_chief is this."""
    if not job_name:
        return True
    if variable_update == 'distributed_all_reduce':
        return job_name == 'controller'
    return job_name == 'worker' and task_index == 0


def task_device(job: str, index: int) -> str:
    """'/job:<job>/replica:0/task:<index>': the device name of a cluster task (TensorFlow's
    device-name syntax), shared by cluster/topology.py and variable_managers/distributed.py."""
    return '/job:%s/replica:0/task:%d' % (job, index)


def address_key(host_port: str) -> str:
    """'host:port' with one spelling per address, to find an address given twice: the loopback
    names of this host are one host (a gRPC server listens on every interface, so
    localhost:5000 and 127.0.0.1:5000 collide)."""
    host, _, port = host_port.rpartition(':')
    host = host.lower()
    return '%s:%s' % ('localhost' if host in _LOOPBACK else host, port)


def hosts_problem(name: str, hosts: list[str]) -> str | None:
    """The problem of a host:port list (an empty item, a port outside 1..65535, an address
    given twice: loopback names count as one host), or None."""
    seen: dict[str, str] = {}
    for host in hosts:
        match = _HOST_PORT.match(host)
        port = int(match.group(1) or match.group(2)) if match else 0
        if not match or not 1 <= port <= 65535:
            return ('--%s items must be host:port with a port in 1..65535. '
                    'Received: %s=%r' % (name, name, ','.join(hosts)))
        key = address_key(host)
        if key in seen:
            twice = ('%s twice' % host if seen[key] == host
                     else '%s and %s, the same address' % (seen[key], host))
            return ('--%s lists %s. Received: %s=%r' % (
      name, twice, name, ','.join(hosts)))
        seen[key] = host
    return None


def distributed_problem(p) -> str | None:
    """The first broken rule of --job_name, --task_index, --ps_hosts, --worker_hosts and the
    distributed modes (p: params.Params), or None."""
    problem = (server_protocol_problem(p) or hosts_problem('ps_hosts', p.ps_hosts)
               or hosts_problem('worker_hosts', p.worker_hosts))
    if problem:
        return problem
    distributed_modes = ('distributed_replicated', 'distributed_all_reduce',
                         'collective_all_reduce')
    if not p.job_name:
        if p.ps_hosts or p.worker_hosts:
            return ('--ps_hosts/--worker_hosts need --job_name (ps or worker) and '
                    '--task_index for this task.')
        # A --plan_scaling run plans the cluster's rows on paper: it starts no task.
        if p.variable_update in distributed_modes and not p.plan_scaling:
            hosts = {'distributed_replicated': '--ps_hosts and --worker_hosts',
                     'distributed_all_reduce': '--worker_hosts and --controller_host',
                     'collective_all_reduce': '--worker_hosts'}[p.variable_update]
            return ('--variable_update=%s needs a cluster: give --job_name, '
                    '--task_index, %s, or run where TF_CONFIG or a Slurm step '
                    'of several tasks describes one.' % (p.variable_update, hosts))
        return None
    if not p.worker_hosts:
        return ('--job_name=%s needs --worker_hosts.' % p.job_name)
    needs_ps = p.variable_update in ('parameter_server', 'distributed_replicated')
    if needs_ps and not p.ps_hosts:
        return ('--variable_update=%s in a cluster needs --ps_hosts.'
                % p.variable_update)
    if p.variable_update in ('replicated', 'independent'):
        return ('--variable_update=%s is for one host; in a cluster use '
                'parameter_server, distributed_replicated, distributed_all_reduce or '
                'collective_all_reduce.' % p.variable_update)
    role = _role_problem(p)
    if role:
        return role
    jobs = {'ps': p.ps_hosts, 'worker': p.worker_hosts,
            'controller': [p.controller_host] if p.controller_host else []}
    count = len(jobs[p.job_name])
    if p.task_index >= count:
        return ('--task_index must be < %d, the number of %s hosts. Received: '
                'task_index=%d' % (count, p.job_name, p.task_index))
    return _cluster_modes_problem(p)


#: What each cluster mode has instead of ps tasks (a ps task there serves nothing).
_NO_PS = {'distributed_all_reduce': "its workers hold the variables and all-reduce the "
                                    "gradients in the controller's graph",
          'collective_all_reduce': 'its workers all-reduce among themselves'}


def _role_problem(p) -> str | None:
    """The problem of a --job_name the cluster mode has no task of (a ps task without ps,
    a controller without --controller_host), or of ps tasks a mode would not use, or None.
    Said before --task_index is checked against the job's host count, which is then 0 (it
    said '--task_index must be < 0, the number of controller hosts')."""
    mode = p.variable_update
    if mode in _NO_PS:  # a ps there would only be waited for
        if p.job_name == 'ps':
            return ('--job_name=ps: --variable_update=%s has no ps task (%s); start only its '
                    '%s.' % (mode, _NO_PS[mode], 'workers and the controller'
                             if mode == 'distributed_all_reduce' else 'workers'))
        if p.ps_hosts:
            return ('--variable_update=%s has no ps task (%s); drop --ps_hosts.'
                    % (mode, _NO_PS[mode]))
    if p.job_name == 'controller' and not p.controller_host:
        if mode != 'distributed_all_reduce':
            return ('--job_name=controller is only for --variable_update=distributed_all_reduce. '
                    'Received: variable_update=%r' % mode)
        return ('--job_name=controller needs --controller_host: this task\'s own host:port, '
                'which every task of the cluster is given.')
    return None


#: The original's --server_protocol values besides grpc, and what each was.
_OLD_PROTOCOLS = {'grpc+verbs': 'gRPC with RDMA over InfiniBand verbs',
                  'grpc+mpi': 'gRPC with MPI', 'grpc+gdr': 'gRPC with GPUDirect RDMA'}


def server_protocol_problem(p) -> str | None:
    """The problem of a --server_protocol other than grpc (the original also took grpc+verbs,
    grpc+mpi and grpc+gdr, transports of TensorFlow 1's contrib that TensorFlow 2.21 does not
    have: its server failed with 'No server factory registered' after TensorFlow loaded), or
    None."""
    if p.server_protocol == 'grpc':
        return None
    what = _OLD_PROTOCOLS.get(p.server_protocol)
    if what is None:
        return ('--server_protocol must be grpc (TensorFlow 2.21 has only grpc). Received: '
                'server_protocol=%r' % p.server_protocol)
    return ('--server_protocol=%s (a value the original took: %s, from TensorFlow 1\'s '
            'contrib) is not in TensorFlow 2.21, which has only grpc; drop the flag or give '
            '--server_protocol=grpc. Received: server_protocol=%r'
            % (p.server_protocol, what, p.server_protocol))


def task_index_warning(p, given) -> str | None:
    """The warning of a task started from host flags with --job_name but without --task_index,
    in a job of several tasks: it takes task 0 silently (as the original's), for a worker the
    chief's role, and the task the user meant waits for its peers until
    --startup_timeout_secs while the real task 0 cannot start its server. None otherwise
    (one task in the job, --task_index given, or no --job_name).

    Args:
      p: the Params with the host flags' cluster (its cluster_resolver 'flags').
      given: the names of the flags the command line gave (also at their default value).
    """
    if ('job_name' not in given or 'task_index' in given
            or p.cluster_resolver not in ('flags', 'auto')):  # auto: the host flags here
        return None
    flag = {'ps': 'ps_hosts', 'worker': 'worker_hosts'}.get(p.job_name)
    count = len(getattr(p, flag)) if flag else 1
    if count <= 1:
        return None
    role = '%s %d' % (p.job_name, p.task_index)
    if is_chief_task(p.job_name, p.task_index, p.variable_update):
        role += ', the chief'
    return ('--task_index not given: this task is %s (the first of the %d in --%s); give each '
            'task its own --task_index=N (0 to %d)' % (role, count, flag, count - 1))


def _cluster_modes_problem(p) -> str | None:
    """The first broken rule of a cluster task's modes (the controller, synchrony, distinct
    addresses, the one-host-only features), or None."""
    mode = p.variable_update
    if mode == 'distributed_all_reduce' and not p.controller_host:
        return ('--variable_update=distributed_all_reduce needs --controller_host: the '
                'controller task builds the one graph of every worker.')
    if p.job_name == 'controller' and mode != 'distributed_all_reduce':
        return ('--job_name=controller is only for --variable_update=distributed_all_reduce. '
                'Received: variable_update=%r' % mode)
    if p.controller_host and mode != 'distributed_all_reduce':
        return ('--controller_host is only used by '
                '--variable_update=distributed_all_reduce; drop it.')
    if not p.cross_replica_sync and mode in ('distributed_all_reduce', 'collective_all_reduce'):
        return ('--variable_update=%s is always synchronous; drop '
                '--nocross_replica_sync (asynchronous training: '
                'parameter_server or distributed_replicated).' % mode)
    jobs = {'ps_hosts': p.ps_hosts, 'worker_hosts': p.worker_hosts,
            'controller_host': [p.controller_host] if p.controller_host else []}
    seen: dict[str, tuple[str, str]] = {}  # address key -> (flag, spelling)
    for flag, hosts in jobs.items():
        for host in hosts:
            key = address_key(host)
            if key in seen and seen[key][0] != flag:
                first_flag, first = seen[key]
                where = ('%s is in both --%s and --%s' % (host, first_flag, flag)
                         if first == host else '%s (--%s) and %s (--%s) are the same address'
                         % (first, first_flag, host, flag))
                return ('%s; every task needs its own host:port.' % where)
            seen[key] = (flag, host)
    evaluate = 'evaluate the checkpoints of --train_dir with a local --eval run instead'
    unsupported = [
        # The original staged a worker's reads from the ps; this project's cluster managers
        # do not (variable_managers/distributed.py): docs' departures from the original.
        ('staged_vars', p.staged_vars, 'this project\'s cluster parameter_server does not stage '
         'its reads from the ps, as the original\'s did; use '
         '--variable_update=distributed_replicated for local copies of the variables'),
        ('eval', p.eval, evaluate),
        ('freeze_when_forward_only', p.freeze_when_forward_only, 'time a frozen graph locally'),
        ('eval_during_training_every_n_steps', p.eval_during_training_every_n_steps, evaluate),
        ('eval_during_training_every_n_epochs', p.eval_during_training_every_n_epochs, evaluate),
        ('eval_during_training_at_specified_steps', p.eval_during_training_at_specified_steps,
         evaluate),
        ('eval_during_training_at_specified_epochs', p.eval_during_training_at_specified_epochs,
         evaluate),
        ('fp16_enable_auto_loss_scale', p.use_fp16 and p.fp16_enable_auto_loss_scale,
         'each worker would skip overflowing steps on its own and break the lockstep of the '
         'workers; use a static --fp16_loss_scale'),
    ]
    for flag, value, instead in unsupported:
        if value:
            return ('--%s runs on one host only; drop it from cluster runs '
                    '(%s).' % (flag, instead))
    return None

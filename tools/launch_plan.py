"""The tasks `tf_cnn_cluster` (tools/launch_cluster.py) starts: their roles, jobs, indexes
and command lines, from the launcher's flags and those it passes through to every task.

Roles are 'ps0', 'worker1', 'controller'; each task gets --job_name, --task_index and the
cluster's host lists (--ps_hosts, --worker_hosts, --controller_host for
--variable_update=distributed_all_reduce), free ports on --host where no host list is given.
"""

from __future__ import annotations

from tf_cnn_benchmarks.tools import cluster_checks

LaunchError = cluster_checks.LaunchError

PS_MODES = ('parameter_server', 'distributed_replicated')
# Cluster modes without a ps task (one-host modes get the command's own rule first).
NO_PS_MODES = ('collective_all_reduce', 'distributed_all_reduce')
# --num_ps after `--` would be the command's (a Slurm step's ps count): the launcher's own
# --num_ps is the one meant.
RESERVED_FLAGS = ('job_name', 'task_index', 'ps_hosts', 'worker_hosts', 'controller_host',
                  'num_ps')


def _format_host(host: str, port: int) -> str:
    return '[%s]:%d' % (host, port) if ':' in host else '%s:%d' % (host, port)


def passthrough_value(args: list[str], name: str) -> str | None:
    """The value of --name in a tf_cnn_benchmarks argument list (last one wins), or None."""
    value = None
    for i, arg in enumerate(args):
        if arg.startswith('--%s=' % name):
            value = arg.split('=', 1)[1]
        elif arg == '--%s' % name and i + 1 < len(args):
            value = args[i + 1]
    return value


def _split_hosts(text: str | None) -> list[str]:
    return [h.strip() for h in text.split(',')] if text else []


def plan_tasks(opts, passthrough: list[str]) -> list[dict]:
    """The tasks to start: [{'role': 'ps0', 'job': 'ps', 'index': 0, 'args': [...]}, ...].

    Raises:
      LaunchError: a reserved flag among the passed-through ones, inconsistent counts, or a
        --host that is not this machine's when ports are picked on it (cluster_checks).
    """
    for name in RESERVED_FLAGS:
        if passthrough_value(passthrough, name) is not None:
            raise LaunchError('--%s is set by the launcher; give --num_ps/--num_workers or the '
                              'launcher\'s own --ps_hosts/--worker_hosts instead' % name)
    mode = passthrough_value(passthrough, 'variable_update') or 'parameter_server'
    ps_hosts = _split_hosts(opts.ps_hosts)
    worker_hosts = _split_hosts(opts.worker_hosts)
    num_ps = len(ps_hosts) if ps_hosts else opts.num_ps
    if num_ps is None:
        num_ps = 1 if mode in PS_MODES else 0
    num_workers = len(worker_hosts) if worker_hosts else opts.num_workers
    if num_workers < 1:
        raise LaunchError('--num_workers must be >= 1. Received: %d' % num_workers)
    if mode in PS_MODES and num_ps < 1:
        raise LaunchError('--variable_update=%s needs at least one ps (--num_ps >= 1)' % mode)
    if mode in NO_PS_MODES and num_ps > 0:  # the command's own rule would name --job_name=ps
        raise LaunchError('--variable_update=%s has no ps task (no task would use it and the '
                          'workers would wait for it): give --num_ps=0 or leave it out' % mode)
    free_port = cluster_checks.free_port  # a --host no port binds on: LaunchError
    ps_hosts = ps_hosts or [_format_host(opts.host, free_port(opts.host)) for _ in range(num_ps)]
    worker_hosts = worker_hosts or [_format_host(opts.host, free_port(opts.host))
                                    for _ in range(num_workers)]
    cluster = ['--worker_hosts=' + ','.join(worker_hosts)]
    if ps_hosts:
        cluster.append('--ps_hosts=' + ','.join(ps_hosts))
    jobs = [('ps', i) for i in range(len(ps_hosts))] + [
        ('worker', i) for i in range(len(worker_hosts))]
    if mode == 'distributed_all_reduce':
        controller = opts.controller_host or _format_host(opts.host, free_port(opts.host))
        cluster.append('--controller_host=' + controller)
        jobs.append(('controller', 0))
    tasks = []
    for job, index in jobs:
        role = 'controller' if job == 'controller' else '%s%d' % (job, index)
        args = ['--job_name=%s' % job, '--task_index=%d' % index] + cluster + list(passthrough)
        tasks.append({'role': role, 'job': job, 'index': index, 'args': args})
    return tasks

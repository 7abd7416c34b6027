"""The shape of a multi-host run: tasks, roles, devices and addresses (no servers, no sessions).

One process per task, started from a shell (or by tools/launch_cluster.py) with --job_name,
--task_index, --ps_hosts, --worker_hosts (and --controller_host for distributed_all_reduce). The
cluster package splits what a task does besides building the model:

  topology.py      this module: `Cluster`, the cluster's shape as the flags describe it, and
                   address helpers (loopback, TCP probes, the security line);
  server.py        this task's gRPC server, sessions with deadlines, start-up waits, the
                   serve loop of ps tasks, the chief's initialisation (protocol described there);
  coordination.py  the shared queues between tasks and the hooks of a worker's run (cluster
                   images/sec, done tokens);
and the variable managers of the cluster modes are variable_managers/distributed.py.

The rules of cluster flags are in params.validate_params, so they fail before TensorFlow loads.

Security: gRPC servers have no authentication; anyone who reaches a port can run graph ops on
that host (including reading and writing files). TensorFlow 2.21 listens on every interface
whatever host the cluster names: its GrpcServer (tensorflow/core/distributed_runtime/rpc/
grpc_server_lib.cc) adds the listening port "0.0.0.0:<port>", gRPC makes that the IPv4 and
IPv6 wildcard ('*:port' in `ss -ltn`; tests/test_cluster_task_start.py reads it from
/proc/net/tcp6), and nothing chooses another address: ServerDef has a `port` but no host, and
its environment variables set the port's SO_REUSEPORT (TF_GRPC_REUSE_PORT) and the client
channels' options (TF_GRPC_DEFAULT_OPTIONS) only. So a task started with 127.0.0.1:PORT is
reachable from the network on PORT too: every task prints one line at its start
(`exposure_line`: a note on a loopback cluster, a warning when its hosts are not loopback).
"""

from __future__ import annotations

import ipaddress
import socket

import tensorflow as tf

from ..params import cluster_rules
from ..params.cluster_rules import task_device

tf1 = tf.compat.v1

PS_MODES = ('parameter_server', 'distributed_replicated')


def split_host_port(address: str) -> tuple[str, int]:
    """'host:port' or '[v6]:port' -> (host, port)."""
    host, _, port = address.rpartition(':')
    return host.strip('[]'), int(port)


def is_loopback(address: str) -> bool:
    """True for localhost, 127.0.0.0/8 and ::1 addresses (with a port)."""
    host = split_host_port(address)[0]
    if host.lower() in ('localhost', 'ip6-localhost', 'ip6-loopback'):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def can_connect(address: str, timeout_secs: float = 1.0) -> bool:
    """True when a TCP connection to `address` ('host:port') succeeds within the timeout."""
    host, port = split_host_port(address)
    try:
        with socket.create_connection((host, port), timeout=timeout_secs):
            return True
    except OSError:
        return False


def security_warning(hosts: list[str]) -> str | None:
    """The one-line warning of a cluster with non-loopback addresses, or None."""
    foreign = [h for h in hosts if not is_loopback(h)]
    if not foreign:
        return None
    return ('this cluster uses non-loopback addresses (%s): TensorFlow gRPC servers are '
            'unauthenticated and listen on every interface of their host, whatever address the '
            'cluster names; anyone who can reach their ports can run graph ops (read and write '
            'files) on these hosts; use a trusted network and firewall the ports'
            % ','.join(foreign))


def exposure_line(hosts: list[str], task: str, address: str) -> tuple[str, str]:
    """What a task says as its server starts about who can reach it (module docstring:
    TensorFlow listens on every interface whatever the address): ('warning',
    `security_warning`) when the cluster has non-loopback addresses, else ('note', a line
    saying that this task's port is open on every interface all the same).

    Args:
      hosts: every address of the cluster ('host:port').
      task: this task, described ('ps 0 (127.0.0.1:2222)').
      address: this task's own 'host:port'.
    """
    warning = security_warning(hosts)
    if warning:
        return 'warning', warning
    return 'note', ('%s listens on port %d of every interface of this host, not only loopback: '
                    'TensorFlow\'s gRPC server binds all addresses (IPv4 and IPv6) whatever '
                    'host the cluster names, and has no authentication (whoever reaches the '
                    'port can run graph ops, read and write files); on a shared network, '
                    'firewall the port' % (task, split_host_port(address)[1]))


class Cluster:
    """This task's view of the cluster described by the flags.

    Pure shape: which tasks exist, which devices this task builds towers on, where the global
    step lives, which tasks serve and which signal them. One per task (benchmark_cnn makes it);
    the server (cluster/server.py), the variable managers and the hooks receive it.

    Args:
      p: Params with job_name set, validated by params.validate_params (which owns every
        cluster flag rule).
    """

    def __init__(self, p):
        self.params = p
        self.job_name = p.job_name
        self.task_index = p.task_index
        self.mode = p.variable_update
        self.hosts = {'ps': list(p.ps_hosts), 'worker': list(p.worker_hosts)}
        if p.controller_host:
            self.hosts['controller'] = [p.controller_host]
        self.num_workers = len(p.worker_hosts)
        self.num_ps = len(p.ps_hosts)
        self.timeout_secs = float(p.startup_timeout_secs)

    # --- Shape of the cluster.
    @property
    def spec(self) -> tf1.train.ClusterSpec:
        return tf1.train.ClusterSpec({job: hosts for job, hosts in self.hosts.items() if hosts})

    @property
    def local_device(self) -> str:
        return task_device(self.job_name, self.task_index)

    @property
    def local_cpu(self) -> str:
        """This task's CPU; for the controller, worker 0's (its graph's host ops go there)."""
        if self.job_name == 'controller':
            return task_device('worker', 0) + '/device:CPU:0'
        return self.local_device + '/device:CPU:0'

    @property
    def is_chief(self) -> bool:
        """The task that initialises, restores, saves and reports the cluster's totals."""
        return cluster_rules.is_chief_task(self.job_name, self.task_index, self.mode)

    @property
    def serves(self) -> bool:
        """True for tasks that only serve graph ops of others (no training loop of their own)."""
        return self.job_name == 'ps' or (self.job_name == 'worker'
                                         and self.mode == 'distributed_all_reduce')

    @property
    def sync(self) -> bool:
        return bool(self.params.cross_replica_sync)

    def signalers(self) -> list[tuple[str, int]]:
        """The tasks whose done tokens a serving task waits for."""
        if self.mode == 'distributed_all_reduce':
            return [('controller', 0)]
        return [('worker', i) for i in range(self.num_workers)]

    def serving_tasks(self) -> list[tuple[str, int]]:
        """The tasks that wait for this run's done tokens."""
        tasks = [('ps', k) for k in range(self.num_ps)]
        if self.mode == 'distributed_all_reduce':
            tasks += [('worker', i) for i in range(self.num_workers)]
        return tasks

    @property
    def coordinator(self) -> tuple[str, int]:
        """Where the ready and stats queues live: ps 0, else worker 0."""
        return ('ps', 0) if self.num_ps else ('worker', 0)

    @property
    def hosts_origin(self) -> str:
        """What gave this task its peers' addresses, as advice names it: '--ps_hosts/
        --worker_hosts' (host flags), 'TF_CONFIG's cluster' or 'the Slurm step's nodes and
        --slurm_port_base' (params.cluster_resolver, set by cluster/resolvers.py)."""
        source = getattr(self.params, 'cluster_resolver', 'flags')
        if source == 'tf_config':
            return "TF_CONFIG's cluster"
        if source == 'slurm':
            return "the Slurm step's nodes and --slurm_port_base"
        return '--ps_hosts/--worker_hosts' + ('/--controller_host' if 'controller' in self.hosts
                                              else '')

    @property
    def tasks(self) -> list[tuple[str, int]]:
        """Every task of the cluster, as this task's host lists give them."""
        return [(job, i) for job, hosts in self.hosts.items() for i in range(len(hosts))]

    def causes_first(self, down) -> list[tuple[str, int]]:
        """The tasks `down` (unreachable from this task) with those that stop by themselves
        once a task they serve is gone (a worker's ps tasks: server.TaskServer.serve) last:
        the others are the likely cause."""
        serving = set(self.serving_tasks()) if self.job_name == 'worker' else set()
        return sorted(down, key=lambda t: t in serving)

    def lost_words(self, down) -> str:
        """The unreachable peers `down` (`causes_first`), each group with what may have
        happened: 'worker 1 (h:2) (its process stopped, or its host is down: see its log), and
        ps 0 (h:0), which stops once a worker it serves is gone (its log says which)'. (A kill
        -9 of worker 1 used to name 'ps 0 (...), worker 1 (...) (its process stopped ...)',
        though ps 0 stopped because of worker 1.)"""
        serving = set(self.serving_tasks()) if self.job_name == 'worker' else set()
        causes = [t for t in down if t not in serving]
        followers = [t for t in down if t in serving]
        if not (causes and followers):
            one = len(down) == 1
            return '%s (%s)' % (', '.join(self.describe(*t) for t in down),
                                'its process stopped, or its host is down: see its log' if one
                                else 'their processes stopped, or their hosts are down: see '
                                     'their logs')
        one = len(followers) == 1
        return '%s, and %s, which %s once a worker %s serve%s is gone (%s)' % (
            self.lost_words(causes), ', '.join(self.describe(*t) for t in followers),
            'stops' if one else 'stop', 'it' if one else 'they', 's' if one else '',
            'its log says which' if one else 'their logs say which')

    def address(self, job: str, index: int) -> str:
        return self.hosts[job][index]

    def describe(self, job: str, index: int) -> str:
        """'ps 0 (localhost:2222)'."""
        return '%s %d (%s)' % (job, index, self.address(job, index))

    def tower_devices(self, num_devices: int, kind: str) -> list[str]:
        """The devices this task builds towers on; the controller's span every worker."""
        kind = kind.upper()
        if self.job_name == 'controller':
            return ['%s/device:%s:%d' % (task_device('worker', w), kind, k)
                    for w in range(self.num_workers) for k in range(num_devices)]
        return ['%s/device:%s:%d' % (self.local_device, kind, k) for k in range(num_devices)]

    @property
    def param_device(self) -> str:
        """Device of the global step (and of shared bookkeeping variables)."""
        if self.mode in PS_MODES:
            return task_device('ps', 0) + '/device:CPU:0'
        return self.local_cpu

    def session_peers(self) -> list[tuple[str, int]]:
        """The tasks this task's session runs ops on (all must be up to create it)."""
        if self.job_name == 'controller':
            return [('worker', i) for i in range(self.num_workers)] + [
                ('ps', k) for k in range(self.num_ps)]
        peers = [('ps', k) for k in range(self.num_ps)]
        if self.mode == 'collective_all_reduce' or self.coordinator == ('worker', 0):
            peers += [('worker', i) for i in range(self.num_workers) if i != self.task_index]
        return peers

    def task_params(self, p):
        """This task's Params: worker i > 0 of a per-worker graph uses --tf_random_seed + i, so
        its input order (RecordInput/tf.data shuffles, synthetic batches) and op-level randomness
        differ from the other workers'. Variables are initialised by the chief (seed unchanged)
        or broadcast from it, so they do not depend on this."""
        if self.job_name == 'worker' and self.mode != 'distributed_all_reduce':
            return p._replace(tf_random_seed=p.tf_random_seed + self.task_index)
        return p

    def owns(self, device: str) -> bool:
        """True when an op placed on `device` runs on this task (empty or job-less: local)."""
        spec = tf.DeviceSpec.from_string(device or '')
        if spec.job is None:
            return True
        return spec.job == self.job_name and (spec.task or 0) == self.task_index

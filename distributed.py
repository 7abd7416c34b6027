"""Multi-host runs on TensorFlow's gRPC runtime: roles, servers, start-up, coordination, shutdown.

One process per task, started from a shell (or by tools/launch_cluster.py) with --job_name,
--task_index, --ps_hosts, --worker_hosts (and --controller_host for distributed_all_reduce). This
module owns everything a task does besides building the model:

  * the cluster's shape (`Cluster`): which tasks exist, which devices this task builds towers on,
    where the global step lives, which tasks serve and which signal them;
  * the rules of cluster flags beyond params.py (`validate_cluster_params`);
  * this task's `tf.compat.v1.train.Server` and, on serving tasks, the serve loop (`Cluster.serve`):
    ps tasks (and the workers of distributed_all_reduce, whose graph the controller builds) serve
    until every task that uses them reported done, then exit 0 by themselves;
  * start-up: a task waits for the peers its session needs (TCP probes, bounded by
    --startup_timeout_secs; the error names each unreachable task), the chief (worker 0)
    initialises or restores, the other workers wait for its "ready" token;
  * the end of a run (cluster_hooks.py): per-worker images/sec gathered by the chief, which
    prints the cluster total, then the "done" tokens that let the serving tasks exit.

Start order does not matter: a task that starts first waits for its peers. TensorFlow itself
waits forever in CreateSession for a peer that is down (measured in TF 2.21: neither
ConfigProto.operation_timeout_in_ms nor RunOptions.timeout_in_ms bounds it), so a session is
only created once TCP connects to every peer it needs succeed.

Coordination queues (FIFOQueues with shared names, so every task's graph refers to the same one):

  name                 lives on            written by -> read by
  tfcnn_ready          coordinator         chief -> other workers: variables initialised/restored
  tfcnn_stats          coordinator         each worker -> chief: (task, images/sec, steps, secs)
  tfcnn_release        worker 0 (no ps)    chief -> other workers: stats gathered, you may exit
  tfcnn_done_<job>_<i> each serving task   each signaler -> serving task: (task, status)

The coordinator is ps 0 when there are ps tasks, else worker 0.

Faults: every session.run of a cluster task has a deadline of --startup_timeout_secs, so a step
that waits for a dead peer (a sync barrier, a lost ps) fails instead of hanging; the error
(cnn_util.ClusterError, exit status 1) names the peers that are unreachable at that moment. A
serving task exits with status 1 when a signaler reports a failure, goes away (it was up, then
its port stays closed for GONE_AFTER_SECS) or stays unreachable for --startup_timeout_secs
before reporting done (it never started).

Security: gRPC servers have no authentication; anyone who reaches a port can run graph ops on
that host (including reading and writing files). A run whose hosts are not loopback prints one
warning line saying so. TensorFlow binds every server to all interfaces ('*:port', measured in
TF 2.21) whatever host the address names, so even a loopback cluster's ports need a firewall on
a shared network.
"""

from __future__ import annotations

import ipaddress
import socket
import time

import tensorflow as tf

import cnn_util
import params as params_lib

tf1 = tf.compat.v1

PS_MODES = ('parameter_server', 'distributed_replicated')
ALL_REDUCE_MODES = ('distributed_all_reduce', 'collective_all_reduce')
#: Seconds a serving task waits, after the last done token, for its signalers to exit.
EXIT_GRACE_SECS = 10.0
#: Seconds between liveness probes of the signalers of a serving task.
PROBE_INTERVAL_SECS = 1.0
#: A signaler seen up, then unreachable this long before reporting done, is gone.
GONE_AFTER_SECS = 5.0


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
            'unauthenticated, anyone who can reach their ports can run graph ops (read and write '
            'files) on these hosts; use a trusted network and firewall the ports'
            % ','.join(foreign))


def validate_cluster_params(p) -> None:
    """The cluster rules params.validate_params leaves to this module.

    Raises:
      params.ParamsError: a flag combination a cluster run cannot honour, naming the flags.
    """
    if not p.job_name:
        return
    mode = p.variable_update
    if mode == 'distributed_all_reduce' and not p.controller_host:
        raise params_lib.ParamsError(
            '--variable_update=distributed_all_reduce needs --controller_host: the controller '
            'task builds the one graph of every worker.')
    if p.job_name == 'controller' and mode != 'distributed_all_reduce':
        raise params_lib.ParamsError('--job_name=controller is only for '
                                     '--variable_update=distributed_all_reduce. Received: '
                                     'variable_update=%r' % mode)
    if p.controller_host and mode != 'distributed_all_reduce':
        raise params_lib.ParamsError('--controller_host is only used by '
                                     '--variable_update=distributed_all_reduce; drop it.')
    if not p.cross_replica_sync and mode in ALL_REDUCE_MODES:
        raise params_lib.ParamsError('--variable_update=%s is always synchronous; drop '
                                     '--nocross_replica_sync (asynchronous training: '
                                     'parameter_server or distributed_replicated).' % mode)
    jobs = {'ps_hosts': p.ps_hosts, 'worker_hosts': p.worker_hosts,
            'controller_host': [p.controller_host] if p.controller_host else []}
    seen: dict[str, str] = {}
    for flag, hosts in jobs.items():
        for host in hosts:
            if host in seen and seen[host] != flag:
                raise params_lib.ParamsError('%s is in both --%s and --%s; every task needs its '
                                             'own host:port.' % (host, seen[host], flag))
            seen[host] = flag
    if not p.server_protocol.startswith('grpc'):
        raise params_lib.ParamsError('--server_protocol must be grpc (TensorFlow 2.21 has no '
                                     'other). Received: server_protocol=%r' % p.server_protocol)
    evaluate = 'evaluate the checkpoints of --train_dir with a local --eval run instead'
    unsupported = [
        ('staged_vars', p.staged_vars, 'use --variable_update=distributed_replicated for local '
         'copies of the variables'),
        ('eval', p.eval, evaluate),
        ('freeze_when_forward_only', p.freeze_when_forward_only, 'time a frozen graph locally'),
        ('eval_during_training_every_n_steps', p.eval_during_training_every_n_steps, evaluate),
        ('eval_during_training_every_n_epochs', p.eval_during_training_every_n_epochs, evaluate),
        ('eval_during_training_at_specified_steps', p.eval_during_training_at_specified_steps,
         evaluate),
        ('fp16_enable_auto_loss_scale', p.fp16_enable_auto_loss_scale, 'each worker would skip '
         'overflowing steps on its own and break the lockstep of the workers; use a static '
         '--fp16_loss_scale'),
    ]
    for flag, value, instead in unsupported:
        if value:
            raise params_lib.ParamsError('--%s runs on one host only; drop it from cluster runs '
                                         '(%s).' % (flag, instead))


def task_device(job: str, index: int) -> str:
    """'/job:<job>/replica:0/task:<index>'."""
    return '/job:%s/replica:0/task:%d' % (job, index)


class Cluster:
    """This task's view of the cluster described by the flags.

    Args:
      p: Params with job_name set (validated by params.validate_params).

    Raises:
      params.ParamsError: see validate_cluster_params.
    """

    def __init__(self, p):
        validate_cluster_params(p)
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
        self.server = None
        self.coordination = None  # Coordination, built into the run's graph by `initialize`
        self.restored_step = None

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
        if self.mode == 'distributed_all_reduce':
            return self.job_name == 'controller'
        return self.job_name == 'worker' and self.task_index == 0

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

    # --- Server and sessions.
    def _with_collective_leader(self, config: tf1.ConfigProto) -> tf1.ConfigProto:
        if self.mode == 'collective_all_reduce':
            config.experimental.collective_group_leader = task_device('worker', 0)
        return config

    def start_server(self, base_config: tf1.ConfigProto) -> None:
        """Starts this task's gRPC server (devices as in `base_config`).

        Raises:
          cnn_util.ClusterError: the server cannot listen on its address (port in use?).
        """
        warning = security_warning([h for hs in self.hosts.values() for h in hs])
        if warning:
            cnn_util.warn(warning)
        config = tf1.ConfigProto()
        config.CopyFrom(base_config)
        try:
            self.server = tf1.train.Server(
                self.spec, job_name=self.job_name, task_index=self.task_index,
                protocol=self.params.server_protocol, config=self._with_collective_leader(config),
                start=True)
        except (tf.errors.OpError, ValueError) as e:
            summary = cnn_util.error_summary(e)
            if 'Could not start gRPC server' in summary:
                summary += ' (is the port already in use by another process?)'
            raise cnn_util.ClusterError('cannot start the server of %s: %s' % (
                self.describe(self.job_name, self.task_index), summary)) from None
        cnn_util.log_fn('Started server %s as %s' % (
            self.server.target, self.describe(self.job_name, self.task_index)))

    def session_config(self, base_config: tf1.ConfigProto) -> tf1.ConfigProto:
        """`base_config` plus device filters (only this task and its peers are contacted)."""
        config = tf1.ConfigProto()
        config.CopyFrom(base_config)
        del config.device_filters[:]
        config.device_filters.append(self.local_device)
        for job, index in self.session_peers():
            config.device_filters.append(task_device(job, index))
        return self._with_collective_leader(config)

    def unreachable(self, tasks) -> list[tuple[str, int]]:
        """The tasks among `tasks` whose address does not accept a TCP connection now."""
        return [t for t in tasks if not can_connect(self.address(*t))]

    def wait_for_tasks(self, tasks, what: str) -> None:
        """Waits until every task in `tasks` accepts TCP connections.

        Raises:
          cnn_util.ClusterError: some did not within --startup_timeout_secs; names them.
        """
        deadline = time.monotonic() + self.timeout_secs
        pending = list(tasks)
        logged = False
        while True:
            pending = self.unreachable(pending)
            if not pending:
                return
            if time.monotonic() >= deadline:
                raise cnn_util.ClusterError(
                    '%s: %s unreachable after %g s (--startup_timeout_secs); start %s, or check '
                    '--ps_hosts/--worker_hosts' % (
                        what, ', '.join(self.describe(*t) for t in pending), self.timeout_secs,
                        'it' if len(pending) == 1 else 'them'))
            if not logged:
                cnn_util.log_fn('Waiting up to %g s for %s' % (
                    self.timeout_secs, ', '.join(self.describe(*t) for t in pending)))
                logged = True
            time.sleep(0.25)

    def create_session(self, graph, base_config, trace_policy=None):
        """A session on this task's server, once its peers are up.

        Raises:
          cnn_util.ClusterError: a peer is unreachable after --startup_timeout_secs.
        """
        import step_breakdown
        self.wait_for_tasks(self.session_peers(), 'cannot create the session')
        return step_breakdown.TracedSession(
            self.server.target, graph=graph, config=self.session_config(base_config),
            timeout_secs=self.timeout_secs, error_hook=self.step_error)

    def step_error(self, error, session) -> cnn_util.ClusterError:
        """Turns a failed cluster session.run into a ClusterError naming unreachable peers; tells
        the serving tasks this task failed (best effort)."""
        me = (self.job_name, self.task_index)
        down = self.unreachable([(job, i) for job, hosts in self.hosts.items()
                                 for i in range(len(hosts)) if (job, i) != me])
        names = ', '.join(self.describe(*t) for t in down)
        first = cnn_util.error_summary(error)
        if isinstance(error, tf.errors.DeadlineExceededError):
            text = ('%s waited more than %g s (--startup_timeout_secs) for its peers; %s' % (
                self.describe(self.job_name, self.task_index), self.timeout_secs,
                ('unreachable now: %s' % names) if down else
                'all peers still accept connections: one of them is stuck, stopped early or '
                'runs a different number of steps'))
        else:
            text = 'lost the cluster: %s (TensorFlow: %s)' % (
                ('unreachable now: %s' % names) if down else 'a peer failed', first)
        if self.coordination is not None and ('ps', 0) not in down:
            self.coordination.signal_done(session, status=1, timeout_secs=5.0)
        return cnn_util.ClusterError(text)

    # --- Serving tasks.
    def serve(self) -> dict:
        """Serves this task's graph ops until every signaler is done, then returns.

        Returns:
          {'role': job name, 'task_index': ..., 'served_secs': seconds}.

        Raises:
          cnn_util.ClusterError: a signaler reported a failure, or was unreachable for
            --startup_timeout_secs before reporting done.
        """
        import cluster_hooks
        start = time.monotonic()
        signalers = self.signalers()
        me = (self.job_name, self.task_index)
        cnn_util.log_fn('Serving %s until %d task(s) report done: %s' % (
            self.describe(*me), len(signalers), ', '.join('%s %d' % t for t in signalers)))
        graph = tf.Graph()
        with graph.as_default():
            dequeue = cluster_hooks.done_queue(me, len(signalers)).dequeue()
        config = tf1.ConfigProto(device_filters=[self.local_device])
        pending = set(signalers)
        down_since: dict = {}
        seen_up: set = set()
        last_probe = 0.0
        with tf1.Session(self.server.target, graph=graph, config=config) as sess:
            while pending:
                try:
                    index, status = sess.run(dequeue, options=tf1.RunOptions(
                        timeout_in_ms=int(PROBE_INTERVAL_SECS * 1000)))
                except tf.errors.DeadlineExceededError:
                    index = None
                if index is not None:
                    task = (signalers[0][0], int(index))
                    pending.discard(task)
                    if status != 0:
                        raise cnn_util.ClusterError('%s reported a failure; %s stops (see that '
                                                    'task\'s log)' % (self.describe(*task),
                                                                      self.describe(*me)))
                    cnn_util.log_fn('%s is done (%d to go)' % (self.describe(*task),
                                                              len(pending)))
                    continue
                if time.monotonic() - last_probe >= PROBE_INTERVAL_SECS:
                    last_probe = time.monotonic()
                    self._check_alive(pending, down_since, seen_up)
        self._wait_for_exit(signalers)
        secs = time.monotonic() - start
        cnn_util.log_fn('%s: every task is done after %.1f s; exiting' % (self.describe(*me), secs))
        return {'role': self.job_name, 'task_index': self.task_index, 'served_secs': secs}

    def _check_alive(self, pending, down_since, seen_up) -> None:
        """Raises when a pending signaler is gone: unreachable for GONE_AFTER_SECS after it was
        seen up (its process exited), or for --startup_timeout_secs if never seen up."""
        now = time.monotonic()
        down = set(self.unreachable(sorted(pending)))
        me = self.describe(self.job_name, self.task_index)
        for task in pending:
            if task not in down:
                down_since.pop(task, None)
                seen_up.add(task)
                continue
            since = down_since.setdefault(task, now)
            if task in seen_up and now - since >= GONE_AFTER_SECS:
                raise cnn_util.ClusterError(
                    '%s went away before reporting done (its process exited: see its log); %s '
                    'stops' % (self.describe(*task), me))
            if now - since >= self.timeout_secs:
                raise cnn_util.ClusterError(
                    '%s was unreachable for %g s (--startup_timeout_secs) before reporting done '
                    '(it never started or it died); %s stops' % (
                        self.describe(*task), self.timeout_secs, me))

    def _wait_for_exit(self, tasks) -> None:
        """Lets done signalers close their sessions (which talk to this task) before it exits."""
        deadline = time.monotonic() + EXIT_GRACE_SECS
        up = list(tasks)
        while up and time.monotonic() < deadline:
            up = [t for t in up if can_connect(self.address(*t), 0.5)]
            if up:
                time.sleep(0.1)

    # --- Initialisation of a worker (or the controller).
    def initialize(self, sess, info, bench) -> None:
        """Chief: initialise or restore, then tell the others; others: wait for the chief, then
        initialise what lives on their own task. Then the manager's post-init ops (copies from
        the master variables) and the input pipeline's warm-up.

        Raises:
          cnn_util.ClusterError: the chief did not signal ready within --startup_timeout_secs.
          checkpoints.CheckpointError: the checkpoint to restore does not fit the model.
        """
        import checkpoints
        import cluster_hooks
        import cluster_testing
        self.coordination = coord = cluster_hooks.Coordination(self, info.graph)
        post_init = info.mgr.post_init_ops()
        if self.job_name == 'controller' or self.mode == 'collective_all_reduce':
            # Every variable of this graph is this process's own; in collective mode the
            # post-init ops broadcast the chief's values (a collective that waits for all).
            if self.is_chief:
                self.restored_step = checkpoints.restore_or_initialize(sess, info, bench)
            else:
                sess.run(info.init_ops)
                if post_init:
                    sess.run(post_init)
        elif self.is_chief:
            self.restored_step = checkpoints.restore_or_initialize(sess, info, bench)
            if cluster_testing.apply_initial_values(sess, info, self) and post_init:
                sess.run(post_init)
            if self.num_workers > 1:
                sess.run(coord.ready_signal)
        else:
            cnn_util.log_fn('Waiting for the chief (%s) to initialise the variables' %
                            self.describe('worker', 0))
            try:
                sess.run(coord.ready_wait)
            except cnn_util.ClusterError as e:
                raise cnn_util.ClusterError('the chief did not initialise the variables: %s'
                                            % e) from None
            own = [v for v in tf1.global_variables() + tf1.local_variables()
                   if self.owns(v.device)]
            sess.run(tf1.variables_initializer(own))
            if post_init:
                sess.run(post_init)
        cluster_testing.apply_inputs(sess, info, self, len(bench.devices))
        bench.restored_step = self.restored_step
        if info.pipeline.warmup_ops:
            sess.run(info.pipeline.warmup_ops)

    def owns(self, device: str) -> bool:
        """True when an op placed on `device` runs on this task (empty or job-less: local)."""
        spec = tf.DeviceSpec.from_string(device or '')
        if spec.job is None:
            return True
        return spec.job == self.job_name and (spec.task or 0) == self.task_index

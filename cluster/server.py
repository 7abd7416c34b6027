"""This task's gRPC server: start-up, sessions with deadlines, the serve loop, initialisation.

`TaskServer` is what a cluster task does with the network (cluster/topology.py's `Cluster` says
what the cluster looks like):

  * `start`: this task's `tf.compat.v1.train.Server`;
  * `create_session`: a session on that server once every peer it needs accepts TCP
    connections (bounded by --startup_timeout_secs; the error names each unreachable task).
    TensorFlow itself waits forever in CreateSession for a peer that is down (measured in TF
    2.21: neither ConfigProto.operation_timeout_in_ms nor RunOptions.timeout_in_ms bounds it);
  * `serve`: ps tasks (and the workers of distributed_all_reduce, whose graph the controller
    builds) serve until every task that uses them reported done, then exit 0 by themselves;
  * `initialize_variables`, then `post_init`: first the workers check that their run-defining
    flags are the chief's (cluster/run_flags.py); then the chief (worker 0, or the controller)
    initialises or restores, the other workers wait for its "ready" token (cluster/
    coordination.py has the queues); the hooks' after_initialize phase runs between the two.

Start order does not matter: a task that starts first waits for its peers.

Faults: every session.run of a cluster task has a deadline of --startup_timeout_secs, so a step
that waits for a dead peer (a sync barrier, a lost ps) fails instead of hanging; the error
(cnn_util.ClusterError, exit status 1) names the worker that failed and why (its failure mark:
cluster/coordination.py), else the peers that are unreachable at that moment. A serving task
exits with status 1 when a signaler reports a failure (after at most FAILURE_GRACE_SECS for the
others to read the failure mark it holds), goes away (it was up, then its port stays closed for
GONE_AFTER_SECS) or stays unreachable for --startup_timeout_secs before reporting done (it never
started); on SIGINT, SIGTERM or SIGHUP it says so and exits 130, 143 or 129, unless every
signaler had reported done (tf_cnn_cluster stops its ps tasks once the workers exited): then it
says so in its last line and exits 0.
"""

from __future__ import annotations

import os
import signal
import time

import tensorflow as tf

from .. import cnn_util
from ..lifecycle import checkpoints, signals
from ..runtime import traced_session
from . import coordination, flag_check, run_flags
from .topology import Cluster, can_connect, exposure_line, task_device

tf1 = tf.compat.v1

#: Seconds a serving task waits, after the last done token, for its signalers to exit.
EXIT_GRACE_SECS = 10.0
#: Seconds between liveness probes of the signalers of a serving task.
PROBE_INTERVAL_SECS = 1.0
#: Seconds between a serving task's looks at its done queue while it is empty.
TOKEN_POLL_SECS = 0.1
#: Deadline of the dequeue of a done token the queue holds (seconds): it returns at once.
TOKEN_TAKE_TIMEOUT_SECS = 30.0
#: A signaler seen up, then unreachable this long before reporting done, is gone.
GONE_AFTER_SECS = 5.0
#: After a lost connection, seconds to probe for the peer that went away before blaming none.
PEER_GONE_PROBE_SECS = 2.0
#: After a signaler's failure token, at most this many seconds a serving task stays up for the
#: other signalers to exit (ps 0 holds the stop marks they read to name the failed worker).
FAILURE_GRACE_SECS = 5.0


def port_in_use_advice(cluster: Cluster) -> str:
    """Why a task's gRPC server cannot listen on its address, and the fix. In a cluster the
    likely cause is another task given the same address: a host list in another order, or two
    tasks with one --task_index (the first to start takes the port, the others fail or wait).

    Args:
      cluster: this task's Cluster (params.cluster_resolver: where its addresses came from).
    """
    fix = {'tf_config': 'give every task the same cluster in TF_CONFIG, each its own task '
                        'index',
           'slurm': 'give each Slurm step on a node its own --slurm_port_base'}.get(
               getattr(cluster.params, 'cluster_resolver', 'flags'),
               'give every task the same %s, each its own --task_index' % cluster.hosts_origin)
    return ('the port is in use: another task of this cluster may have been given this '
            'address; %s; else another process holds the port' % fix)


def take_done_token(sess, queued, dequeue, poll_secs: float = TOKEN_POLL_SECS):
    """The next done token (signaler index, status) of a serving task's done queue, or None
    after `poll_secs` when the queue holds none.

    The task is the queue's only reader and dequeues only a token the queue holds (`queued`),
    so the dequeue returns at once. A dequeue waiting under a short deadline (to look at
    signals between tokens) lost a token when the deadline fired after the token was taken:
    TensorFlow 2.21 gives DeadlineExceeded and drops it (4 of 300 tokens with a 5 ms deadline
    on a loaded host); the ps then said 'worker 1 (...) went away before reporting done'.

    Args:
      sess: the serving task's session; queued: the queue's size (int32 []); dequeue: its
        dequeue (index int32 [], status int32 []).

    Raises:
      tf.errors.OpError: the queue cannot be read (the task's own server failed).
    """
    if int(sess.run(queued)) <= 0:
        time.sleep(poll_secs)
        return None
    index, status = sess.run(dequeue, options=tf1.RunOptions(
        timeout_in_ms=int(TOKEN_TAKE_TIMEOUT_SECS * 1000)))
    return int(index), int(status)


class _SignalFlag(signals.HandlerSwap):
    """While entered (main thread only), SIGINT, SIGTERM and SIGHUP set `name` ('SIGTERM')
    instead of ending the process: a serving task's wait then ends with a line and its exit
    status (a ps killed by SIGTERM used to exit 143 without a word). A second signal acts as
    before."""

    def __init__(self):
        super().__init__()
        self.name = None

    def _handle(self, signum, frame):
        if self.name is not None:  # a second signal: the previous handling
            previous = self._previous.get(signum)
            if callable(previous):
                previous(signum, frame)
                return
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        self.name = signal.Signals(signum).name



class TaskServer:
    """This task's server and the sessions, waits and serve loop that use it.

    Args:
      cluster: this task's Cluster.

    Attributes:
      server: the tf.compat.v1.train.Server, once `start` ran.
      coordination: the coordination.Coordination of the run's graph, once
        `initialize_variables` ran.
    """

    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.server = None
        self.coordination = None
        self._session_args = None
        self._checking = False  # the start-up check runs: a failed run tells no serving task
        self._lobby = None  # the start-up check's flag_check.Lobby, while it runs

    @property
    def name(self) -> str:
        """This task, for messages: 'worker 1 (localhost:2223)'."""
        return self.cluster.describe(self.cluster.job_name, self.cluster.task_index)

    def _with_collective_leader(self, config: tf1.ConfigProto) -> tf1.ConfigProto:
        if self.cluster.mode == 'collective_all_reduce':
            config.experimental.collective_group_leader = task_device('worker', 0)
        return config

    def start(self, base_config: tf1.ConfigProto) -> None:
        """Starts this task's gRPC server (devices as in `base_config`), then prints one line
        on who can reach its port (topology.exposure_line: the server listens on every
        interface).

        Raises:
          cnn_util.ClusterError: the server cannot listen on its address (port in use:
            `port_in_use_advice`).
        """
        c = self.cluster
        config = tf1.ConfigProto()
        config.CopyFrom(base_config)
        try:
            self.server = tf1.train.Server(
                c.spec, job_name=c.job_name, task_index=c.task_index,
                protocol=c.params.server_protocol, config=self._with_collective_leader(config),
                start=True)
        except (tf.errors.OpError, ValueError) as e:
            summary = cnn_util.error_summary(e)
            if 'Could not start gRPC server' in summary:
                summary += ' (%s)' % port_in_use_advice(c)
            raise cnn_util.ClusterError('cannot start the server of %s: %s' % (
                self.name, summary)) from None
        cnn_util.log_fn('Started server %s as %s' % (
            self.server.target, self.name))
        kind, line = exposure_line([h for hs in c.hosts.values() for h in hs], self.name,
                                   c.address(c.job_name, c.task_index))
        (cnn_util.warn if kind == 'warning' else cnn_util.note)(line)

    def session_config(self, base_config: tf1.ConfigProto) -> tf1.ConfigProto:
        """`base_config` plus device filters (only this task and its peers are contacted)."""
        config = tf1.ConfigProto()
        config.CopyFrom(base_config)
        del config.device_filters[:]
        config.device_filters.append(self.cluster.local_device)
        for job, index in self.cluster.session_peers():
            config.device_filters.append(task_device(job, index))
        return self._with_collective_leader(config)

    def unreachable(self, tasks) -> list[tuple[str, int]]:
        """The tasks among `tasks` whose address does not accept a TCP connection now."""
        return [t for t in tasks if not can_connect(self.cluster.address(*t))]

    def wait_for_tasks(self, tasks, what: str) -> None:
        """Waits until every task in `tasks` accepts TCP connections; meanwhile a worker with
        a lobby (flag_check.Lobby: from `create_session`) compares its run-defining flags with
        the other workers' there, about once a second.

        A task it cannot reach may never have started, or have stopped with its cluster's run
        (a ps task exits once that run ended or failed: a start-up mismatch of the
        run-defining flags stops it with the chief and the other workers, so a worker started
        after them finds no task that could say why); the error says both, and when other
        tasks of the cluster are up, that this task's host lists may give it another address
        (`_unreachable_line`).

        Raises:
          cnn_util.ClusterError: some did not within --startup_timeout_secs; names them. Or
            the lobby's line: this worker's flags differ from the chief's.
        """
        deadline = time.monotonic() + self.cluster.timeout_secs
        pending = list(tasks)
        logged = False
        while True:
            pending = self.unreachable(pending)
            if not pending:
                return
            line = self._lobby.mismatch() if self._lobby is not None else None
            if line is not None:
                raise cnn_util.ClusterError(line)
            if time.monotonic() >= deadline:
                raise cnn_util.ClusterError(self._unreachable_line(pending, what))
            if not logged:
                cnn_util.log_fn('Waiting up to %g s for %s' % (
                    self.cluster.timeout_secs,
                    ', '.join(self.cluster.describe(*t) for t in pending)))
                logged = True
            time.sleep(0.25)

    def _unreachable_line(self, pending, what: str) -> str:
        """The error of tasks that stayed unreachable; when other tasks of the cluster are up,
        it says that this task's host lists may give the missing ones another address than
        the others' (a worker given another --ps_hosts port waited for a ps nobody runs)."""
        c = self.cluster
        one = len(pending) == 1
        names = ', '.join(c.describe(*t) for t in pending)
        me = (c.job_name, c.task_index)
        up = [t for t in c.tasks if t != me and t not in pending
              and can_connect(c.address(*t), 0.5)]
        stopped = ('stopped (a task stops when its cluster\'s run ends or fails: %s)'
                   % ('its log says why' if one else 'their logs say why'))
        if not up:
            return ('%s: %s unreachable after %g s (--startup_timeout_secs): not started yet, '
                    'or %s; start %s, or check %s' % (what, names, c.timeout_secs, stopped,
                                                      'it' if one else 'them', c.hosts_origin))
        return ('%s: %s unreachable after %g s (--startup_timeout_secs), while %s %s up: if '
                '%s, this task\'s %s give %s another address than the other tasks\' (give '
                'every task the same); else %s not started yet, or %s' % (
                    what, names, c.timeout_secs, ', '.join(c.describe(*t) for t in up),
                    'is' if len(up) == 1 else 'are', '%s %d runs' % pending[0] if one
                    else 'they run',
                    c.hosts_origin, 'it' if one else 'them', 'it was' if one else 'they were',
                    stopped))

    def create_session(self, graph, base_config, flag_values: dict | None = None):
        """A session on this task's server, once its peers are up.

        Args:
          graph, base_config: the session's graph and ConfigProto (before device filters).
          flag_values: this task's run_flags.run_flag_values, for the start-up check's lobby
            (flag_check.Lobby: a worker of a cluster with ps tasks compares them with the
            other workers' while it waits); None: no lobby.

        Raises:
          cnn_util.ClusterError: a peer is unreachable after --startup_timeout_secs, or the
            lobby's line (this worker's flags differ from the chief's).
        """
        if flag_values is not None and flag_check.Lobby.wanted(self.cluster):
            self._lobby = flag_check.Lobby(self.cluster, self.server.target, flag_values)
        self.wait_for_tasks(self.cluster.session_peers(), 'cannot create the session')
        self._session_args = (graph, base_config)
        return traced_session.TracedSession(
            self.server.target, graph=graph, config=self.session_config(base_config),
            timeout_secs=self.cluster.timeout_secs, error_hook=self.step_error)

    def step_error(self, error, session) -> Exception | None:
        """Turns a failed cluster session.run into a ClusterError naming the worker that failed
        (its failure mark: cluster/coordination.py) or else the unreachable peers; tells the
        reachable serving tasks this task failed (best effort). When another worker marked a
        stop (a closed sync queue, or any failure once it stopped), a cnn_util.StopRequested
        instead: no failure. None (the error stands) for an OutOfRangeError without a stop mark
        (the end of an input, not a cluster error)."""
        c = self.cluster
        mark = None
        if (self.coordination is not None and c.job_name == 'worker' and c.num_workers > 1
                and not self._checking):
            mark = self.coordination.read_stop(session)
            if mark is not None and mark.kind == 'stop':
                return cnn_util.StopRequested(mark.describe(c))
        if isinstance(error, tf.errors.OutOfRangeError) and mark is None:
            return None
        me = (self.cluster.job_name, self.cluster.task_index)
        peers = [(job, i) for job, hosts in self.cluster.hosts.items()
                 for i in range(len(hosts)) if (job, i) != me
                 and not (job == 'ps' and c.mode == 'collective_all_reduce')]  # no ps there
        if mark is not None:  # another worker failed and said why
            if not self._checking:
                self.coordination.signal_done(session, status=1, timeout_secs=5.0,
                                              skip=self.unreachable(c.serving_tasks()))
            return cnn_util.ClusterError(coordination.failed_peer_line(c, mark))
        down = self.unreachable(peers)
        deadline = time.monotonic() + PEER_GONE_PROBE_SECS
        while not down and not isinstance(error, tf.errors.DeadlineExceededError) \
                and time.monotonic() < deadline:  # a peer that reset the connection may be
            time.sleep(0.1)                        # still closing its port
            down = self.unreachable(peers)
        down = self.cluster.causes_first(down)
        names = ', '.join(self.cluster.describe(*t) for t in down)
        first = cnn_util.error_summary(error)
        if isinstance(error, tf.errors.DeadlineExceededError):
            text = ('%s waited more than %g s (--startup_timeout_secs) for its peers; %s' % (
                self.name, self.cluster.timeout_secs,
                ('unreachable now: %s' % names) if down else
                'all peers still accept connections: one of them is stuck, stopped early or '
                'runs a different number of steps'))
        elif down and self._checking:  # flag_check.FlagCheck reads TensorFlow's words
            text = 'lost the cluster: unreachable now: %s (TensorFlow: %s)' % (names, first)
        elif down:  # the peer that went away is the cause: TensorFlow's words add nothing
            text = 'lost the cluster: unreachable now: %s' % self.cluster.lost_words(down)
        else:
            text = 'lost the cluster: a peer failed (TensorFlow: %s)' % first
        if self.coordination is not None and not self._checking:
            self.coordination.signal_done(session, status=1, timeout_secs=5.0, skip=down)
        return cnn_util.ClusterError(text)

    # --- Serving tasks.
    def serve(self, flag_values: dict | None = None) -> dict:
        """Serves this task's graph ops until every signaler is done, then returns.

        Args:
          flag_values: this task's run_flags.run_flag_values (a ps task's, or a worker's of
            distributed_all_reduce): written into its own run-flags table first, for the
            start-up check of the workers (or the controller: `check_run_flags`); None writes
            none.

        Returns:
          {'role': job name, 'task_index': ..., 'served_secs': seconds}.

          From its line `Serving ps 0 (...) until ...` on, a SIGINT, SIGTERM or SIGHUP ends
          the wait within TOKEN_POLL_SECS: the line `Stopped by
          SIGTERM while serving ...` and 'stopped_by_signal' ('SIGINT', 'SIGTERM' or 'SIGHUP':
          exit status 130, 143 or 129, lifecycle/signals.exit_status) in the returned dict;
          once every signaler reported done, one ends the wait for their exit, no error
          (`_end_serving`).

        Raises:
          cnn_util.ClusterError: a signaler reported a failure (the start-up check's line when
            this task's flags, or a worker's, differ from the chief's), or was unreachable
            for --startup_timeout_secs before reporting done.
        """
        start = time.monotonic()
        signalers = self.cluster.signalers()
        me = (self.cluster.job_name, self.cluster.task_index)
        graph = tf.Graph()
        with graph.as_default():
            done = coordination.done_queue(me)
            dequeue, queued = done.dequeue(), done.size()
            if flag_values is not None:  # a ps task, or a worker of distributed_all_reduce
                key = run_flags.entry_key(*me, self.cluster.address(*me))
                put, read = coordination.run_flags_table_ops(
                    me, run_flags.entry_id(key), run_flags.encode_entry(key, flag_values))
            else:
                put = read = None
            marks = (coordination.stop_marks_read(me) if me == self.cluster.coordinator
                     else None)
        config = tf1.ConfigProto(device_filters=[self.cluster.local_device])
        pending = set(signalers)
        down_since: dict = {}
        seen_up: set = set()
        last_probe = 0.0
        with tf1.Session(self.server.target, graph=graph, config=config) as sess, \
                _SignalFlag() as signalled:
            if put is not None:
                sess.run(put)
            # Once a signal is a line and an exit status (_SignalFlag), not before.
            cnn_util.log_fn('Serving %s until %d task(s) report done: %s' % (
                self.cluster.describe(*me), len(signalers),
                ', '.join('%s %d' % t for t in signalers)))
            while pending:
                if signalled.name:
                    cnn_util.log_fn('Stopped by %s while serving %s: %s had not reported done' % (
                        signalled.name, self.cluster.describe(*me),
                        ', '.join('%s %d' % t for t in sorted(pending))))
                    return {'role': self.cluster.job_name, 'task_index': self.cluster.task_index,
                            'served_secs': time.monotonic() - start,
                            'stopped_by_signal': signalled.name}
                token = take_done_token(sess, queued, dequeue)
                if token is not None:
                    index, status = token
                    task = (signalers[0][0], int(index))
                    pending.discard(task)
                    if status != 0:
                        self._wait_for_exit(sorted(pending), FAILURE_GRACE_SECS)
                        task = self._first_failed(sess, marks) or task
                        raise cnn_util.ClusterError(
                            self._mismatch(sess, read) or '%s reported a failure; %s stops (see '
                            'that task\'s log)' % (self.cluster.describe(*task),
                                                   self.cluster.describe(*me)))
                    cnn_util.log_fn('%s is done (%d to go)' % (self.cluster.describe(*task),
                                                              len(pending)))
                    continue
                if time.monotonic() - last_probe >= PROBE_INTERVAL_SECS:
                    last_probe = time.monotonic()
                    self._check_alive(pending, down_since, seen_up)
        return self._end_serving(signalers, start)

    def _end_serving(self, signalers, start: float) -> dict:
        """Every signaler reported done: lets them exit (`_wait_for_exit`), says so and
        returns serve's dict. A SIGINT, SIGTERM or SIGHUP now (tf_cnn_cluster stops its ps
        tasks once the workers exited, and a worker's exit is what this task waits for) cut
        the wait short with no work left: said in the same line, no error, exit status 0
        (before: `error: interrupted by SIGTERM`, 143, after `worker 0 ... is done (0 to go)`).
        """
        with _SignalFlag() as signalled:
            self._wait_for_exit(signalers, stop=lambda: signalled.name is not None)
            secs = time.monotonic() - start
            stopped = ('; %s came as they exited, with nothing left to serve' % signalled.name
                       if signalled.name else '')
            cnn_util.log_fn('%s: every task is done after %.1f s%s; exiting'
                            % (self.name, secs, stopped))
        return {'role': self.cluster.job_name, 'task_index': self.cluster.task_index,
                'served_secs': secs}

    def _first_failed(self, sess, marks) -> tuple[str, int] | None:
        """The worker whose own run failed, from the stop marks this coordinator holds (a
        worker that stops because of another's failure reports a failure too, and its token
        may come first), or None (not the coordinator, no failure mark, unreadable)."""
        if marks is None:
            return None
        try:
            index = coordination.failed_worker(*sess.run(marks))
        except tf.errors.OpError:
            return None
        return None if index is None else ('worker', index)

    def _mismatch(self, sess, read) -> str | None:
        """The start-up check's mismatch line as this ps task's own table has it (its own
        entry and the workers': run_flags.judge), or None (no table, no mismatch, unreadable)."""
        if read is None:
            return None
        try:
            entries, _ = run_flags.decode_entries(sess.run(read))
        except (tf.errors.OpError, ValueError):
            return None
        verdict, line = run_flags.judge(entries, self.cluster.num_workers)
        return line if verdict == 'mismatch' else None

    def _check_alive(self, pending, down_since, seen_up) -> None:
        """Raises when a pending signaler is gone: unreachable for GONE_AFTER_SECS after it was
        seen up (its process exited), or for --startup_timeout_secs if never seen up."""
        now = time.monotonic()
        down = set(self.unreachable(sorted(pending)))
        me = self.name
        for task in pending:
            if task not in down:
                down_since.pop(task, None)
                seen_up.add(task)
                continue
            since = down_since.setdefault(task, now)
            if task in seen_up and now - since >= GONE_AFTER_SECS:
                raise cnn_util.ClusterError(
                    '%s went away before reporting done (its process exited: see its log); %s '
                    'stops' % (self.cluster.describe(*task), me))
            if now - since >= self.cluster.timeout_secs:
                raise cnn_util.ClusterError(
                    '%s was unreachable for %g s (--startup_timeout_secs) before reporting done '
                    '(it never started or it died); %s stops' % (
                        self.cluster.describe(*task), self.cluster.timeout_secs, me))

    def _wait_for_exit(self, tasks, grace_secs: float = EXIT_GRACE_SECS,
                       stop=lambda: False) -> None:
        """Lets done signalers close their sessions (which talk to this task) before it exits
        (at most `grace_secs`; `stop()` True ends the wait earlier)."""
        deadline = time.monotonic() + grace_secs
        up = list(tasks)
        while up and time.monotonic() < deadline and not stop():
            up = [t for t in up if can_connect(self.cluster.address(*t), 0.5)]
            if up:
                time.sleep(0.1)

    # --- Initialisation of a worker (or the controller).
    def check_run_flags(self, sess, values: dict) -> None:
        """Checks at start-up that every worker runs the chief's run-defining flags (host
        lists included), and every ps task its flags of the variables (run_flags.PS_FLAGS).

        Each worker writes its values to the shared table (coordination.Coordination
        .run_flags_ops; in a cluster with ps tasks also to worker 0's, the lobby: cluster/
        flag_check.py), then reads the tables until every worker of its --worker_hosts and
        every ps task of its --ps_hosts wrote (a ps task as it starts to serve: `serve`), or
        two entries disagree, and judges the entries as every other worker does
        (run_flags.judge). On a mismatch every worker stops with the same line; the chief
        also tells the serving tasks it failed (a ps task then stops with the line too).

        Args:
          sess: this task's session (its runs have the --startup_timeout_secs deadline).
          values: this task's run_flags.run_flag_values.

        Raises:
          cnn_util.ClusterError: one line: the tasks, the flags and both values
            (run_flags.judge), or the tasks that never answered within
            --startup_timeout_secs (flag_check.missing_line).
        """
        if self._lobby is None and flag_check.Lobby.wanted(self.cluster):
            self._lobby = flag_check.Lobby(self.cluster, self.server.target, values)
        check = flag_check.FlagCheck(self.cluster, self.coordination, values, self._lobby,
                                     self._new_session)
        self._checking = True
        try:
            sess, line = check.await_verdict(sess)
        finally:
            self._checking = False
        lobby, self._lobby = self._lobby, None
        if line is None:
            if lobby is not None:  # a failed run exits without it: worker 0 may be gone
                lobby.close()
            return
        check.conclude(sess)
        raise cnn_util.ClusterError(line)

    def _new_session(self):
        """A new session of this task's graph (flag_check.FlagCheck, after TensorFlow dropped
        the first), or None before `create_session` ran."""
        if self._session_args is None:
            return None
        graph, base_config = self._session_args
        return traced_session.TracedSession(
            self.server.target, graph=graph, config=self.session_config(base_config),
            timeout_secs=self.cluster.timeout_secs, error_hook=self.step_error)

    def initialize_variables(self, sess, info, p, flag_values=None) -> int | None:
        """The start-up check of the run-defining flags (`check_run_flags`, with
        `flag_values`); then, chief: initialise or restore; others: wait for the chief, then
        initialise what lives on their own task. The variables then hold their initial (or the
        chief's restored) values: the hooks' after_initialize phase comes next
        (lifecycle/phase_runner.py), then `post_init`.

        Args:
          sess: this task's session; info: the run's graph.graph_info.GraphInfo; p: its Params;
          flag_values: this task's run_flags.run_flag_values; None skips the check.

        Returns:
          The restored global step (the chief, when it restored a checkpoint), else None.

        Raises:
          cnn_util.ClusterError: the chief did not signal ready within --startup_timeout_secs;
            run-defining flags differ from the chief's (check_run_flags).
          checkpoints.CheckpointError: the checkpoint to restore does not fit the model.
        """
        c = self.cluster
        self.coordination = coord = coordination.Coordination(c, info.graph)
        if coord.checks_flags and flag_values is not None:
            self.check_run_flags(sess, flag_values)
        if c.is_chief:
            # The controller's and collective mode's variables are all this process's own; in
            # collective mode the post-init ops broadcast the chief's values (a collective that
            # waits for every worker).
            return checkpoints.initialize_or_restore(sess, info, p)
        if c.mode == 'collective_all_reduce':
            sess.run(info.init_ops)
            return None
        cnn_util.log_fn('Waiting for the chief (%s) to initialise the variables' %
                        c.describe('worker', 0))
        try:
            sess.run(coord.ready_wait)
        except cnn_util.ClusterError as e:
            raise cnn_util.ClusterError('the chief did not initialise the variables: %s'
                                        % e) from None
        own = [v for v in tf1.global_variables() + tf1.local_variables() if c.owns(v.device)]
        sess.run(tf1.variables_initializer(own))
        return None

    def post_init(self, sess, info) -> None:
        """After the hooks' after_initialize phase: the manager's post-init ops (copies from
        the master variables, broadcasts); the chief then tells the others the variables are
        ready; then the input pipeline's warm-up."""
        c = self.cluster
        checkpoints.post_init(sess, info)
        if c.is_chief and c.job_name != 'controller' and c.mode != 'collective_all_reduce' \
                and c.num_workers > 1:
            sess.run(self.coordination.ready_signal)
        if info.pipeline.warmup_ops:
            sess.run(info.pipeline.warmup_ops)

"""Coordination of a cluster run's tasks through shared queues, and the hooks of a worker's run.

Coordination queues (FIFOQueues with shared names, so every task's graph refers to the same one):

  name                 lives on            written by -> read by
  tfcnn_ready          coordinator         chief -> other workers: variables initialised/restored
  tfcnn_stats          coordinator         each worker -> chief: (task, images/sec, steps, secs,
                                           images, timed part's wall start and end)
  tfcnn_release        worker 0 (no ps)    chief -> other workers: stats gathered, you may exit
  tfcnn_done_<job>_<i> each serving task   each signaler -> serving task: (task, status)

Besides, a shared table (not a queue: every worker reads every entry), `tfcnn_run_flags`, on
every ps task (on every worker without ps): each worker -> all, its run-defining flags under its
role and address, and each ps task -> its own table, its own (cluster/run_flags.py); and the
stop mark, `tfcnn_stop` on the coordinator: each worker -> the others, under its task index,
what stopped its run early ('was interrupted (SIGINT)'). The done queues
and the run-flags table have no capacity, and nothing is fed into them (their elements are
constants of the graph), so tasks started with other host lists still reach them, and the
start-up check names the lists.

The coordinator is ps 0 when there are ps tasks, else worker 0. This module builds the queue ops
into a graph (`Coordination`, `done_queue`) and gives a worker's or the controller's run its
hooks (`cluster_hooks`): `ClusterStopHook` (a worker's early stop passed on to the other
workers), `ClusterStatsHook` (a worker's `total images/sec` as the original meant it and its
own figure, per-worker images/sec gathered by the chief, which prints the cluster total:
cluster/figures.py) and `ClusterDoneHook` (the done tokens that let the serving tasks exit;
cluster/server.py's serve loop waits for them).

A worker whose loop stopped early (SIGINT or SIGTERM: lifecycle/signals.py; the chief's
accuracy target reached) writes its stop mark, then closes the queues of synchronous updates
that the others wait on (variable_managers/distributed.SyncPoint: the chief closes the other
workers' go queues, another worker the ready queue the chief waits on). A worker waiting in a
step for a token then gets a closed-queue error, finds the mark (TaskServer.step_error) and
stops cleanly: the step is not counted, its total block, `Stopped after N timed steps: the
chief, worker 0 (...), was interrupted (SIGINT)` (or `worker 1 (...) was interrupted
(SIGINT)`), its images/sec to the chief, its done token, exit status 0; a chief stopped so
closes the go queues in turn, for the workers still waiting. Asynchronous workers wait for no
token: they read the marks about once a second (`should_stop`). In collective_all_reduce a step
waits in an all-reduce no queue can wake: a thread of each worker reads the marks about once a
second and cancels the step that waits for the stopped worker (`ClusterStopHook._watch`). The
chief then gathers every worker's figures as after a complete run; the stopped worker exits
130 (143 for SIGTERM), the others 0.

A worker whose loop failed (a NaN loss, bad data) writes a failure mark ('fail': the first
clause of its error) and closes the same queues (`ClusterStopHook.abort`), so the others stop
with one line naming it and its reason (`failed_peer_line`) instead of a lost connection.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import NamedTuple

import tensorflow as tf

from .. import cnn_util
from ..lifecycle import run_hooks, training_loop
from . import figures
from .topology import Cluster, can_connect, task_device

tf1 = tf.compat.v1

#: How long worker 0 waits, after the last release token is taken, for the other workers to
#: exit (seconds).
RELEASE_GRACE_SECS = 10.0
#: Seconds between a worker's reads of the stop mark (asynchronous updates need them).
STOP_POLL_SECS = 1.0
#: Deadline of one read or write of the stop mark (seconds).
STOP_MARK_TIMEOUT_SECS = 5.0
#: Why a worker has no images/sec in the chief's lines (a run that timed no step): the words
#: of its own total line (lifecycle/training_loop.py).
NOTHING_TIMED = training_loop.NOTHING_TIMED


def done_queue(task: tuple[str, int]) -> tf1.FIFOQueue:
    """The done queue of serving task `task`: elements (signaler index int32, status int32).

    Unbounded: a capacity from this task's host lists would make TensorFlow refuse the queue
    (`Shared queue ... has capacity 3 but requested capacity was 2`) to a task whose lists
    differ, before it could report that they do."""
    job, index = task
    with tf1.device(task_device(job, index) + '/device:CPU:0'):
        return tf1.FIFOQueue(-1, [tf.int32, tf.int32], shapes=[[], []],
                             shared_name='tfcnn_done_%s_%d' % (job, index),
                             name='done_queue_%s_%d' % (job, index))


def run_flags_table_ops(task: tuple[str, int], key: int, value: bytes):
    """(put, read) of the run-flags table on `task` (cluster/run_flags.py), in the default
    graph: the op writing entry `key` (int64, run_flags.entry_id) with `value` (its
    encode_entry), and the tensor of every value the table holds (string [entries]). A
    worker's graph has one pair per table (`Coordination.run_flags_ops`); a ps task's serve
    loop writes its own entry into its own table and reads it with them."""
    with tf1.device(task_device(*task) + '/device:CPU:0'):
        # int64 keys: TensorFlow has no string -> string MutableHashTable kernel.
        table = tf.raw_ops.MutableHashTableV2(
            shared_name='tfcnn_run_flags', use_node_name_sharing=False,
            key_dtype=tf.int64, value_dtype=tf.string)
        put = tf.raw_ops.LookupTableInsertV2(table_handle=table,
                                             keys=tf.constant([key], tf.int64),
                                             values=tf.constant([value]))
        return put, tf.raw_ops.LookupTableExportV2(table_handle=table, Tkeys=tf.int64,
                                                   Tvalues=tf.string)[1]


class Coordination:
    """The coordination queues of a worker's or the controller's graph (see module docstring).

    Built into `graph` once the session exists (the ops are added to the graph then; nothing
    here changes the model's op ids or random seeds).
    """

    def __init__(self, cluster: Cluster, graph):
        self.cluster = c = cluster
        self._done_sent = False
        n = c.num_workers
        me = c.task_index
        with graph.as_default(), tf1.name_scope('cluster_coordination'):
            with tf1.device(task_device(*c.coordinator) + '/device:CPU:0'):
                ready = tf1.FIFOQueue(n, [tf.int32], shapes=[[]], shared_name='tfcnn_ready',
                                      name='ready_queue')
                self.ready_signal = ready.enqueue_many([tf.zeros([max(n - 1, 0)], tf.int32)])
                self.ready_wait = ready.dequeue()
                # figures.WorkerStats: task, images/sec, steps, seconds, images, wall start
                # and end of the timed part.
                columns = [tf.int32, tf.float64, tf.int64, tf.float64, tf.int64, tf.float64,
                           tf.float64]
                stats = tf1.FIFOQueue(n, columns, shapes=[[]] * len(columns),
                                      shared_name='tfcnn_stats', name='stats_queue')
                self.stats_in = [tf1.placeholder(t, []) for t in columns[1:]]
                self.stats_put = stats.enqueue([tf.constant(me, tf.int32)] + self.stats_in)
                self.stats_take = stats.dequeue_many(n)
            # The workers that run a graph of their own, and the controller, whose graph the
            # workers of distributed_all_reduce serve: the start-up check of the run flags.
            self.checks_flags = c.job_name == 'controller' or (c.job_name == 'worker'
                                                               and not c.serves)
            self.has_release = c.coordinator == ('worker', 0) and n > 1
            if self.has_release:
                with tf1.device(task_device('worker', 0) + '/device:CPU:0'):
                    release = tf1.FIFOQueue(n, [tf.int32], shapes=[[]],
                                            shared_name='tfcnn_release', name='release_queue')
                    self.release_signal = release.enqueue_many([tf.zeros([n - 1], tf.int32)])
                    self.release_wait = release.dequeue()
                    self.release_size = release.size()
            with tf1.device(task_device(*c.coordinator) + '/device:CPU:0'):
                # One entry per worker that stopped or failed: key its task index.
                stop = tf.raw_ops.MutableHashTableV2(
                    shared_name='tfcnn_stop', use_node_name_sharing=False,
                    key_dtype=tf.int64, value_dtype=tf.string, name='stop_mark')
                self._stop_value = tf1.placeholder(tf.string, [])
                self._stop_put = tf.raw_ops.LookupTableInsertV2(
                    table_handle=stop, keys=tf.constant([me], tf.int64),
                    values=tf.reshape(self._stop_value, [1]))
                self._stop_read = tf.raw_ops.LookupTableExportV2(
                    table_handle=stop, Tkeys=tf.int64, Tvalues=tf.string)
            #: The first other worker's StopMark once this worker read one, else None.
            self.stop_mark = None
            # One enqueue per status, the status a constant (see the module docstring).
            self.done_puts = {status: [done_queue(task).enqueue(
                [tf.constant(me, tf.int32), tf.constant(status, tf.int32)])
                for task in c.serving_tasks()] for status in (0, 1)}
        self._graph = graph

    def run_flags_ops(self, key: int, value: bytes):
        """(put, reads): the op writing this task's entry of the run-defining flags check
        (cluster/run_flags.py) into the table on every ps task (every worker without ps), and
        one tensor per table reading all of its values (string [entries]).

        Args:
          key: run_flags.entry_id of this task; value: its run_flags.encode_entry.
        """
        c = self.cluster
        hosts = [('ps', k) for k in range(c.num_ps)] or [
            ('worker', i) for i in range(c.num_workers)]
        puts, reads = [], []
        with self._graph.as_default(), tf1.name_scope('cluster_run_flags'):
            for task in hosts:
                put, read = run_flags_table_ops(task, key, value)
                puts.append(put)
                reads.append(read)
            return tf.group(*puts), reads

    def mark_stop(self, session, reason: str, kind: str = 'stop') -> None:
        """Writes this worker's stop mark (its run stopped early: `kind` 'stop'; or failed:
        'fail'): `reason` completes 'worker 1 (...) ...' in the other workers' lines ('was
        interrupted (SIGINT)'; for a failure, what failed: 'the loss is NaN ...')."""
        session.run(self._stop_put, feed_dict={self._stop_value: kind + '\t' + reason},
                    options=tf1.RunOptions(timeout_in_ms=int(STOP_MARK_TIMEOUT_SECS * 1000)))

    def read_stop(self, session) -> StopMark | None:
        """The stop mark of another worker (the lowest index when several wrote one: the chief
        first), or None when there is none or it cannot be read now (the coordinator is gone);
        remembered in `stop_mark` once found."""
        if self.stop_mark is None:
            try:
                run = getattr(session, 'run_unchecked', session.run)  # no error translation
                keys, values = run(self._stop_read, options=tf1.RunOptions(
                    timeout_in_ms=int(STOP_MARK_TIMEOUT_SECS * 1000)))
            except tf.errors.OpError:
                return None
            me = self.cluster.task_index if self.cluster.job_name == 'worker' else None
            marks = sorted(StopMark.decode(int(k), v) for k, v in zip(keys, values)
                           if int(k) != me)
            self.stop_mark = marks[0] if marks else None
        return self.stop_mark

    def signal_done(self, session, status: int, timeout_secs: float | None = None,
                    skip=()) -> None:
        """Sends this task's done token (status 0: success) to every serving task, once.

        A failure status is sent best effort, to the serving tasks not in `skip` (those known
        to be unreachable: the error line names them): an error is logged, not raised.
        """
        if self._done_sent or not self.done_puts[0]:
            return
        self._done_sent = True
        options = None
        if timeout_secs is not None:
            options = tf1.RunOptions(timeout_in_ms=int(timeout_secs * 1000))
        if status == 0:  # errors become ClusterError naming the unreachable tasks
            session.run(self.done_puts[0], options=options)
            return
        puts = [put for task, put in zip(self.cluster.serving_tasks(), self.done_puts[1])
                if task not in skip]
        if not puts:
            return
        try:
            session.run_unchecked(puts, options=options)
        except tf.errors.OpError as e:
            cnn_util.warn('could not tell the serving tasks about the failure: %s'
                          % cnn_util.error_summary(e))


def stop_marks_read(task: tuple[str, int]):
    """(keys int64 [n], values string [n]): every worker's stop mark (`tfcnn_stop`) as its
    coordinator `task` holds it, read in that task's own graph (a serving ps task's)."""
    with tf1.device(task_device(*task) + '/device:CPU:0'):
        stop = tf.raw_ops.MutableHashTableV2(
            shared_name='tfcnn_stop', use_node_name_sharing=False,
            key_dtype=tf.int64, value_dtype=tf.string, name='stop_mark')
        return tf.raw_ops.LookupTableExportV2(table_handle=stop, Tkeys=tf.int64,
                                              Tvalues=tf.string)


def failed_worker(keys, values) -> int | None:
    """The lowest task index among the workers whose stop mark says they failed (kind
    'fail'), or None: what a read of `stop_marks_read` gives."""
    failed = [int(k) for k, v in zip(keys, values) if StopMark.decode(int(k), v).kind == 'fail']
    return min(failed) if failed else None


class StopMark(NamedTuple):
    """A worker's entry in the stop mark: it stopped early ('stop') or failed ('fail')."""

    task_index: int
    kind: str
    reason: str  # 'was interrupted (SIGINT)'; for 'fail', what failed

    @classmethod
    def decode(cls, task_index: int, value: bytes) -> StopMark:
        kind, _, reason = value.decode('utf-8', 'replace').partition('\t')
        return cls(task_index, kind, reason)

    def describe(self, cluster: Cluster) -> str:
        """'the chief, worker 0 (h:2222), was interrupted (SIGINT)', 'worker 1 (h:2223) failed:
        the loss is NaN ...'."""
        who = cluster.describe('worker', self.task_index)
        if self.task_index == 0:
            who = 'the chief, %s,' % who
        return '%s %s%s' % (who, 'failed: ' if self.kind == 'fail' else '', self.reason)


def stop_reason(result: dict) -> str:
    """What stopped a chief's run early, for the other workers' stop line: 'was interrupted
    (SIGINT)', 'reached --stop_at_top_1_accuracy' or 'stopped early'."""
    if result.get('stopped_by_signal'):
        return 'was interrupted (%s)' % result['stopped_by_signal']
    if result.get('stopped_at_top_1_accuracy'):
        return 'reached --stop_at_top_1_accuracy'
    return 'stopped early'


def failure_reason(error: BaseException) -> str:
    """What failed, for the other workers' line: the first clause of the error's informative
    line ('the loss became nan at step 12 (learning rate 0.5)'); the worker's own log has the
    rest."""
    return cnn_util.error_summary(error).split('; ')[0].rstrip('.')


class ClusterStopHook(run_hooks.RunHook):
    """A worker's early stop passed on to the other workers (see the module docstring).

    A worker whose own loop stopped early (a signal; the chief's accuracy target), in `end`
    (the first cluster hook: after the run's own hooks' `end`, so its final checkpoint is saved
    and result['stopped_by_signal'] set; before `ClusterStatsHook` waits for the workers'
    figures): its stop mark, then the queues of synchronous updates that others wait on closed
    (the chief's: the other workers' go queues; another worker's: the ready queue the chief
    waits on, SyncPoint.close_ops). Every worker: `should_stop` reads the others' marks at most
    every STOP_POLL_SECS; in `end`, when a mark stopped its run (there, or in a step:
    cnn_util.StopRequested from TaskServer.step_error), the stop line naming that worker and
    result['stopped_by_peer'] ('the chief, worker 0 (h:2222), was interrupted (SIGINT)'); the
    chief stopped so also closes the go queues, for the workers still waiting. The
    controller's workers serve (no loop of their own): nothing to pass on.
    """

    def __init__(self, server):
        self.server = server
        self.cluster = server.cluster
        self._sess = None
        self._close = []
        self._next_read = 0.0
        self._ended = threading.Event()  # the loop ended (`after_timed`, `after_loop`)
        self._seen = threading.Event()     # the watcher read the stop mark

    def _passes_on(self) -> bool:
        return self.cluster.job_name == 'worker' and self.cluster.num_workers > 1

    def begin(self, ctx):
        self._sess = ctx.sess
        point = getattr(ctx.info.mgr, 'sync_point', None)
        if self._passes_on() and point is not None:
            with ctx.info.graph.as_default():
                self._close = point.close_ops()
        if (self._passes_on() and self.cluster.mode == 'collective_all_reduce'
                and hasattr(ctx.sess, 'cancel_in_flight')):
            threading.Thread(target=self._watch, daemon=True, name='stop-watch').start()

    def _watch(self) -> None:
        """collective_all_reduce: no queue wakes a step waiting in an all-reduce a stopped
        worker will not join, so this thread reads the others' stop marks every
        STOP_POLL_SECS while the loop runs; once found (`should_stop` then says so at once),
        and the loop still runs STOP_POLL_SECS later (its step waits), it cancels the step
        (runtime/traced_session.py `cancel_in_flight`: the step raises, TaskServer.step_error
        finds the mark, the step is not counted) and the run ends as a stopped one. It used to
        wait for the step's deadline, --startup_timeout_secs, by which time the chief had given
        up waiting for its figures."""
        try:
            while not self._ended.wait(STOP_POLL_SECS):
                if self.server.coordination.read_stop(self._sess) is not None:
                    self._seen.set()
                    if not self._ended.wait(STOP_POLL_SECS):
                        self._sess.cancel_in_flight()
                    return
        except Exception:  # the session closed under it: the run is over
            return

    def after_timed(self):
        self._ended.set()

    def after_loop(self, result):  # a run stopped in the warm-up has no after_timed
        self._ended.set()

    def abort(self):
        """The loop raised: when this worker failed by itself (not a lost peer, not another
        worker's failure), its failure mark (kind 'fail', `failure_reason`) and the sync queues
        closed, best effort, so the others name it instead of a lost connection."""
        self._ended.set()
        error = sys.exc_info()[1]  # abort runs while the loop's exception is handled
        if (not self._passes_on() or error is None or self._sess is None
                or isinstance(error, (cnn_util.ClusterError, KeyboardInterrupt, SystemExit))):
            return
        try:
            self.server.coordination.mark_stop(self._sess, failure_reason(error), kind='fail')
            if self._close:
                self._sess.run_unchecked(self._close, options=tf1.RunOptions(
                    timeout_in_ms=int(STOP_MARK_TIMEOUT_SECS * 1000)))
        except tf.errors.OpError:
            pass  # the coordinator is gone: the others find that out themselves

    def should_stop(self):
        """True once another worker's stop mark is read (at most every STOP_POLL_SECS).

        Raises:
          cnn_util.ClusterError: the mark says that worker failed (names it and its reason).
        """
        if not self._passes_on():
            return False
        if not self._seen.is_set():
            now = time.monotonic()
            if now < self._next_read:
                return False
            self._next_read = now + STOP_POLL_SECS
        mark = self.server.coordination.read_stop(self._sess)
        if mark is not None and mark.kind == 'fail':
            raise cnn_util.ClusterError(failed_peer_line(self.cluster, mark))
        return mark is not None

    def end(self, result):
        if not self._passes_on() or not result.get('stopped_early'):
            return
        c, coord = self.cluster, self.server.coordination
        if coord.stop_mark is None or result.get('stopped_by_signal'):  # its own stop
            coord.mark_stop(self._sess, stop_reason(result))
            if self._close:
                self._sess.run(self._close)
            return
        if c.is_chief and self._close:  # the workers still waiting for their go token
            self._sess.run(self._close)
        result['stopped_by_peer'] = peer = coord.stop_mark.describe(c)
        if result.get('stopped_in_warmup'):
            cnn_util.log_fn('Stopped in the warm-up: %s (nothing timed)' % peer)
        else:
            cnn_util.log_fn('Stopped after %d timed steps: %s' % (result.get('num_steps', 0),
                                                                 peer))


def failed_peer_line(cluster: Cluster, mark: StopMark) -> str:
    """The error line of a worker that stops because another one failed: 'worker 1 (h:2223)
    failed: the loss became nan at step 12; worker 0 (h:2222) stops (see worker 1's log)'."""
    return '%s; %s stops (see worker %d\'s log)' % (
        mark.describe(cluster), cluster.describe(cluster.job_name, cluster.task_index),
        mark.task_index)


class ClusterStatsHook(run_hooks.RunHook):
    """Images/sec accounting of a worker's (or the controller's) run (cluster/figures.py).

    Every worker, with more than one: its `total images/sec` as the original meant it, the
    cluster's rate as it sees it, and its own figure on the line after it (`total_figure`;
    with asynchronous updates the shared global step is read as its timed part starts and
    ends). At the end (phase `end`) every worker puts its figures (figures.WorkerStats: its
    own images/sec, steps, seconds, images, and its timed part's wall-clock start and end)
    into the stats queue; the chief takes all of them and prints one line per worker and the
    cluster total (figures.report). Adds to the result: 'task' ('worker 1'),
    'traffic_bytes_estimate' ({'sent', 'received'}: bytes per step and worker, from the
    variables' sizes; see the managers' `traffic_bytes`), 'total_line_images_per_sec' (a
    worker of several: the figure its `total images/sec` line printed, None when it timed no
    step); the chief's also 'worker_images_per_sec' (list by task index),
    'cluster_images_per_sec', 'cluster_images' and 'cluster_span_secs'. 'images_per_sec'
    stays this worker's own figure.

    Args:
      server: this task's cluster.server.TaskServer.
      wall_clock: () -> seconds since the epoch (time.time): the timed part's start and end
        as the chief compares them with the other workers'.
    """

    def __init__(self, server, wall_clock=time.time):
        self.server = server
        self.cluster = server.cluster
        self._clock = wall_clock  # seconds since the epoch, every task's on one clock
        self._sess = None
        self._traffic = None
        self._plan = None
        self._global_step = None  # read around the timed part: asynchronous updates only
        self._wall = [0.0, 0.0]   # time.time() at the timed part's start and end
        self._steps_at = []       # (global step, time.time()) at its start and end
        self._figure = None

    def begin(self, ctx):
        self._sess, self._plan = ctx.sess, ctx.plan
        with ctx.info.graph.as_default():
            self._traffic = ctx.info.mgr.traffic_bytes()
        if ctx.plan.asynchronous and ctx.plan.training:
            self._global_step = ctx.info.global_step

    def _read_global_step(self) -> None:
        if self._global_step is not None:
            step = int(self._sess.run(self._global_step))
            self._steps_at.append((step, self._clock()))

    def before_timed(self):
        self._read_global_step()
        self._wall[0] = self._clock()

    def after_timed(self):
        self._wall[1] = self._clock()
        self._read_global_step()

    def total_figure(self, loop):
        """A worker of several: (the cluster's images/sec as it sees it, [its own figure's
        line]) (figures.worker_view); None for the controller, whose one graph's figure is
        the cluster's already, and for a cluster of one worker."""
        c = self.cluster
        if c.job_name != 'worker' or c.num_workers <= 1:
            return None
        counted = None
        if len(self._steps_at) == 2:
            (first, start), (last, end) = self._steps_at
            counted = (last - first, end - start)
        self._figure, lines = figures.worker_view(
            loop.images_per_sec, c.num_workers, counted, self._plan.images_per_global_step,
            forward_only=not self._plan.training)
        return self._figure, lines

    def end(self, result):
        c, sess = self.cluster, self._sess
        coord = self.server.coordination
        result['task'] = '%s %d' % (c.job_name, c.task_index)
        result['traffic_bytes_estimate'] = self._traffic
        cnn_util.log_fn('Network per step and worker (estimate from the variables\' sizes): '
                        '%.2f MB sent, %.2f MB received' % (self._traffic['sent'] / 1e6,
                                                           self._traffic['received'] / 1e6))
        if c.job_name == 'controller':
            if not result.get('num_steps'):  # nothing timed: no figure, not 0.00
                cnn_util.log_fn('no cluster images/sec: the controller timed no step (%s)'
                                % NOTHING_TIMED)
                return
            result['cluster_images_per_sec'] = result['images_per_sec']
            cnn_util.log_fn('cluster images/sec: %.2f (%d workers, one graph)' % (
                result['images_per_sec'], c.num_workers))
            return
        if c.num_workers > 1:
            result['total_line_images_per_sec'] = self._figure
        steps = int(result['num_steps'])
        # The timed part ends with its last step: a save or an evaluation due after it
        # (after_last_step_secs) is not the cluster's training time.
        end = max(self._wall[0], self._wall[1] - float(result.get('after_last_step_secs') or 0))
        # A run stopped before its first timed step timed nothing: images/sec None, sent as 0.
        sess.run(coord.stats_put, feed_dict=dict(zip(coord.stats_in, (
            float(result['images_per_sec'] or 0.0), steps, float(result['elapsed_secs']),
            steps * self._plan.images_per_step, self._wall[0], end))))
        if c.is_chief:
            self._report(sess.run(coord.stats_take), result)
            if coord.has_release:
                sess.run(coord.release_signal)
                self._wait_released(sess, coord)
        elif coord.has_release:
            sess.run(coord.release_wait)

    def _report(self, stats, result):
        """The per-worker lines and the cluster total (figures.report) of the stats queue's
        columns `stats`; their keys into `result`."""
        lines, keys = figures.report([figures.WorkerStats(*row) for row in zip(*stats)],
                                     NOTHING_TIMED)
        for line in lines:
            cnn_util.log_fn(line)
        result.update(keys)

    def _wait_released(self, sess, coord) -> None:
        """Keeps worker 0 (which hosts the release queue) up until every worker took its token."""
        deadline = time.monotonic() + self.cluster.timeout_secs
        while int(sess.run(coord.release_size)) > 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        # An empty queue means each dequeue ran here, not that its answer reached its worker:
        # on a busy host a worker whose answer came after worker 0 exited failed before its
        # done token, and the ps stopped with 'went away'. Where workers do not serve each
        # other, worker 0 stays up until the other workers have exited (at most
        # RELEASE_GRACE_SECS).
        c = self.cluster
        if ('worker', 0) in c.serving_tasks():
            time.sleep(0.2)
            return
        others = [c.address('worker', i) for i in range(c.num_workers) if i != c.task_index]
        deadline = time.monotonic() + RELEASE_GRACE_SECS
        while others and time.monotonic() < deadline:
            others = [a for a in others if can_connect(a, 0.5)]
            if others:
                time.sleep(0.1)


class ClusterDoneHook(run_hooks.RunHook):
    """The done tokens that let the serving tasks exit (phase `release`: after every hook's
    `end`, so a chief's final checkpoint is saved while the ps tasks still serve). On `abort`,
    a failure token instead."""

    def __init__(self, server):
        self.server = server
        self._sess = None

    def begin(self, ctx):
        self._sess = ctx.sess

    def release(self):
        self.server.coordination.signal_done(self._sess, status=0)

    def abort(self):
        """The loop failed (non-finite loss, data error): tell the serving tasks at once (best
        effort), so they stop instead of waiting for this task to go away."""
        self.server.coordination.signal_done(self._sess, status=1, timeout_secs=5.0)


def cluster_hooks(server) -> list[run_hooks.RunHook]:
    """The hooks of a worker's (or the controller's) run: a chief's early stop passed on,
    images/sec accounting and done tokens, in this order.

    Args:
      server: this task's cluster.server.TaskServer (its cluster and, once initialised, its
        coordination queues).
    """
    return [ClusterStopHook(server), ClusterStatsHook(server), ClusterDoneHook(server)]


def local_device_predicate(cluster: Cluster):
    """device name -> True for the devices whose ops are this task's work (the controller's:
    every worker's), for --print_step_breakdown."""
    if cluster.job_name == 'controller':
        return lambda device: '/job:worker/' in device
    return cluster.owns

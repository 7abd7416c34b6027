"""The start-up check of the run-defining flags as a worker runs it: where its entry is written
and the others' read, and what it says of a task that never answers (cluster/run_flags.py judges
the entries; cluster/server.py `TaskServer.check_run_flags` runs `FlagCheck`).

The entries live in the run-flags table (coordination.run_flags_table_ops) on every ps task (on
every worker without ps), which a worker reaches through its session. In a cluster with ps
tasks the same table on worker 0, the lobby (`Lobby`), holds the workers' entries too, reached
by a small session of its own (device filters: this task and worker 0) as soon as worker 0 is
up. A worker whose --ps_hosts give a ps task another address than the chief's never gets its
session (TensorFlow's CreateSession waits for every peer), so it never wrote into the ps tables:
the chief said `worker 1 ... wrote nothing within 20 s` and the worker `ps 0 ... unreachable
after 20 s`. Through the lobby both read each other's entry while they wait (the worker as it
waits for its peers: `TaskServer.wait_for_tasks`), and stop with the one line naming
--ps_hosts and both values within a few seconds. The lobby only adds mismatches: the check
passes, as before, once every worker and ps task wrote into the ps tables (a worker seen only in
the lobby has no session yet). After a mismatch the lobby's entries are copied into the ps
tables, so that the ps tasks, which read their own table, stop with the same line.

Loads TensorFlow (graph ops and a session); server.py's TaskServer owns the sessions' errors.
"""

from __future__ import annotations

import threading
import time

import tensorflow as tf

from .. import cnn_util
from ..runtime import traced_session
from . import coordination, run_flags
from .topology import Cluster, can_connect, task_device

tf1 = tf.compat.v1

#: Seconds a task waits (for its peers, or for the others' entries) before it uses the lobby:
#: a cluster whose tasks agree and start together never needs it.
LOBBY_AFTER_SECS = 2.0
#: Seconds between a task's writes and reads of the lobby while it waits.
LOBBY_POLL_SECS = 1.0
#: Deadline of one write or read of the lobby (seconds).
LOBBY_TIMEOUT_SECS = 5.0
#: Seconds between reads of the ps tables during the check.
CHECK_POLL_SECS = 0.2
#: At most this many seconds the chief waits, after a start-up mismatch, for every task that
#: wrote its run-defining flags to read the others' before it tells the serving tasks to stop.
MISMATCH_SEEN_SECS = 10.0
#: TensorFlow's words when another process took this task's role on a peer (its session there
#: was dropped, or its devices' incarnations differ).
DROPPED_SESSION_MARKS = ('Session handle is not found', 'different device incarnation',
                         # a step of the dropped session still running on the twin's task:
                         'CANCELLED: From /job:worker/replica:0/task:0')


class Lobby:
    """This worker's entry in the run-flags table on worker 0 (see the module docstring), and
    the entries the other workers wrote there.

    Args:
      cluster: this task's Cluster (a worker of a cluster with ps tasks: `wanted`).
      target: this task's server target ('grpc://...').
      values: this task's run_flags.run_flag_values.
    """

    def __init__(self, cluster: Cluster, target: str, values: dict):
        self.cluster = cluster
        self._target = target
        self.key = run_flags.entry_key(cluster.job_name, cluster.task_index,
                                       cluster.address(cluster.job_name, cluster.task_index))
        self._values = values
        self._sess = None
        self._puts = None
        self._read = None
        self._dropped = []  # sessions whose runs failed (worker 0 went away)
        self._seen = False  # the entry says this task saw the verdict (from then on, always)
        self._next = time.monotonic() + LOBBY_AFTER_SECS

    @staticmethod
    def wanted(cluster: Cluster) -> bool:
        """True for a worker that runs the check in a cluster with ps tasks (without ps the
        tables are on the workers already, worker 0's among them)."""
        return cluster.job_name == 'worker' and not cluster.serves and cluster.num_ps > 0

    def _open(self) -> bool:
        """Makes the lobby's session (its graph: this entry's two writes and the read), once
        worker 0 accepts connections; False while it does not."""
        if self._sess is not None:
            return True
        c, chief = self.cluster, ('worker', 0)
        # TensorFlow's CreateSession waits forever for a filtered task that is down.
        if c.task_index != 0 and not can_connect(c.address(*chief)):
            return False
        graph = tf.Graph()
        with graph.as_default():
            self._puts = {}
            for seen in (False, True):
                self._puts[seen], self._read = coordination.run_flags_table_ops(
                    chief, run_flags.entry_id(self.key),
                    run_flags.encode_entry(self.key, self._values, seen=seen))
        config = tf1.ConfigProto(device_filters=sorted({c.local_device, task_device(*chief)}))
        self._sess = traced_session.TracedSession(self._target, graph=graph, config=config,
                                                  timeout_secs=LOBBY_TIMEOUT_SECS)
        return True

    def exchange(self, seen: bool = False, wait: bool = False):
        """Writes this task's entry (`seen`: it saw the verdict; once written so, it stays)
        and reads every entry: run_flags.decode_entries of the lobby, or None when it cannot
        be reached now (worker 0 not up, or gone: the next exchange tries a new session), or,
        with `wait`, less than LOBBY_AFTER_SECS after this Lobby was made or LOBBY_POLL_SECS
        after the last exchange."""
        if wait and time.monotonic() < self._next:
            return None
        self._next = time.monotonic() + LOBBY_POLL_SECS
        self._seen = self._seen or seen
        if not self._open():
            return None
        sess, put, done = self._sess, self._puts[self._seen], []

        def run():  # in a thread: a CreateSession waiting for a peer gone meanwhile never ends
            try:
                sess.run(put)
                done.append(run_flags.decode_entries(sess.run(self._read)))
            except (tf.errors.OpError, ValueError):
                done.append(None)
        thread = threading.Thread(target=run, daemon=True, name='flag-lobby')
        thread.start()
        thread.join(LOBBY_TIMEOUT_SECS + 1.0)
        if done and done[0] is not None:
            return done[0]
        # Not closed (a session whose peer died cannot be), nor collected (the same).
        self._dropped.append(sess)
        self._sess = None
        return None

    def mismatch(self) -> str | None:
        """The mismatch line the lobby's entries give now (run_flags.judge), or None: for a
        worker waiting for its session (`TaskServer.wait_for_tasks`). It then marks its entry
        seen; worker 0, which holds the lobby, waits (at most MISMATCH_SEEN_SECS) until every
        worker that wrote there has seen the verdict too before it stops (with its server, the
        lobby; and a process whose server a peer's session still uses exits only once that
        session is gone)."""
        got = self.exchange(wait=True)
        if got is None:
            return None
        verdict, line = run_flags.judge(got[0], self.cluster.num_workers, self.cluster.num_ps)
        if verdict != 'mismatch':
            return None
        got = self.exchange(seen=True)
        if self.cluster.task_index == 0:
            wait_until = time.monotonic() + MISMATCH_SEEN_SECS
            while got is not None and time.monotonic() < wait_until and not (
                    got[1] >= run_flags.worker_entries(got[0])):
                time.sleep(0.1)
                got = self.exchange(seen=True)
        return line

    def close(self) -> None:
        """Closes the session (after the check passed: worker 0 is up), so that no session of
        this task stays on worker 0's server."""
        if self._sess is not None:
            try:
                self._sess.close()
            except tf.errors.OpError:
                pass
        self._sess = None


def missing_line(cluster: Cluster, missing, timeout_secs: float) -> str:
    """The error of a check that some tasks never answered: whether each is up (its port
    accepts connections: it waits for a task it cannot reach) or not (not started, or
    stopped), and the fix.

    Args:
      cluster: this task's Cluster; missing: [(job, index)], not empty;
      timeout_secs: the wait (--startup_timeout_secs).
    """
    up = [t for t in missing if can_connect(cluster.address(*t))]
    down = [t for t in missing if t not in up]
    one = len(missing) == 1
    names = ', '.join(cluster.describe(*t) for t in missing)
    origin = cluster.hosts_origin
    if not up:
        why = ('%s not up: not started, or stopped (see %s); start %s, or check %s' % (
            'it is' if one else 'they are', 'its log' if one else 'their logs',
            'it' if one else 'them', origin))
    elif not down:
        why = ('%s up but %s for a task %s cannot reach (see %s), as when its %s give a task '
               'another address than this task\'s; give every task the same %s' % (
                   'it is' if one else 'they are', 'waits' if one else 'wait',
                   'it' if one else 'they', 'its log' if one else 'their logs', origin, origin))
    else:
        short = lambda tasks: ', '.join('%s %d' % t for t in tasks)  # noqa: E731
        why = ('%s not up (not started, or stopped), %s up but waiting for a task it cannot '
               'reach (see their logs); start them, or give every task the same %s' % (
                   short(down), short(up), origin))
    return ('%s never answered the start-up check of the run-defining flags within %g s '
            '(--startup_timeout_secs): %s' % (names, timeout_secs, why))


class FlagCheck:
    """One worker's start-up check (`TaskServer.check_run_flags` runs `await_verdict`, then
    `conclude`).

    Args:
      cluster: this task's Cluster; coord: its coordination.Coordination;
      values: its run_flags.run_flag_values; lobby: its Lobby, or None;
      new_session: () -> a new session of this task's graph (after TensorFlow dropped the
        first: `await_verdict`), or None when it cannot make one.
    """

    def __init__(self, cluster: Cluster, coord, values: dict, lobby: Lobby | None,
                 new_session):
        self.cluster = cluster
        self.coord = coord
        self.values = values
        self.lobby = lobby
        self.new_session = new_session
        c = cluster
        self.key = run_flags.entry_key(c.job_name, c.task_index,
                                       c.address(c.job_name, c.task_index))
        self.put, self.reads = coord.run_flags_ops(run_flags.entry_id(self.key),
                                                   run_flags.encode_entry(self.key, values))
        self.tables: dict = {}  # the entries the ps tables (or the workers' own) held last
        self.lobby_read = None  # what the lobby held last (decode_entries), or None

    def await_verdict(self, sess):
        """Writes this task's entry, reads until run_flags.judge decides; returns (the session
        used, the mismatch line or None).

        A task whose host lists give it another task's role shares that role's sessions on
        the ps tasks: the later session makes TensorFlow drop the earlier (`Session handle is
        not found`). The task whose session was dropped makes a new one, once, to read the
        entries that name the lists.

        Raises:
          cnn_util.ClusterError: tasks never answered within --startup_timeout_secs
            (`missing_line`).
        """
        c = self.cluster
        deadline = time.monotonic() + c.timeout_secs
        retried = False
        while True:
            try:
                sess.run(self.put)
                while True:
                    final = time.monotonic() >= deadline
                    verdict, line = self._judge(sess, final)
                    if verdict != 'wait':
                        return sess, line
                    if final:
                        missing = [('worker', i) for i in run_flags.missing_workers(
                            self.tables, c.num_workers)] + [
                            ('ps', k) for k in run_flags.missing_ps(self.tables, c.num_ps)]
                        raise cnn_util.ClusterError(missing_line(c, missing, c.timeout_secs))
                    time.sleep(CHECK_POLL_SECS)
            except cnn_util.ClusterError as e:
                dropped = any(m in str(e) for m in DROPPED_SESSION_MARKS)
                if retried or not dropped:
                    raise
                sess = self.new_session()
                if sess is None:
                    raise
                retried = True

    def _judge(self, sess, final: bool):
        """(verdict, line) of the ps tables' entries; a 'wait' there becomes the mismatch the
        lobby's entries add, if any."""
        c = self.cluster
        self.tables, _ = self._read_tables(sess)
        verdict, line = run_flags.judge(self.tables, c.num_workers, c.num_ps, final=final)
        if verdict == 'wait' and self.lobby is not None:
            got = self.lobby.exchange(wait=not final)
            if got is not None:
                self.lobby_read = got
                merged = dict(got[0], **self.tables)
                again, said = run_flags.judge(merged, c.num_workers, c.num_ps, final=final)
                if again == 'mismatch':
                    return again, said
        return verdict, line

    def _read_tables(self, sess) -> tuple[dict, set]:
        """run_flags.decode_entries of every ps table's values, merged."""
        entries, seen = {}, set()
        for found in sess.run(self.reads):
            more, more_seen = run_flags.decode_entries(found)
            entries.update(more)
            seen |= more_seen
        return entries, seen

    def conclude(self, sess) -> None:
        """After a mismatch (the verdict is known: what fails from here on is left unsaid):
        marks this task's entry seen; copies the entries only the lobby held into the ps
        tables (the controller of distributed_all_reduce: every worker's entry into every
        worker's table); the chief (worker 0) waits (at most MISMATCH_SEEN_SECS) until every
        worker that wrote has seen the verdict; then the chief, or a worker whose ps tables
        never got the chief's entry, tells the serving tasks it failed (a serving task then
        reads the line from its own table: TaskServer.serve); last, another worker marks its
        entry in the lobby seen, when the lobby took part (the chief, still waiting for its
        session, waits for it: Lobby.mismatch)."""
        c, coord = self.cluster, self.coord
        tells = c.is_chief or not any(k.startswith('worker 0 ') for k in self.tables
                                      if k != self.key)
        lobby = self.lobby_read
        copies = {key: (values, key in lobby[1]) for key, values in lobby[0].items()
                  if key not in self.tables} if lobby else {}
        if c.job_name == 'controller':  # each worker of distributed_all_reduce holds its own
            copies = {key: (values, False) for key, values in self.tables.items()
                      if key != self.key}  # entry and the controller's: every one, to all
        try:
            sess.run(coord.run_flags_ops(run_flags.entry_id(self.key), run_flags.encode_entry(
                self.key, self.values, seen=True))[0])
            for key, (values, seen) in copies.items():
                sess.run(coord.run_flags_ops(run_flags.entry_id(key), run_flags.encode_entry(
                    key, values, seen=seen))[0])
            if c.is_chief and c.job_name == 'worker':  # once every task that wrote has read
                wait_until = time.monotonic() + MISMATCH_SEEN_SECS
                while time.monotonic() < wait_until:
                    entries, seen = self._read_tables(sess)
                    more = self.lobby.exchange(seen=True) if lobby else None
                    if more is not None:
                        entries, seen = dict(more[0], **entries), seen | more[1]
                    if seen >= run_flags.worker_entries(entries):
                        break
                    time.sleep(0.1)
        except cnn_util.ClusterError:
            pass
        if tells:
            coord.signal_done(sess, status=1, timeout_secs=5.0)
        if lobby and not c.is_chief:  # the lobby took part in the check
            self.lobby.exchange(seen=True)

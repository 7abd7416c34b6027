"""A signal on a worker of a hand-started cluster (1 ps, 2 workers, every task a process on
loopback as in test_distributed.py): the worker stops cleanly and tells the others
(cluster/coordination.py's stop mark, the closed queues of synchronous updates); the other
workers stop after their current step with one line naming it, the ps exits when told.

Before, the chief saved, printed `Stopped by SIGINT`, then waited for worker 1's figures while
worker 1 waited for a go token: after --startup_timeout_secs worker 1 said 'one of them is stuck,
stopped early ...', the ps stopped on its failure and the chief said 'lost the cluster:
unreachable now: ps 0, worker 1'; all three exited 1.

One wave, once per test session (helpers.run_once): four clusters side by side, SIGINT on a
synchronous parameter_server chief, SIGTERM on a distributed_replicated one, SIGINT on an
asynchronous parameter_server one, SIGINT on a collective_all_reduce one (two workers, no ps:
worker 1, waiting in an all-reduce the chief will not join, used to stop only at its step's
deadline, --startup_timeout_secs, after the chief had given up waiting for its figures: the
chief exited 1, worker 1 with a traceback).

A second wave signals worker 1 instead of the chief (the same modes; the synchronous
parameter_server cluster has a worker 2 too). Before, worker 1 stopped cleanly but told no one:
the chief waited for its gradients until --startup_timeout_secs, then exited 1 ('waited more
than 120 s ... unreachable now: worker 1') without its figures, and the ps exited 1.

A third wave, the faults' lines: SIGTERM on the ps (it exited 143 without a word; each worker
printed TensorFlow's gRPC text and 'the session did not close within 2 s' as warnings before
its error line), and a NaN loss on worker 1 (test seam: cluster_seams.py --seam_nan_at) in
collective_all_reduce (the chief said 'lost the cluster: unreachable now: ps 0, worker 1
(TensorFlow: ... Socket closed)') and in a synchronous parameter_server cluster (it blamed the
lost ps).
"""

from __future__ import annotations

import random
import re
import signal
import threading
import time

import pytest
import tensorflow as tf
from test_distributed import PROCESS_TIMEOUT_SECS, SEAM_ENTRY, Proc, cluster_args, hosts

from tf_cnn_benchmarks.cluster import coordination, server
from tf_cnn_benchmarks.variable_managers import distributed

from helpers import run_once

pytestmark = pytest.mark.cluster

#: After the signal, every task must have exited within this many seconds (0.3 to 0.8 s on
#: the development host; without the stop mark worker 1 waited out its step deadline).
STOP_BOUND_SECS = 30.0
STEPS = ['--num_batches=100000', '--display_every=5', '--num_warmup_batches=1']
CASES = {
    'sync_ps_sigint': ('parameter_server', signal.SIGINT, []),
    'replicated_sigterm': ('distributed_replicated', signal.SIGTERM, []),
    'async_ps_sigint': ('parameter_server', signal.SIGINT, ['--nocross_replica_sync']),
    'collective_sigint': ('collective_all_reduce', signal.SIGINT, []),
}
#: The second wave: the signal goes to worker 1 (name -> mode, signal, flags, workers).
WORKER_CASES = {
    'worker_sync_ps_sigint': ('parameter_server', signal.SIGINT, [], 3),
    'worker_replicated_sigterm': ('distributed_replicated', signal.SIGTERM, [], 2),
    'worker_async_ps_sigint': ('parameter_server', signal.SIGINT, ['--nocross_replica_sync'], 2),
    'worker_collective_sigint': ('collective_all_reduce', signal.SIGINT, [], 2),
}


def _run_wave(clusters: dict, event) -> dict:
    """Runs a wave of clusters started side by side to its end, polling them all together:
    `event(name, procs)` is asked of each cluster until it returns True (it sent the cluster's
    signal, or saw the failure the cluster waits for), which starts that cluster's stop.
    Returns name -> each task's {'name', 'code', 'log', 'secs'}: its exit status and the
    seconds from its cluster's event to its exit; a task still running STOP_BOUND_SECS after
    the event is killed (code None).

    Each cluster is signalled as soon as it is ready: taken in turn, a cluster ready early
    ran steps flat out, on the cores the others were starting on, until its turn came."""
    events: dict = {}
    exited: dict = {name: {} for name in clusters}
    deadline = time.monotonic() + PROCESS_TIMEOUT_SECS
    while True:
        for name, procs in clusters.items():
            if name not in events:
                if event(name, procs):
                    events[name] = time.monotonic()
                continue
            for p in procs:
                if p.name not in exited[name] and p.proc.poll() is not None:
                    exited[name][p.name] = time.monotonic() - events[name]
        now = time.monotonic()
        if all(name in events and (len(exited[name]) == len(procs)
                                   or now >= events[name] + STOP_BOUND_SECS)
               for name, procs in clusters.items()):
            break
        if now > deadline and len(events) < len(clusters):
            raise AssertionError('no event within %d s in %s' % (
                PROCESS_TIMEOUT_SECS, sorted(set(clusters) - set(events))))
        time.sleep(0.05)
    results = {}
    for name, procs in clusters.items():
        results[name] = []
        for p in procs:
            late = p.name not in exited[name]
            if late:
                p.kill()
            p.proc.wait()
            p._log.close()
            results[name].append({'name': p.name, 'code': None if late else p.proc.returncode,
                                  'log': p.log(), 'secs': exited[name].get(p.name)})
    return results


def _timed(procs: list[Proc], pattern: str = r'^10\timages/sec') -> bool:
    """Whether every task of `procs` has printed `pattern` (by default: it is in its timed
    steps, past the 10th); a task that exited before it fails the wave, as Proc.wait_for."""
    for p in procs:
        if p.proc.poll() is not None and not p.has(pattern):
            raise AssertionError('%s: no %r in its log (exit %s):\n%s' % (
                p.name, pattern, p.proc.poll(), p.log()[-3000:]))
    return all(p.has(pattern) for p in procs)


def _start(d, name: str, mode: str, extra: list, num_workers: int = 2) -> list[Proc]:
    """ps 0 (none in collective_all_reduce), worker 0 (the chief, with a --train_dir) and the
    other workers of case `name`."""
    ps, workers = ([] if mode == 'collective_all_reduce' else hosts(1)), hosts(num_workers)

    def args(job, i, more=()):
        return cluster_args(job, i, ps, workers, mode=mode, timeout=120,
                            extra=STEPS + extra + list(more))
    return [Proc(name + '_ps0', args('ps', 0), d)] * bool(ps) + [
        Proc(name + '_worker0', args('worker', 0, ['--train_dir=%s/%s' % (d, name)]), d)] + [
        Proc(name + '_worker%d' % i, args('worker', i), d) for i in range(1, num_workers)]


def produce(d, cases: dict, victim: int) -> dict:
    """Starts every cluster of `cases` side by side; once all of a cluster's workers are in
    their timed steps (an asynchronous worker may lag behind), signals its worker `victim`;
    returns each cluster's tasks (_run_wave), the ps first, then the workers by index."""
    clusters = {}

    def signal_when_timed(name, procs):
        workers = [p for p in procs if '_worker' in p.name]
        if not _timed(workers):
            return False
        workers[victim].proc.send_signal(cases[name][1])
        return True
    try:
        for name, (mode, _, extra, *workers) in cases.items():
            clusters[name] = _start(d, name, mode, extra, *workers)
        return _run_wave(clusters, signal_when_timed)
    finally:
        _kill_all(clusters)


def _kill_all(clusters: dict) -> None:
    """Kills every task of every cluster of a wave (those that ended: nothing)."""
    for procs in clusters.values():
        for p in procs:
            p.kill()


@pytest.fixture(scope='module')
def wave(tmp_path_factory):
    return run_once(tmp_path_factory, 'cluster_stop', lambda d: produce(d, CASES, 0))


@pytest.fixture(scope='module')
def worker_wave(tmp_path_factory):
    return run_once(tmp_path_factory, 'cluster_worker_stop',
                    lambda d: produce(d, WORKER_CASES, 1))


def _lines(result: dict) -> list[str]:
    return result['log'].strip().splitlines()


def _one(pattern: str, result: dict) -> re.Match:
    found = [m for m in map(re.compile(pattern).match, _lines(result)) if m]
    assert len(found) == 1, '%s: %d lines match %r:\n%s' % (
        result['name'], len(found), pattern, result['log'][-3000:])
    return found[0]


def _all_exited_quietly(results: list[dict]) -> None:
    for result in results:
        assert result['code'] is not None, '%s still ran %g s after the signal:\n%s' % (
            result['name'], STOP_BOUND_SECS, result['log'][-3000:])
        bad = [line for line in _lines(result) if line.startswith('error:') or 'Traceback' in line
               or 'the session did not close' in line]
        assert not bad, (result['name'], bad)


def _ps_exited_when_told(ps: list[dict]) -> None:
    for result in ps:
        assert result['code'] == 0, result['log'][-3000:]
        assert re.match(r'^ps 0 \(localhost:\d+\): every task is done after [\d.]+ s; '
                        r'exiting$', _lines(result)[-1]), result['log'][-3000:]


def _check_total_block(result: dict, workers: int, asynchronous: bool) -> int:
    """A worker's `total images/sec`, the cluster's rate as it sees it (asynchronous: the
    global steps of all workers in its timed part, at least its own), then its own figure;
    returns its timed steps (batch 2: the own figure's images / 2)."""
    lines = _lines(result)
    at = lines.index(_one(r'^total images/sec: [\d.]+$', result).group(0))
    if asynchronous:
        own = re.match(r"^this worker's images/sec: [\d.]+ \(its own steps; the total above: "
                       r'(\d+) global steps? of all %d workers in its [\d.]+ s timed part, x 2 '
                       r'images\)$' % workers, lines[at + 1])
    else:
        own = re.match(r"^this worker's images/sec: [\d.]+ \(its own steps; the total above: "
                       r"%d workers x this, the cluster's rate as this worker sees it\)$"
                       % workers, lines[at + 1])
    assert own, lines[at:at + 2]
    return int(own.group(1)) if asynchronous else 0


def _check_cluster_total(chief: dict, workers: int) -> None:
    """The chief's last line: every worker's images (its line's steps x batch 2) over their
    timed parts' span."""
    steps = [int(_one(r'^worker %d images/sec: [\d.]+ \((\d+) steps in [\d.]+ s\)$' % i,
                      chief).group(1)) for i in range(workers)]
    assert re.match(r"^cluster images/sec: [\d.]+ \(%d workers: %d images in [\d.]+ s, "
                    r"from the first timed part's start to the last one's end\)$"
                    % (workers, 2 * sum(steps)), _lines(chief)[-1]), chief['log'][-3000:]


@pytest.mark.parametrize('case', list(CASES))
def test_a_signal_on_the_chief_stops_the_cluster_cleanly(wave, case):
    mode, signum, extra = CASES[case]
    *ps, chief, worker = wave[case]
    sig = signal.Signals(signum).name
    _all_exited_quietly(ps + [chief, worker])
    # The chief: its clean stop as on one host, the figures of both workers, 128 + signal.
    # SIGINT: ended by SIGINT itself (a shell's 130: console.end_interrupted).
    assert chief['code'] == (-signum if signum == signal.SIGINT else 128 + signum), \
        chief['log'][-3000:]
    steps = int(_one(r'^Stopped by %s after (\d+) timed steps$' % sig, chief).group(1))
    assert steps >= 10
    _one(r'^Saved checkpoint .*/%s/model\.ckpt-\d+ \(global step \d+\)$' % case, chief)
    worker_steps = int(_one(r'^worker 1 images/sec: [\d.]+ \((\d+) steps in [\d.]+ s\)$',
                            chief).group(1))
    _check_cluster_total(chief, 2)
    global_steps = _check_total_block(chief, 2, bool(extra))
    if extra:  # asynchronous: every worker's steps in the chief's timed part, its own among them
        assert global_steps >= steps, chief['log'][-3000:]
    # Worker 1: its total block, then one line naming the chief, exit status 0.
    assert worker['code'] == 0, worker['log'][-3000:]
    line = _one(r'^Stopped after (\d+) timed steps: the chief, worker 0 \(localhost:\d+\), '
                r'was interrupted \(%s\)$' % sig, worker)
    assert int(line.group(1)) == worker_steps
    if not extra:  # synchronous: worker 1 finished the chief's last step, no more
        assert worker_steps == steps
    _check_total_block(worker, 2, bool(extra))
    # The ps: told by both workers, exit status 0.
    _ps_exited_when_told(ps)


@pytest.mark.parametrize('case', list(WORKER_CASES))
def test_a_signal_on_another_worker_stops_the_cluster_cleanly(worker_wave, case):
    """Worker 1 stops as on one host and tells the others; the chief stops at once with a line
    naming worker 1, keeps its total block and gathers every worker's figures (exit 0); a
    worker 2 stops so too; the ps exits 0."""
    mode, signum, extra, _ = WORKER_CASES[case]
    results = worker_wave[case]
    ps = results[:1] if mode != 'collective_all_reduce' else []
    chief, victim, *others = results[len(ps):]
    sig = signal.Signals(signum).name
    _all_exited_quietly(results)
    # Worker 1: its clean stop as on one host, 128 + signal.
    # SIGINT: ended by SIGINT itself (a shell's 130: console.end_interrupted).
    assert victim['code'] == (-signum if signum == signal.SIGINT else 128 + signum), \
        victim['log'][-3000:]
    steps = int(_one(r'^Stopped by %s after (\d+) timed steps$' % sig, victim).group(1))
    assert steps >= 10
    # The chief and a worker 2: stopped by worker 1, their total block, exit status 0.
    stopped = r'^Stopped after (\d+) timed steps: worker 1 \(localhost:\d+\) was interrupted ' \
              r'\(%s\)$' % sig
    for result in [chief] + others:
        assert result['code'] == 0, result['log'][-3000:]
        done = int(_one(stopped, result).group(1))
        _check_total_block(result, len(results) - len(ps), bool(extra))
        if not extra:  # synchronous: the step worker 1 did not join is not counted
            assert done == steps, result['log'][-3000:]
    _one(r'^Saved checkpoint .*/%s/model\.ckpt-\d+ \(global step \d+\)$' % case, chief)
    reported = int(_one(r'^worker 1 images/sec: [\d.]+ \((\d+) steps in [\d.]+ s\)$',
                        chief).group(1))
    assert reported == steps
    _check_cluster_total(chief, len(results) - len(ps))
    _ps_exited_when_told(ps)


class _Shape:
    """A stand-in Cluster: names tasks as Cluster.describe does."""

    def describe(self, job, index):
        return '%s %d (h:%d)' % (job, index, 2222 + index)


def test_a_stop_mark_names_the_worker_and_what_stopped_it():
    chief = coordination.StopMark.decode(0, b'stop\twas interrupted (SIGINT)')
    other = coordination.StopMark.decode(1, 'fail\tthe loss is NaN'.encode())
    assert chief.describe(_Shape()) == 'the chief, worker 0 (h:2222), was interrupted (SIGINT)'
    assert other.describe(_Shape()) == 'worker 1 (h:2223) failed: the loss is NaN'
    assert sorted([other, chief])[0] is chief  # several marks: the chief's is named


def test_the_coordinator_names_the_worker_whose_own_run_failed():
    """Worker 0 stops because worker 1 failed and reports a failure too: the ps named whichever
    token came first (worker 0 under load); the stop marks say which run failed by itself."""
    keys = [0, 2, 1]
    values = [b'stop\twas interrupted (SIGINT)', b'fail\tthe loss is NaN', b'fail\tbad data']
    assert coordination.failed_worker(keys, values) == 1
    assert coordination.failed_worker(keys[:1], values[:1]) is None
    assert coordination.failed_worker([], []) is None


def test_another_worker_closing_its_sync_point_wakes_the_chief():
    """Worker 1's close ops close the ready queue: the chief's wait for its token fails at once
    (it waited for --startup_timeout_secs), tokens already there stay."""
    graph = tf.Graph()
    with graph.as_default():
        chief = distributed.SyncPoint(3, 0, '/device:CPU:0')
        other = distributed.SyncPoint(3, 1, '/device:CPU:0')
        early = other.ready.enqueue(1)
        close = other.close_ops()
        wait = chief.ready.dequeue_many(2)
        left = chief.ready.size()
    with tf.compat.v1.Session(graph=graph) as sess:
        sess.run(early)
        sess.run(close)
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(wait, options=tf.compat.v1.RunOptions(timeout_in_ms=5000))
        assert sess.run(left) == 1


def _tokens_taken(take, count: int, gap_secs: float) -> list:
    """The tokens `take(sess, queued, dequeue)` gives (None: none now) while another thread
    puts `count` tokens (i, 0) into a done queue at random moments 0 to `gap_secs` apart."""
    graph = tf.Graph()
    with graph.as_default():
        queue = tf.compat.v1.FIFOQueue(-1, [tf.int32, tf.int32], shapes=[[], []])  # as a ps's
        index = tf.compat.v1.placeholder(tf.int32, [])
        put = queue.enqueue([index, tf.constant(0)])
        dequeue, queued = queue.dequeue(), queue.size()
    taken = []
    with tf.compat.v1.Session(graph=graph) as sess:
        def feed():
            rng = random.Random(49)
            for i in range(count):
                sess.run(put, {index: i})
                time.sleep(rng.uniform(0.0, gap_secs))
        feeder = threading.Thread(target=feed)
        feeder.start()
        while feeder.is_alive() or int(sess.run(queued)) > 0:
            token = take(sess, queued, dequeue)
            if token is not None:
                taken.append(token)
        feeder.join()
    return taken


def test_a_serving_task_takes_every_done_token():
    """server.take_done_token: 200 tokens put at any moment are all taken, in order. The serve
    loop's dequeue under a one-second deadline lost one now and then on a loaded host (the
    deadline fired after the token was taken): the ps said worker 1 'went away before
    reporting done'. With a 2 ms deadline (the same race, made frequent) that loses tokens
    most runs; here the same short waits between looks lose none."""
    def take(sess, queued, dequeue):
        return server.take_done_token(sess, queued, dequeue, poll_secs=0.002)
    assert _tokens_taken(take, 200, 0.003) == [(i, 0) for i in range(200)]


#: The third wave: name -> (mode, flags of worker 1).
FAULT_CASES = {
    'ps_sigterm': ('parameter_server', []),
    'collective_nan': ('collective_all_reduce', ['--seam_nan_at=10']),
    'sync_ps_nan': ('parameter_server', ['--seam_nan_at=10']),
}


def produce_faults(d) -> dict:
    """Starts the FAULT_CASES clusters side by side (the seam entry script for every task),
    sends SIGTERM to the ps of 'ps_sigterm' once both workers are in their timed steps; returns
    each cluster's {'name', 'code', 'log', 'secs'} (ps first, then the workers), 'secs' the
    seconds from the cluster's event (the signal, worker 1's exit) to the task's exit."""
    clusters = {}
    try:
        for name, (mode, more) in FAULT_CASES.items():
            ps, workers = ([] if mode == 'collective_all_reduce' else hosts(1)), hosts(2)
            tasks = [('ps', 0, [])] * bool(ps) + [('worker', 0, []), ('worker', 1, more)]
            clusters[name] = [Proc('%s_%s%d' % (name, job, i), cluster_args(
                job, i, ps, workers, mode=mode, timeout=120, extra=STEPS + extra), d,
                entry=SEAM_ENTRY) for job, i, extra in tasks]
        return _run_wave(clusters, _fault_event)
    finally:
        _kill_all(clusters)


def _fault_event(name: str, procs: list[Proc]) -> bool:
    """The event of a FAULT_CASES cluster: SIGTERM sent to the ps of 'ps_sigterm' once both
    workers are in their timed steps; worker 1's exit (its NaN loss) in the others."""
    if name != 'ps_sigterm':
        return procs[-1].proc.poll() is not None
    if not _timed(procs[1:]):
        return False
    procs[0].proc.send_signal(signal.SIGTERM)
    return True


@pytest.fixture(scope='module')
def fault_wave(tmp_path_factory):
    return run_once(tmp_path_factory, 'cluster_fault_lines', produce_faults)


def _after_steps(result: dict) -> list[str]:
    """The lines after the first timed step's."""
    lines = _lines(result)
    first = next(i for i, line in enumerate(lines) if line.startswith('1\timages/sec'))
    return lines[first + 1:]


def test_a_ps_stopped_by_sigterm_says_so_and_the_workers_print_one_line(fault_wave):
    ps, *workers = fault_wave['ps_sigterm']
    assert ps['code'] == 128 + signal.SIGTERM, ps['log'][-3000:]
    assert re.match(r'^Stopped by SIGTERM while serving ps 0 \(localhost:\d+\): worker 0, '
                    r'worker 1 had not reported done$', _lines(ps)[-1]), ps['log'][-3000:]
    for worker in workers:
        assert worker['code'] == 1, worker['log'][-3000:]
        # One line naming the ps, nothing before it: no gRPC text, no unclosed session.
        assert re.match(r'^error: lost the cluster: unreachable now: ps 0 \(localhost:\d+\) '
                        r'\(its process stopped, or its host is down: see its log\)$',
                        _after_steps(worker)[-1]), worker['log'][-3000:]
        said = [line for line in _after_steps(worker) if line.startswith(('warning:', 'error:'))]
        assert len(said) == 1, said


@pytest.mark.parametrize('case', ['collective_nan', 'sync_ps_nan'])
def test_a_failed_worker_is_named_with_its_reason(fault_wave, case):
    *ps, chief, failed = fault_wave[case]
    assert failed['code'] == 1, failed['log'][-3000:]
    assert _lines(failed)[-1].startswith('error: the loss became nan at step 10; '), \
        failed['log'][-3000:]
    assert chief['code'] == 1, chief['log'][-3000:]
    assert chief['secs'] < STOP_BOUND_SECS
    said = [line for line in _after_steps(chief) if line.startswith(('warning:', 'error:'))]
    assert len(said) == 1 and re.match(
        r"^error: worker 1 \(localhost:\d+\) failed: the loss became nan at step 10; "
        r"worker 0 \(localhost:\d+\) stops \(see worker 1's log\)$", said[0]), \
        chief['log'][-3000:]
    for result in ps:  # told by worker 1
        assert result['code'] == 1
        assert re.match(r'^error: worker 1 \(localhost:\d+\) reported a failure; ps 0 ',
                        _lines(result)[-1]), result['log'][-3000:]

"""The start-up check of a ps/worker cluster and the lines of tasks that never answer or go
away, from a new user's trial of clusters started from shell scripts:

* a worker started with --nocross_replica_sync or --forward_only trained and exited 0 while
  the chief waited out --startup_timeout_secs and blamed it as unreachable; one with another
  --num_gpus (or --optimizer) ran silently, each header with its own global batch;
* a worker given another --ps_hosts port waited for a ps nobody ran, and the chief said
  `worker 1 ... wrote nothing within 20 s`: the check now meets it in worker 0's lobby
  (cluster/flag_check.py);
* after a `kill -9` of worker 1 the chief named `ps 0 (...), worker 1 (...) (its process
  stopped ...)`, though the ps stopped because of worker 1.
"""

from __future__ import annotations

import socket

import pytest
from test_cluster_agreement import NAMED
from test_distributed import Proc, cluster_args, finish_all, hosts, last_line

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks import params as params_lib
from tf_cnn_benchmarks.cluster import flag_check, run_flags, server, topology
from tf_cnn_benchmarks.cnn_util import ClusterError

from helpers import free_port

PS, W0, W1 = 'localhost:2200', 'localhost:2210', 'localhost:2211'


def _values(index: int, **kwargs) -> dict:
    """The run-defining flags a worker sends (BenchmarkCNN's, with the flags as given)."""
    p = params_lib.make_params(model='trivial', job_name='worker', task_index=index,
                               ps_hosts=[PS], worker_hosts=[W0, W1], batch_size=2,
                               num_batches=5, **kwargs)
    return benchmark_cnn.BenchmarkCNN(p, gpus=0)._run_flag_values()


@pytest.mark.parametrize('kwargs, named', [
    (dict(cross_replica_sync=False), '--cross_replica_sync=false'),
    (dict(forward_only=True), '--forward_only=true'),
    (dict(device='cpu', num_gpus=2), '--num_gpus=2'),
    (dict(optimizer='momentum'), '--optimizer=momentum'),
])
def test_sync_forward_only_devices_and_optimizer_are_run_defining(kwargs, named):
    chief = _values(0)
    entries = {run_flags.entry_key('worker', 0, W0): chief,
               run_flags.entry_key('worker', 1, W1): _values(1, **kwargs)}
    verdict, line = run_flags.judge(entries, 2)
    chiefs = {'--cross_replica_sync=false': '--cross_replica_sync=true',
              '--forward_only=true': '--forward_only=false', '--num_gpus=2': '--num_gpus=1',
              '--optimizer=momentum': '--optimizer=sgd'}[named]
    assert (verdict, line) == ('mismatch', 'worker 1 (%s) was started with %s, the chief, worker '
                               '0 (%s), with %s: %s' % (W1, named, W0, chiefs, NAMED))


def test_each_mismatch_line_names_only_the_flags_its_task_was_compared_on():
    """Every task prints the line, a ps task too, and a ps task is compared on PS_FLAGS only:
    a worker's line said 'every task of a cluster takes the same ... --batch_size ...' on the
    ps's log as well (a user's trial)."""
    import re
    ps = run_flags.entry_key('ps', 0, PS)
    entries = {run_flags.entry_key('worker', 0, W0): _values(0), ps: _values(0),
               run_flags.entry_key('worker', 1, W1): _values(1, num_warmup_batches=3)}
    verdict, line = run_flags.judge(entries, 2, 1)
    assert verdict == 'mismatch' and line.endswith(NAMED) and 'every task' not in line
    named = lambda text: set(re.findall(r'--(\w+)', text.split(': ', 1)[1]))  # noqa: E731
    # The optimizer's and learning rate's flags are named as groups, --num_epochs as
    # --num_batches' other form.
    assert named(line) <= set(run_flags.RUN_DEFINING_FLAGS) | {'num_epochs'}
    entries = {run_flags.entry_key('worker', 0, W0): _values(0),
               ps: dict(_values(0), model='lenet'),
               run_flags.entry_key('worker', 1, W1): _values(1)}
    verdict, line = run_flags.judge(entries, 2, 1)
    assert verdict == 'mismatch' and line.startswith('ps 0 (%s) was started with --model=lenet'
                                                     % PS)
    assert named(line) == set(run_flags.PS_FLAGS), line


def test_an_optimizers_own_flags_are_compared_and_no_other():
    """Of two optimizers only --optimizer is named (each sends its own flags); of one, the
    flags it reads: --momentum with momentum, not --adam_beta1."""
    adam = _values(1, optimizer='adam', adam_beta1=0.5)
    assert run_flags.differences(adam, _values(0, optimizer='momentum')) == [
        ('optimizer', 'adam', 'momentum')]
    assert run_flags.differences(adam, _values(0, optimizer='adam')) == [
        ('adam_beta1', '0.5', '0.9')]
    assert run_flags.differences(_values(1, optimizer='momentum', momentum=0.5),
                                 _values(0, optimizer='momentum')) == [
        ('momentum', '0.5', '0.9')]
    assert run_flags.differences(_values(1, adam_beta1=0.5, momentum=0.5), _values(0)) == []


@pytest.mark.cluster
def test_a_worker_that_would_not_wait_for_the_others_is_named_at_start_up(tmp_path):
    """Worker 1 with --nocross_replica_sync, --forward_only and two devices: it trained (or
    timed inference) and exited 0, the chief waited out --startup_timeout_secs and said
    'unreachable now: worker 1'."""
    ps, workers = hosts(1), hosts(2)
    extra = ['--num_batches=3', '--device=cpu']
    procs = [Proc('ps0', cluster_args('ps', 0, ps, workers, timeout=90, extra=extra), tmp_path),
             Proc('worker0', cluster_args('worker', 0, ps, workers, timeout=90, extra=extra),
                  tmp_path),
             Proc('worker1', cluster_args('worker', 1, ps, workers, timeout=90, extra=extra + [
                 '--nocross_replica_sync', '--forward_only', '--num_gpus=2']), tmp_path)]
    line = ('error: worker 1 (%s) was started with --cross_replica_sync=false and '
            '--forward_only=true and --num_gpus=2, the chief, worker 0 (%s), with '
            '--cross_replica_sync=true and --forward_only=false and --num_gpus=1: %s'
            % (workers[1], workers[0], NAMED))
    for result in finish_all(procs):
        assert (result['code'], last_line(result)) == (1, line), result['log'][-3000:]
        assert 'unreachable' not in result['log'] and 'images/sec' not in result['log']


@pytest.mark.cluster
def test_a_worker_given_another_ps_address_is_named_at_start_up(tmp_path):
    """Worker 1's --ps_hosts names a port nobody listens on: it waited for that ps, the chief
    for its entry, until --startup_timeout_secs ('wrote nothing', 'ps 0 ... unreachable'); the
    three tasks now stop with the line naming both lists (worker 0's lobby)."""
    ps, workers, elsewhere = hosts(1), hosts(2), hosts(1)
    args = lambda job, i, ps_hosts: cluster_args(  # noqa: E731
        job, i, ps_hosts, workers, timeout=60, extra=['--num_batches=3'])
    procs = [Proc('ps0', args('ps', 0, ps), tmp_path),
             Proc('worker0', args('worker', 0, ps), tmp_path),
             Proc('worker1', args('worker', 1, elsewhere), tmp_path)]
    line = ('error: worker 1 (%s) was started with --ps_hosts=%s, the chief, worker 0 (%s), '
            'with --ps_hosts=%s: %s' % (workers[1], elsewhere[0], workers[0], ps[0], NAMED))
    for result in finish_all(procs):
        assert (result['code'], last_line(result)) == (1, line), result['log'][-3000:]
        assert 'unreachable' not in result['log']


def test_a_worker_of_distributed_all_reduce_is_compared_with_the_controller():
    """The controller is the chief there; its workers serve its graph (each writes its entry
    into its own table as it starts to serve) and are compared on SERVED_FLAGS only."""
    def values(job, index, **kwargs):
        p = params_lib.make_params(model='trivial', job_name=job, task_index=index,
                                   worker_hosts=[W0, W1], controller_host='localhost:2220',
                                   variable_update='distributed_all_reduce', **kwargs)
        return benchmark_cnn.BenchmarkCNN(p, gpus=0)._run_flag_values()

    controller = run_flags.entry_key('controller', 0, 'localhost:2220')
    entries = {controller: values('controller', 0),
               run_flags.entry_key('worker', 0, W0): values('worker', 0, batch_size=8)}
    assert run_flags.judge(entries, 2) == ('wait', None)  # the batch is the controller's
    entries[run_flags.entry_key('worker', 1, W1)] = dict(values('worker', 1),
                                                         controller_host='localhost:2221')
    assert run_flags.judge(entries, 2) == ('mismatch', (
        "worker 1 (%s) was started with --controller_host=localhost:2221, and controller 0 "
        "(localhost:2220) with --controller_host=localhost:2220: a worker of "
        "distributed_all_reduce takes the controller's --variable_update, --num_gpus, "
        "--worker_hosts and --controller_host; start it with the controller's" % W1))


@pytest.mark.cluster
def test_a_worker_given_another_controller_host_is_named_at_start_up(tmp_path):
    """distributed_all_reduce: worker 1 waited for the controller's done token at another
    address, and stopped after --startup_timeout_secs ('controller 0 (...) was unreachable for
    5 s ... (it never started or it died)') while the controller still ran the steps."""
    workers, controller, elsewhere = hosts(2), hosts(1)[0], hosts(1)[0]
    args = lambda job, i, at: cluster_args(  # noqa: E731
        job, i, [], workers, controller=at, mode='distributed_all_reduce', timeout=60,
        extra=['--num_batches=3', '--all_reduce_spec=pscpu'])
    procs = [Proc('worker0', args('worker', 0, controller), tmp_path),
             Proc('worker1', args('worker', 1, elsewhere), tmp_path),
             Proc('controller', args('controller', 0, controller), tmp_path)]
    line = ("error: worker 1 (%s) was started with --controller_host=%s, and controller 0 (%s) "
            "with --controller_host=%s: a worker of distributed_all_reduce takes the "
            "controller's --variable_update, --num_gpus, --worker_hosts and --controller_host; "
            "start it with the controller's" % (workers[1], elsewhere, controller, controller))
    for result in finish_all(procs):
        assert (result['code'], last_line(result)) == (1, line), result['log'][-3000:]
        assert 'images/sec' not in result['log']


# ------------------------------------------------------------------------------------------
# The lines of tasks that never answer, are unreachable or went away (in process).

@pytest.fixture
def listening():
    """An address that accepts TCP connections (a task that is up), closed afterwards."""
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    sock.listen()
    yield '127.0.0.1:%d' % sock.getsockname()[1]
    sock.close()


def _cluster(index, workers, ps, timeout=1):
    return topology.Cluster(params_lib.make_params(
        model='trivial', job_name='worker', task_index=index, worker_hosts=workers,
        ps_hosts=ps, startup_timeout_secs=timeout))


def test_a_task_that_never_answered_the_check_is_said_to_be_down_or_waiting(listening):
    """The chief said 'the start-up check of the run-defining flags: worker 1 (...) wrote
    nothing within 15 s'."""
    down = '127.0.0.1:%d' % free_port()
    c = _cluster(0, ['127.0.0.1:%d' % free_port(), down, listening], ['127.0.0.1:1'], 15)
    assert flag_check.missing_line(c, [('worker', 1)], 15) == (
        'worker 1 (%s) never answered the start-up check of the run-defining flags within 15 s '
        '(--startup_timeout_secs): it is not up: not started, or stopped (see its log); start '
        'it, or check --ps_hosts/--worker_hosts' % down)
    assert flag_check.missing_line(c, [('worker', 2)], 15) == (
        'worker 2 (%s) never answered the start-up check of the run-defining flags within 15 s '
        '(--startup_timeout_secs): it is up but waits for a task it cannot reach (see its log), '
        "as when its --ps_hosts/--worker_hosts give a task another address than this task's; "
        'give every task the same --ps_hosts/--worker_hosts' % listening)
    assert flag_check.missing_line(c, [('worker', 1), ('worker', 2)], 15).endswith(
        ': worker 1 not up (not started, or stopped), worker 2 up but waiting for a task it '
        'cannot reach (see their logs); start them, or give every task the same '
        '--ps_hosts/--worker_hosts')


def test_an_unreachable_ps_while_the_others_are_up_may_have_another_address(listening):
    """Worker 1 given another ps port said 'ps 0 (...) unreachable after 20 s ...: not started
    yet, or stopped'; worker 0 was up all along."""
    ps = '127.0.0.1:%d' % free_port()
    task = server.TaskServer(_cluster(1, [listening, '127.0.0.1:%d' % free_port()], [ps]))
    with pytest.raises(ClusterError) as raised:
        task.wait_for_tasks([('ps', 0)], 'cannot create the session')
    assert str(raised.value) == (
        "cannot create the session: ps 0 (%s) unreachable after 1 s (--startup_timeout_secs), "
        "while worker 0 (%s) is up: if ps 0 runs, this task's --ps_hosts/--worker_hosts give it "
        "another address than the other tasks' (give every task the same); else it was not "
        "started yet, or stopped (a task stops when its cluster's run ends or fails: its log "
        "says why)" % (ps, listening))


def test_tasks_unreachable_together_are_named_in_the_plural():
    """'... (a task stops when its cluster's run ends or fails: their logs says why)'."""
    ps = ['127.0.0.1:%d' % free_port() for _ in range(2)]
    task = server.TaskServer(_cluster(0, ['127.0.0.1:%d' % free_port()], ps))
    with pytest.raises(ClusterError) as raised:
        task.wait_for_tasks([('ps', 0), ('ps', 1)], 'cannot create the session')
    assert str(raised.value).endswith(
        ": not started yet, or stopped (a task stops when its cluster's run ends or fails: their "
        "logs say why); start them, or check --ps_hosts/--worker_hosts")


def test_a_lost_worker_is_named_before_the_ps_that_stopped_because_of_it():
    """After a kill -9 of worker 1 the chief said 'unreachable now: ps 0 (...), worker 1 (...)
    (its process stopped, or its host is down: see its log)'; the ps had stopped on purpose,
    its log said so ('worker 1 (...) went away before reporting done')."""
    c = _cluster(0, [W0, W1, 'localhost:2212'], [PS, 'localhost:2201'])
    assert c.lost_words([('ps', 0), ('worker', 1)]) == (
        'worker 1 (%s) (its process stopped, or its host is down: see its log), and ps 0 (%s), '
        'which stops once a worker it serves is gone (its log says which)' % (W1, PS))
    assert c.lost_words([('ps', 0), ('ps', 1), ('worker', 1), ('worker', 2)]) == (
        'worker 1 (%s), worker 2 (localhost:2212) (their processes stopped, or their hosts are '
        'down: see their logs), and ps 0 (%s), ps 1 (localhost:2201), which stop once a worker '
        'they serve is gone (their logs say which)' % (W1, PS))
    assert c.lost_words([('ps', 0)]) == (
        'ps 0 (%s) (its process stopped, or its host is down: see its log)' % PS)
    assert c.causes_first([('ps', 0), ('worker', 1)]) == [('worker', 1), ('ps', 0)]

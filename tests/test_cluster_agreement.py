"""Tasks of one cluster that disagree: other host lists, other steps or learning rates (the
start-up check of cluster/run_flags.py, every task a process on loopback as in
test_distributed.py); where an unreachable peer's address came from; the header's Sync line.
"""

from __future__ import annotations

import json

import pytest
from test_distributed import Proc, cluster_args, finish_all, hosts, last_line

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks import params as params_lib
from tf_cnn_benchmarks.cluster import resolvers, run_flags, server, topology
from tf_cnn_benchmarks.cnn_util import ClusterError

NAMED = ('every worker of a cluster takes the same --model, --num_classes, --image_size, '
         '--use_fp16, --use_bf16, --variable_update, --cross_replica_sync, --forward_only, '
         '--num_gpus, --batch_size, --num_batches (or --num_epochs), --num_warmup_batches, '
         '--optimizer and its flags, the learning-rate flags, --worker_hosts and --ps_hosts; '
         "start it with the chief's")


def _start(tmp_path, ps, lists, extras=((), ())):
    """ps 0 and two workers, worker i given --worker_hosts=lists[i] and extras[i]; returns
    their results (ps, chief, other)."""
    args = lambda job, i, ws, extra: cluster_args(  # noqa: E731
        job, i, ps, ws, timeout=90, extra=['--num_batches=5', *extra])
    procs = [Proc('ps0', args('ps', 0, lists[0], ()), tmp_path)]
    procs += [Proc('worker%d' % i, args('worker', i, lists[i], extras[i]), tmp_path)
              for i in range(2)]
    return finish_all(procs)


@pytest.mark.cluster
def test_a_worker_with_a_longer_worker_list_is_named_at_start_up(tmp_path):
    """Worker 1 lists a third worker: the chief used to fail on `Shared queue 'tfcnn_flags' has
    capacity 3 but requested capacity was 2`, worker 1 to wait out the timeout."""
    ps, workers = hosts(1), hosts(3)
    _, chief, worker1 = _start(tmp_path, ps, [workers[:2], workers])
    line = ('error: worker 1 (%s) was started with --worker_hosts=%s, the chief, worker 0 (%s), '
            'with --worker_hosts=%s: %s' % (workers[1], ','.join(workers), workers[0],
                                            ','.join(workers[:2]), NAMED))
    for result in (chief, worker1):
        assert (result['code'], last_line(result)) == (1, line), result['log'][-3000:]
        assert 'Shared queue' not in result['log'] and 'Traceback' not in result['log']


@pytest.mark.cluster
def test_two_tasks_taking_the_chiefs_role_are_named_at_start_up(tmp_path):
    """The second worker lists the workers the other way round (task 0 of its list is
    itself): both are worker 0, which used to fail with `RecvTensor expects a different device
    incarnation`."""
    ps, workers = hosts(1), hosts(2)
    swapped = workers[::-1]
    args = lambda ws: cluster_args('worker', 0, ps, ws, timeout=90,  # noqa: E731
                                   extra=['--num_batches=5'])
    procs = [Proc('ps0', cluster_args('ps', 0, ps, workers, timeout=90), tmp_path),
             Proc('a', args(workers), tmp_path), Proc('b', args(swapped), tmp_path)]
    _, a, b = finish_all(procs)
    first, second = sorted([(workers[0], workers), (swapped[0], swapped)],
                           key=lambda x: run_flags.entry_key('worker', 0, x[0]))
    line = ('error: two tasks take the role of worker 0, the chief: %s with --worker_hosts=%s, '
            'and %s with --worker_hosts=%s: every task of a cluster takes the same '
            '--worker_hosts, in the same order; start them all with one list'
            % (first[0], ','.join(first[1]), second[0], ','.join(second[1])))
    for result in (a, b):
        assert (result['code'], last_line(result)) == (1, line), result['log'][-3000:]
        assert 'incarnation' not in result['log']


@pytest.mark.cluster
def test_a_task_whose_address_another_task_took_says_the_host_lists_may_differ(tmp_path):
    """Worker 1 given the host list swapped and --task_index=1 listens on worker 0's address;
    worker 0 then cannot start its server. The line used to ask only whether another process
    held the port; in a cluster the likely cause is another task given the same address."""
    ps, workers = hosts(1), hosts(2)
    other = Proc('worker1', cluster_args('worker', 1, ps, workers[::-1], timeout=60),
                 tmp_path)
    try:
        other.wait_for(r'^Started server ')
        chief = Proc('worker0', cluster_args('worker', 0, ps, workers, timeout=60), tmp_path)
        result = chief.finish(timeout=120)
    finally:
        other.kill()
    line = ('error: cannot start the server of worker 0 (%s): Could not start gRPC server (the '
            'port is in use: another task of this cluster may have been given this address; '
            'give every task the same --ps_hosts/--worker_hosts, each its own --task_index; '
            'else another process holds the port)' % workers[0])
    assert (result['code'], last_line(result)) == (1, line), result['log'][-3000:]


def test_the_port_in_use_advice_names_where_the_addresses_came_from():
    p = params_lib.make_params(model='trivial', job_name='worker', task_index=0,
                               worker_hosts=['h:1'], variable_update='collective_all_reduce')
    advice = lambda source: server.port_in_use_advice(  # noqa: E731
        topology.Cluster(p._replace(cluster_resolver=source)))
    assert '; give every task the same cluster in TF_CONFIG, each its own task index;' in (
        advice('tf_config'))
    assert '; give each Slurm step on a node its own --slurm_port_base;' in advice('slurm')


@pytest.mark.cluster
def test_other_steps_and_learning_rates_are_named_at_start_up(tmp_path):
    """Worker 1 runs 2 steps with its own rate, the chief 5 with 0.01: worker 1 used to exit 0
    after its steps and the chief to wait out --startup_timeout_secs ('unreachable now: worker
    1'); worker 1's rate was ignored (the chief applies the updates), its NaN advice named it."""
    ps, workers = hosts(1), hosts(2)
    ps0, chief, worker1 = _start(tmp_path, ps, [workers, workers], extras=(
        ['--init_learning_rate=0.01'], ['--num_batches=2']))
    line = ('error: worker 1 (%s) was started with --num_batches=2 and no --init_learning_rate, '
            'the chief, worker 0 (%s), with --num_batches=5 and --init_learning_rate=0.01: %s'
            % (workers[1], workers[0], NAMED))
    for result in (chief, worker1):
        assert (result['code'], last_line(result)) == (1, line), result['log'][-3000:]
        assert 'unreachable' not in result['log'] and 'images/sec' not in result['log']
    assert ps0['code'] == 1
    # Worker 1 started again after the ps stopped with the job: nothing is left to say why;
    # its line said 'start it' as of a ps never started, and now says it may have stopped.
    late = finish_all([Proc('late', cluster_args('worker', 1, ps, workers, timeout=2, extra=[
        '--num_batches=5', '--init_learning_rate=0.01']), tmp_path)])[0]
    assert (late['code'], last_line(late)) == (1, (
        'error: cannot create the session: ps 0 (%s) unreachable after 2 s '
        "(--startup_timeout_secs): not started yet, or stopped (a task stops when its cluster's "
        'run ends or fails: its log says why); start it, or check --ps_hosts/--worker_hosts'
        % ps[0])), late['log'][-3000:]


def test_steps_agree_whichever_flag_gave_them():
    theirs = {'num_batches': '5 (from --num_epochs=0.01)'}
    assert run_flags.differences(theirs, {'num_batches': '5'}) == []
    assert run_flags.differences({'num_batches': '4'}, {'num_batches': '5'})[0] == (
        'num_batches', '4', '5')


def test_judge_waits_for_every_listed_worker_then_agrees():
    values = {'model': 'trivial'}
    one = {run_flags.entry_key('worker', 0, 'h:1'): values}
    assert run_flags.judge(one, 2) == ('wait', None)
    assert run_flags.missing_workers(one, 2) == [1]
    both = dict(one, **{run_flags.entry_key('worker', 1, 'h:2'): values})
    assert run_flags.judge(both, 2) == ('ok', None)
    data = [run_flags.encode_entry(k, v, seen=k.startswith('worker 1')) for k, v in both.items()]
    assert run_flags.decode_entries(data) == (both, {'worker 1 h:2'})


def test_judge_waits_for_every_ps_task_and_compares_it_on_the_variables_flags():
    chief = {'model': 'trivial', 'variable_update': 'parameter_server', 'num_batches': '5'}
    entries = {run_flags.entry_key('worker', 0, 'h:1'): chief}
    # ps 0's entry is no second chief (it was grouped by index with worker 0).
    assert run_flags.judge(entries, 1, num_ps=1) == ('wait', None)
    assert run_flags.missing_ps(entries, 1) == [0]
    # Steps, batch and learning rates are no ps task's business: not compared.
    ps = dict(chief, num_batches='100')
    entries[run_flags.entry_key('ps', 0, 'h:0')] = ps
    assert run_flags.judge(entries, 1, num_ps=1) == ('ok', None)
    entries[run_flags.entry_key('ps', 0, 'h:0')] = dict(ps, variable_update='distributed_'
                                                         'replicated')
    assert run_flags.judge(entries, 1, num_ps=1) == ('mismatch', (
        "ps 0 (h:0) was started with --variable_update=distributed_replicated, the chief, "
        "worker 0 (h:1), with --variable_update=parameter_server: a ps task takes the chief's "
        "--model, --num_classes, --image_size, --variable_update, --worker_hosts and "
        "--ps_hosts; start it with the chief's"))
    assert run_flags.worker_entries(entries) == {'worker 0 h:1'}


def test_a_ps_whose_host_lists_differ_waits_for_the_workers_that_explain_it():
    """Worker b lists the workers the other way round: it is worker 0 at h:2, and the ps's
    lists differ from its own. Judged at once, b said the ps's lists differ (half the time,
    as the ps's entry came before worker a's); the two tasks taking the chief's role are the
    cause, and a's entry says so."""
    ps_values = {'model': 'trivial', 'worker_hosts': 'h:1,h:2'}
    b = {run_flags.entry_key('worker', 0, 'h:2'): dict(ps_values, worker_hosts='h:2,h:1'),
         run_flags.entry_key('ps', 0, 'h:0'): ps_values}
    assert run_flags.judge(b, 2, num_ps=1) == ('wait', None)
    verdict, line = run_flags.judge(b, 2, num_ps=1, final=True)  # nobody else came
    assert (verdict, line.split(' was started')[0]) == ('mismatch', 'ps 0 (h:0)')
    b[run_flags.entry_key('worker', 0, 'h:1')] = ps_values
    verdict, line = run_flags.judge(b, 2, num_ps=1)
    assert (verdict, line.split(':')[0]) == ('mismatch', 'two tasks take the role of worker 0, '
                                                         'the chief')
    # A ps differing in anything else than the lists is said at once.
    b.pop(run_flags.entry_key('worker', 0, 'h:1'))
    b[run_flags.entry_key('ps', 0, 'h:0')] = dict(ps_values, model='lenet')
    verdict, line = run_flags.judge(b, 2, num_ps=1)
    assert verdict == 'mismatch' and '--model=lenet' in line


@pytest.mark.cluster
def test_a_ps_started_with_another_variable_update_is_named_at_start_up(tmp_path):
    """The ps builds no graph: started with --variable_update=distributed_replicated beside a
    parameter_server chief, the run went on and every task exited 0 without a word."""
    ps, workers = hosts(1), hosts(1)
    procs = [Proc('ps0', cluster_args('ps', 0, ps, workers, timeout=90,
                                      mode='distributed_replicated'), tmp_path),
             Proc('worker0', cluster_args('worker', 0, ps, workers, timeout=90,
                                          extra=['--num_batches=2']), tmp_path)]
    ps0, chief = finish_all(procs)
    line = ("error: ps 0 (%s) was started with --variable_update=distributed_replicated, the "
            "chief, worker 0 (%s), with --variable_update=parameter_server: a ps task takes the "
            "chief's --model, --num_classes, --image_size, --variable_update, --worker_hosts and "
            "--ps_hosts; start it with the chief's" % (ps[0], workers[0]))
    for result in (chief, ps0):
        assert (result['code'], last_line(result)) == (1, line), result['log'][-3000:]
    assert 'images/sec' not in chief['log']


# ------------------------------------------------------------------------------------------
# Where the addresses came from; the header.

def test_an_unreachable_ps_of_a_tf_config_cluster_names_tf_config(monkeypatch):
    ps = hosts(1)[0]
    monkeypatch.setenv('TF_CONFIG', json.dumps({
        'cluster': {'chief': hosts(1), 'ps': [ps]}, 'task': {'type': 'chief', 'index': 0}}))
    p = resolvers.resolve(params_lib.make_params(
        model='trivial', image_size=16, batch_size=2, startup_timeout_secs=1)).params
    task = server.TaskServer(topology.Cluster(p))
    with pytest.raises(ClusterError) as raised:
        task.wait_for_tasks([('ps', 0)], 'cannot create the session')
    assert str(raised.value) == (
        "cannot create the session: ps 0 (%s) unreachable after 1 s (--startup_timeout_secs): "
        "not started yet, or stopped (a task stops when its cluster's run ends or fails: its "
        "log says why); start it, or check TF_CONFIG's cluster" % ps)
    flags = topology.Cluster(p._replace(cluster_resolver='flags'))
    assert flags.hosts_origin == '--ps_hosts/--worker_hosts'


@pytest.mark.parametrize('sync', [True, False])
def test_the_header_of_a_cluster_task_says_sync(sync):
    p = params_lib.make_params(model='trivial', image_size=16, batch_size=2, job_name='worker',
                               task_index=0, ps_hosts=['localhost:2222'],
                               worker_hosts=['localhost:2223'], cross_replica_sync=sync)
    lines = benchmark_cnn.BenchmarkCNN(p, gpus=0).info_lines()
    at = lines.index('Variables:   parameter_server')
    assert lines[at + 1] == 'Sync:        %s' % sync
    local = benchmark_cnn.BenchmarkCNN(params_lib.make_params(
        model='trivial', image_size=16, batch_size=2), gpus=0)
    assert not any(line.startswith('Sync:') for line in local.info_lines())

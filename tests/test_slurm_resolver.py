"""--cluster_resolver=slurm in process: Slurm's ranks, ports and GPUs from simulated SLURM_*
variables (TensorFlow's resolver reads no command), and every Slurm error line. The clusters
started from Slurm variables: tests/test_cluster_resolvers.py's wave."""

from __future__ import annotations

import pytest

from tf_cnn_benchmarks import params as params_lib
from tf_cnn_benchmarks.cluster import resolvers, slurm_nodes


def _params(**kwargs):
    values = dict(model='trivial', image_size=16, batch_size=2)
    values.update(kwargs)
    return params_lib.make_params(**values)



def simulated_slurm(monkeypatch, rank, nodelist='n[1-2]', tasks_per_node='3,2', node=None,
                    local=None, **extra):
    """SLURM_* variables of rank `rank` of a step over `nodelist` with `tasks_per_node`."""
    counts = [int(c) for c in tasks_per_node.split(',')]
    names = ['n1', 'n2'] if nodelist == 'n[1-2]' else [nodelist]
    first = [sum(counts[:i]) for i in range(len(counts))]
    node_index = max(i for i, f in enumerate(first) if f <= rank)
    values = {'SLURM_PROCID': str(rank), 'SLURM_STEP_NUM_TASKS': str(sum(counts)),
              'SLURM_NTASKS': str(sum(counts)), 'SLURM_STEP_NODELIST': nodelist,
              'SLURM_JOB_NODELIST': nodelist, 'SLURM_STEP_TASKS_PER_NODE': tasks_per_node,
              'SLURMD_NODENAME': node or names[node_index],
              'SLURM_LOCALID': str(local if local is not None else rank - first[node_index])}
    values.update(extra)
    for name, value in values.items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize('rank, job, index, address, gpus', [
    (0, 'ps', 0, 'n1:9000', ''),
    (1, 'worker', 0, 'n1:9001', '4,5'),
    (2, 'worker', 1, 'n1:9002', '6,7'),
    (3, 'worker', 2, 'n2:9000', '4,5'),
    (4, 'worker', 3, 'n2:9001', '6,7'),
])
def test_slurm_ranks_ports_and_gpus(monkeypatch, rank, job, index, address, gpus):
    """5 tasks on 2 nodes (3 + 2), 4 GPUs per node: the ps hides them, the node's workers share."""
    simulated_slurm(monkeypatch, rank, CUDA_VISIBLE_DEVICES='4,5,6,7')
    resolution = resolvers.resolve(_params(slurm_port_base=9000))
    p = resolution.params
    assert (p.job_name, p.task_index, p.cluster_resolver) == (job, index, 'slurm')
    assert p.ps_hosts == ['n1:9000']
    assert p.worker_hosts == ['n1:9001', 'n1:9002', 'n2:9000', 'n2:9001']
    assert resolution.environment == {'CUDA_VISIBLE_DEVICES': gpus}
    role = resolvers.describe_role(job, index, 1, 4)
    assert resolution.description == 'Slurm (rank %d of 5: %s; %s; %s)' % (
        rank, role, address, 'GPUs ' + gpus if gpus else 'no GPU')
    params_lib.validate_params(p)


def test_slurm_keeps_gpus_bound_per_task_and_cpu_only_steps(monkeypatch):
    simulated_slurm(monkeypatch, 2, CUDA_VISIBLE_DEVICES='3', SLURM_GPUS_PER_TASK='1')
    resolution = resolvers.resolve(_params(slurm_port_base=9000))
    assert resolution.environment == {}
    assert resolution.description.endswith('; n1:9002; GPUs 3)')
    monkeypatch.delenv('CUDA_VISIBLE_DEVICES')
    resolution = resolvers.resolve(_params(slurm_port_base=9000))
    assert (resolution.environment, resolution.description) == (
        {}, 'Slurm (rank 2 of 5: worker 1 of 4, 1 ps; n1:9002)')


def test_slurm_num_ps_and_the_all_reduce_default(monkeypatch):
    simulated_slurm(monkeypatch, 1)
    p = resolvers.resolve(_params(num_ps=2, variable_update='distributed_replicated')).params
    assert (p.job_name, p.task_index, p.ps_hosts) == ('ps', 1, ['n1:8888', 'n1:8889'])
    p = resolvers.resolve(_params(variable_update='collective_all_reduce')).params
    assert (p.job_name, p.task_index, p.ps_hosts, len(p.worker_hosts)) == ('worker', 1, [], 5)
    # A ps asked of collective_all_reduce would only be waited for: refused.
    with pytest.raises(params_lib.ParamsError) as raised:
        resolvers.resolve(_params(num_ps=1, variable_update='collective_all_reduce'))
    assert str(raised.value) == (
        '--variable_update=collective_all_reduce has no ps task (its workers all-reduce among '
        'themselves), and Slurm has 1 (n1:8888); drop --num_ps, or use parameter_server or '
        'distributed_replicated.')


@pytest.mark.parametrize('setup, kwargs, message', [
    (dict(rank=1), dict(num_ps=5), 'the Slurm step has 5 task(s) and --num_ps=5 leaves no '
     'worker; start more tasks (srun --ntasks) or lower --num_ps.'),
    (dict(rank=1), dict(slurm_port_base=65533), '--slurm_port_base must leave room for 5 ports '
     'below 65536. Received: slurm_port_base=65533'),
    (dict(rank=3, node='n1'), {}, "Slurm started rank 3 on node n1, but block distribution over "
     "SLURM_STEP_NODELIST gives it n2:8888; start the step with srun --distribution=block (the "
     "default)."),
    (dict(rank=1, local=0), {}, "Slurm rank 1 is task 0 of its node (SLURM_LOCALID), but block "
     "distribution gives it n1:8889, the port of task 1; start the step with srun "
     "--distribution=block (the default)."),
    (dict(rank=1, CUDA_VISIBLE_DEVICES='0'), {}, 'Slurm gave node n1 1 GPU(s) '
     '(CUDA_VISIBLE_DEVICES=0) for 2 worker tasks; request more GPUs or start fewer tasks per '
     'node.'),
    # A malformed list names the variables to fix and what a valid one looks like.
    (dict(rank=1, nodelist='n[1-'), {}, 'Slurm: SLURM_STEP_NODELIST=n[1-, '
     'SLURM_STEP_TASKS_PER_NODE=3,2: \'n[1-\': "[" without "]" (rank 1 of 5); fix '
     'SLURM_JOB_NODELIST and SLURM_STEP_NODELIST (srun copies the first into the second): a '
     'Slurm hostlist looks like node[01-03], node[1,3-5],gpu7 or node01,node02'),
    (dict(rank=1, nodelist='n[1-', SLURM_JOB_NODELIST='n[1-2]'), {}, 'Slurm: '
     'SLURM_STEP_NODELIST=n[1-, SLURM_STEP_TASKS_PER_NODE=3,2: \'n[1-\': "[" without "]" '
     '(rank 1 of 5); fix SLURM_STEP_NODELIST (srun sets it in a step): a Slurm hostlist looks '
     'like node[01-03], node[1,3-5],gpu7 or node01,node02'),
    (dict(rank=1, SLURM_STEP_TASKS_PER_NODE='3,2x'), {}, "Slurm: SLURM_STEP_NODELIST=n[1-2], "
     "SLURM_STEP_TASKS_PER_NODE=3,2x: '3,2x': '2x' is not COUNT or COUNT(xREPEATS) (rank 1 of "
     "5); fix SLURM_STEP_TASKS_PER_NODE (srun sets it): one count per node, e.g. 2(x3),1 for 2 "
     "tasks on each of 3 nodes then 1"),
    (dict(rank=1, nodelist='n[1-3]'), {}, "Slurm: SLURM_STEP_NODELIST=n[1-3], "
     "SLURM_STEP_TASKS_PER_NODE=3,2: 3 node(s) in 'n[1-3]' but 2 count(s) in the tasks per "
     "node '3,2' (rank 1 of 5); fix SLURM_STEP_TASKS_PER_NODE or SLURM_STEP_NODELIST (srun "
     "sets both for one step): one task count per node of the list, in its order"),
    (dict(rank=1, tasks_per_node='3,2', SLURM_STEP_NUM_TASKS='6'), {},
     'Slurm: SLURM_STEP_TASKS_PER_NODE=3,2 makes 5 task(s), SLURM_STEP_NUM_TASKS says 6 and '
     'SLURM_PROCID 1; run inside one srun step'),
    (dict(rank=1), dict(task_index=3, cluster_resolver='slurm'), '--task_index=3 contradicts '
     'Slurm: its rank 1 is worker 0 here (ps n1:8888; workers n1:8889,n1:8890,n2:8888,n2:8889); '
     'drop the host flags (Slurm gives them) or give --cluster_resolver=flags to ignore Slurm.'),
])
def test_slurm_errors_are_one_line(monkeypatch, setup, kwargs, message):
    simulated_slurm(monkeypatch, **setup)
    with pytest.raises(params_lib.ParamsError) as raised:
        resolvers.resolve(_params(**kwargs))
    if message.startswith(('Slurm: ', 'Slurm started', 'Slurm rank')):
        # The step's variables at fault, in a cluster --cluster_resolver=auto took from them:
        # the line ends with where the cluster came from and the way to a local run (variables
        # leaked into a shell that is no task of the step); asked for by name, as it was.
        assert str(raised.value) == '%s; %s.' % (message.rstrip('.'), slurm_nodes.auto_slurm_fix())
        assert 'SLURM_PROCID=%d of SLURM_STEP_NUM_TASKS=' % setup['rank'] in str(raised.value)
        with pytest.raises(params_lib.ParamsError) as raised:
            resolvers.resolve(_params(cluster_resolver='slurm', **kwargs))
    assert str(raised.value) == message

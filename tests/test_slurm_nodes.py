"""Slurm's hostlist grammar and tasks-per-node counts, expanded in Slurm's own node order
(cluster/slurm_nodes.py), and the ranks of a step whose node names sort differently as text."""

import pytest

from tf_cnn_benchmarks import params as params_lib
from tf_cnn_benchmarks.cluster import resolvers, slurm_nodes


def _params(**kwargs):
    return params_lib.make_params(**{'model': 'trivial', 'image_size': 16, 'batch_size': 2,
                                     **kwargs})


@pytest.mark.parametrize('hostlist, hosts', [
    ('node[9-10]', ['node9', 'node10']),
    ('node[009-011]', ['node009', 'node010', 'node011']),
    ('node[08-10],node[9-10]', ['node08', 'node09', 'node10', 'node9', 'node10']),
    ('a[1,3-5]', ['a1', 'a3', 'a4', 'a5']),
    ('a[1-2],b3', ['a1', 'a2', 'b3']),
    ('gpu[98-101],cpu7 login', ['gpu98', 'gpu99', 'gpu100', 'gpu101', 'cpu7', 'login']),
    ('r[1-2]n[08-9]', ['r1n08', 'r1n09', 'r2n08', 'r2n09']),
    ('x[1-2]y[3-4]z[5-6]', ['x1y3z5', 'x1y3z6', 'x2y3z5', 'x2y3z6', 'x1y4z5', 'x1y4z6',
                            'x2y4z5', 'x2y4z6']),  # hostlist.c's recursion: the middle outermost
    ('n[1-2]-ib', ['n1-ib', 'n2-ib']),
])
def test_slurm_hostlists_expand_in_slurms_order(hostlist, hosts):
    assert slurm_nodes.expand_hostlist(hostlist) == hosts


@pytest.mark.parametrize('hostlist, message', [
    ('n[1-', "'n[1-': \"[\" without \"]\""),
    ('n1]', "'n1]': \"]\" without \"[\""),
    ('n[3-1]', "'n[3-1]': the range 3-1 ends below its start"),
    ('n[a-b]', "'n[a-b]': 'a-b' is not a number or a range LOW-HIGH"),
    ('n[1--2]', "'n[1--2]': '1--2' is not a number or a range LOW-HIGH"),
    ('n[0-70000]', "'n[0-70000]': the range 0-70000 holds more than 65536 hosts"),
    (',', "',' names no host"),
])
def test_slurm_hostlist_errors(hostlist, message):
    with pytest.raises(slurm_nodes.HostlistError) as raised:
        slurm_nodes.expand_hostlist(hostlist)
    assert str(raised.value) == message


def test_slurm_tasks_per_node_pair_with_the_nodes_in_order():
    assert slurm_nodes.expand_tasks_per_node('2(x3),1') == [2, 2, 2, 1]
    assert slurm_nodes.block_addresses('node[9-10],gpu[098-099]', '2(x3),1', 7000) == [
        'node9:7000', 'node9:7001', 'node10:7000', 'node10:7001', 'gpu098:7000', 'gpu098:7001',
        'gpu099:7000']
    with pytest.raises(slurm_nodes.HostlistError, match=r"^'2\(x3\),x': 'x' is not COUNT"):
        slurm_nodes.expand_tasks_per_node('2(x3),x')


@pytest.mark.parametrize('rank, node, local, job, index', [
    (0, 'node9', 0, 'ps', 0), (1, 'node9', 1, 'worker', 0), (2, 'node10', 0, 'worker', 1),
    (3, 'node10', 1, 'worker', 2), (4, 'gpu098', 0, 'worker', 3), (5, 'gpu098', 1, 'worker', 4),
    (6, 'gpu099', 0, 'worker', 5)])
def test_slurm_nodes_that_sort_differently_as_text_resolve_every_rank(
        monkeypatch, rank, node, local, job, index):
    """node9 before node10, as Slurm placed the ranks: TensorFlow's resolver sorted the names as
    text (node10 first) and refused every rank (issue 41.4)."""
    for name, value in {'SLURM_PROCID': rank, 'SLURM_STEP_NUM_TASKS': 7,
                        'SLURM_STEP_NODELIST': 'node[9-10],gpu[098-099]',
                        'SLURM_STEP_TASKS_PER_NODE': '2(x3),1', 'SLURMD_NODENAME': node,
                        'SLURM_LOCALID': local}.items():
        monkeypatch.setenv(name, str(value))
    resolution = resolvers.resolve(_params(slurm_port_base=7000))
    p = resolution.params
    assert (p.job_name, p.task_index) == (job, index)
    assert p.ps_hosts == ['node9:7000']
    assert p.worker_hosts == ['node9:7001', 'node10:7000', 'node10:7001', 'gpu098:7000',
                              'gpu098:7001', 'gpu099:7000']
    assert resolution.description == 'Slurm (rank %d of 7: %s; %s:%d%s)' % (
        rank, resolvers.describe_role(job, index, 1, 6), node, 7000 + local,
        '; no GPU' if job == 'ps' else '')


def test_slurm_resolver_outside_a_step(monkeypatch):
    """Outside a step the error said `received None` of the first variable it read: it names
    every variable of a step that is not set (this test's assertion pinned the old line)."""
    with pytest.raises(params_lib.ParamsError) as raised:
        resolvers.resolve(_params(cluster_resolver='slurm'))
    assert str(raised.value) == (
        '--cluster_resolver=slurm, but SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_STEP_NODELIST, '
        'SLURM_STEP_TASKS_PER_NODE are not set: this process is no task of a Slurm step; start '
        'the tasks with srun inside an allocation (sbatch, salloc), or drop '
        '--cluster_resolver=slurm.')
    # In an allocation but not in a step (sbatch's script itself): the step's variables only.
    for name, value in (('SLURM_PROCID', '0'), ('SLURM_JOB_NODELIST', 'n1'),
                        ('SLURM_STEP_NUM_TASKS', '2'), ('SLURM_STEP_NODELIST', ' ')):
        monkeypatch.setenv(name, value)
    with pytest.raises(params_lib.ParamsError) as raised:
        resolvers.resolve(_params(cluster_resolver='slurm'))
    assert str(raised.value).startswith(
        '--cluster_resolver=slurm, but SLURM_STEP_NODELIST, SLURM_STEP_TASKS_PER_NODE are not '
        'set: this process is no task of a Slurm step;')
    monkeypatch.setenv('SLURM_STEP_NODELIST', 'n1')
    monkeypatch.setenv('SLURM_STEP_TASKS_PER_NODE', '2')
    monkeypatch.setenv('SLURM_PROCID', 'one')
    with pytest.raises(params_lib.ParamsError) as raised:
        resolvers.resolve(_params(cluster_resolver='slurm'))
    assert str(raised.value) == (
        "--cluster_resolver=slurm needs SLURM_PROCID (a number) in the environment; received "
        "'one'. Start the tasks with srun inside an allocation.")

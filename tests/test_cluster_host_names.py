"""A cluster's host names are looked up once as a task starts (cluster/host_names.py): a name
that does not resolve stops a task of the host flags or of Slurm at once, naming the name and
where it came from (it waited --startup_timeout_secs, then said `ps 0 (...) unreachable`);
TF_CONFIG's get a warning; a name server that does not answer is not judged."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from test_slurm_resolver import simulated_slurm

from tf_cnn_benchmarks import params as params_lib
from tf_cnn_benchmarks.cluster import host_names

from helpers import run_command

#: RFC 6761: names under .invalid never resolve, on any host.
NOWHERE = 'nosuchhost.invalid'
TINY = ('--model=trivial', '--batch_size=2', '--image_size=16', '--num_batches=1',
        '--noresults_db', '--startup_timeout_secs=30')


def _params(**kwargs):
    values = dict(model='trivial', image_size=16, batch_size=2, job_name='worker')
    values.update(kwargs)
    return params_lib.make_params(**values)


def _lookup(missing, seen=None):
    """A lookup where the names in `missing` do not exist; records each name asked."""
    def lookup(host):
        if seen is not None:
            seen.append(host)
        return 'Name or service not known' if host in missing else None
    return lookup


def test_each_name_is_looked_up_once_and_ip_addresses_not_at_all():
    seen = []
    found = host_names.unresolved(['a', 'b', 'a', '10.0.0.1', '::1', 'c', 'b'],
                                  _lookup({'b', 'c'}, seen))
    assert found == {'b': 'Name or service not known', 'c': 'Name or service not known'}
    assert sorted(seen) == ['a', 'b', 'c']


@pytest.mark.parametrize('kwargs, message', [
    (dict(ps_hosts=['%s:2222' % NOWHERE], worker_hosts=['localhost:2223']),
     '--ps_hosts: %s (Name or service not known) does not resolve on this host; fix the name, '
     'or give an IP address or a name in DNS or /etc/hosts.' % NOWHERE),
    (dict(ps_hosts=['localhost:2222'], worker_hosts=['localhost:2223', 'w1:2', 'w2:2']),
     '--worker_hosts: w1, w2 (Name or service not known) do not resolve on this host; fix the '
     'name, or give an IP address or a name in DNS or /etc/hosts.'),
    (dict(variable_update='distributed_all_reduce', worker_hosts=['[::1]:2', 'w1:2'],
          controller_host='c:1'),
     '--worker_hosts and --controller_host: w1, c (Name or service not known) do not resolve '
     'on this host; fix the name, or give an IP address or a name in DNS or /etc/hosts.'),
])
def test_a_host_flag_name_that_does_not_resolve_is_one_error_line(kwargs, message):
    with pytest.raises(params_lib.ParamsError) as raised:
        host_names.check(_params(**kwargs), _lookup({NOWHERE, 'w1', 'w2', 'c'}))
    assert str(raised.value) == message


def test_names_that_resolve_and_local_runs_pass():
    host_names.check(_params(ps_hosts=['localhost:1'], worker_hosts=['127.0.0.1:2', 'h:3']),
                     _lookup(set()))
    host_names.check(params_lib.make_params(), _lookup({'anything'}))  # no cluster: no lookup


def test_tf_config_names_get_a_warning_only(capsys):
    """On Kubernetes a peer's service name resolves once its pod runs: not an error."""
    p = _params(cluster_resolver='tf_config', ps_hosts=['ps-0.svc:2222'],
                worker_hosts=['chief-0.svc:2222'], startup_timeout_secs=120)
    host_names.check(p, _lookup({'ps-0.svc'}))
    assert capsys.readouterr().err == (
        "warning: TF_CONFIG's cluster names host(s) that do not resolve yet: ps-0.svc (Name or "
        "service not known); on Kubernetes a peer's name resolves once its pod runs, so they "
        "are waited for up to --startup_timeout_secs=120; else fix TF_CONFIG\n")


def test_a_name_server_that_does_not_answer_is_not_judged(monkeypatch):
    """EAI_AGAIN (no DNS server reached) is a failure to ask, not an answer: the task waits."""
    def getaddrinfo(host, *args, **kwargs):
        if host == 'slow':
            raise socket.gaierror(socket.EAI_AGAIN, 'Temporary failure in name resolution')
        raise socket.gaierror(socket.EAI_NONAME, 'Name or service not known')
    monkeypatch.setattr(socket, 'getaddrinfo', getaddrinfo)
    assert host_names.unresolved(['slow', 'gone']) == {'gone': 'Name or service not known'}


def test_a_name_server_that_hangs_holds_the_start_up_for_the_wait_only():
    """A resolver that does not answer (getaddrinfo blocks for its own timeouts, 10 s and more)
    held the start-up silently: the names answered are judged, the hanging one is not."""
    release = threading.Event()

    def lookup(host):
        if host == 'hangs':
            release.wait(30)
            return 'too late'
        return 'Name or service not known' if host == 'gone' else None

    start = time.monotonic()
    try:
        found = host_names.unresolved(['hangs', 'gone', 'here'], lookup=lookup, wait_secs=0.3)
        waited = time.monotonic() - start
    finally:
        release.set()
    assert found == {'gone': 'Name or service not known'}
    assert 0.3 <= waited < 20  # the wait, not the resolver's


@pytest.fixture
def invalid_names_do_not_exist(monkeypatch):
    """getaddrinfo answers 'no such name' (EAI_NONAME) for names under .invalid, as a name
    server does at once; the others go to the real one. What a host answers is the host's: one
    without a reachable name server (a sandbox, a CI container without network) says EAI_AGAIN,
    a failure to ask, which the start-up check leaves unjudged by design, and a slow one may
    answer after LOOKUP_WAIT_SECS: either way the run went on and these tests failed."""
    real = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        if isinstance(host, str) and host.endswith('.invalid'):
            raise socket.gaierror(socket.EAI_NONAME, 'Name or service not known')
        return real(host, *args, **kwargs)
    monkeypatch.setattr(socket, 'getaddrinfo', getaddrinfo)


@pytest.mark.cli
def test_the_command_stops_at_once_on_a_ps_host_that_does_not_resolve(
        invalid_names_do_not_exist):
    """The user's case: `--ps_hosts=nosuchhost.invalid:2222` waited 120 s, then said `ps 0
    (nosuchhost.invalid:2222) unreachable after 120 s`. Now: exit 2 before any server starts
    (TensorFlow's start-up lines never come), one line naming the name and the flag."""
    proc = run_command('--job_name=worker', '--task_index=0', '--ps_hosts=%s:2222' % NOWHERE,
                       '--worker_hosts=localhost:2223', *TINY)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert proc.stderr.splitlines()[-1].startswith(
        'error: --ps_hosts: %s (' % NOWHERE)
    assert 'Started server' not in proc.stdout


@pytest.mark.cli
def test_the_command_stops_at_once_on_slurm_nodes_that_do_not_resolve(
        monkeypatch, invalid_names_do_not_exist):
    """Slurm's `SLURM_JOB_NODELIST=node[01-03]` of names this host cannot look up: the error
    names the list the names came from, not `ps 0 (node01:8888) unreachable` after 120 s."""
    simulated_slurm(monkeypatch, 1, nodelist='node[01-03].invalid', tasks_per_node='1,1,1',
                    node='node02.invalid', local=0)
    proc = run_command(*TINY)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    line = proc.stderr.splitlines()[-1]
    assert line.startswith('error: SLURM_STEP_NODELIST=node[01-03].invalid: node01.invalid, '
                           'node02.invalid, node03.invalid (')
    assert (') do not resolve on this host; the cluster came from the Slurm variables of this '
            'environment (SLURM_PROCID=1 of SLURM_STEP_NUM_TASKS=3: ') in line  # auto took it
    assert line.endswith('; in a Slurm step, fix the node names, or the name service of this '
                         'host (DNS, /etc/hosts).')


#: A Slurm step's variables leaked into a shell that is no task of it (a user's trial): rank 1
#: of 2, on nodes whose names resolve nowhere but in that step.
LEAKED_SLURM = {'SLURM_JOB_ID': '12345', 'SLURM_NODELIST': 'node[01-02].invalid',
                'SLURM_PROCID': '1', 'SLURM_NTASKS': '2', 'SLURM_STEP_ID': '0',
                'SLURM_STEP_NODELIST': 'node[01-02].invalid', 'SLURM_STEP_NUM_TASKS': '2',
                'SLURM_STEP_TASKS_PER_NODE': '1(x2)'}


def test_names_of_a_slurm_cluster_auto_took_say_where_it_came_from_and_the_way_out():
    p = _params(cluster_resolver='slurm', ps_hosts=['node01:8888'], worker_hosts=['node02:8888'])
    with pytest.raises(params_lib.ParamsError) as chosen:
        host_names.check(p, _lookup({'node01', 'node02'}))
    with pytest.raises(params_lib.ParamsError) as automatic:
        host_names.check(p, _lookup({'node01', 'node02'}), automatic=True)
    assert 'cluster_resolver' not in str(chosen.value)  # --cluster_resolver=slurm: as before
    assert str(automatic.value) == (
        'SLURM_STEP_NODELIST=: node01, node02 (Name or service not known) do not resolve on '
        'this host; the cluster came from the Slurm variables of this environment '
        '(SLURM_PROCID= of SLURM_STEP_NUM_TASKS=: --cluster_resolver=auto runs a Slurm step of '
        'more than one task as a cluster); --cluster_resolver=flags runs without one (or unset '
        'the SLURM_* variables); in a Slurm step, fix the node names, or the name service of '
        'this host (DNS, /etc/hosts).')


@pytest.mark.cli
def test_a_local_run_in_leaked_slurm_variables_is_told_the_way_out(
        monkeypatch, invalid_names_do_not_exist):
    """The user's trial: the error said only to fix the node names or the name service; the
    way to a local run, --cluster_resolver=flags, was not named."""
    for name, value in LEAKED_SLURM.items():
        monkeypatch.setenv(name, value)
    proc = run_command(*TINY)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert proc.stderr.splitlines()[-1] == (
        'error: SLURM_STEP_NODELIST=node[01-02].invalid: node01.invalid, node02.invalid (Name or '
        'service not known) do not resolve on this host; the cluster came from the Slurm '
        'variables of this environment (SLURM_PROCID=1 of SLURM_STEP_NUM_TASKS=2: '
        '--cluster_resolver=auto runs a Slurm step of more than one task as a cluster); '
        '--cluster_resolver=flags runs without one (or unset the SLURM_* variables); in a Slurm '
        'step, fix the node names, or the name service of this host (DNS, /etc/hosts).')
    chosen = run_command('--cluster_resolver=slurm', *TINY)  # asked for by name: as before
    assert chosen.stderr.splitlines()[-1].endswith(
        'do not resolve on this host; fix the node names, or the name service of this host '
        '(DNS, /etc/hosts).')
    local = run_command('--cluster_resolver=flags', '--dry_run', *TINY)
    assert local.returncode == 0, local.stderr[-2000:]

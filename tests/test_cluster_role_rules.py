"""The flag rules of a cluster task's role and transport, before TensorFlow loads
(params/cluster_rules.py): a job the mode has no task of, ps tasks a mode would not use, and
--server_protocol values TensorFlow 2.21 does not have."""

from __future__ import annotations

import pytest

from tf_cnn_benchmarks import params as params_lib

from helpers import run_command

WORKERS = ['127.0.0.1:20002', '127.0.0.1:20003']


def _problem(**kwargs) -> str:
    values = dict(model='trivial', worker_hosts=WORKERS, task_index=0)
    values.update(kwargs)
    with pytest.raises(params_lib.ParamsError) as raised:
        params_lib.validate_params(params_lib.make_params(**values))
    return str(raised.value)


def test_a_controller_without_controller_host_is_told_what_it_needs():
    """Both said '--task_index must be < 0, the number of controller hosts'."""
    assert _problem(job_name='controller', ps_hosts=['127.0.0.1:20001']) == (
        "--job_name=controller is only for --variable_update=distributed_all_reduce. Received: "
        "variable_update='parameter_server'")
    assert _problem(job_name='controller', variable_update='distributed_all_reduce') == (
        "--job_name=controller needs --controller_host: this task's own host:port, which every "
        "task of the cluster is given.")


@pytest.mark.parametrize('mode, others, start', [
    ('distributed_all_reduce', dict(controller_host='127.0.0.1:20009'),
     'workers and the controller'),
    ('collective_all_reduce', {}, 'workers')])
def test_a_ps_task_of_a_mode_without_ps_is_told_it_has_no_role(mode, others, start):
    """It said '--task_index must be < 0, the number of ps hosts' (no --ps_hosts given)."""
    what = {'distributed_all_reduce': "its workers hold the variables and all-reduce the "
                                      "gradients in the controller's graph",
            'collective_all_reduce': 'its workers all-reduce among themselves'}[mode]
    line = ('--job_name=ps: --variable_update=%s has no ps task (%s); start only its %s.'
            % (mode, what, start))
    assert _problem(job_name='ps', variable_update=mode, **others) == line
    # Given --ps_hosts too, the same line: the ps has no role whatever the lists say.
    assert _problem(job_name='ps', variable_update=mode, ps_hosts=['127.0.0.1:20001'],
                    **others) == line


@pytest.mark.cli
@pytest.mark.parametrize('job', ['worker', 'controller'])
def test_distributed_all_reduce_refuses_ps_hosts_before_tensorflow_loads(job):
    """The controller waited for a ps no task uses ('Waiting up to 10 s for ... ps 0'), and the
    ps's header said it served the variables; collective_all_reduce already refused it."""
    got = run_command('--job_name=' + job, '--task_index=0', '--worker_hosts=' + ','.join(WORKERS),
                      '--ps_hosts=127.0.0.1:20001', '--controller_host=127.0.0.1:20009',
                      '--variable_update=distributed_all_reduce', '--model=trivial')
    assert (got.returncode, got.stdout, got.stderr) == (2, '', (
        "error: --variable_update=distributed_all_reduce has no ps task (its workers hold the "
        "variables and all-reduce the gradients in the controller's graph); drop --ps_hosts.\n"))


@pytest.mark.parametrize('protocol, what', [
    ('grpc+verbs', 'gRPC with RDMA over InfiniBand verbs'), ('grpc+mpi', 'gRPC with MPI'),
    ('grpc+gdr', 'gRPC with GPUDirect RDMA')])
def test_the_originals_server_protocols_are_refused_by_name(protocol, what):
    """grpc+verbs passed the check (it began with 'grpc') and the server failed after
    TensorFlow loaded: 'No server factory registered for the given ServerDef', exit 1."""
    line = ("--server_protocol=%s (a value the original took: %s, from TensorFlow 1's contrib) "
            "is not in TensorFlow 2.21, which has only grpc; drop the flag or give "
            "--server_protocol=grpc. Received: server_protocol=%r" % (protocol, what, protocol))
    assert _problem(job_name='worker', ps_hosts=['127.0.0.1:20001'],
                    server_protocol=protocol) == line
    assert _problem(worker_hosts=[], server_protocol=protocol) == line  # one host: the same


@pytest.mark.parametrize('protocol', ['grpc+foo', 'foo', 'GRPC'])
def test_any_other_server_protocol_is_refused(protocol):
    assert _problem(job_name='worker', ps_hosts=['127.0.0.1:20001'], server_protocol=protocol) \
        == ('--server_protocol must be grpc (TensorFlow 2.21 has only grpc). Received: '
            'server_protocol=%r' % protocol)


@pytest.mark.cli
def test_a_server_protocol_of_the_original_is_a_usage_error_of_the_command():
    got = run_command('--job_name=worker', '--task_index=0', '--ps_hosts=127.0.0.1:20001',
                      '--worker_hosts=' + ','.join(WORKERS), '--server_protocol=grpc+verbs',
                      '--model=trivial')
    assert got.returncode == 2 and got.stdout == ''
    assert got.stderr.startswith('error: --server_protocol=grpc+verbs (a value the original '
                                 'took: ') and got.stderr.count('\n') == 1

"""What a cluster task says as it starts, from a user's findings with tasks started from shell
scripts:

* docs/clusters.md said the launcher binds to loopback; TensorFlow's server listens on every
  interface whatever address the cluster names (`*:PORT` in `ss -ltn`), and nothing in
  TensorFlow 2.21 chooses another address: each task now says so in one `note:` line (a
  `warning:` line in a cluster with other addresses);
* a ps task printed the workers' header (`Batch size: 8 global / 2 per device` and its
  --num_gpus logical devices), though it builds no graph: it now says what it serves;
* a worker given --model=lenet against a trivial chief was said to have `--image_size=28`, the
  chief `--image_size=227`, though no task was given --image_size;
* `--job_name=worker` without --task_index silently became worker 0, the chief.
"""

from __future__ import annotations

import os
import signal

import pytest
from test_distributed import Proc, cluster_args, finish_all, last_line

from tf_cnn_benchmarks import benchmark_cnn, run_header
from tf_cnn_benchmarks import params as params_lib
from tf_cnn_benchmarks.cluster import run_flags, topology
from tf_cnn_benchmarks.params import cluster_rules
from tf_cnn_benchmarks.preflight import usage

import helpers
from helpers import free_port

# The header lines of a worker's job that a ps task does not run.
WORKER_LINES = ('Dataset:', 'Classes:', 'Mode:', 'SingleSess:', 'Batch size:', 'Image size:',
                'Num batches:', 'Num epochs:', 'NUMA bind:', 'Data format:', 'Precision:',
                'XLA:', 'Optimizer:', 'LR schedule:')


def _listening_addresses(port: int) -> set[str]:
    """The local addresses (hex, as /proc/net/tcp and tcp6 write them) of the sockets that
    listen on `port` on this host."""
    found = set()
    for table in ('/proc/net/tcp', '/proc/net/tcp6'):
        if not os.path.exists(table):
            continue
        with open(table) as f:
            for line in f.read().splitlines()[1:]:
                fields = line.split()
                address, hex_port = fields[1].split(':')
                if fields[3] == '0A' and int(hex_port, 16) == port:  # 0A: LISTEN
                    found.add(address)
    return found


def _header(log: str) -> list[str]:
    lines = log.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('TensorFlow:'))
    return lines[start:lines.index('==========', start) + 1]


@pytest.mark.cluster
@pytest.mark.skipif(not os.path.exists('/proc/net/tcp'), reason='reads Linux /proc/net/tcp')
def test_a_ps_task_says_what_it_serves_and_that_its_port_is_open_on_every_interface(tmp_path):
    """One ps task of distributed_replicated for 2 workers of 2 CPU towers, given 127.0.0.1,
    serves until SIGTERM: its socket listens on the wildcard address (all zeros), not on
    127.0.0.1 (0100007F), and the task says so; its header has no worker's line."""
    port = free_port()
    ps, workers = ['127.0.0.1:%d' % port], ['127.0.0.1:%d' % free_port() for _ in range(2)]
    proc = Proc('ps0', cluster_args('ps', 0, ps, workers, mode='distributed_replicated',
                                    timeout=120, extra=['--device=cpu', '--num_gpus=2']),
                tmp_path)
    try:
        proc.wait_for(r'^Serving ps 0', timeout=120)
        listening = _listening_addresses(port)
    finally:
        proc.proc.send_signal(signal.SIGTERM)
        result = finish_all([proc])[0]
    assert listening and all(set(address) == {'0'} for address in listening), listening
    notes = [line for line in result['log'].splitlines() if line.startswith('note: ')]
    assert notes == [
        "note: ps 0 (127.0.0.1:%d) listens on port %d of every interface of this host, not "
        "only loopback: TensorFlow's gRPC server binds all addresses (IPv4 and IPv6) whatever "
        "host the cluster names, and has no authentication (whoever reaches the port can run "
        "graph ops, read and write files); on a shared network, firewall the port"
        % (port, port)], result['log'][-3000:]
    header = _header(result['log'])
    assert not [line for line in header if line.startswith(WORKER_LINES)], header
    assert "Devices:     ['/job:ps/replica:0/task:0/device:CPU:0']" in header
    assert header[2:4] == [
        "Serves:      the variables' master copies for 2 workers, which keep copies of their "
        "own and send",
        '             their gradients each step; this task builds no graph and runs no step '
        'of its own']
    assert result['code'] == 143 and last_line(result).startswith('Stopped by SIGTERM'), (
        result['log'][-3000:])


def test_a_cluster_with_other_addresses_says_it_in_its_warning_instead():
    note = topology.exposure_line(['localhost:1', '127.0.0.1:2'], 'ps 0 (localhost:1)',
                                  'localhost:1')
    assert note[0] == 'note' and note[1].startswith(
        'ps 0 (localhost:1) listens on port 1 of every interface of this host, not only '
        'loopback: ')
    kind, text = topology.exposure_line(['10.0.0.1:2222', 'localhost:1'], 'ps 0 (10.0.0.1:2222)',
                                        '10.0.0.1:2222')
    assert kind == 'warning' and '\n' not in text
    assert 'listen on every interface of their host, whatever address the cluster names' in text


def _ps_bench(mode: str, ps: int, **kwargs) -> benchmark_cnn.BenchmarkCNN:
    p = params_lib.make_params(
        model='trivial', image_size=16, batch_size=2, device='cpu', num_gpus=2,
        variable_update=mode, job_name='ps', task_index=ps - 1,
        ps_hosts=['localhost:%d' % (2200 + k) for k in range(ps)],
        worker_hosts=['localhost:2210', 'localhost:2211', 'localhost:2212'], **kwargs)
    return benchmark_cnn.BenchmarkCNN(p, gpus=0)


@pytest.mark.parametrize('mode, ps, serves', [
    ('parameter_server', 1, "the model's variables for 3 workers, which read them and send "
                            "their gradients each step; this task builds no graph and runs no "
                            "step of its own"),
    ('parameter_server', 2, "its share of the model's variables (placed by size over 2 ps "
                            "tasks) for 3 workers, which read them and send their gradients "
                            "each step; this task builds no graph and runs no step of its own"),
    ('distributed_replicated', 3, "its share of the variables' master copies (placed by size "
                                  "over 3 ps tasks) for 3 workers, which keep copies of their "
                                  "own and send their gradients each step; this task builds no "
                                  "graph and runs no step of its own"),
])
def test_a_ps_header_describes_what_the_ps_serves(mode, ps, serves):
    """In process: the header a ps task prints (BenchmarkCNN.info_lines), at most 100
    characters a line."""
    lines = _ps_bench(mode, ps, use_bf16=True).info_lines()
    assert not [line for line in lines if line.startswith(WORKER_LINES)], lines
    start = lines.index(next(line for line in lines if line.startswith('Serves:')))
    end = lines.index(next(line for line in lines if line.startswith('Devices:')))
    assert ' '.join(line[13:] for line in lines[start:end]) == serves
    assert lines[end] == "Devices:     ['/job:ps/replica:0/task:%d/device:CPU:0']" % (ps - 1)
    assert [line.split(':')[0] for line in lines[end + 1:]] == [
        'Threads', 'Variables', 'Sync', 'Cluster', '==========']
    assert lines[end + 2:end + 5] == ['Variables:   %s' % mode, 'Sync:        True',
                                      'Cluster:     flags (ps %d of %d, 3 workers)' % (ps - 1, ps)]
    assert max(map(len, lines)) <= 100


@pytest.mark.parametrize('mode, serves', [
    ('parameter_server', "the model's variables for 3 workers, which read them each step "
                         "(forward-only: no gradients, no updates); this task builds no graph "
                         "and runs no step of its own"),
    ('distributed_replicated', "the variables' master copies for 3 workers, which copy them "
                               "once, at the start (forward-only: no gradients, no updates); "
                               "this task builds no graph and runs no step of its own"),
])
def test_a_forward_only_ps_header_says_no_gradients_come(mode, serves):
    """A forward-only cluster's ps said its workers 'send their gradients each step'."""
    lines = _ps_bench(mode, 1, forward_only=True).info_lines()
    start = lines.index(next(line for line in lines if line.startswith('Serves:')))
    end = lines.index(next(line for line in lines if line.startswith('Devices:')))
    assert ' '.join(line[13:] for line in lines[start:end]) == serves
    assert max(map(len, lines)) <= 100


def test_a_distributed_all_reduce_worker_header_has_only_what_it_serves():
    """A worker of distributed_all_reduce serves the controller's graph: its header printed
    its own `Batch size: 8 global`, `Num batches:` and `Num epochs:` as if it ran them (a
    user's trial); now what it serves, its devices (where the controller places towers),
    threads and cluster lines, as a ps task's."""
    p = params_lib.make_params(
        model='trivial', image_size=16, batch_size=2, device='cpu', num_gpus=2,
        variable_update='distributed_all_reduce', job_name='worker', task_index=1,
        worker_hosts=['localhost:2210', 'localhost:2211'], controller_host='localhost:2220')
    lines = benchmark_cnn.BenchmarkCNN(p, gpus=0).info_lines()
    assert not [line for line in lines if line.startswith(WORKER_LINES + ('Model:',))], lines
    assert [line.split(':')[0] for line in lines if not line.startswith(' ')] == [
        'TensorFlow', 'Serves', 'Devices', 'Threads', 'Variables', 'Cluster', '==========']
    start, end = lines.index(lines[1]), next(i for i, line in enumerate(lines)
                                             if line.startswith('Devices:'))
    assert ' '.join(line[13:] for line in lines[start:end]) == (
        "the graph of the controller (localhost:2220), which places towers on this worker's "
        "devices and runs every step of the 2 workers in one session; the batch, steps and "
        "model are the controller's; this task builds no graph and runs no step of its own")
    assert lines[end] == ("Devices:     ['/job:worker/replica:0/task:1/device:CPU:0', "
                          "'/job:worker/replica:0/task:1/device:CPU:1']")
    assert 'Variables:   distributed_all_reduce' in lines
    assert max(map(len, lines[start:end])) <= 100  # the Serves lines wrapped
    # The controller's header keeps the run's lines.
    controller = benchmark_cnn.BenchmarkCNN(p._replace(job_name='controller', task_index=0),
                                            gpus=0).info_lines()
    assert 'Batch size:  8 global' in controller and 'SingleSess:  True' in controller


def test_a_start_up_mismatch_names_the_image_size_a_model_chose_as_its_default():
    """In process: the values a task sends (BenchmarkCNN's, with the flags as given)."""
    def values(model, index, **kwargs):
        p = params_lib.make_params(
            model=model, job_name='worker', task_index=index, ps_hosts=['localhost:2200'],
            worker_hosts=['localhost:2210', 'localhost:2211'], num_batches=5, **kwargs)
        return benchmark_cnn.BenchmarkCNN(p, gpus=0)._run_flag_values()

    chief, worker = values('trivial', 0, batch_size=2), values('lenet', 1, batch_size=2)
    line = run_flags.mismatch_line('worker 1 (h:2)', 'worker 0 (h:1)',
                                   run_flags.differences(worker, chief))
    assert line.startswith(
        "worker 1 (h:2) was started with --model=lenet and image size 28 (lenet's default), "
        "the chief, worker 0 (h:1), with --model=trivial and image size 227 (trivial's "
        "default): every worker ")
    # Given at the model's default, the image size is no difference; given, it is named so.
    assert run_flags.differences(values('lenet', 1, batch_size=2, image_size=28), worker) == []
    sized = values('trivial', 1, batch_size=2, image_size=32)
    assert run_flags.mismatch_line('worker 1 (h:2)', 'worker 0 (h:1)', run_flags.differences(
        sized, chief)).startswith(
        "worker 1 (h:2) was started with --image_size=32, the chief, worker 0 (h:1), with "
        "image size 227 (trivial's default): ")
    # The other flags' values are their own, typed or at the table's default.
    assert [(name, value) for name, value in chief.items() if '(' in str(value)] == [
        ('num_classes', "1001 (the dataset's)"), ('image_size', "227 (trivial's default)"),
        ('num_warmup_batches', '5 (the default on the CPU)')]


@pytest.mark.cluster
def test_a_worker_of_another_model_is_named_without_an_image_size_nobody_gave(tmp_path):
    """ps 0, a trivial chief and a lenet worker, none given --image_size: every task stops at
    start-up with the one line, which names the image sizes as the models' defaults."""
    ps, workers = ['localhost:%d' % free_port()], ['localhost:%d' % free_port()
                                                   for _ in range(2)]

    def args(job, index, model):
        return ['--job_name=%s' % job, '--task_index=%d' % index, '--ps_hosts=' + ps[0],
                '--worker_hosts=' + ','.join(workers), '--startup_timeout_secs=90',
                '--model=' + model, '--batch_size=2', '--num_batches=2']

    ps0, chief, worker1 = finish_all([
        Proc('ps0', args('ps', 0, 'trivial'), tmp_path),
        Proc('worker0', args('worker', 0, 'trivial'), tmp_path),
        Proc('worker1', args('worker', 1, 'lenet'), tmp_path)])
    line = ("error: worker 1 (%s) was started with --model=lenet and image size 28 (lenet's "
            "default), the chief, worker 0 (%s), with --model=trivial and image size 227 "
            "(trivial's default): every worker of a cluster takes the same "
            % (workers[1], workers[0]))
    for result in (worker1, chief):
        assert result['code'] == 1 and last_line(result).startswith(line), (
            result['log'][-3000:])
    assert ps0['code'] == 1


@pytest.mark.parametrize('flags, warned', [
    (dict(job_name='worker'), '--task_index not given: this task is worker 0, the chief (the '
                              'first of the 2 in --worker_hosts); give each task its own '
                              '--task_index=N (0 to 1)'),
    (dict(job_name='ps', ps_hosts=['localhost:2200', 'localhost:2201']),
     '--task_index not given: this task is ps 0 (the first of the 2 in --ps_hosts); give each '
     'task its own --task_index=N (0 to 1)'),
    (dict(job_name='worker', task_index=0), None),  # given, at 0
    (dict(job_name='ps'), None),  # the job's only task
])
def test_a_forgotten_task_index_in_a_job_of_several_tasks_warns(flags, warned, capsys):
    values = dict(model='trivial', ps_hosts=['localhost:2200'],
                  worker_hosts=['localhost:2210', 'localhost:2211'], results_db=False)
    values.update(flags)
    given = frozenset(values) - {'results_db'}
    usage.prepare(params_lib.make_params(**values), given)
    err = capsys.readouterr().err
    assert err == ('warning: %s\n' % warned if warned else '')
    assert cluster_rules.task_index_warning(params_lib.make_params(**values), given) == warned


@pytest.mark.cli
@pytest.mark.parametrize('index', [[], ['--task_index=0']])
def test_the_command_warns_of_a_forgotten_task_index_before_tensorflow_loads(index):
    """The command's flags as typed (a bad --rewriter_config stops it once TensorFlow
    loaded, before any server starts)."""
    result = helpers.run_command(
        '--job_name=worker', '--worker_hosts=localhost:2210,localhost:2211',
        '--ps_hosts=localhost:2200', '--model=trivial', '--rewriter_config=garbage', *index)
    assert result.returncode == 2 and result.stderr.splitlines()[-1].startswith(
        'error: --rewriter_config is not a RewriterConfig')
    warned = [line for line in result.stderr.splitlines() if '--task_index' in line]
    assert warned == ([] if index else [
        'warning: --task_index not given: this task is worker 0, the chief (the first of the 2 '
        'in --worker_hosts); give each task its own --task_index=N (0 to 1)'])


def test_a_task_index_from_tf_config_or_slurm_is_not_warned_about():
    p = params_lib.make_params(job_name='worker', worker_hosts=['h:1', 'h:2'],
                               cluster_resolver='tf_config')
    assert cluster_rules.task_index_warning(p, frozenset({'job_name'})) is None


def test_the_ps_header_is_made_without_the_precision_lines(monkeypatch):
    """A ps task uses no compute dtype: its header measures no reduced-precision kernels."""
    monkeypatch.setattr(run_header, 'precision_lines', lambda plan: pytest.fail(
        'a ps task asked for the precision lines'))
    assert _ps_bench('parameter_server', 1, use_bf16=True).info_lines()[-1] == '=========='

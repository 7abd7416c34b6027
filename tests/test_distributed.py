"""Cluster runs: every task a tf_cnn_benchmarks process on a free loopback port, under a timeout,
its output in a log file; plus the pure helpers in process.

Start-up dominates the cost (importing TensorFlow takes ~7 CPU seconds per process), so the
processes of one wave run together, scripted by one function (kills included), once per test
session even under pytest-xdist (`helpers.run_once`: a file lock and a JSON result in the
directory the xdist workers share); the tests assert on its result. Wave 1 runs one cluster per
--variable_update (parameter_server and distributed_replicated also check the numbers against a
local replicated run); wave 2 runs the restart and the faults (missing ps, ps killed mid-run,
worker killed in sync mode, bad host list). One small cluster of its own checks the start-up
check of the run-defining flags (a worker started with another --batch_size).
"""

from __future__ import annotations

import functools
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks import params as params_lib
from tf_cnn_benchmarks.cluster import topology
from tf_cnn_benchmarks.metrics import step_breakdown
from tf_cnn_benchmarks.variable_managers import distributed

import cluster_seams
from helpers import free_port, run_once

pytestmark = pytest.mark.cluster

tf1 = tf.compat.v1

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ENTRY = os.path.join(REPO, 'tf_cnn_benchmarks.py')
SEAM_ENTRY = os.path.join(REPO, 'tests', 'cluster_seams.py')
# 10 classes: the trivial model's classifier (4096 x classes) was 16.4 MB at ImageNet's 1001,
# sent to and from the ps by every worker each step and saved in each checkpoint; a cluster of
# 3 tasks spent about a quarter of its CPU time on it. Nothing here depends on the class count.
MODEL_FLAGS = ['--model=trivial', '--image_size=16', '--batch_size=2', '--num_classes=10',
               '--display_every=1']
# Generous for processes that should succeed (the first steps wait for slow starters).
STARTUP_OK_SECS = 240
PROCESS_TIMEOUT_SECS = 420
FAULT_TIMEOUT = 30


def hosts(n: int) -> list[str]:
    return ['localhost:%d' % free_port() for _ in range(n)]


class Proc:
    """A task process with its log file; `finish()` waits under a timeout, killing on expiry."""

    def __init__(self, name: str, args: list[str], log_dir, env=None, entry=ENTRY):
        self.name = name
        self.log_path = os.path.join(str(log_dir), name + '.log')
        self._log = open(self.log_path, 'w')
        full_env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3', PYTHONUNBUFFERED='1')
        full_env.update(env or {})
        self.proc = subprocess.Popen([sys.executable, entry] + args, stdout=self._log,
                                     stderr=subprocess.STDOUT, env=full_env, cwd=REPO)
        self.started = time.monotonic()
        self.killed_at = None

    def log(self) -> str:
        with open(self.log_path) as f:
            return f.read()

    def has(self, pattern: str) -> bool:
        return re.search(pattern, self.log(), re.M) is not None

    def wait_for(self, pattern: str, timeout: float = PROCESS_TIMEOUT_SECS) -> None:
        deadline = time.monotonic() + timeout
        while not self.has(pattern):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError('%s: no %r in its log (exit %s):\n%s' % (
                    self.name, pattern, self.proc.poll(), self.log()[-3000:]))
            time.sleep(0.2)

    def finish(self, timeout: float = PROCESS_TIMEOUT_SECS) -> dict:
        """Waits for the exit; returns {'name', 'code', 'log', 'secs_after_kill'}."""
        try:
            code = self.proc.wait(timeout=max(1.0, self.started + timeout - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError('%s did not exit within %g s:\n%s' % (
                self.name, timeout, self.log()[-3000:])) from None
        self._log.close()
        return {'name': self.name, 'code': code, 'log': self.log(),
                'exited_at': time.monotonic()}

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.killed_at = time.monotonic()
            self.proc.send_signal(signal.SIGKILL)


def finish_all(procs: list[Proc]) -> list[dict]:
    """Waits for every process (killing all on the first timeout)."""
    try:
        return [p.finish() for p in procs]
    finally:
        for p in procs:
            p.kill()


def cluster_args(job, index, ps, workers, controller=None, mode='parameter_server',
                 timeout=STARTUP_OK_SECS, extra=()):
    args = ['--job_name=%s' % job, '--task_index=%d' % index, '--worker_hosts=' + ','.join(workers),
            '--variable_update=%s' % mode, '--startup_timeout_secs=%d' % timeout]
    if ps:
        args.append('--ps_hosts=' + ','.join(ps))
    if controller:
        args.append('--controller_host=' + controller)
    return args + MODEL_FLAGS + list(extra)


def expect_ok(result: dict) -> str:
    assert result['code'] == 0, '%s exited %d:\n%s' % (result['name'], result['code'],
                                                       result['log'][-3000:])
    return result['log']


def last_line(result: dict) -> str:
    return result['log'].strip().splitlines()[-1]


# ------------------------------------------------------------------------------------------
# The local reference run: replicated on 2 logical CPUs, momentum, 2 steps.

EQUIV_FLAGS = dict(model='trivial', image_size=16, batch_size=2, num_classes=10,
                   optimizer='momentum', init_learning_rate=0.01, num_batches=2,
                   num_warmup_batches=0, tf_random_seed=5)


def local_reference(init_path, reference_path) -> None:
    """Runs local replicated on 2 devices. Writes the cluster's test inputs to `init_path` and
    the run's losses, initial and final variables to `reference_path` (npz files)."""
    p = params_lib.make_params(num_gpus=2, device='cpu', variable_update='replicated',
                               **EQUIV_FLAGS)
    bench = benchmark_cnn.BenchmarkCNN(p, gpus=0)
    info = bench.build_graph()
    with info.graph.as_default(), bench.create_session(info) as sess:
        bench.initialize(sess, info)
        names = {k: v for k, v in info.mgr.savable_variables().items() if k != 'global_step'}
        initial = sess.run(names)
        inputs = sess.run({'input/%d/%s' % key: v
                           for key, v in cluster_seams.input_variables(info.graph).items()})
        step = bench.make_step_fn(sess, info)
        losses = [step()[0] for _ in range(2)]
        final = sess.run(names)
    assert sorted(inputs) == ['input/0/images', 'input/0/labels', 'input/1/images',
                              'input/1/labels']
    np.savez(init_path, **{'var/' + k: v for k, v in initial.items()}, **inputs)
    np.savez(reference_path, losses=np.asarray(losses),
             **{'initial/' + k: v for k, v in initial.items()},
             **{'final/' + k: v for k, v in final.items()})


def shared_reference(tmp_path_factory) -> dict:
    """{'init', 'reference'}: the paths local_reference writes, run once per test session
    (run_once): the host-flag clusters here and the resolved ones of test_cluster_resolvers.py
    start from its inputs and are compared with its results."""
    def produce(d):
        paths = {'init': str(d / 'init.npz'), 'reference': str(d / 'reference.npz')}
        local_reference(paths['init'], paths['reference'])
        return paths
    return run_once(tmp_path_factory, 'cluster_local_reference', produce)


# ------------------------------------------------------------------------------------------
# Wave 1: one cluster per mode.


def produce_wave1(d, reference) -> dict:
    init_path, reference_path = reference['init'], reference['reference']
    train_dir = str(d / 'train_dir')  # parameter_server's (wave 2 resumes from it)
    train_dirs = {'parameter_server': train_dir,
                  'distributed_replicated': str(d / 'train_dir_distributed_replicated')}
    equiv = ['--optimizer=momentum', '--init_learning_rate=0.01', '--num_batches=2',
             '--num_warmup_batches=0', '--tf_random_seed=5']
    runs, dumps = {}, {}
    try:
        for mode in ('parameter_server', 'distributed_replicated'):
            ps, workers = hosts(1), hosts(2)
            dumps[mode] = str(d / ('dump_' + mode))
            seams = ['--seam_init=' + init_path, '--seam_dump=' + dumps[mode]]
            extra = equiv + ['--train_dir=' + train_dirs[mode]]
            runs[mode] = [Proc('%s_worker%d' % (mode, i), seams + cluster_args(
                'worker', i, ps, workers, mode=mode, extra=extra), d, entry=SEAM_ENTRY)
                for i in range(2)]
            start_ps = functools.partial(Proc, mode + '_ps0', cluster_args(
                'ps', 0, ps, workers, mode=mode, extra=extra), d)
            if mode == 'parameter_server':  # start order: the workers first, the ps later
                start_ps_later = start_ps
            else:
                runs[mode].insert(0, start_ps())
        workers = hosts(2)
        runs['collective_all_reduce'] = [Proc('collective_worker%d' % i, cluster_args(
            'worker', i, [], workers, mode='collective_all_reduce',
            extra=['--num_batches=3', '--print_step_breakdown']), d) for i in range(2)]
        workers, controller = hosts(2), hosts(1)[0]
        args = dict(controller=controller, mode='distributed_all_reduce',
                    extra=['--num_batches=3', '--all_reduce_spec=pscpu'])
        runs['distributed_all_reduce'] = [
            Proc('dar_worker%d' % i, cluster_args('worker', i, [], workers, **args), d)
            for i in range(2)] + [
            Proc('dar_controller', cluster_args('controller', 0, [], workers, **args), d)]
        # parameter_server's ps once its worker 0 waits for it (the others start meanwhile).
        runs['parameter_server'][0].wait_for('^Waiting up to')
        runs['parameter_server'].insert(0, start_ps_later())
    except BaseException:
        finish_all([p for procs in runs.values() for p in procs])
        raise
    results = {mode: finish_all(procs) for mode, procs in runs.items()}
    return {'runs': results, 'dumps': dumps, 'reference': reference_path,
            'train_dir': train_dir, 'train_dirs': train_dirs}


@pytest.fixture(scope='module')
def wave1(tmp_path_factory):
    reference = shared_reference(tmp_path_factory)
    return run_once(tmp_path_factory, 'cluster_wave1', lambda d: produce_wave1(d, reference))


def check_sync_figures(worker_logs: list[str], images: int) -> None:
    """A synchronous cluster's figures (worker_logs: the chief's first): each worker's `total
    images/sec` is the original's, workers x its own figure (on the next line), which the
    chief's line for it repeats; the chief's cluster total counts every worker's `images`."""
    n = len(worker_logs)
    for index, log in enumerate(worker_logs):
        total = float(re.search(r'^total images/sec: ([0-9.]+)$', log, re.M).group(1))
        own = re.search(r"^this worker's images/sec: ([0-9.]+) \(its own steps; the total "
                        r"above: %d workers x this, the cluster's rate as this worker sees "
                        r"it\)$" % n, log, re.M)
        assert own, log[-3000:]
        assert total == pytest.approx(n * float(own.group(1)), abs=0.02)
        assert re.search(r'^worker %d images/sec: %s \(' % (index, re.escape(own.group(1))),
                         worker_logs[0], re.M), worker_logs[0][-3000:]
    assert re.search(r"^cluster images/sec: [0-9.]+ \(%d workers: %d images in [0-9.]+ "
                     r"s, from the first timed part's start to the last one's end\)$"
                     % (n, images), worker_logs[0], re.M), worker_logs[0][-3000:]


@pytest.mark.parametrize('mode', ['parameter_server', 'distributed_replicated'])
def test_sync_cluster_equals_local_replicated(wave1, mode):
    """2 workers x 1 device, sync, momentum: the same losses and variables after 2 steps as
    local replicated on 2 devices with the same initial values and batches."""
    logs = [expect_ok(r) for r in wave1['runs'][mode]]
    ps_log = logs[0]
    assert 'every task is done' in ps_log
    check_sync_figures(logs[1:], images=2 * 2 * 2)  # 2 steps x batch 2 x 2 workers
    ref = np.load(wave1['reference'])
    dumps = [np.load(os.path.join(wave1['dumps'][mode], 'worker%d.npz' % i)) for i in range(2)]
    worker_mean = (dumps[0]['losses'] + dumps[1]['losses']) / 2
    np.testing.assert_allclose(worker_mean, ref['losses'], rtol=1e-5)
    names = [k[len('final/'):] for k in ref.files if k.startswith('final/')]
    assert names
    for name in names:
        value = ref['final/' + name]
        assert not np.allclose(value, ref['initial/' + name]) or name.endswith('biases')
        for dump in dumps:
            np.testing.assert_allclose(dump['var/' + name], value, rtol=1e-5, atol=1e-7,
                                       err_msg=name)


@pytest.mark.parametrize('mode', ['parameter_server', 'distributed_replicated'])
def test_a_sync_clusters_checkpoint_counts_each_image_once(wave1, mode):
    """2 global steps of 2 workers x batch 2: 8 images seen, not 16 (each worker counted the
    global batch, so a resume put the epoch-based schedule twice as far)."""
    expect_ok(wave1['runs'][mode][1])
    path = os.path.join(wave1['train_dirs'][mode], 'model.ckpt-2')
    assert tf.train.load_variable(path, 'images_seen') == 8


def test_worker_started_before_ps_waited_for_it(wave1):
    chief = expect_ok(wave1['runs']['parameter_server'][1])
    assert re.search(r'^Waiting up to %d s for ps 0 \(localhost:\d+\)$' % STARTUP_OK_SECS,
                     chief, re.M)


def test_collective_all_reduce_without_ps(wave1):
    logs = [expect_ok(r) for r in wave1['runs']['collective_all_reduce']]
    check_sync_figures(logs, images=3 * 2 * 2)  # 3 steps x batch 2 x 2 workers
    # --print_step_breakdown: one line per traced step and the mean.
    assert re.search(r'^Step breakdown\tstep 1 \(traced\)\twall [0-9.]+ ms = input [0-9.]+ '
                     r'\+ compute [0-9.]+ \+ sync [0-9.]+ \+ overhead [0-9.]+\tmoved',
                     logs[0], re.M)
    assert 'Step breakdown\tmean of 3 traced steps' in logs[1]


def test_distributed_all_reduce_controller(wave1):
    logs = [expect_ok(r) for r in wave1['runs']['distributed_all_reduce']]
    assert re.search(r'^cluster images/sec: [0-9.]+ \(2 workers, one graph\)', logs[2],
                     re.M)
    assert 'Batch size:  4 global' in logs[2]
    for log in logs[:2]:
        assert 'controller 0 (localhost' in log and 'every task is done' in log


# ------------------------------------------------------------------------------------------
# Wave 2: restart and faults.


def produce_wave2(d, wave1) -> dict:
    long_run = ['--num_batches=100000', '--display_every=20', '--num_warmup_batches=1']
    runs = {}
    try:
        ps, workers = hosts(1), hosts(1)
        runs['missing_ps'] = [Proc('missing_ps_worker0', cluster_args(
            'worker', 0, ps, workers, timeout=5, extra=['--num_batches=2']), d)]
        # A new cluster (1 ps + 1 worker) on the train_dir of wave 1's 2-step run: it resumes
        # from step 2; then its ps is killed in the middle of the run.
        ps, workers = hosts(1), hosts(1)
        resume = ['--train_dir=' + wave1['train_dir'], '--optimizer=momentum'] + long_run
        runs['ps_killed'] = [Proc('ps_killed_' + name, cluster_args(job, 0, ps, workers,
                                                                    extra=resume), d)
                             for job, name in (('ps', 'ps0'), ('worker', 'worker0'))]
        ps, workers = hosts(1), hosts(2)
        runs['bad_hosts'] = [Proc('bad_hosts', [
            '--job_name=worker', '--task_index=2', '--ps_hosts=' + ps[0],
            '--worker_hosts=' + ','.join(workers)], d)]
        # The workers' first steps wait for each other with their short deadline: they start
        # once the ps serves, so that they come up together. The ps keeps the long timeout.
        ps, workers = hosts(1), hosts(2)
        killed = [Proc('worker_killed_ps0', cluster_args('ps', 0, ps, workers, extra=long_run),
                       d)]
        killed[0].wait_for('^Serving')
        killed += [Proc('worker_killed_worker%d' % i, cluster_args(
            'worker', i, ps, workers, timeout=FAULT_TIMEOUT, extra=long_run), d)
            for i in range(2)]
        runs['worker_killed'] = killed
        # Kill the ps of one cluster and worker 1 of the other after their 20th timed step.
        victims = [runs['ps_killed'][0], runs['worker_killed'][2]]
        watched = [runs['ps_killed'][1], runs['worker_killed'][2]]
        deadline = time.monotonic() + PROCESS_TIMEOUT_SECS
        while any(v.killed_at is None for v in victims):
            for victim, proc in zip(victims, watched):
                if victim.killed_at is None and proc.has(r'^20\timages/sec'):
                    victim.kill()
                if proc.proc.poll() is not None and victim.killed_at is None:
                    raise AssertionError('%s exited early:\n%s' % (proc.name, proc.log()))
            if time.monotonic() > deadline:
                raise AssertionError('no 20th step')
            time.sleep(0.2)
    except BaseException:
        finish_all([p for procs in runs.values() for p in procs])
        raise
    kill_times = {'ps_killed': victims[0].killed_at, 'worker_killed': victims[1].killed_at}
    results = {}
    for name, procs in runs.items():
        results[name] = finish_all(procs)
        if name in kill_times:
            for r in results[name]:
                r['secs_after_kill'] = r['exited_at'] - kill_times[name]
    return results


@pytest.fixture(scope='module')
def wave2(tmp_path_factory, wave1):
    return run_once(tmp_path_factory, 'cluster_wave2', lambda d: produce_wave2(d, wave1))


def test_restarted_cluster_resumes_from_the_train_dir(wave2):
    """The cluster restarted on the train_dir of wave 1's 2-step run restores global step 2."""
    log = wave2['ps_killed'][1]['log']
    assert re.search(r'^Restored from step 2: training state from .*model\.ckpt-2$', log, re.M)
    # The 2-worker run's 2 global steps of 4 images, counted once each.
    assert 'Resume:      global step 2 of model.ckpt-2: 8 images seen' in log


def test_missing_ps_times_out_naming_it(wave2):
    result = wave2['missing_ps'][0]
    assert result['code'] == 1
    assert re.match(r'error: cannot create the session: ps 0 \(localhost:\d+\) unreachable '
                    r'after 5 s \(--startup_timeout_secs\)', last_line(result)), last_line(result)


def test_ps_killed_mid_run_fails_the_worker_within_the_timeout(wave2):
    worker = wave2['ps_killed'][1]
    assert worker['code'] == 1
    # A lost ps is noticed at once (Unavailable), long before the 240 s startup timeout; the
    # bound leaves room for a loaded 2-core machine.
    assert worker['secs_after_kill'] < 60
    assert re.match(r'error: lost the cluster: unreachable now: ps 0 \(localhost:\d+\)',
                    last_line(worker)), last_line(worker)


def test_worker_killed_in_sync_mode_fails_the_others_cleanly(wave2):
    ps, chief, _ = wave2['worker_killed']
    assert chief['code'] == 1 and ps['code'] == 1
    assert max(chief['secs_after_kill'], ps['secs_after_kill']) < FAULT_TIMEOUT + 15
    # The ps sees worker 1 go away (its port closed) and stops; worker 0 fails on the lost ps
    # or on its step deadline, whichever comes first; both name worker 1.
    assert re.match(r'error: .*unreachable now: (ps 0 \(localhost:\d+\), )?worker 1 '
                    r'\(localhost:\d+\)', last_line(chief)), last_line(chief)
    assert re.match(r'error: (worker 1 \(localhost:\d+\) went away before reporting done|'
                    r'worker 0 .* reported a failure)', last_line(ps)), last_line(ps)


def test_bad_host_list_is_a_flag_error(wave2):
    result = wave2['bad_hosts'][0]
    assert result['code'] == 2
    assert last_line(result) == (
        'error: --task_index must be < 2, the number of worker hosts. Received: task_index=2')


def test_a_worker_started_with_another_batch_size_is_named_at_start_up(tmp_path):
    """Worker 1 gets --batch_size=4, the chief 2: both stop at start-up with one line naming the
    flag and both values (they used to fail later: 'Could not find variable ...' on the worker,
    'lost the cluster: unreachable now: ps 0' on the chief)."""
    ps, workers = hosts(1), hosts(2)
    args = lambda job, i, extra=(): cluster_args(job, i, ps, workers, timeout=60,  # noqa: E731
                                                 extra=['--num_batches=2', *extra])
    procs = [Proc('ps0', args('ps', 0), tmp_path), Proc('worker0', args('worker', 0), tmp_path),
             Proc('worker1', args('worker', 1, ['--batch_size=4']), tmp_path)]
    ps0, chief, worker1 = finish_all(procs)
    line = ('error: worker 1 (%s) was started with --batch_size=4, the chief, worker 0 (%s), '
            'with --batch_size=2: every worker of a cluster takes the same --model, '
            '--num_classes, --image_size, --use_fp16, --use_bf16, --variable_update, '
            '--cross_replica_sync, --forward_only, --num_gpus, --batch_size, --num_batches (or '
            '--num_epochs), --num_warmup_batches, --optimizer and its flags, the learning-rate '
            "flags, --worker_hosts and --ps_hosts; start it with the chief's"
            % (workers[1], workers[0]))
    # The ps too: it said 'worker 0 (...) reported a failure; ps 0 stops'; it now reads the
    # line from its own run-flags table (cluster/server.py TaskServer.serve).
    for result in (worker1, chief, ps0):
        assert (result['code'], last_line(result)) == (1, line), result['log'][-3000:]
        assert 'Traceback' not in result['log'] and 'Could not find variable' not in result['log']


def test_run_flag_differences_name_each_flag_and_both_values():
    from tf_cnn_benchmarks.cluster import run_flags
    p = _cluster_params(task_index=1)
    values = run_flags.run_flag_values(benchmark_cnn.BenchmarkCNN(p, gpus=0).plan)
    assert values == {'model': 'trivial', 'num_classes': '1001', 'image_size': '16',
                      'use_fp16': 'false', 'use_bf16': 'false',
                      'variable_update': 'parameter_server', 'cross_replica_sync': 'true',
                      'forward_only': 'false', 'num_gpus': '1', 'batch_size': '2',
                      'num_batches': '100', 'num_warmup_batches': '5', 'optimizer': 'sgd',
                      'momentum': None, 'rmsprop_decay': None, 'rmsprop_momentum': None,
                      'rmsprop_epsilon': None, 'adam_beta1': None, 'adam_beta2': None,
                      'adam_epsilon': None,
                      'init_learning_rate': None, 'piecewise_learning_rate_schedule': None,
                      'num_epochs_per_decay': '0', 'learning_rate_decay_factor': '0',
                      'num_learning_rate_warmup_epochs': '0', 'minimum_learning_rate': '0',
                      'resnet_base_lr': None, 'worker_hosts': 'localhost:2223,localhost:2224',
                      'ps_hosts': 'localhost:2222', 'controller_host': None}
    chiefs = run_flags.decode(run_flags.encode(dict(values, model='resnet50', use_fp16='true')))
    diffs = run_flags.differences(values, chiefs)
    assert diffs == [('model', 'trivial', 'resnet50'), ('use_fp16', 'false', 'true')]
    assert run_flags.mismatch_line('worker 1 (h:2)', 'worker 0 (h:1)', diffs).startswith(
        'worker 1 (h:2) was started with --model=trivial and --use_fp16=false, the chief, '
        'worker 0 (h:1), with --model=resnet50 and --use_fp16=true: every worker of a cluster ')
    assert run_flags.differences(values, values) == []


# ------------------------------------------------------------------------------------------
# In process: flag rules, placement, graph structure, step breakdown arithmetic.


def _cluster_params(**kwargs):
    values = dict(job_name='worker', task_index=0, ps_hosts=['localhost:2222'],
                  worker_hosts=['localhost:2223', 'localhost:2224'], model='trivial',
                  image_size=16, batch_size=2)
    values.update(kwargs)
    return params_lib.make_params(**values)


@pytest.mark.parametrize('kwargs, message', [
    (dict(ps_hosts=['localhost:2222', '']), 'ps_hosts items must be host:port'),
    (dict(worker_hosts=['localhost:99999']), 'port in 1..65535'),
    (dict(worker_hosts=['localhost:2223', 'localhost:2223']), 'lists localhost:2223 twice'),
    (dict(worker_hosts=['nohostport']), 'worker_hosts items must be host:port'),
    (dict(task_index=5), '--task_index must be < 2'),
    (dict(job_name='ps', ps_hosts=[]), 'needs --ps_hosts'),
    (dict(worker_hosts=['localhost:2222', 'localhost:2224']), 'in both --ps_hosts and'),
    (dict(variable_update='distributed_all_reduce', ps_hosts=[]), 'needs --controller_host'),
    (dict(variable_update='distributed_all_reduce'), 'has no ps task'),
    (dict(variable_update='collective_all_reduce', cross_replica_sync=False, ps_hosts=[]),
     'always synchronous'),
    (dict(job_name='controller', controller_host='localhost:2225'), 'only for'),
    (dict(staged_vars=True), '--staged_vars runs on one host only'),
    (dict(use_fp16=True, fp16_enable_auto_loss_scale=True),
     '--fp16_enable_auto_loss_scale runs on one host only'),
    (dict(eval=True), '--eval runs on one host only'),
    (dict(server_protocol='rdma'), '--server_protocol must be grpc'),
])
def test_bad_cluster_flags_are_params_errors(kwargs, message):
    p = _cluster_params(**kwargs)
    with pytest.raises(params_lib.ParamsError, match=re.escape(message)):
        params_lib.validate_params(p)


def test_loopback_detection():
    assert all(topology.is_loopback(h) for h in (
        'localhost:1', '127.0.0.1:2', '127.1.2.3:3', '[::1]:4'))
    assert not any(topology.is_loopback(h) for h in ('10.0.0.1:1', 'example.com:2'))


def test_non_loopback_hosts_get_one_warning_line():
    assert topology.security_warning(['localhost:1', '127.0.0.1:2']) is None
    text = topology.security_warning(['localhost:1', '10.0.0.1:2222'])
    assert '\n' not in text and 'unauthenticated' in text and '10.0.0.1:2222' in text
    assert 'localhost:1' not in text


def test_ps_placer_is_greedy_by_bytes():
    placer = distributed.PsPlacer(2)
    devices = [placer.place(shape, tf.float32) for shape in ([1000], [10], [10], [2000], [5])]
    tasks = [int(re.search(r'task:(\d)', d).group(1)) for d in devices]
    # 1000 -> ps0; 10 -> ps1 (0 < 4000); 10 -> ps1 (40 < 4000); 2000 -> ps1 (80); 5 -> ps0.
    assert tasks == [0, 1, 1, 1, 0]
    assert placer.load == [4000 + 20, 80 + 8000]


def test_worker_graph_places_variables_and_tokens():
    p = _cluster_params(ps_hosts=['localhost:2222', 'localhost:2225'], task_index=1,
                        variable_update='parameter_server')
    bench = benchmark_cnn.BenchmarkCNN(p, gpus=0)
    assert bench.plan.global_batch_size == 4 and bench.plan.devices == (
        '/job:worker/replica:0/task:1/device:CPU:0',)
    assert bench.params.tf_random_seed == p.tf_random_seed + 1
    info = bench.build_graph()
    with info.graph.as_default():
        tasks = {v.op.name: int(re.search(r'/job:ps/replica:0/task:(\d)/', v.device).group(1))
                 for v in info.mgr.trainable_variables(0)}
    # Greedy by bytes in creation order: affine0/weights 3072 B -> ps0, biases 4 B -> ps1,
    # affine1/weights 16384 B -> ps1 (4 < 3072), biases 16384 B -> ps0 (3072 < 16388),
    # affine2/weights 16.4 MB -> ps1 (16388 < 19456), biases -> ps0.
    assert [tasks['v/cg/affine%d/%s' % (i, kind)] for i in range(3)
            for kind in ('weights', 'biases')] == [0, 1, 1, 0, 1, 0]
    ops = {op.type for op in info.graph.get_operations()}
    assert {'QueueEnqueueV2', 'QueueDequeueV2'} <= ops  # non-chief: ready token, go token
    assert info.global_step.device.startswith('/job:ps/replica:0/task:0')


def test_breakdown_arithmetic():
    stats = tf1.RunMetadata().step_stats
    local = stats.dev_stats.add(device='/job:worker/replica:0/task:0/device:CPU:0')
    remote = stats.dev_stats.add(device='/job:ps/replica:0/task:0/device:CPU:0')

    def node(dev, name, label, start, length):
        n = dev.node_stats.add(node_name=name, timeline_label=label)
        n.all_start_micros, n.all_end_rel_micros = start, length

    node(local, 'synthetic_input_0/images', 'x = Identity(y)', 0, 1000)
    node(local, 'v/tower_0/MatMul', 'm = MatMul(a, b)', 500, 3000)     # compute 500..3500
    node(local, 'v/tower_0/Relu', 'r = Relu(m)', 3000, 1000)           # compute ..4000
    node(local, 'RecvTensor', '[1.5MB] [1Gb/s] edge_1 from /job:ps/replica:0/task:0/device:'
         'CPU:0 to /job:worker/replica:0/task:0/device:CPU:0', 4000, 2000)
    node(remote, 'GradientDescent/update', 'u = ResourceApplyGradientDescent(v)', 6000, 4000)
    parts = step_breakdown.breakdown(stats, 0.012, lambda d: '/job:worker/' in d)
    assert parts['compute_ms'] == pytest.approx(3.5)
    assert parts['input_ms'] == pytest.approx(0.5)
    assert parts['sync_ms'] == pytest.approx(10.0 - 4.0)
    assert parts['overhead_ms'] == pytest.approx(2.0)
    assert parts['transfer_bytes'] == int(1.5 * 2 ** 20)
    assert step_breakdown.transfer_bytes('[16384B] [1Mb/s] e from /job:w/replica:0/task:0/'
                                         'device:CPU:0 to /job:w/replica:0/task:0/device:'
                                         'CPU:1') == 0


def _images_counted(info) -> list:
    """The amounts the train op adds to 'images_seen' (one per counting op)."""
    return [int(tf.get_static_value(op.inputs[1])) for op in info.graph.get_operations()
            if op.type in ('AssignAdd', 'AssignAddVariableOp')
            and op.inputs[0].op.name == 'images_seen']


@pytest.mark.parametrize('mode, sync, counted', [
    ('parameter_server', True, {0: [4], 1: []}),         # the chief: once per global step
    ('distributed_replicated', True, {0: [4], 1: []}),
    ('parameter_server', False, {0: [2], 1: [2]}),       # async: each update its own batch
    ('collective_all_reduce', True, {0: [4], 1: [4]}),   # each worker's own count
])
def test_a_cluster_counts_each_image_once(mode, sync, counted):
    """2 workers x batch 2: the shared count grows by the global batch per global step (a
    sync worker 1 adding it too made a resume see twice the images and decay early)."""
    for task, expected in counted.items():
        extra = {} if mode != 'collective_all_reduce' else dict(ps_hosts=[])
        p = _cluster_params(task_index=task, variable_update=mode, cross_replica_sync=sync,
                            **extra)
        info = benchmark_cnn.BenchmarkCNN(p, gpus=0).build_graph()
        assert _images_counted(info) == expected, (mode, task)

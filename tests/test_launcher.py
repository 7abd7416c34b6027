"""tools/launch_cluster.py: task planning in process, and three launches as processes (each
under a timeout, output in a file): a run that succeeds, one whose chief fails (the others are
stopped, the failed one named), one stopped by Ctrl-C, run together once per test session even
under pytest-xdist (a file lock and a JSON result in the folder the workers share)."""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from tf_cnn_benchmarks.tools import launch_cluster

pytestmark = pytest.mark.cluster

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASK_FLAGS = ['--model=trivial', '--image_size=16', '--batch_size=2', '--num_warmup_batches=1',
              '--startup_timeout_secs=240']
TIMEOUT_SECS = 420


def _opts(*argv):
    return launch_cluster.parse_args(list(argv))


def test_plan_for_parameter_server_picks_free_loopback_ports():
    opts, rest = _opts('--num_workers=2', '--', '--model=trivial')
    tasks = launch_cluster.plan_tasks(opts, rest)
    assert [t['role'] for t in tasks] == ['ps0', 'worker0', 'worker1']
    worker1 = tasks[2]['args']
    assert worker1[:2] == ['--job_name=worker', '--task_index=1']
    hosts = [a.split('=', 1)[1] for a in worker1 if a.startswith(('--ps_hosts', '--worker_hosts'))]
    assert all(re.fullmatch(r'127\.0\.0\.1:\d+', h) for hs in hosts for h in hs.split(','))
    assert worker1[-1] == '--model=trivial'


def test_plan_defaults_per_mode():
    opts, rest = _opts('--variable_update=collective_all_reduce')  # unknown: passed through
    assert [t['role'] for t in launch_cluster.plan_tasks(opts, rest)] == ['worker0', 'worker1']
    opts, rest = _opts('--num_workers=3', '--', '--variable_update=distributed_all_reduce')
    roles = [t['role'] for t in launch_cluster.plan_tasks(opts, rest)]
    assert roles == ['worker0', 'worker1', 'worker2', 'controller']
    opts, rest = _opts('--ps_hosts=localhost:5000,localhost:5001', '--worker_hosts=localhost:5002')
    tasks = launch_cluster.plan_tasks(opts, rest)
    assert [t['role'] for t in tasks] == ['ps0', 'ps1', 'worker0']
    assert '--ps_hosts=localhost:5000,localhost:5001' in tasks[0]['args']


@pytest.mark.parametrize('args, text', [
    (['--timeout_secs=-5'], 'error: --timeout_secs must be >= 0. Received: timeout_secs=-5'),
    (['--kill_grace_secs=nan'], 'error: --kill_grace_secs=nan: takes a finite number '
     '(seconds), e.g. 5; nan is none'),
    (['--log_dir=/dev/null'], 'error: --log_dir /dev/null is not a directory; choose another'),
    (['--python=/nonexistent/python'], 'error: --python /nonexistent/python is not an '
     'executable file'),
    (['--num_workers=abc'], "error: argument --num_workers: invalid int value: 'abc' (see "
     'tf_cnn_cluster --help)'),  # was argparse's 7-line usage block
])
def test_bad_launcher_values_exit_2_before_starting_anything(capsys, args, text):
    assert launch_cluster.main(args + ['--', '--model=trivial']) == 2
    err = capsys.readouterr().err
    assert err.startswith(text) and len(err.splitlines()) == 1


def test_reserved_or_inconsistent_flags_exit_2(capsys):
    assert launch_cluster.main(['--', '--task_index=1']) == 2
    assert 'error: --task_index is set by the launcher' in capsys.readouterr().err
    assert launch_cluster.main(['--num_ps=0', '--', '--variable_update=parameter_server']) == 2
    assert 'needs at least one ps' in capsys.readouterr().err


def test_a_task_flag_the_command_refuses_is_one_error_before_any_task_starts(capsys,
                                                                             monkeypatch):
    started = []
    monkeypatch.setattr(launch_cluster.Launcher, 'start', lambda self: started.append(self))
    assert launch_cluster.main(['--num_workers=2', '--', '--model=resnet51']) == 2
    captured = capsys.readouterr()
    assert started == [] and captured.out == ''
    [line] = captured.err.splitlines()
    assert line.startswith("error: unknown --model='resnet51'; did you mean resnet50, resnet152 "
                           'or resnet101? valid models for imagenet'), line
    assert launch_cluster.main(['--num_workers=2', '--', '--model=trivial',
                                '--variable_update=replicated']) == 2
    assert capsys.readouterr().err == (
        'error: --variable_update=replicated is for one host; in a cluster use '
        'parameter_server, distributed_replicated, distributed_all_reduce or '
        'collective_all_reduce.\n')
    assert launch_cluster.main(['--', '--model=trivial', '--nosuchflag']) == 2
    assert capsys.readouterr().err.startswith('error: ')
    assert started == []


class Launch:
    """A launcher process; output in a file."""

    def __init__(self, name, args, log_dir):
        self.path = os.path.join(str(log_dir), name + '.log')
        self._out = open(self.path, 'w')
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3', PYTHONUNBUFFERED='1')
        self.proc = subprocess.Popen([sys.executable, '-m', 'tools.launch_cluster'] + args,
                                     stdout=self._out, stderr=subprocess.STDOUT, cwd=REPO,
                                     env=env)
        self.started = time.monotonic()

    def output(self) -> str:
        with open(self.path) as f:
            return f.read()

    def wait_for(self, pattern):
        while not re.search(pattern, self.output(), re.M):
            if self.proc.poll() is not None or time.monotonic() - self.started > TIMEOUT_SECS:
                raise AssertionError('no %r:\n%s' % (pattern, self.output()[-3000:]))
            time.sleep(0.2)

    def finish(self) -> dict:
        """Waits for the exit; returns {'code', 'output', 'pids_gone': {role: bool}}."""
        try:
            code = self.proc.wait(timeout=max(1, self.started + TIMEOUT_SECS - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError('the launcher did not exit:\n' + self.output()[-3000:]) from None
        self._out.close()
        out = self.output()
        pids = {role: int(pid) for role, pid in re.findall(
            r'^\[launcher\] started (\S+) \(pid (\d+)\)', out, re.M)}
        return {'code': code, 'output': out,
                'pids_gone': {role: _gone(pid) for role, pid in pids.items()}}

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def produce_launches(logs) -> dict:
    runs = {}
    try:
        runs['ok'] = Launch('ok', ['--num_workers=2', '--log_dir=%s' % (logs / 'task_logs'),
                                   '--'] + TASK_FLAGS + [
            '--num_batches=40', '--nocross_replica_sync',
            '--benchmark_log_dir=%s' % (logs / 'results')], logs)
        # The chief cannot restore a missing checkpoint: it exits 1; ps0 would wait for it.
        runs['fail'] = Launch('fail', ['--num_workers=1', '--'] + TASK_FLAGS + [
            '--num_batches=3', '--checkpoint_path=%s' % (logs / 'no_such_checkpoint')], logs)
        runs['interrupt'] = Launch('interrupt', ['--num_workers=1', '--'] + TASK_FLAGS + [
            '--num_batches=100000', '--display_every=10'], logs)
        runs['interrupt'].wait_for(r'^\[worker0\] 10\timages/sec')
        runs['interrupt'].proc.send_signal(signal.SIGINT)
        results = {name: run.finish() for name, run in runs.items()}
    finally:
        for run in runs.values():
            run.kill()
    results['task_logs'] = sorted(os.listdir(logs / 'task_logs'))
    results['host_loads'] = []  # the workers' results files: their host_load blocks
    for name in sorted(os.listdir(logs / 'results')):
        with open(logs / 'results' / name) as f:
            got = json.load(f)
        if isinstance(got, dict) and got.get('host_load'):
            results['host_loads'].append(got['host_load'])
    return results


@pytest.fixture(scope='module')
def launches(tmp_path_factory):
    base = tmp_path_factory.getbasetemp()
    if os.environ.get('PYTEST_XDIST_WORKER'):
        base = base.parent
    result_path = base / 'launcher_runs.json'
    with open(base / 'launcher_runs.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not result_path.exists():
            directory = base / 'launcher_runs'
            directory.mkdir(exist_ok=True)
            result_path.write_text(json.dumps(produce_launches(directory)))
    return json.loads(result_path.read_text())


def test_launcher_prefixes_output_and_gives_each_workers_own_figure_and_the_total(launches):
    """Each worker's own images/sec (its `this worker's images/sec` line, not its `total
    images/sec`, the cluster's rate as it sees it) and the chief's cluster total: 2
    asynchronous workers x 40 steps x 2 images over their timed parts' span."""
    run = launches['ok']
    out = run['output']
    assert run['code'] == 0, out[-3000:]
    for role in ('ps0', 'worker0', 'worker1'):
        assert re.search(r'^\[%s\] Started server grpc://127\.0\.0\.1:\d+ as ' % role, out, re.M)
    # By worker: the two workers' lines come in the order they finished.
    rates = dict(re.findall(r'^\[launcher\] (worker[01]) images/sec: ([0-9.]+)$', out, re.M))
    own = dict(re.findall(r"^\[(worker[01])\] this worker's images/sec: ([0-9.]+) \(its own "
                          r'steps; the total above: \d+ global steps of all 2 workers in its ',
                          out, re.M))
    assert rates == own and len(rates) == 2, out[-3000:]
    total = re.search(r'^\[launcher\] cluster images/sec: ([0-9.]+)$', out, re.M)
    chief = re.search(r'^\[worker0\] cluster images/sec: ([0-9.]+) \(2 workers: 160 '
                      r'images in [0-9.]+ s, ', out, re.M)
    assert total and chief and total.group(1) == chief.group(1), out[-3000:]
    assert '[ps0] ps 0 (127.0.0.1' in out and 'every task is done' in out
    assert launches['task_logs'] == ['ps0.log', 'worker0.log', 'worker1.log']


def test_a_local_clusters_workers_count_the_ps_and_the_other_worker_as_the_clusters(launches):
    loads = launches['host_loads']
    assert len(loads) == 2, launches['ok']['output'][-3000:]
    for load in loads:
        # The ps and the other worker: 2 task addresses on this host; their processes and the
        # launcher's were found.
        assert load['cluster_tasks'] == 2 and load['cluster_processes'] >= 2, load
        if load['others_cpu_secs'] is not None:
            assert load['cluster_cpu_secs'] is not None and load['cluster_cpu_secs'] > 0, load
    lines = [line for line in launches['ok']['output'].splitlines()
             if 'Host load: other processes' in line]
    assert any("the cluster's other tasks on this host" in line for line in lines), lines


def test_launcher_stops_everything_when_a_task_fails(launches):
    run = launches['fail']
    out = run['output']
    assert run['code'] == 1, out[-3000:]
    assert re.search(r'^\[worker0\] error: --checkpoint_path .* is not a checkpoint', out, re.M)
    assert re.search(r'^\[launcher\] error: worker0 exited with status 1; stopping the other '
                     r'tasks$', out, re.M)
    assert run['pids_gone'] == {'ps0': True, 'worker0': True}


def test_launcher_ctrl_c_tears_down_every_task(launches):
    run = launches['interrupt']
    out = run['output']
    assert run['code'] == -signal.SIGINT, out[-3000:]  # 130 in a shell
    assert '[launcher] interrupted; stopping every task' in out
    assert run['pids_gone'] == {'ps0': True, 'worker0': True}
    # The chief printed its totals as it stopped: the launcher relays them as on a normal end
    # (it printed none after a Ctrl-C).
    chief = re.search(r'^\[worker0\] cluster images/sec: ([0-9.]+) ', out, re.M)
    assert chief, out[-3000:]
    lines = out.splitlines()
    assert '[launcher] cluster images/sec: %s' % chief.group(1) in lines
    assert any(re.fullmatch(r'\[launcher\] worker0 images/sec: [0-9.]+', x) for x in lines)


def test_error_lines_go_to_stderr_the_rest_to_stdout():
    out, err = io.StringIO(), io.StringIO()
    launcher = launch_cluster.Launcher(None, [], out=out, err=err)
    launcher.say('worker0 images/sec: 1.00')
    launcher.say('error: worker0 exited with status 1; stopping the other tasks')
    assert out.getvalue() == '[launcher] worker0 images/sec: 1.00\n'
    assert err.getvalue() == ('[launcher] error: worker0 exited with status 1; stopping the '
                              'other tasks\n')


FAKE_TASK = """#!%s
import sys, time
if '--job_name=ps' in sys.argv and %r:
    time.sleep(60)  # a ps waiting for its workers
print('starting', flush=True)
print("error: unknown --model='nosuchmodel'; valid models for synthetic: trivial", flush=True)
sys.exit(2)
"""


def _launch_script(tmp_path, script: str, *flags: str) -> tuple[int, str, str]:
    """Runs the launcher in process with `script` (a Python program's text) as every task's
    interpreter (--python) and `flags`; returns (status, stdout, stderr)."""
    fake = tmp_path / 'fake_python'
    fake.write_text(script)
    fake.chmod(0o755)
    opts, rest = _opts(*flags[:-1], '--python=%s' % fake, '--', flags[-1])
    out, err = io.StringIO(), io.StringIO()
    launcher = launch_cluster.Launcher(opts, launch_cluster.plan_tasks(opts, rest), out=out,
                                       err=err)
    launcher.start()
    status = launcher.wait()
    return status, out.getvalue(), err.getvalue()


def _fake_launch(tmp_path, monkeypatch, *, ps_waits, collapse_secs):
    """Runs the launcher in process on fake tasks (no TensorFlow): each prints the same error
    line and exits 2, except a ps that waits when ps_waits. Returns (status, stdout, stderr)."""
    monkeypatch.setattr(launch_cluster, 'COLLAPSE_SECS', collapse_secs)
    return _launch_script(tmp_path, FAKE_TASK % (sys.executable, ps_waits), '--num_ps=1',
                          '--num_workers=2', '--kill_grace_secs=5', '--model=nosuchmodel')


MODEL_ERROR = "error: unknown --model='nosuchmodel'; valid models for synthetic: trivial"


def test_the_same_task_error_is_printed_once_naming_the_tasks(tmp_path, monkeypatch):
    # Every task exits at once: a long window costs nothing (the wait ends when all exited).
    status, out, err = _fake_launch(tmp_path, monkeypatch, ps_waits=False, collapse_secs=30)
    assert status == 2
    assert err.splitlines() == [
        '[ps0,worker0,worker1] ' + MODEL_ERROR,
        '[launcher] error: ps0, worker0, worker1 exited with status 2']
    assert sorted(line for line in out.splitlines() if not line.startswith('[launcher] ')) == [
        '[ps0] starting', '[worker0] starting', '[worker1] starting']


def test_failed_workers_error_once_and_the_waiting_ps_is_stopped(tmp_path, monkeypatch):
    status, _, err = _fake_launch(tmp_path, monkeypatch, ps_waits=True, collapse_secs=2)
    assert status == 2
    assert err.splitlines() == [
        '[worker0,worker1] ' + MODEL_ERROR,
        '[launcher] error: worker0, worker1 exited with status 2; stopping the other tasks']


INTERRUPTED_TASK = """#!%s
import sys, time
if '--task_index=0' in sys.argv and '--job_name=worker' in sys.argv:
    print('Stopped by SIGINT after 3 timed steps', flush=True)
    sys.exit(130)  # what tf_cnn_benchmarks exits with after a Ctrl-C's clean stop
time.sleep(60)
"""


def test_a_task_stopped_by_sigint_is_named_as_interrupted(tmp_path, monkeypatch):
    """A task that exits 130 (it saved after a SIGINT of its own) is interrupted, not failed:
    the launcher says so, stops the others and exits with its status."""
    status, _, err = _launch_script(tmp_path, INTERRUPTED_TASK % sys.executable, '--num_ps=1',
                                    '--num_workers=2', '--kill_grace_secs=5', '--model=trivial')
    assert status == 130
    assert err.splitlines() == [
        '[launcher] error: worker0 was interrupted (SIGINT, exit status 130); stopping the '
        'other tasks']
    assert launch_cluster.stopped_by(143) == signal.SIGTERM
    assert launch_cluster.stopped_by(-signal.SIGINT) == signal.SIGINT
    assert launch_cluster.stopped_by(1) is None


WAITING_TASK = """#!%s
import sys, time
print('ready', flush=True)
time.sleep(120)
"""


def _signalled_launch(tmp_path, script: str, grace_secs: int, signals: list) -> dict:
    """A launcher process of one ps and one worker running `script` (fake tasks that print
    'ready'), sent `signals` once both are ready (each after the launcher said it is stopping
    the tasks, for a second one); returns Launch.finish()'s dict."""
    fake = tmp_path / 'fake_python'
    fake.write_text(script % sys.executable)
    fake.chmod(0o755)
    launch = Launch('signal', ['--num_workers=1', '--kill_grace_secs=%d' % grace_secs,
                               '--python=%s' % fake, '--', '--model=trivial'], tmp_path)
    try:
        launch.wait_for(r'^\[worker0\] ready')
        launch.wait_for(r'^\[ps0\] ready')
        for i, signum in enumerate(signals):
            if i:
                launch.wait_for(r'interrupted.*; stopping every task')
                time.sleep(0.5)
            launch.proc.send_signal(signum)
        return launch.finish()
    finally:
        launch.kill()


@pytest.mark.parametrize('signum, status, line', [
    (signal.SIGTERM, 143, '[launcher] interrupted (SIGTERM); stopping every task'),
    # SIGINT: 130 in a shell, by SIGINT itself (console.end_interrupted): -2 for Popen.
    (signal.SIGINT, -signal.SIGINT, '[launcher] interrupted; stopping every task')])
def test_a_signal_to_the_launcher_stops_every_task_and_exits_128_plus_it(tmp_path, signum,
                                                                         status, line):
    """`tf_cnn_cluster ... & kill -TERM $!` exits 143, as a run and the sweep do (it exited
    130, Ctrl-C's status); the tasks (fake ones: no TensorFlow) are stopped."""
    run = _signalled_launch(tmp_path, WAITING_TASK, 5, [signum])
    assert run['code'] == status, run['output'][-3000:]
    assert line in run['output'].splitlines()
    assert run['pids_gone'] == {'ps0': True, 'worker0': True}
    # The worker printed no figures (as in a warm-up): the launcher says why there is no total.
    assert run['output'].splitlines()[-1] == (
        '[launcher] no cluster images/sec: worker0 stopped before printing its total (in '
        'the start-up or the warm-up, which time nothing)')


STOPPING_TASK = """#!%s
import signal, sys, time
worker, chief = '--job_name=worker' in sys.argv, '--task_index=0' in sys.argv
def stop(signum, frame):
    if worker:  # what a worker prints when it stops after a SIGTERM
        own = 12.5 if chief else 10.0
        print('total images/sec: %%.2f' %% (2 * own), flush=True)  # the cluster's, as it sees it
        print("this worker's images/sec: %%.2f (its own steps; ...)" %% own, flush=True)
        if chief:
            print('cluster images/sec: 22.50 (2 workers: 45 images in 2.00 s, ...)',
                  flush=True)
    sys.exit(143 if worker else 0)
signal.signal(signal.SIGTERM, stop)
print('ready', flush=True)
time.sleep(120)
"""


def test_after_ctrl_c_the_launcher_prints_the_totals_the_tasks_printed_as_they_stopped(
        tmp_path):
    """The tasks stop on the launcher's SIGTERM and print their figures; the launcher printed
    no total after a Ctrl-C. Now each worker's images/sec and the chief's cluster total, as
    on a normal end, after its tasks' lines. Each worker's is its own (the line after its
    `total images/sec`, which is the cluster's rate as it sees it)."""
    fake = tmp_path / 'fake_python'
    fake.write_text(STOPPING_TASK % sys.executable)
    fake.chmod(0o755)
    launch = Launch('stopping', ['--num_workers=2', '--python=%s' % fake, '--',
                                 '--model=trivial'], tmp_path)
    try:
        for role in ('ps0', 'worker0', 'worker1'):
            launch.wait_for(r'^\[%s\] ready' % role)
        launch.proc.send_signal(signal.SIGINT)
        run = launch.finish()
    finally:
        launch.kill()
    assert run['code'] == -signal.SIGINT, run['output'][-3000:]
    assert run['output'].splitlines()[-3:] == [
        '[launcher] worker0 images/sec: 12.50', '[launcher] worker1 images/sec: 10.00',
        '[launcher] cluster images/sec: 22.50']


TOTALS_TASK = """#!%s
import sys, time
if '--job_name=worker' in sys.argv:
    print('total images/sec: 4.00', flush=True)  # as a run's totals, then it hangs
time.sleep(120)
"""


def test_after_the_timeout_the_launcher_prints_the_totals_the_tasks_printed(tmp_path):
    status, out, err = _launch_script(tmp_path, TOTALS_TASK % sys.executable, '--num_ps=1',
                                      '--num_workers=2', '--timeout_secs=5',
                                      '--kill_grace_secs=5', '--model=trivial')
    assert status == 124
    assert err.splitlines()[0].startswith('[launcher] error: timeout after 5 s')
    assert out.splitlines()[-3:] == [
        '[launcher] worker0 images/sec: 4.00', '[launcher] worker1 images/sec: 4.00',
        '[launcher] cluster images/sec: 8.00 (sum of the workers)']


STUBBORN_TASK = """#!%s
import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print('ready', flush=True)
time.sleep(120)
"""


@pytest.mark.parametrize('second, line', [
    (signal.SIGINT, '[launcher] interrupted again; killing every task'),
    (signal.SIGTERM, '[launcher] interrupted again (SIGTERM); killing every task')])
def test_a_second_ctrl_c_kills_every_task_without_a_traceback(tmp_path, second, line):
    """While the launcher waits --kill_grace_secs for tasks that do not stop on SIGTERM, a
    second Ctrl-C (or SIGTERM) kills them at once: one line naming it, exit 130 (the first
    signal's), no traceback, no task left."""
    run = _signalled_launch(tmp_path, STUBBORN_TASK, 60, [signal.SIGINT, second])
    assert run['code'] == -signal.SIGINT, run['output'][-3000:]
    lines = run['output'].splitlines()
    assert line in lines
    assert 'Traceback' not in run['output']
    assert run['pids_gone'] == {'ps0': True, 'worker0': True}


def test_sigint_stops_the_launcher_even_when_inherited_ignored(monkeypatch):
    """A launcher started from a background job (`tf_cnn_cluster ... &` in a script) inherits
    SIGINT ignored; it must still tear its tasks down on SIGINT (exit 130)."""
    stopped = []

    class FakeLauncher:
        def __init__(self, opts, tasks):
            self.tasks = tasks

        def start(self):
            pass

        def wait(self):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler interrupts this
            return 0

        def say(self, line):
            stopped.append(line)

        def stop_all(self):
            stopped.append('stop_all')

        def summary(self, stopped):
            assert stopped  # the figures the tasks printed as they stopped

    monkeypatch.setattr(launch_cluster, 'Launcher', FakeLauncher)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        status = launch_cluster.main(['--num_workers=1', '--', '--model=trivial'])
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # restored afterwards
    finally:
        signal.signal(signal.SIGINT, previous)
    assert status == 130
    assert stopped == ['interrupted; stopping every task', 'stop_all']


# --- Memory: the tasks against the host's available memory; a task killed by SIGKILL.

def test_tasks_that_cannot_fit_the_host_memory_are_refused_before_any_starts(capsys,
                                                                             monkeypatch):
    from tf_cnn_benchmarks.hardware import host_memory
    from tf_cnn_benchmarks.tools import cluster_memory as cm
    started = []
    monkeypatch.setattr(launch_cluster.Launcher, 'start', lambda self: started.append(self))
    monkeypatch.setattr(host_memory, 'meminfo_available_bytes', lambda: 8 << 30)
    args = ['--num_workers=64', '--', '--model=trivial', '--batch_size=2', '--num_batches=3']
    assert launch_cluster.main(args) == 2
    captured = capsys.readouterr()
    assert started == [] and captured.out == ''
    # trivial (ImageNet): 4,263,877 float32 variables; a batch of 2 images of 227x227x3.
    variables, batch = 4263877 * 4, 2 * 227 * 227 * 3 * 4
    activations = int(cm.ACTIVATION_FACTOR * cm.ACTIVATION_KIB[('trivial', 'imagenet')] * 1024 * 2)
    worker = (cm.TASK_BYTES + cm.WORKER_EXTRA_BYTES + cm.WORKER_COPIES * variables + batch
              + activations + cm.PS_BYTES_PER_WORKER + cm.PS_COPIES_PER_WORKER * variables)
    others = cm.SHARED_BYTES + cm.TASK_BYTES + cm.PS_COPIES * variables + cm.CHIEF_EXTRA_BYTES
    assert cm.estimate_bytes({'ps': 1, 'worker': 64}, _worker_params(args)) == (
        others + 64 * worker, worker, others)
    fits = ((8 << 30) - others) // worker
    assert captured.err == (
        'error: 65 tasks need about %.1f GiB of memory (%d MiB a worker: '
        'every task is a TensorFlow process), more than the 8.0 GiB this host has available '
        '(MemAvailable); give --num_workers=%d at most, or free memory\n'
        % ((others + 64 * worker) / (1 << 30), worker >> 20, fits))
    # Measured: 8 GiB holds about 15 trivial workers (420 MiB the largest, 56 MiB of ps0's).
    assert 10 <= fits <= 16
    # The number it names fits; one more worker does not (the check is the same sum).
    assert launch_cluster.main(['--num_workers=%d' % fits] + args[1:]) == 0 or started
    assert len(started) == 1
    assert launch_cluster.main(['--num_workers=%d' % (fits + 1)] + args[1:]) == 2
    assert len(started) == 1


def _worker_params(args):
    from tf_cnn_benchmarks import flag_parsing
    return flag_parsing.parse_flags(['tf_cnn_benchmarks', '--job_name=worker'] + args[2:])


KILLED_TASK = """#!%s
import os, signal, sys, time
ready, workers = %r, %d  # a folder where each worker says it runs, its SIGTERM handler set
worker = '--job_name=worker' in sys.argv
role = ('worker' if worker else 'ps') + sys.argv[3].split('=')[1]  # [1]: the script
if not worker:  # once every worker runs (a fixed 1.5 s could come first on a loaded host)
    deadline = time.monotonic() + 120
    while len(os.listdir(ready)) < workers and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(os.getpid(), signal.SIGKILL)  # as the out-of-memory killer does
def stop(signum, frame):
    print('warning: could not tell the serving tasks about the failure (%%s)' %% role, flush=True)
    print('error: the ps task is unreachable from %%s' %% role, flush=True)
    print('stopped %%s' %% role, flush=True)
    sys.exit(1)
signal.signal(signal.SIGTERM, stop)
if role == 'worker0':
    print(':::MLLOG {"key": "init_start", "value": null}', flush=True)
print('running %%s' %% role, flush=True)
open(os.path.join(ready, role), 'w').close()
time.sleep(60)
"""


def test_a_task_killed_by_sigkill_is_named_and_the_others_stop_quietly(tmp_path):
    """A ps killed by SIGKILL: one launcher line says it was killed and what to do, the
    other tasks' warning and error lines while they stop are counted in one line (they are
    in their logs), and the chief's MLPerf line is relayed without the role prefix."""
    logs, ready = tmp_path / 'logs', tmp_path / 'ready'
    ready.mkdir()
    status, out, err = _launch_script(tmp_path, KILLED_TASK % (sys.executable, str(ready), 3),
                                      '--num_ps=1', '--num_workers=3', '--kill_grace_secs=10',
                                      '--log_dir=%s' % logs, '--model=trivial')
    assert status == 1
    assert err.splitlines() == [
        '[launcher] error: ps0 was killed (SIGKILL: the kernel\'s out-of-memory killer, or a '
        'kill -9); if memory ran out, give fewer --num_workers; stopping the other tasks']
    lines = out.splitlines()
    assert ':::MLLOG {"key": "init_start", "value": null}' in lines
    assert '[launcher] 6 warning and error lines of the stopped tasks (worker0, worker1, '\
           'worker2) left out: in %s' % os.path.join(str(logs), '<role>.log') in lines
    assert sorted(line for line in lines if line.startswith('[worker')) == [
        '[worker%d] %s worker%d' % (i, what, i) for i in range(3)
        for what in ('running', 'stopped')]
    assert (logs / 'worker1.log').read_text().splitlines()[1:3] == [
        'warning: could not tell the serving tasks about the failure (worker1)',
        'error: the ps task is unreachable from worker1']


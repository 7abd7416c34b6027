"""tf_cnn_sweep and the signals that end it or its runs: a run never outlives a killed sweep
(nor runs beside a resume), SIGHUP stops a sweep as SIGTERM does, and a run that finished its
timed steps is not counted as interrupted because a signal came during its final save.

The runs are stand-ins (a short Python script as the entry script): no TensorFlow runs here.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tf_cnn_benchmarks.tools.sweep import cli as sweep
from tf_cnn_benchmarks.tools.sweep import runner as sweep_runner

pytestmark = pytest.mark.cli

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A stand-in run: writes its pid, then waits (each test kills it in the end).
SLEEPER = '''
import os, sys, time
with open(%(pid_file)r + '.tmp', 'w') as f:
    f.write(str(os.getpid()))
os.replace(%(pid_file)r + '.tmp', %(pid_file)r)
time.sleep(600)
'''

# A sweep of one run with that stand-in, in a process of its own; with `no_deathsig` the
# kernel is not asked to end the run with the sweep (the case of a host without prctl).
SWEEP = '''
import sys
from tf_cnn_benchmarks.tools.sweep import cli, runner
runner.ENTRY_SCRIPT = %(entry)r
if %(no_deathsig)r:
    runner.die_with_parent = lambda: None
plan = {'axes': {'model': ['trivial'], 'batch_size': [2], 'num_gpus': [1],
                 'precision': ['fp32'], 'variable_update': ['parameter_server']},
        'repeats': 1, 'output_dir': %(out)r, 'extra_flags': []}
sys.exit(cli.run_sweep(plan, progress=False))
'''


def _alive(pid: int) -> bool:
    """True while process `pid` runs (a zombie nobody reaped yet counts as dead)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            state = f.read().rsplit(')', 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ('Z', 'X')


def _until(predicate, secs: float = 30.0) -> bool:
    deadline = time.monotonic() + secs
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def _start_sweep(tmp_path, no_deathsig: bool = False):
    pid_file = str(tmp_path / 'run.pid')
    entry = tmp_path / 'entry.py'
    entry.write_text(SLEEPER % {'pid_file': pid_file})
    script = SWEEP % {'entry': str(entry), 'no_deathsig': no_deathsig,
                      'out': str(tmp_path / 'sweep')}
    proc = subprocess.Popen([sys.executable, '-c', script], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert _until(lambda: os.path.exists(pid_file) or proc.poll() is not None), 'no run started'
    assert os.path.exists(pid_file), proc.stderr.read().decode()
    with open(pid_file) as f:
        return proc, int(f.read())


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='prctl is Linux only')
def test_a_killed_sweep_takes_its_run_with_it(tmp_path):
    # Before: the run went on as an orphan (parent pid 1), and a resume started the same
    # configuration beside it; the orphan then wrote a second results JSON and database row.
    proc, child = _start_sweep(tmp_path)
    try:
        assert _alive(child)
        proc.kill()  # SIGKILL: the sweep can forward nothing
        proc.wait()
        assert _until(lambda: not _alive(child)), 'the run outlived its sweep'
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
        proc.stderr.close()


def test_a_run_outliving_its_sweep_keeps_the_output_folder_held(tmp_path):
    """Where the kernel cannot end the run with the sweep, the run holds the sweep's lock: a
    resume is refused while it runs (and allowed once it ended)."""
    proc, child = _start_sweep(tmp_path, no_deathsig=True)
    try:
        proc.kill()
        proc.wait()
        assert _alive(child)
        with pytest.raises(sweep.SweepError, match='or a run of one that was killed'):
            sweep._lock(str(tmp_path / 'sweep'))
        os.kill(child, signal.SIGKILL)
        assert _until(lambda: not _alive(child))
        sweep._lock(str(tmp_path / 'sweep')).close()
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
        proc.stderr.close()


def test_the_death_request_ends_a_child_whose_parent_is_gone_already(monkeypatch):
    """The request runs in the child; when the sweep died before it, the child has another
    parent then, and ends at once instead of running unwatched."""
    calls = []
    monkeypatch.setattr(sweep_runner, '_prctl', lambda: lambda *a: calls.append(a))
    request = sweep_runner.die_with_parent()
    monkeypatch.setattr(os, 'getppid', lambda: -1)  # another parent: the sweep is gone
    exits = []
    monkeypatch.setattr(os, '_exit', exits.append)
    request()
    assert calls == [(sweep_runner.PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)]
    assert exits == [128 + int(signal.SIGKILL)]


def test_a_run_that_ended_complete_is_ok_though_the_sweep_forwarded_a_signal(tmp_path,
                                                                             monkeypatch):
    """The sweep's Ctrl-C reached the run after its timed steps: the run finished complete
    (exit status 0, not stopped early), so its record is ok, not interrupted (which a resume
    reran, recording the same configuration twice in the results database)."""
    entry = tmp_path / 'entry.py'
    entry.write_text(
        'import json, os, sys\n'
        'folder = sys.argv[-1].split("=", 1)[1]\n'
        'json.dump({"images_per_sec": 50.0, "num_steps": 20, "stopped_early": False,\n'
        '           "stopped_by_signal": None},\n'
        '          open(os.path.join(folder, "tf_cnn_benchmarks_x.json"), "w"))\n')
    monkeypatch.setattr(sweep_runner, 'ENTRY_SCRIPT', str(entry))

    class Forwarded(sweep_runner.Interrupts):
        def forward(self):  # the stand-in run got it after its timed steps: it finishes
            pass
    interrupts = Forwarded()
    interrupts.signum = signal.SIGINT  # what the handler records on the sweep's Ctrl-C
    run_dir = str(tmp_path / 'run')
    outcome = sweep_runner.run_configuration(['--benchmark_log_dir=%s' % run_dir], run_dir,
                                             interrupts)
    assert (outcome['status'], outcome['error']) == ('ok', None)
    # One stopped by that signal is interrupted, as before.
    entry.write_text('import sys\nsys.exit(130)\n')
    outcome = sweep_runner.run_configuration([], run_dir, interrupts)
    assert (outcome['status'], outcome['error']) == ('interrupted', 'interrupted by SIGINT')


def test_sighup_stops_the_sweep_as_sigterm_does(tmp_path, monkeypatch):
    # Before: SIGHUP (the terminal or SSH session closed) killed the sweep outright, and its run
    # went on without it.
    ignore = lambda signum, frame: None  # noqa: E731 - where Interrupts does not take it
    previous = signal.signal(signal.SIGHUP, ignore)
    try:
        with sweep_runner.Interrupts() as interrupts:
            os.kill(os.getpid(), signal.SIGHUP)
        assert interrupts.signum == signal.SIGHUP
        assert signal.getsignal(signal.SIGHUP) is ignore
    finally:
        signal.signal(signal.SIGHUP, previous)
    entry = tmp_path / 'entry.py'
    entry.write_text('import sys\nsys.exit(129)\n')  # a run's clean stop after SIGHUP
    monkeypatch.setattr(sweep_runner, 'ENTRY_SCRIPT', str(entry))
    outcome = sweep_runner.run_configuration([], str(tmp_path / 'run'),
                                             sweep_runner.Interrupts())
    assert (outcome['status'], outcome['error']) == ('interrupted', 'interrupted by SIGHUP')


def test_a_run_the_signal_ended_before_its_handlers_has_the_shells_exit_status(
        tmp_path, monkeypatch):
    # Before (sweep53): SIGTERM in the run's first second (its handlers not yet installed)
    # was recorded as 'exit status -15' (Popen's returncode); the README says 143.
    entry = tmp_path / 'entry.py'
    entry.write_text('import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n')
    monkeypatch.setattr(sweep_runner, 'ENTRY_SCRIPT', str(entry))
    outcome = sweep_runner.run_configuration([], str(tmp_path / 'run'),
                                             sweep_runner.Interrupts())
    assert (outcome['status'], outcome['exit_status'], outcome['error']) == (
        'interrupted', 143, 'interrupted by SIGTERM')
    entry.write_text('import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n')
    outcome = sweep_runner.run_configuration([], str(tmp_path / 'run'),
                                             sweep_runner.Interrupts())
    assert (outcome['status'], outcome['exit_status'], outcome['error']) == (
        'failed', 139, 'error: exit status 139 and no output on stderr')
    assert sweep_runner.timed_out_outcome(None, -signal.SIGTERM, 15)[1].endswith(
        '(exit status 143)')


def test_the_cluster_launcher_takes_sighup_as_sigterm(monkeypatch):
    """tf_cnn_cluster stops its tasks on SIGHUP and exits 129; a task that exited 129 (its
    clean stop after SIGHUP) is interrupted, not failed."""
    from tf_cnn_benchmarks.tools import launch_cluster
    said = []

    class FakeLauncher:
        def __init__(self, opts, tasks):
            pass

        def start(self):
            pass

        def wait(self):
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(30)  # the handler interrupts this
            return 0

        def say(self, line):
            said.append(line)

        def stop_all(self):
            said.append('stop_all')

        def summary(self, stopped):
            pass

    monkeypatch.setattr(launch_cluster, 'Launcher', FakeLauncher)
    previous = signal.signal(signal.SIGHUP, lambda signum, frame: None)  # not pytest's death
    try:
        status = launch_cluster.main(['--num_workers=1', '--', '--model=trivial'])
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert status == 129
    assert said == ['interrupted (SIGHUP); stopping every task', 'stop_all']
    assert launch_cluster.stopped_by(129) == signal.SIGHUP


def test_an_output_dir_in_use_exits_1_as_a_held_train_dir(tmp_path, capsys, monkeypatch):
    # Before: exit status 2, the usage errors' (README: an output path that cannot be used),
    # where a run whose --train_dir another run holds exits 1.
    holder = sweep._lock(str(tmp_path))
    monkeypatch.setattr(sweep_runner, 'run_configuration', lambda *a: pytest.fail('ran'))
    try:
        status = sweep.main(['tf_cnn_sweep', '--output_dir=%s' % tmp_path, '--models=trivial',
                             '--batch_sizes=2', '--repeats=1', '--noprogress', '--',
                             '--device=cpu'])
    finally:
        holder.close()
    assert status == 1
    assert capsys.readouterr().err.startswith(
        'error: another tf_cnn_sweep is running in --output_dir %s' % tmp_path)

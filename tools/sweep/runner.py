"""Runs one configuration of a sweep as a fresh `tf_cnn_benchmarks` process and describes it.

The process gets its own session (a terminal's Ctrl-C reaches only the sweep, which forwards it
with `Interrupts`), writes its output to `<run_dir>/stdout.log` and `<run_dir>/stderr.log` and
its results JSON into `<run_dir>` (--benchmark_log_dir). `run_configuration` returns the
outcome; `make_record` turns it into a results-file record (see results.py).

The run never outlives the sweep: on Linux the kernel kills it (SIGKILL) when the sweep dies,
however it dies (`die_with_parent`: prctl PR_SET_PDEATHSIG; a SIGKILL'ed sweep cannot forward
anything); and it inherits the sweep's lock on the output folder (`Interrupts.hold_fds`), so
that where the kernel cannot do that, a resume started while a run of the dead sweep still
runs is refused instead of running the same configuration beside it.
"""

from __future__ import annotations

import ctypes
import datetime
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time

from tf_cnn_benchmarks.history import records  # absolute: `python -m tools.sweep`
from tf_cnn_benchmarks.lifecycle import results_log
from tf_cnn_benchmarks.lifecycle import signals as run_signals
from tf_cnn_benchmarks.metrics import clean_runs, configuration

from . import disk, figures, host_load, results

# The package folder holds the entry script, both in a checkout and when installed.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENTRY_SCRIPT = os.path.join(_PACKAGE, 'tf_cnn_benchmarks.py')
PRECISION_FLAGS = {'fp32': [], 'fp16': ['--use_fp16'], 'bf16': ['--use_bf16']}
KILL_GRACE_SECS = 10.0
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _prctl():
    """libc's prctl, or None where there is none (not Linux)."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def die_with_parent():
    """A `preexec_fn` that makes the child die (SIGKILL) when this process dies, or None where
    the kernel offers no such thing.

    Looked up here, in the parent: the function runs in the child between fork and exec, where
    loading a library is unsafe. It also ends the child at once when this process died before
    the request took effect (the child then has another parent already).
    """
    prctl, parent = _prctl(), os.getpid()
    if prctl is None:
        return None

    def request():
        prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:
            os._exit(128 + int(signal.SIGKILL))
    return request


class Interrupts(run_signals.HandlerSwap):
    """SIGINT/SIGTERM/SIGHUP handlers for the sweep (a context manager).

    The first signal is recorded (`signum`) and forwarded to the running child, which finishes
    its step, saves and exits; a second is forwarded too (the child then aborts at once); a
    third kills the child (SIGKILL).
    """

    def __init__(self):
        super().__init__()
        self.signum: int | None = None
        self.proc: subprocess.Popen | None = None
        #: File descriptors each run inherits: the output folder's lock (cli._lock).
        self.hold_fds: tuple[int, ...] = ()
        self._count = 0

    def _handle(self, signum, frame):
        del frame
        self._count += 1
        if self.signum is None:
            self.signum = signum
        # os.write: a handler must not re-enter the buffered sys.stderr.
        try:
            os.write(2, ('\nsweep: received %s: stopping the current run (again to abort it '
                         'at once); results so far are kept\n'
                         % signal.Signals(signum).name).encode())
        except OSError:  # stderr on a full disk or closed: the stop goes on
            pass
        self.forward()

    def forward(self) -> None:
        """Sends the received signal to the running child (SIGKILL from the third on)."""
        proc = self.proc
        if self.signum is None or proc is None or proc.poll() is not None:
            return
        try:
            proc.send_signal(self.signum if self._count < 3 else signal.SIGKILL)
        except ProcessLookupError:
            pass  # exited between poll() and send_signal()


def command_for(config: dict, extra_flags: list[str], run_dir: str) -> list[str]:
    """The tf_cnn_benchmarks argument list of one configuration (without the interpreter)."""
    return (['--model=%s' % config['model'], '--batch_size=%d' % config['batch_size'],
             '--num_gpus=%d' % config['num_gpus'],
             '--variable_update=%s' % config['variable_update']]
            + PRECISION_FLAGS[config['precision']] + list(extra_flags)
            + ['--benchmark_log_dir=%s' % run_dir])


def last_error_line(stderr_text: str) -> str | None:
    """The last `error: ...` line of a run's stderr, else its last non-empty line, else None."""
    lines = [line.strip() for line in stderr_text.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith('error:')]
    if errors:
        return errors[-1]
    return lines[-1] if lines else None


def _read_text(path: str) -> str:
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            return f.read()
    except OSError:
        return ''


def _read_result(run_dir: str) -> dict | None:
    paths = sorted(glob.glob(os.path.join(run_dir, 'tf_cnn_benchmarks_*.json')))
    if not paths:
        return None
    try:
        with open(paths[-1], encoding='utf-8') as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def run_configuration(args: list[str], run_dir: str, interrupts: Interrupts,
                      timeout_secs: float = 0.0) -> dict:
    """Runs `python tf_cnn_benchmarks.py ARGS` and waits for it.

    Args:
      args: the benchmark's arguments (see `command_for`).
      run_dir: folder for the logs and the results JSON; emptied first.
      interrupts: the sweep's signal handlers; the child is registered there while it runs,
        and inherits its `hold_fds`.
      timeout_secs: stop the run (SIGTERM, then SIGKILL after 10 s) after this many seconds of
        wall time; 0 = no limit. Such a run is 'stopped' when it saved its result, else
        'failed' (`timed_out_outcome`).

    Returns:
      {'status', 'exit_status', 'error', 'result' (the results JSON or None), 'wall_secs',
       'started_utc', 'no_space' (True for a failed run whose error says the disk was full, or
       whose folder's disk is: disk.out_of_space)}.
    """
    shutil.rmtree(run_dir, ignore_errors=True)  # a previous attempt that left no record
    os.makedirs(run_dir)
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')
    start = time.monotonic()
    env = dict(os.environ, PYTHONUNBUFFERED='1')
    timed_out = False
    with open(os.path.join(run_dir, 'stdout.log'), 'wb') as out, \
            open(os.path.join(run_dir, 'stderr.log'), 'wb') as err:
        proc = subprocess.Popen([sys.executable, ENTRY_SCRIPT] + args, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, env=env, start_new_session=True,
                                preexec_fn=die_with_parent(), pass_fds=interrupts.hold_fds)
        interrupts.proc = proc
        interrupts.forward()  # a signal that arrived while the process was starting
        try:
            proc.wait(timeout=timeout_secs or None)
        except subprocess.TimeoutExpired:
            timed_out = True
            proc.terminate()
            try:
                proc.wait(timeout=KILL_GRACE_SECS)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        finally:
            interrupts.proc = None
    result = _read_result(run_dir)
    stderr_text = _read_text(os.path.join(run_dir, 'stderr.log'))
    error = last_error_line(stderr_text)
    name = _stopped_by(interrupts.signum, result, proc.returncode)
    if name is not None and not timed_out:
        status, error = 'interrupted', 'interrupted by %s' % name
    elif timed_out:
        status, error = timed_out_outcome(result, proc.returncode, timeout_secs)
    elif proc.returncode == 0 and result is not None:
        status, error = 'ok', None
    else:
        status = 'failed'
        if proc.returncode == 0:
            error = 'error: exit status 0 but no results JSON in %s' % run_dir
        error = error or 'error: exit status %d and no output on stderr' % shell_status(
            proc.returncode)
    no_space = status == 'failed' and disk.out_of_space(run_dir, error, stderr_text)
    return {'status': status, 'exit_status': shell_status(proc.returncode), 'error': error,
            'result': result,
            'wall_secs': time.monotonic() - start, 'started_utc': started,
            'no_space': no_space}


def shell_status(returncode: int) -> int:
    """A child's exit status as a shell and the README give it: 128 + N for a process the
    signal N ended before its handlers were installed (Popen's -N: SIGTERM in its first
    second is 143, as after its clean stop), else the status it exited with."""
    return 128 - returncode if returncode < 0 else returncode


def timed_out_outcome(result: dict | None, returncode: int, timeout_secs: float
                      ) -> tuple[str, str]:
    """(status, error) of a run the sweep stopped at --run_timeout_secs (SIGTERM; SIGKILL
    KILL_GRACE_SECS later).

    A run that saved a result with timed steps (its clean stop after SIGTERM writes its
    results JSON and records it in the results database, 'stopped at 327 of 100000') is
    'stopped': its record keeps its figures, as the database does, and the error says where it
    stopped. One that saved nothing, or timed nothing (stopped in the warm-up), is 'failed',
    the error saying which.
    """
    limit = 'timed out after %g s (--run_timeout_secs)' % timeout_secs
    if result is not None and not results_log.timed_nothing(result):
        run, planned = result.get('num_steps'), clean_runs.planned_steps(result)
        where = ('at %s of %s timed steps' % (run, planned) if run is not None and planned
                 else 'before its planned steps')
        return 'stopped', '%s %s (its figures cover those)' % (limit, where)
    if result is not None:
        return 'failed', 'error: %s in the warm-up: nothing was timed' % limit
    how = ('killed %g s after SIGTERM' % KILL_GRACE_SECS if returncode == -signal.SIGKILL
           else 'exit status %d' % shell_status(returncode))
    return 'failed', 'error: %s before it saved a result (%s)' % (limit, how)


def _stopped_by(signum: int | None, result: dict | None, returncode: int) -> str | None:
    """'SIGINT', 'SIGTERM' or 'SIGHUP' when a signal stopped the run: the sweep's own
    (forwarded), the one its results JSON names, or the one its exit status says (128 + N after
    the run's clean stop, -N when the signal killed it); None otherwise, and None for a run that
    ended complete (exit status 0, its results JSON not stopped early) although the sweep
    forwarded a signal to it: it came after the run's timed steps (lifecycle/signals.py)."""
    if (result or {}).get('stopped_by_signal'):
        return result['stopped_by_signal']
    if signum is not None:
        complete = returncode == 0 and result is not None and not result.get('stopped_early')
        return None if complete else signal.Signals(signum).name
    for stopping in run_signals.SIGNALS:
        if returncode in (128 + stopping, -stopping):
            return stopping.name
    return None


def local_environment() -> dict:
    """This machine as the child sees it, without importing TensorFlow (gpus: None = unknown).

    oneDNN: tf_cnn_benchmarks turns it on unless TF_ENABLE_ONEDNN_OPTS is set to 0/false.
    """
    # Absolute: `python -m tools.sweep` in a checkout makes `tools` a top-level package.
    from tf_cnn_benchmarks.hardware import machine
    return machine.environment(tensorflow=False)


def make_record(config: dict, extra_flags: list[str], args: list[str], outcome: dict,
                run_dir: str, environment: dict) -> dict:
    """The results-file record of one finished run (fields: see results.py); a run that
    failed keeps no figures, one stopped or interrupted keeps those of the steps it ran."""
    result = outcome['result'] if outcome['status'] != 'failed' else None
    env = dict(environment)
    if result:
        env.update({k: v for k, v in result.get('environment', {}).items() if k in env})
    return {
        configuration.FORMAT_KEY: configuration.RESULTS_FORMAT,
        'key': results.config_key(config), 'config': dict(config),
        'extra_flags': list(extra_flags), 'argv': list(args), 'status': outcome['status'],
        'exit_status': outcome['exit_status'], 'error': outcome['error'],
        'images_per_sec': result.get('images_per_sec') if result else None,
        'global_batch_size': result.get('global_batch_size') if result else None,
        'step_time_secs': records.step_time_summary(result.get('step_times'))
        if result else None,
        'params': result.get('params') if result else None,
        'figures': figures.record_figures(result) if result else None,
        'host_load': host_load.record_host_load(result) if result else None,
        'environment': env, 'started_utc': outcome['started_utc'],
        'wall_secs': round(outcome['wall_secs'], 3), 'run_dir': run_dir,
        'no_space': bool(outcome.get('no_space')),
    }

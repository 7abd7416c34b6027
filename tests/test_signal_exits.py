"""How a command ends after a signal, as a shell sees it: Ctrl-C ends it by SIGINT (so a shell
loop stops), a signal ignored from the start stays ignored, and a run whose reader went away
says so in one stderr line (console.py, lifecycle/signals.py, lifecycle/signal_lines.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tf_cnn_benchmarks.hardware import calibration
from tf_cnn_benchmarks.lifecycle import signals

pytestmark = pytest.mark.cli

TESTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TESTS)
TINY = ['--model=trivial', '--batch_size=2', '--image_size=16', '--num_warmup_batches=1',
        '--display_every=1', '--noresults_db']
WAIT_SECS = 180


def _dispositions(**wanted):
    """A preexec_fn setting the child's SIGINT/SIGTERM dispositions (SIG_DFL, SIG_IGN), as a
    shell leaves them: pytest itself may run with SIGINT ignored (a background job)."""
    def apply():
        for name, how in wanted.items():
            signal.signal(getattr(signal, name), how)
    return apply


def _wait_for(path, text, proc):
    deadline = time.monotonic() + WAIT_SECS
    while time.monotonic() < deadline:
        if os.path.exists(path) and text in open(path).read():
            return
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    pytest.fail('%r never appeared in %s (exit %s): %s' % (
        text, path, proc.poll(), open(path).read()[-2000:] if os.path.exists(path) else ''))


def _start(tmp_path, name, extra=(), **dispositions):
    out, err = (str(tmp_path / (name + ext)) for ext in ('.out', '.err'))
    with open(out, 'w') as o, open(err, 'w') as e:
        proc = subprocess.Popen(
            [sys.executable, 'tf_cnn_benchmarks.py', '--num_batches=100000'] + TINY + list(extra),
            cwd=REPO, stdout=o, stderr=e, stdin=subprocess.DEVNULL,
            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3', PYTHONUNBUFFERED='1'),
            preexec_fn=_dispositions(**dispositions))
    return proc, out, err


def test_ctrl_c_stops_a_shell_loop_of_runs(tmp_path):
    # The trial user's `for i in 1 2; do tf_cnn_benchmarks ...; echo rc=$?; done`: Ctrl-C (a
    # SIGINT to the process group) ended run 1 with exit status 130 and bash went on to run 2:
    # bash stops a loop only when the child died by SIGINT. Now run 1 saves, then ends by
    # SIGINT, and bash stops too (its own death by SIGINT: -2), with no `rc=` and no run 2.
    script = ('for i in 1 2; do "$PY" tf_cnn_benchmarks.py %s --num_batches=100000 '
              '>"$D/run$i.out" 2>"$D/run$i.err"; echo "rc=$?" >>"$D/loop.log"; done; '
              'echo end >>"$D/loop.log"' % ' '.join(TINY))
    loop = subprocess.Popen(['bash', '-c', script], cwd=REPO, start_new_session=True,
                            env=dict(os.environ, PY=sys.executable, D=str(tmp_path),
                                     TF_CPP_MIN_LOG_LEVEL='3', PYTHONUNBUFFERED='1'),
                            preexec_fn=_dispositions(SIGINT=signal.SIG_DFL))
    try:
        _wait_for(str(tmp_path / 'run1.out'), '\n2\timages/sec', loop)
        os.killpg(loop.pid, signal.SIGINT)
        try:
            status = loop.wait(60)  # run 1 saves and ends within seconds
        except subprocess.TimeoutExpired:
            status = 'still running: %s' % (tmp_path / 'loop.log').read_text()
        assert status == -signal.SIGINT
    finally:
        if loop.poll() is None:
            os.killpg(loop.pid, signal.SIGKILL)
    assert not (tmp_path / 'loop.log').exists() and not (tmp_path / 'run2.out').exists()
    assert 'Stopped by SIGINT after' in (tmp_path / 'run1.out').read_text()


def test_signals_ignored_from_the_start_stay_ignored(tmp_path):
    # `bash -c 'trap "" INT; exec tf_cnn_benchmarks ...' &` (a script's `cmd &`): a Ctrl-C of
    # the user's later `tail -f` stopped the run (and while TensorFlow loaded, `error:
    # interrupted`, 130). Only an ignored SIGHUP was kept ignored. Now SIGINT and SIGTERM too.
    no_int, out_i, err_i = _start(tmp_path, 'no_int', SIGINT=signal.SIG_IGN)
    no_term, out_t, err_t = _start(tmp_path, 'no_term', SIGINT=signal.SIG_DFL,
                                   SIGTERM=signal.SIG_IGN)
    try:
        _wait_for(out_i, 'Loading TensorFlow', no_int)
        no_int.send_signal(signal.SIGINT)  # while TensorFlow loads
        for proc, out, ignored in ((no_int, out_i, signal.SIGINT),
                                   (no_term, out_t, signal.SIGTERM)):
            _wait_for(out, '\n2\timages/sec', proc)
            proc.send_signal(ignored)
        time.sleep(1.5)
        assert (no_int.poll(), no_term.poll()) == (None, None)
        no_int.send_signal(signal.SIGTERM)
        no_term.send_signal(signal.SIGINT)
        assert (no_int.wait(WAIT_SECS), no_term.wait(WAIT_SECS)) == (143, -signal.SIGINT)
    finally:
        for proc in (no_int, no_term):
            if proc.poll() is None:
                proc.kill()
    assert 'received SIGINT' not in open(err_i).read()
    assert 'Stopped by SIGTERM after' in open(out_i).read()
    assert 'received SIGTERM' not in open(err_t).read()
    assert 'Stopped by SIGINT after' in open(out_t).read()


def test_a_run_whose_reader_went_away_says_so_in_one_stderr_line(tmp_path):
    # `tf_cnn_benchmarks ... 2>err | head -32`: exit 141 and an empty stderr, though a
    # checkpoint was left and the record said 'stopped at 3 of 20'.
    train_dir, log_dir = tmp_path / 't', tmp_path / 'bl'
    proc = subprocess.Popen(
        [sys.executable, 'tf_cnn_benchmarks.py'] + TINY[:-1] + [
            '--num_batches=100000', '--train_dir=%s' % train_dir,
            '--benchmark_log_dir=%s' % log_dir, '--results_db=%s' % (tmp_path / 'r.sqlite')],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3', PYTHONUNBUFFERED='1'))
    try:
        for line in proc.stdout:  # a `head` that stops at the second step line
            if line.startswith('2\t'):
                break
        proc.stdout.close()
        err = proc.stderr.read()
        assert proc.wait(WAIT_SECS) == 141
    finally:
        if proc.poll() is None:
            proc.kill()
    lines = [line for line in err.splitlines() if 'reader of stdout' in line]
    assert len(lines) == 1, err
    assert lines[0].startswith('warning: the reader of stdout went away (SIGPIPE): the run '
                               'stopped after timed step ')
    assert ' of 100000, as a first Ctrl-C stops it; kept: the checkpoint %s/model.ckpt-' % (
        train_dir) in lines[0]
    assert ', the results JSON %s/tf_cnn_benchmarks_trivial_' % log_dir in lines[0]
    assert lines[0].endswith('.json and the record in the results database %s (run 1); exit '
                             'status 141' % (tmp_path / 'r.sqlite'))
    assert 'images/sec' not in err  # stdout's lost lines are not copied to stderr


def test_no_figure_is_measured_once_a_signal_reached_the_run(tmp_path, monkeypatch):
    # The trial user's Ctrl-C after the timed steps was followed by ~3 s measuring the CPU
    # peak (busy, not kept). From a run's first signal on nothing is measured; the next run is.
    monkeypatch.setenv(calibration.ENV, str(tmp_path / 'c.json'))
    measured = []

    def peak():
        measured.append(1)
        return {'flops_per_sec': 1e9}, 0.01

    def figure():
        return calibration.figure('cpu_peak', 'k', peak, what='a peak', secs=0.1, cores=1)

    catcher = signals.SignalCatcher()
    catcher.timed_done = True
    catcher._first(signal.SIGINT)
    assert figure() is None and measured == []
    assert calibration.quiet_advice() == ('not measured: the run received SIGINT (the next '
                                          'run on this host measures it)')
    catcher.uninstall()
    figure()
    assert measured == [1]


def test_the_console_command_ends_by_sigint_after_its_status_130():
    # cli.main returns 130 after Ctrl-C's clean stop; the process then ends by SIGINT, after
    # Python's own shutdown (atexit handlers run, output flushed), with nothing printed.
    code = ('import atexit, sys; sys.path.insert(0, %r); import checkout; checkout.load(); '
            'from tf_cnn_benchmarks import console; atexit.register(print, "atexit ran"); '
            'print("out", end=""); console.finish(lambda: 130)' % TESTS)
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=60, preexec_fn=_dispositions(SIGINT=signal.SIG_DFL))
    assert (proc.returncode, proc.stdout, proc.stderr) == (-signal.SIGINT, 'outatexit ran\n', '')

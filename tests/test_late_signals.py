"""Signals around a run's timed loop (lifecycle/signals.py): one that comes after the last timed
step stops nothing; a second one after the loop keeps the figures (results JSON, database
record) before it exits; SIGHUP stops a run as SIGTERM does (exit status 129); SIGTERM while
TensorFlow loads is one `error:` line, as Ctrl-C is."""

from __future__ import annotations

import glob
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from tf_cnn_benchmarks.lifecycle import results_log, run_hooks, signals

import helpers

TESTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TESTS)


@pytest.fixture(autouse=True)
def sighup_ignored():
    """SIGHUP ignored around each test, as far as the run's own handlers do not take it: a run
    that does not handle it then fails its test instead of killing pytest."""
    previous = signal.signal(signal.SIGHUP, lambda signum, frame: None)
    yield
    signal.signal(signal.SIGHUP, previous)


class SignalInTotalBlock(run_hooks.RunHook):
    """Sends `signum` to this process while the total block is made (where the CPU peak is
    measured when the calibration record has none): after the last timed step."""

    def __init__(self, signum):
        self.signum = signum

    def total_lines(self, loop):
        os.kill(os.getpid(), self.signum)
        return []


@pytest.mark.parametrize('signum', [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_after_the_timed_steps_stops_nothing_but_ends_the_command_so(tmp_path, capfd,
                                                                              signum):
    # Before: 'Stopped by SIGINT after 3 timed steps' (of 3) and exit 130 (143 for SIGTERM),
    # while the results JSON said stopped_early false; a sweep reran such a run. Then: the run
    # complete, but exit status 0, so a shell loop (or a job runner's SIGTERM) went on as if
    # no signal had come. Now the run is complete and the command ends as the signal asks.
    name = signal.Signals(signum).name
    bench = helpers.tiny_bench(hooks=[SignalInTotalBlock(signum)], num_batches=3,
                               benchmark_log_dir=str(tmp_path))
    if signum == signal.SIGINT:
        result = bench.run()
        assert signals.exit_status(result) == 130
    else:
        with pytest.raises(signals.Terminated) as raised:
            bench.run()
        assert raised.value.code == 128 + signum
    [path] = glob.glob(str(tmp_path / '*.json'))
    saved = json.load(open(path))
    assert (saved['stopped_by_signal'], saved['stopped_early'], saved['num_steps'],
            saved['late_signal']) == (None, False, 3, name)
    out, err = capfd.readouterr()
    assert ('warning: received %s after the timed steps: the run is complete and is recorded '
            'as complete; it writes its results, measures nothing more' % name) in err
    assert ('Received %s at the end of the timed steps: the run is complete, not stopped by '
            'it; the command %s' % (name, 'ends by SIGINT (exit status 130), so a shell loop '
                                    'running it stops too' if name == 'SIGINT' else
                                    'exits with status %d' % (128 + signum))) in out
    assert 'Stopped by' not in out and 'stopping after the current step' not in err


class SignalAtStep(run_hooks.RunHook):
    def __init__(self, step=2, signum=signal.SIGHUP):
        self.step, self.signum = step, signum

    def after_step(self, step, loss):
        if step == self.step:
            os.kill(os.getpid(), self.signum)


def test_a_signal_during_the_last_timed_step_stops_nothing(tmp_path, capfd):
    # The last of 3 steps: the loop ended where it would have; a sweep that forwarded the
    # signal then found the run stopped 'at 3 of 3' and ran it again.
    bench = helpers.tiny_bench(hooks=[SignalAtStep(3, signal.SIGINT)], num_batches=3,
                               benchmark_log_dir=str(tmp_path))
    result = bench.run()
    assert (result['stopped_by_signal'], result['stopped_early'], result['num_steps'],
            result['late_signal'], signals.exit_status(result)) == (None, False, 3, 'SIGINT', 130)
    out = capfd.readouterr().out
    assert ('Received SIGINT at the end of the timed steps: the run is complete, not stopped by '
            'it') in out and 'Stopped by' not in out


def test_sighup_stops_a_run_as_sigterm_does_with_status_129(tmp_path):
    # Before: SIGHUP killed the run at once (status 129 from the kernel): nothing saved, the
    # --train_dir's hold file left behind.
    train_dir = tmp_path / 'train'
    bench = helpers.tiny_bench(hooks=[SignalAtStep()], num_batches=5,
                               benchmark_log_dir=str(tmp_path), train_dir=str(train_dir))
    with pytest.raises(signals.Terminated) as raised:
        bench.run()
    assert raised.value.code == 129
    [path] = glob.glob(str(tmp_path / '*.json'))
    saved = json.load(open(path))
    assert (saved['stopped_by_signal'], saved['num_steps']) == ('SIGHUP', 2)
    assert saved['checkpoint_path'].endswith('model.ckpt-2')
    assert signals.exit_status({'stopped_by_signal': 'SIGHUP'}) == 129
    assert 'tf_cnn_benchmarks.hold' not in os.listdir(train_dir)


class Reporter(run_hooks.RunHook):
    output = 'the fake record'

    def __init__(self):
        self.reported = []

    def report(self, result):
        self.reported.append(dict(result))

    def written(self, result):
        return [self.output] if self.reported else []


def test_a_second_signal_after_the_loop_writes_the_known_results_once(tmp_path, monkeypatch,
                                                                      capfd):
    """SignalHook.salvage, with the watcher thread's calls made by hand: before the report
    phase it writes the reports of what is known; once `end` ran it leaves them to the run."""
    exits = []
    monkeypatch.setattr(signals.os, '_exit', exits.append)
    monkeypatch.setattr(signals.dir_hold, 'release_all', lambda: None)
    clock = iter([1.0, 2.0])
    monkeypatch.setattr(signals.time, 'monotonic', lambda: next(clock))
    fake = Reporter()
    hook = signals.SignalHook(reporters=[results_log.ResultsLogHook(str(tmp_path)), fake])
    hook.after_timed()
    result = {'model': 'trivial', 'images_per_sec': 123.4, 'num_steps': 20,
              'stopped_early': False}
    hook.after_loop(result)
    hook.catcher._watched(signal.SIGTERM)  # during the final save, say
    hook.catcher._watched(signal.SIGINT)
    assert exits == [130]
    [path] = glob.glob(str(tmp_path / 'tf_cnn_benchmarks_trivial_*.json'))
    saved = json.load(open(path))
    assert (saved['images_per_sec'], saved['stopped_by_signal'], saved['aborted_by_signal'],
            saved['checkpoint_path']) == (123.4, None, 'SIGINT', None)
    assert [r['images_per_sec'] for r in fake.reported] == [123.4]
    assert capfd.readouterr().err.splitlines()[-1] == (
        'error: received SIGINT again: aborting at once, after writing the results JSON %s and '
        'the fake record, with the figures of its timed steps; the final checkpoint and the '
        'plot may be missing' % path)
    # Once the run's own `end` ran (its report phase next), a second signal writes nothing.
    other = signals.SignalHook(reporters=[fake])
    other.after_loop(dict(result))
    other.end({'checkpoint_path': '/t/model.ckpt-20'})
    assert other.salvage(signal.SIGINT) is None and len(fake.reported) == 1


# A tiny run whose extra hook sends SIGINT twice after the loop and then waits: the second
# signal's abort ends the process. Before: 'aborting at once, without saving', no results JSON
# and no database record although the figures were known.
_TWICE_AFTER_LOOP = textwrap.dedent('''
    import os, signal, sys, threading
    sys.path.insert(0, {tests!r})
    import checkout
    checkout.load()
    from tf_cnn_benchmarks import cli
    from tf_cnn_benchmarks.lifecycle import run_hooks, signals
    signals.ECHO_SECS = 0.0  # two signals sent at once are two here

    class Twice(run_hooks.RunHook):
        def after_loop(self, result):
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)
            threading.Event().wait(120)  # the abort exits the process

    sys.exit(cli.main(['tf_cnn_benchmarks'] + {args!r}, hooks=[Twice()]))
''')


@pytest.mark.cli
@pytest.mark.parametrize('recorded', [True, False])
def test_a_second_signal_after_the_timed_loop_keeps_the_figures(tmp_path, recorded):
    # --noresults_db: the line claimed 'and the record in the results database' though none
    # was written; it now names what was (and calls missing only what the run writes).
    db = tmp_path / 'r.sqlite'
    args = ['--model=trivial', '--batch_size=2', '--image_size=16', '--num_batches=3',
            '--num_warmup_batches=1', '--device=cpu', '--train_dir=%s' % (tmp_path / 't'),
            '--benchmark_log_dir=%s' % (tmp_path / 'bl'),
            '--results_db=%s' % db if recorded else '--noresults_db']
    proc = subprocess.run([sys.executable, '-c', _TWICE_AFTER_LOOP.format(tests=TESTS,
                                                                          args=args)],
                          capture_output=True, text=True, timeout=300, cwd=REPO,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3'))
    assert proc.returncode == 130, proc.stderr
    [path] = glob.glob(str(tmp_path / 'bl' / '*.json'))
    saved = json.load(open(path))
    assert (saved['num_steps'], saved['aborted_by_signal'], saved['stopped_by_signal']) == (
        3, 'SIGINT', None)
    assert saved['images_per_sec'] > 0
    record = ' and the record in the results database %s (run 1)' % db if recorded else ''
    assert ('error: received SIGINT again: aborting at once, after writing the results JSON '
            '%s%s, with the figures of its timed steps; the final checkpoint may be missing\n'
            % (path, record)) in proc.stderr
    assert 'results database' not in proc.stderr or recorded
    if recorded:
        with sqlite3.connect(str(db)) as conn:
            assert conn.execute('SELECT COUNT(*) FROM runs').fetchone()[0] == 1
    assert not os.path.exists(tmp_path / 't')  # no checkpoint yet: hold released, removed


# SIGTERM or SIGHUP sent by the process itself from inside its import of TensorFlow, so it lands
# there on every host, however fast or loaded (as test_cli_edges does with SIGINT).
_SIGNAL_IN_IMPORT = textwrap.dedent('''
    import builtins, os, signal, sys
    sys.path.insert(0, {tests!r})
    import checkout
    checkout.load()
    from tf_cnn_benchmarks import console
    real_import = builtins.__import__
    def signalling_import(name, *args, **kwargs):
        if name == 'tensorflow':
            builtins.__import__ = real_import
            os.kill(os.getpid(), {signum})
        return real_import(name, *args, **kwargs)
    builtins.__import__ = signalling_import
    sys.argv = ['tf_cnn_benchmarks', '--model=trivial', '--train_dir=' + {train_dir!r}]
    console.tf_cnn_benchmarks()
    print('not interrupted')
''')


@pytest.mark.cli
@pytest.mark.parametrize('signum', [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_while_tensorflow_loads_is_one_error_line(tmp_path, signum):
    # Before: killed by the signal (status -15), not a word; SIGINT said `error: interrupted`.
    train_dir = str(tmp_path / 'train')
    proc = subprocess.run(
        [sys.executable, '-c', _SIGNAL_IN_IMPORT.format(tests=TESTS, signum=int(signum),
                                                        train_dir=train_dir)],
        capture_output=True, text=True, timeout=120, cwd=REPO)
    name = signal.Signals(signum).name
    assert (proc.returncode, proc.stderr) == (128 + signum, 'error: interrupted by %s\n' % name)
    assert 'not interrupted' not in proc.stdout
    assert not os.path.exists(train_dir)  # made by the run, left empty: removed


def test_nohup_keeps_sighup_ignored(tmp_path):
    # `nohup tf_cnn_benchmarks ... &`: SIGHUP is ignored from the start, and a closed terminal
    # must not stop the run now that SIGHUP stops a run as SIGTERM does.
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with signals.CommandSignals():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            result = helpers.tiny_bench(hooks=[SignalAtStep(2, signal.SIGHUP)], num_batches=4,
                                        benchmark_log_dir=str(tmp_path)).run()
        assert (result['stopped_by_signal'], result['num_steps']) == (None, 4)
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)


def test_a_second_signal_while_the_total_block_prints_waits_for_the_figures(monkeypatch):
    """A last user's trial: a second Ctrl-C right after `total images/sec` (after the timed
    loop, before its result reached the signal hook) aborted 'without saving', no results JSON
    and no record, though the first signal's warning promised them. The salvage now waits for
    the result the main thread hands over."""
    import threading
    fake = Reporter()
    hook = signals.SignalHook(reporters=[fake])
    hook.after_timed()
    assert hook.catcher.salvage == hook.salvage
    written = []
    thread = threading.Thread(target=lambda: written.append(hook.salvage(signal.SIGINT)))
    thread.start()
    hook.after_loop({'model': 'trivial', 'images_per_sec': 55.5, 'num_steps': 4,
                     'stopped_early': False})
    thread.join(timeout=30)
    assert written == ['the fake record'] and [r['images_per_sec'] for r in fake.reported] == [55.5]


def test_stopped_after_one_timed_step_is_singular(capfd):
    # Before: 'Stopped by SIGINT after 1 timed steps'.
    result = helpers.tiny_bench(hooks=[SignalAtStep(1, signal.SIGINT)], num_batches=3).run()
    assert (result['stopped_by_signal'], result['num_steps']) == ('SIGINT', 1)
    assert 'Stopped by SIGINT after 1 timed step\n' in capfd.readouterr().out

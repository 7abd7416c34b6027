"""stdout or stderr that cannot be written (a full disk, /dev/full, a closed descriptor) costs
the command its output, not its work (output_streams.py): the run goes on and saves, and the
command ends with one `error:` line on the stream that works and exit status 74."""

from __future__ import annotations

import errno
import io
import json
import os
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from tf_cnn_benchmarks.runtime import output_streams

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(REPO, 'tests')
LOST = "error: part of this command's output was lost: "


class FullDisk(io.StringIO):
    """A text file whose writes fail with ENOSPC once `room` characters were written."""

    def __init__(self, room: int):
        super().__init__()
        self.room = room

    def write(self, text):
        if self.tell() + len(text) > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return super().write(text)


def test_a_failed_write_is_counted_as_lost_not_raised(monkeypatch):
    pointed = []
    monkeypatch.setattr(output_streams, '_point_at_devnull', pointed.append)
    stream = output_streams.GuardedStream(FullDisk(room=12), 1, 'stdout')
    print('first line', file=stream, flush=True)
    print('second line', file=stream, flush=True)  # over the room: ENOSPC
    print('third line', file=stream, flush=True)
    assert stream.inner.getvalue() == 'first line\n'
    assert stream.reason == 'No space left on device'
    assert stream.lost_lines == 2
    assert pointed == [1]  # the descriptor goes to /dev/null once, at the first failure


def test_the_loss_line_and_the_status(monkeypatch):
    out = output_streams.GuardedStream(FullDisk(room=0), 1, 'stdout')
    err = output_streams.GuardedStream(io.StringIO(), 2, 'stderr')
    monkeypatch.setattr(output_streams, '_point_at_devnull', lambda fd: None)
    monkeypatch.setattr(sys, 'stdout', out)
    monkeypatch.setattr(sys, 'stderr', err)
    assert output_streams.report_loss(0) == 0  # nothing lost: the status stays
    print('a line')
    assert output_streams.report_loss(0) == output_streams.OUTPUT_LOST_STATUS == 74
    assert output_streams.report_loss(2) == 2  # a usage error keeps its status
    assert err.inner.getvalue().splitlines()[0] == (
        LOST + '1 line to stdout (No space left on device) could not be written; the command '
        'went on to its end regardless (the files it writes were written as usual); give '
        'stdout a file on a disk with space, a terminal or /dev/null')


def _command(args, **kwargs) -> subprocess.CompletedProcess:
    """`tf_cnn_benchmarks ARGS` from the checkout, as a process of its own."""
    env = {k: v for k, v in os.environ.items() if k != 'TF_CPP_MIN_LOG_LEVEL'}
    return subprocess.run([sys.executable, os.path.join(REPO, 'tf_cnn_benchmarks.py'), *args],
                          text=True, timeout=300, cwd=REPO, env=env, **kwargs)


def _close(fd):
    return lambda: os.close(fd)


@pytest.mark.cli
def test_stdout_on_dev_full_is_one_line_and_74():
    # Before: an OSError traceback from the first print, exit 1.
    with open('/dev/full', 'w') as full:
        proc = _command(['--list_models'], stdout=full, stderr=subprocess.PIPE)
    assert proc.returncode == 74
    assert proc.stderr.startswith(LOST) and proc.stderr.count('\n') == 1
    assert 'lines to stdout (No space left on device)' in proc.stderr


@pytest.mark.cli
def test_closed_stdout_is_one_line_and_74():
    # Before (a whole run): AttributeError: 'NoneType' object has no attribute 'flush'.
    proc = _command(['--list_models'], stdout=None, stderr=subprocess.PIPE,
                    preexec_fn=_close(1))
    assert proc.returncode == 74
    assert proc.stderr.startswith(LOST) and 'to stdout (it was closed (>&-))' in proc.stderr


@pytest.mark.cli
def test_closed_stderr_puts_the_line_on_stdout_and_keeps_a_usage_error_status():
    # Before: exit 1 and nothing said (the usage error's line went nowhere).
    proc = _command(['--model=no_such_model'], stdout=subprocess.PIPE, stderr=None,
                    preexec_fn=_close(2))
    assert proc.returncode == 2
    assert proc.stdout.startswith(LOST) and 'to stderr (it was closed (2>&-))' in proc.stdout


class NotOpenForWriting(io.StringIO):
    """A stream whose descriptor is open for reading only: every write fails with EBADF."""

    def write(self, text):
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))


def test_a_descriptor_not_open_for_writing_is_said_as_a_closed_one(monkeypatch):
    # `2>&-` through a launcher script (pyenv's shim) left the script's own file, opened for
    # reading, as descriptor 2: 'to stderr (Bad file descriptor)', where `>&-` said 'to
    # stdout (it was closed (>&-))'.
    monkeypatch.setattr(output_streams, '_point_at_devnull', lambda fd: None)
    err = output_streams.GuardedStream(NotOpenForWriting(), 2, 'stderr')
    out = output_streams.GuardedStream(None, 1, 'stdout')  # closed at start
    print('a line', file=err, flush=True)
    print('a line', file=out, flush=True)
    assert (err.reason, out.reason) == ('it was closed (2>&-)', 'it was closed (>&-)')
    disk = output_streams.GuardedStream(FullDisk(room=0), 1, 'stdout')
    print('a line', file=disk, flush=True)
    assert disk.reason == 'No space left on device'  # any other failure: its own words


def _read_only_on(fd):
    """In the child: descriptor `fd` open on a file for reading only (what a shell script that
    ran Python with `2>&-` may leave there)."""
    def prepare():
        os.dup2(os.open(__file__, os.O_RDONLY), fd)
    return prepare


@pytest.mark.cli
def test_stderr_open_for_reading_only_is_said_as_closed():
    proc = _command(['--model=no_such_model'], stdout=subprocess.PIPE, stderr=None,
                    preexec_fn=_read_only_on(2))
    assert proc.returncode == 2
    assert proc.stdout.startswith(LOST) and 'to stderr (it was closed (2>&-))' in proc.stdout, (
        proc.stdout)


_FILLS_MID_RUN = textwrap.dedent('''
    import os, sys
    sys.path.insert(0, {tests!r})
    import checkout
    checkout.load()
    from tf_cnn_benchmarks import cli, console
    from tf_cnn_benchmarks.lifecycle import run_hooks
    from tf_cnn_benchmarks.runtime import runtime_env

    class DiskFills(run_hooks.RunHook):
        """stdout's disk is full from the first timed step on."""

        def before_timed(self):
            full = os.open('/dev/full', os.O_WRONLY)
            os.dup2(full, 1)
            os.close(full)

    console.finish(lambda: cli.main(sys.argv, hooks=[DiskFills()]), runtime_env.exit_process)
''')


@pytest.mark.cli
def test_a_run_whose_stdout_fills_mid_run_saves_everything(tmp_path):
    # The operator's trial: stdout on a disk that filled during the timed steps. Before: an
    # OSError traceback from log_fn, exit 1, no checkpoint, no results JSON, no database record.
    train_dir, log_dir, db = tmp_path / 'td', tmp_path / 'bl', tmp_path / 'r.sqlite'
    env = {k: v for k, v in os.environ.items() if k != 'TF_CPP_MIN_LOG_LEVEL'}
    proc = subprocess.run(
        [sys.executable, '-c', _FILLS_MID_RUN.format(tests=TESTS), '--model=trivial',
         '--batch_size=2', '--image_size=16', '--num_batches=3', '--num_warmup_batches=1',
         '--display_every=1', '--train_dir=%s' % train_dir, '--benchmark_log_dir=%s' % log_dir,
         '--results_db=%s' % db], capture_output=True, text=True, timeout=300, cwd=REPO, env=env)
    assert proc.returncode == 74, proc.stderr
    assert 'Traceback' not in proc.stderr
    assert proc.stderr.splitlines()[-1].startswith(LOST)
    assert 'to stdout (No space left on device)' in proc.stderr
    assert 'Initializing graph' in proc.stdout and 'total images/sec' not in proc.stdout
    assert (train_dir / 'model.ckpt-4.index').exists()
    [results] = list(log_dir.iterdir())
    assert json.loads(results.read_text())['num_steps'] == 3
    assert sqlite3.connect(db).execute('SELECT COUNT(*) FROM runs').fetchone() == (1,)


class GonePipe(io.StringIO):
    """A text stream whose reader went away after `room` characters (EPIPE on the next write)."""

    def __init__(self, room: int):
        super().__init__()
        self.room = room

    def write(self, text):
        if self.tell() + len(text) > self.room:
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))
        return super().write(text)


def test_a_gone_reader_raises_unless_a_run_watches_for_it(monkeypatch):
    monkeypatch.setattr(output_streams, '_point_at_devnull', lambda fd: None)
    out = output_streams.GuardedStream(GonePipe(room=5), 1, 'stdout')
    err = output_streams.GuardedStream(io.StringIO(), 2, 'stderr')
    monkeypatch.setattr(sys, 'stdout', out)
    monkeypatch.setattr(sys, 'stderr', err)
    with pytest.raises(BrokenPipeError):  # a tool: console.finish ends it with 141
        print('a line')
    assert out.reason is None and not out.reader_gone
    told = []
    output_streams.watch_reader(lambda: told.append(1))
    try:
        print('a line')
        print('another line')
    finally:
        output_streams.unwatch_reader(output_streams._reader_watchers[-1])
    assert told == [1]  # the first failure only: the stream is lost from then on
    assert out.reader_gone and out.lost_lines == 2
    # Quiet: no loss line (the reader is gone, nothing to tell), and 141 in place of 0.
    assert output_streams.report_loss(0) == output_streams.READER_GONE_STATUS == 141
    assert output_streams.report_loss(1) == 1
    assert err.inner.getvalue() == ''


def _reader_closes_after(args: list[str], last_line: str) -> tuple[int, str, list[str]]:
    """Runs `tf_cnn_benchmarks ARGS` whose stdout's reader reads up to the first line starting
    with `last_line` and then closes the pipe (`| grep -m1 ...`, `| head`); returns the exit
    status, stderr and the lines read."""
    env = {k: v for k, v in os.environ.items() if k != 'TF_CPP_MIN_LOG_LEVEL'}
    proc = subprocess.Popen([sys.executable, os.path.join(REPO, 'tf_cnn_benchmarks.py'), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=REPO, env=env)
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line)
            if line.startswith(last_line):
                break
        proc.stdout.close()
        stderr = proc.stderr.read()
        return proc.wait(timeout=300), stderr, lines
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.cli
@pytest.mark.parametrize('last_line, stopped', [
    ('1\timages/sec', 'SIGPIPE'),  # `| head -n 30`: in the timed steps, it stops the run
    ('total images/sec', None),    # `| grep -m1 'total images/sec'`: the run was complete
])
def test_a_run_whose_reader_goes_away_saves_everything_and_exits_141(tmp_path, last_line,
                                                                     stopped):
    # The trial: exit 141 with nothing on stderr, no checkpoint, no results JSON, no database
    # record, and the --train_dir and --benchmark_log_dir it had made removed again.
    train_dir, log_dir, db = tmp_path / 'td', tmp_path / 'bl', tmp_path / 'r.sqlite'
    planned = 5 if stopped is None else 2000  # a run the pipe must stop
    status, stderr, lines = _reader_closes_after(
        ['--model=trivial', '--batch_size=2', '--image_size=16', '--num_batches=%d' % planned,
         '--num_warmup_batches=1', '--display_every=1', '--train_dir=%s' % train_dir,
         '--benchmark_log_dir=%s' % log_dir, '--results_db=%s' % db], last_line)
    assert status == 141, stderr
    [results] = list(log_dir.iterdir())
    result = json.loads(results.read_text())
    if stopped is None:  # quiet, as `| head` is: no traceback, no error line
        assert stderr == ''
    else:  # one line says what stopped the run and what it kept (test_signal_exits.py)
        assert stderr == ('warning: the reader of stdout went away (SIGPIPE): the run stopped '
                          'after timed step %d of 2000, as a first Ctrl-C stops it; kept: the '
                          'checkpoint %s, the results JSON %s and the record in the results '
                          'database %s (run 1); exit status 141\n' % (
                              result['num_steps'], result['checkpoint_path'], results, db))
    assert lines[-1].startswith(last_line)
    assert result['stopped_by_signal'] == stopped
    if stopped is None:
        assert result['num_steps'] == planned
    else:  # stopped after the step whose line met the closed pipe (or the next one)
        assert 1 <= result['num_steps'] < planned
    step = result['num_steps'] + 1  # + the warm-up step
    assert (train_dir / ('model.ckpt-%d.index' % step)).exists()
    assert result['checkpoint_path'] == str(train_dir / ('model.ckpt-%d' % step))
    assert sqlite3.connect(db).execute('SELECT COUNT(*) FROM runs').fetchone() == (1,)


@pytest.mark.cli
def test_a_launcher_whose_reader_goes_away_stops_the_tasks_saving_and_exits_141(tmp_path):
    """`tf_cnn_cluster ... | grep -m1 Img/sec` said 'error: cannot start the tasks: [Errno 32]
    Broken pipe' (exit 1): the tasks now stop as on Ctrl-C (the chief saves), quietly, 141."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3', PYTHONUNBUFFERED='1')
    train_dir = tmp_path / 'train'
    proc = subprocess.Popen(
        [sys.executable, '-m', 'tools.launch_cluster', '--num_workers=2', '--',
         '--model=trivial', '--batch_size=2', '--image_size=16', '--num_batches=100000',
         '--num_warmup_batches=0', '--noresults_db', '--train_dir=%s' % train_dir],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)
    try:
        for line in proc.stdout:
            if 'Img/sec' in line:
                break
        proc.stdout.close()
        stderr = proc.stderr.read()
        assert proc.wait(timeout=300) == 141, stderr
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert stderr == ''
    assert any(name.endswith('.index') for name in os.listdir(train_dir))

"""One run at a time per --train_dir / --eval_dir (runtime/dir_hold.py, issue 33.2): the
second run's line, stale holds, release after a run, eval beside training, cluster tasks."""

import errno
import fcntl
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.lifecycle import training_loop
from tf_cnn_benchmarks.params import make_params
from tf_cnn_benchmarks.runtime import dir_hold

import helpers

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(REPO, 'tests')
HOST = socket.gethostname()
TINY = ['--model=trivial', '--batch_size=2', '--image_size=16', '--num_warmup_batches=0',
        '--init_learning_rate=0.002']
HOLDER = """
import sys
sys.path.insert(0, %r)
import checkout
checkout.load()
from tf_cnn_benchmarks.lifecycle import training_loop
from tf_cnn_benchmarks.runtime import dir_hold
hold = dir_hold.acquire(sys.argv[1], sys.argv[2], argv=['holder'])
print('HELD', flush=True)
sys.stdin.readline()
hold.release()
""" % TESTS


class Holder:
    """A separate process holding `directory` until `release()` (the other run)."""

    def __init__(self, flag, directory):
        self.proc = subprocess.Popen([sys.executable, '-c', HOLDER, flag, directory],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == 'HELD'

    def release(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(30)


def _cli(args, timeout=240):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3')
    return subprocess.run([sys.executable, 'tf_cnn_benchmarks.py'] + args, cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, '-c', 'pass'])
    proc.wait()
    return proc.pid


def _write_hold(directory, pid, host=HOST, started='2026-01-02 03:04:05 UTC'):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, dir_hold.HOLD_FILE), 'w') as f:
        f.write(json.dumps({'pid': pid, 'host': host, 'started': started, 'command': 'x'}))


# --- Which folders a run holds.
def _held(**kw):
    return dir_hold.held_dirs(make_params(model='trivial', **kw))


def test_training_holds_the_train_dir_and_eval_reads_it_without_holding(tmp_path):
    d = str(tmp_path / 't')
    assert _held(train_dir=d) == [('--train_dir', d)]
    assert _held(train_dir=d, eval=True) == []
    assert _held(train_dir=d, eval=True, eval_dir='/e') == [('--eval_dir', '/e')]
    os.makedirs(d)  # eval summaries in <train_dir>/eval once it exists
    assert _held(train_dir=d, eval=True, summary_verbosity=1) == [
        ('--eval_dir', os.path.join(d, 'eval'))]
    assert _held(train_dir=d, forward_only=True) == []  # reads its checkpoint only
    assert _held(train_dir=d, forward_only=True, summary_verbosity=1) == [('--train_dir', d)]
    assert _held(train_dir=d, eval_during_training_every_n_steps=2, eval_dir='/e') == [
        ('--train_dir', d), ('--eval_dir', '/e')]
    assert _held(train_dir=d, dry_run=True) == []


def test_in_a_cluster_only_the_chief_holds_the_train_dir():
    hosts = dict(ps_hosts=['localhost:1'], worker_hosts=['localhost:2', 'localhost:3'])
    assert _held(train_dir='/t', job_name='worker', task_index=0, **hosts) == [
        ('--train_dir', '/t')]
    assert _held(train_dir='/t', job_name='worker', task_index=1, **hosts) == []
    assert _held(train_dir='/t', job_name='ps', task_index=0, **hosts) == []


# --- Two runs, stale holds, release.
@pytest.mark.cli
@pytest.mark.timeout(300)
def test_a_second_run_stops_with_the_holder_line_and_no_traceback(tmp_path):
    train_dir = str(tmp_path / 'train')
    holder = Holder('--train_dir', train_dir)
    try:
        out = _cli(TINY + ['--num_batches=2', '--train_dir=' + train_dir])
        hold = json.load(open(os.path.join(train_dir, dir_hold.HOLD_FILE)))
    finally:
        holder.release()
    assert out.returncode == 1
    assert hold['pid'] == holder.proc.pid and hold['host'] == HOST
    assert out.stderr.strip().splitlines() == [
        'error: --train_dir %s is held by another run (pid %d on host %s, started %s; hold '
        'file %s): two runs in one folder interleave their checkpoints. Wait for it to end, '
        'stop it, or give another --train_dir'
        % (train_dir, holder.proc.pid, HOST, hold['started'],
           os.path.join(train_dir, dir_hold.HOLD_FILE))]
    assert re.fullmatch(r'\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC', hold['started'])
    assert 'Step' not in out.stdout  # nothing was built or run
    assert not os.path.exists(train_dir)  # the holder made it and removed it: nothing written
    # Released: a run trains there (the command's main in process: its exit status).
    assert helpers.run_command(*TINY, '--num_batches=1', '--train_dir=' + train_dir
                               ).returncode == 0


@pytest.mark.cli
@pytest.mark.timeout(400)
def test_two_command_runs_on_one_train_dir_and_sigterm_releases(tmp_path):
    train_dir = str(tmp_path / 'train')
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3', PYTHONUNBUFFERED='1')
    out_path = str(tmp_path / 'a.out')
    with open(out_path, 'w') as out:
        first = subprocess.Popen(
            [sys.executable, 'tf_cnn_benchmarks.py'] + TINY
            + ['--num_batches=100000', '--display_every=1', '--train_dir=' + train_dir],
            cwd=REPO, env=env, stdout=out, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 200
        while '\timages/sec:' not in open(out_path).read():
            assert first.poll() is None and time.monotonic() < deadline, open(out_path).read()
            time.sleep(0.2)
        second = _cli(TINY + ['--num_batches=2', '--train_dir=' + train_dir])
        assert second.returncode == 1
        assert ('error: --train_dir %s is held by another run (pid %d on host %s, started '
                % (train_dir, first.pid, HOST)) in second.stderr
        assert 'Traceback' not in second.stderr
        first.send_signal(signal.SIGTERM)
        assert first.wait(120) == 143
    finally:
        if first.poll() is None:
            first.kill()
    assert not os.path.exists(os.path.join(train_dir, dir_hold.HOLD_FILE))
    assert os.path.exists(os.path.join(train_dir, 'checkpoint'))


def test_a_stale_hold_of_this_host_is_taken_over_with_a_warning(tmp_path, capsys):
    train_dir = str(tmp_path / 'train')
    pid = _dead_pid()
    _write_hold(train_dir, pid)
    result = helpers.tiny_run(train_dir=train_dir, num_batches=1)
    assert result['global_step'] == 1
    err = capsys.readouterr().err
    assert ('warning: --train_dir %s: took over the stale hold of pid %d on host %s, started '
            '2026-01-02 03:04:05 UTC (that process is gone; killed, its host restarted, or it '
            'could not remove this file?). Check the latest checkpoint before trusting it'
            % (train_dir, pid, HOST)) in err
    # Released after the run: the next one starts without a word about holds.
    assert not os.path.exists(os.path.join(train_dir, dir_hold.HOLD_FILE))
    helpers.tiny_run(train_dir=train_dir, num_batches=1)
    assert 'hold' not in capsys.readouterr().err


def _taken_over(directory, capsys) -> str:
    """The take-over warning of `directory`'s stale hold, as this process acquires it."""
    capsys.readouterr()
    dir_hold.acquire('--train_dir', directory).release()
    return capsys.readouterr().err


def _lock_free(path: str) -> bool:
    """Whether no process holds the flock of `path` (this probe's own lock ends at close)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def _state(pid: int) -> str:
    with open('/proc/%d/stat' % pid) as f:
        return f.read().rsplit(')', 1)[1].split()[0]


def test_a_holder_killed_with_sigkill_is_said_gone_not_reused(tmp_path, capsys):
    """The user's case: a holder killed with SIGKILL; until its parent reaps it, its pid
    still answers kill(0) (a zombie), which used to read as 'the pid was reused'."""
    train_dir = str(tmp_path / 'train')
    holder = Holder('--train_dir', train_dir)
    holder.proc.kill()
    deadline = time.monotonic() + 30  # not proc.poll(), which would reap it
    # A zombie leader ('Z') may still have threads tearing down that keep its files (and so
    # its lock) open for a moment: wait for both.
    hold = os.path.join(train_dir, dir_hold.HOLD_FILE)
    while ((_state(holder.proc.pid) != 'Z' or not _lock_free(hold))
           and time.monotonic() < deadline):
        time.sleep(0.05)
    err = _taken_over(train_dir, capsys)
    holder.proc.wait(30)
    assert '(that process is gone (it exited; a zombie until its parent reaps it); ' in err
    assert 'reused' not in err and 'another program' not in err
    _write_hold(train_dir, holder.proc.pid)  # reaped now: no such pid
    assert ('(that process is gone; killed, its host restarted, or it could not remove this '
            'file?)') in _taken_over(train_dir, capsys)


def _program(pid: int) -> str:
    try:
        with open('/proc/%d/comm' % pid) as f:
            return f.read().strip()
    except OSError:
        return ''


def test_a_stale_holds_pid_reused_by_another_program_is_named(tmp_path, capsys):
    train_dir = str(tmp_path / 'train')
    other = subprocess.Popen(['sleep', '60'])
    try:
        # Popen returns after the fork, maybe before the exec: until then the pid's program
        # reads as '?' (the name was '?' once under load).
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _program(other.pid) != 'sleep':
            time.sleep(0.01)
        _write_hold(train_dir, other.pid, started='2026-01-02 03:04:05 UTC')  # before `other`
        assert ('(that process is gone and its pid %d now belongs to another program, sleep, '
                'started after the hold; ' % other.pid) in _taken_over(train_dir, capsys)
        # Alive since before the hold (its time in the future): only what is established.
        _write_hold(train_dir, other.pid, started='2099-01-01 00:00:00 UTC')
        said = dir_hold.stale_pid_state(json.load(open(os.path.join(train_dir,
                                                                    dir_hold.HOLD_FILE))))
        assert said == 'pid %d is alive but no longer holds the lock' % other.pid
    finally:
        other.kill()
        other.wait(30)


def test_a_hold_file_of_another_host_is_refused_with_the_fix(tmp_path):
    train_dir = str(tmp_path / 'train')
    _write_hold(train_dir, 4242, host='other-host')
    path = os.path.join(train_dir, dir_hold.HOLD_FILE)
    with pytest.raises(dir_hold.HeldError) as e:
        helpers.tiny_run(train_dir=train_dir, num_batches=1)
    assert str(e.value) == (
        '--train_dir %s is held by a run on another host (pid 4242 on host other-host, '
        'started 2026-01-02 03:04:05 UTC; hold file %s) whose lock this host cannot see. If '
        'that run is gone, delete %s; else wait for it or give another --train_dir'
        % (train_dir, path, path))
    assert os.path.exists(path)  # not ours to remove


def test_the_hold_is_released_after_an_error(tmp_path):
    train_dir = str(tmp_path / 'train')
    with pytest.raises(training_loop.NonFiniteLossError):
        helpers.tiny_run(train_dir=train_dir, num_batches=30, init_learning_rate=1e9)
    assert not os.path.exists(os.path.join(train_dir, dir_hold.HOLD_FILE))


def test_a_folder_made_for_the_hold_alone_is_removed_again(tmp_path):
    folder = str(tmp_path / 'new')
    with dir_hold.RunHolds([('--train_dir', folder)]) as holds:
        assert os.path.exists(os.path.join(folder, dir_hold.HOLD_FILE))
        # Re-entrant: the library's run inside the command's holds takes nothing again.
        with dir_hold.RunHolds([('--train_dir', folder)]) as inner:
            assert inner.holds == []
        assert os.path.exists(os.path.join(folder, dir_hold.HOLD_FILE))
        assert len(holds.holds) == 1
    assert not os.path.exists(folder)


SIGNALLED = """
import os, signal, sys
sys.path.insert(0, %r)
import checkout
checkout.load()
from tf_cnn_benchmarks.lifecycle import signals
from tf_cnn_benchmarks.runtime import dir_hold
holds = dir_hold.RunHolds([('--train_dir', sys.argv[1])]).__enter__()
assert os.path.exists(os.path.join(sys.argv[1], dir_hold.HOLD_FILE))
if sys.argv[2] == 'sigterm':  # while the graph is built: the default action, hold released
    os.kill(os.getpid(), signal.SIGTERM)
else:  # the second signal's immediate abort
    signals._abort(signal.SIGINT)
""" % TESTS


@pytest.mark.parametrize('how, status', [('sigterm', -signal.SIGTERM), ('abort', 130)])
def test_an_early_sigterm_and_the_second_signal_release_the_hold(tmp_path, how, status):
    train_dir = str(tmp_path / 'train')
    os.makedirs(train_dir)
    proc = subprocess.run([sys.executable, '-c', SIGNALLED, train_dir, how], timeout=60,
                          capture_output=True, text=True)
    assert proc.returncode == status, proc.stderr
    assert os.listdir(train_dir) == []


# --- Eval beside training.
@pytest.mark.timeout(300)
def test_eval_runs_beside_the_training_run_holding_the_train_dir(tmp_path):
    train_dir, eval_dir = str(tmp_path / 'train'), str(tmp_path / 'eval')
    helpers.tiny_run(train_dir=train_dir, num_batches=2)
    training = Holder('--train_dir', train_dir)  # a training run still going
    try:
        result = benchmark_cnn.BenchmarkCNN(helpers.tiny_params(
            train_dir=train_dir, eval=True, num_eval_batches=1, eval_dir=eval_dir),
            gpus=0).run()
        assert result['eval']['global_step'] == 2
        assert not os.path.exists(os.path.join(eval_dir, dir_hold.HOLD_FILE))
        other_eval = Holder('--eval_dir', eval_dir)  # another evaluator writing eval_dir
        try:
            with pytest.raises(dir_hold.HeldError, match=r'^--eval_dir %s is held by another '
                               r'run \(pid %d on host ' % (re.escape(eval_dir),
                                                          other_eval.proc.pid)):
                benchmark_cnn.BenchmarkCNN(helpers.tiny_params(
                    train_dir=train_dir, eval=True, num_eval_batches=1, eval_dir=eval_dir),
                    gpus=0).run()
        finally:
            other_eval.release()
    finally:
        training.release()


def test_the_live_holder_of_a_folder_is_read_without_taking_its_lock(tmp_path):
    train_dir = str(tmp_path / 'train')
    assert dir_hold.live_holder(train_dir) is None  # no folder, no hold file
    holder = Holder('--train_dir', train_dir)
    try:
        found = dir_hold.live_holder(train_dir)
        # Read only: the holder's lock is untouched, so a second hold is still refused.
        with pytest.raises(dir_hold.HeldError):
            dir_hold.acquire('--train_dir', train_dir)
    finally:
        holder.release()
    assert (found['pid'], found['host'], found['command']) == (holder.proc.pid, HOST, 'holder')
    _write_hold(train_dir, _dead_pid())
    assert dir_hold.live_holder(train_dir) is None  # stale: its process is gone
    _write_hold(train_dir, 4242, host='other-host')
    assert dir_hold.live_holder(train_dir)['host'] == 'other-host'  # cannot be told: named
    with open(os.path.join(train_dir, dir_hold.HOLD_FILE), 'w') as f:
        f.write('not json')
    assert dir_hold.live_holder(train_dir) is None
    assert dir_hold.live_holder('ram://run') is None


@pytest.mark.cli
@pytest.mark.timeout(300)
def test_eval_of_a_held_train_dir_without_a_checkpoint_names_the_training_run(tmp_path):
    # Before: 'no checkpoint to evaluate ...; train first with --train_dir=...', though a
    # training run was going there and had not saved yet.
    train_dir = str(tmp_path / 'train')
    holder = Holder('--train_dir', train_dir)  # a training run before its first save
    try:
        hold = json.load(open(os.path.join(train_dir, dir_hold.HOLD_FILE)))
        out = helpers.run_command(*TINY, '--eval', '--noresults_db', '--train_dir=' + train_dir)
    finally:
        holder.release()
    assert out.returncode == 1, out.stderr
    assert [x for x in out.stderr.splitlines() if x.startswith('error:')] == [
        'error: no checkpoint to evaluate in --train_dir %s yet: a training run holds it (pid '
        '%d on host %s, started %s; hold file %s) and has not written its first checkpoint; '
        'wait for it (--eval_interval_secs=SECS evaluates each checkpoint as it is written), '
        'or give --checkpoint_path a checkpoint elsewhere'
        % (train_dir, holder.proc.pid, HOST, hold['started'],
           os.path.join(train_dir, dir_hold.HOLD_FILE))]
    assert 'Traceback' not in out.stderr


@pytest.mark.parametrize('exists', [False, True])
def test_a_hold_file_on_a_full_disk_names_the_fix_and_leaves_the_folder_as_it_was(
        tmp_path, monkeypatch, exists):
    # Before: 'cannot make its hold file ...: No space left on device' with no fix, and the new
    # folder left behind with an empty tf_cnn_benchmarks.hold.
    folder = tmp_path / 'train'
    if exists:
        folder.mkdir()

    def full(fd, data, offset):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(dir_hold.os, 'pwrite', full)
    with pytest.raises(dir_hold.HoldFileError) as raised:
        dir_hold.acquire('--train_dir', str(folder))
    assert str(raised.value) == (
        '--train_dir %s: cannot make its hold file %s/tf_cnn_benchmarks.hold: No space left on '
        'device; free space on its disk, or give another --train_dir' % (folder, folder))
    assert os.listdir(tmp_path) == (['train'] if exists else [])
    if exists:
        assert os.listdir(folder) == []


def test_release_never_raises_and_says_which_hold_file_stays(tmp_path, monkeypatch, capsys):
    """A new user's trial: a --train_dir made read-only (chattr +i) during the run ended in a
    PermissionError traceback from release, and one replaced by a file in a
    NotADirectoryError traceback."""
    read_only = dir_hold.acquire('--train_dir', str(tmp_path / 'ro'))
    real_unlink = os.unlink

    def refuse(path, *args, **kwargs):
        if path == read_only.path:
            raise PermissionError(errno.EPERM, 'Operation not permitted', path)
        return real_unlink(path, *args, **kwargs)
    monkeypatch.setattr(dir_hold.os, 'unlink', refuse)
    read_only.release()
    assert not read_only.held and _lock_free(read_only.path)
    assert capsys.readouterr().err == (
        'warning: could not remove the hold file %s of --train_dir (Operation not permitted): '
        'the next run there takes it over as stale; delete it when no run uses the folder\n'
        % read_only.path)
    monkeypatch.setattr(dir_hold.os, 'unlink', real_unlink)
    replaced = dir_hold.acquire('--train_dir', str(tmp_path / 'gone'))
    os.unlink(replaced.path)
    os.rmdir(replaced.directory)
    with open(replaced.directory, 'w') as f:
        f.write('x')
    replaced.release()  # its hold file went with the folder: nothing to say
    assert not replaced.held and capsys.readouterr().err == ''


@pytest.mark.cli
def test_a_train_dir_replaced_by_a_file_is_one_error_line_and_the_mlperf_log_closes(
        tmp_path, monkeypatch):
    """The same trial: the final save raised the Saver's ValueError (chained to TensorFlow's
    FailedPreconditionError) and then release's traceback; MLCommons' checker found no
    run_stop."""
    pytest.importorskip('mlperf_logging')
    import shutil

    from tf_cnn_benchmarks.lifecycle import checkpoints
    train_dir = tmp_path / 'train'
    original_end = checkpoints.CheckpointHook.end

    def replace_then_save(self, result):
        shutil.rmtree(train_dir)
        train_dir.write_text('x')
        return original_end(self, result)
    monkeypatch.setattr(checkpoints.CheckpointHook, 'end', replace_then_save)
    proc = helpers.run_command(*TINY, '--num_batches=2', '--device=cpu', '--noresults_db',
                               '--ml_perf', '--train_dir=%s' % train_dir)
    assert proc.returncode == 1
    [error] = [line for line in proc.stderr.splitlines() if not line.startswith('warning:')]
    assert error == (
        'error: the run finished, but not all of its outputs were written. Not written: the '
        'checkpoint (--train_dir): the checkpoint of global step 2 could not be saved in %s: '
        '--train_dir is no longer a folder (replaced by a file during the run); give another '
        '--train_dir. Nothing else was written.' % train_dir)
    assert proc.stdout.splitlines()[-1].startswith(':::MLLOG ')
    assert '"key": "run_stop"' in proc.stdout.splitlines()[-1]


@pytest.mark.cli
def test_a_train_dir_removed_during_the_run_is_not_made_again(tmp_path, monkeypatch):
    """A last user's trial: `rm -rf` of the --train_dir during a run, and the next save made the
    folder again without the run's hold file, so a second run resumed from it while the first
    went on (exit 0 for both)."""
    import shutil

    from tf_cnn_benchmarks.lifecycle import checkpoints
    train_dir = tmp_path / 'train'
    original_end = checkpoints.CheckpointHook.end

    def remove_then_save(self, result):
        shutil.rmtree(train_dir)
        return original_end(self, result)
    monkeypatch.setattr(checkpoints.CheckpointHook, 'end', remove_then_save)
    proc = helpers.run_command(*TINY, '--num_batches=2', '--device=cpu', '--noresults_db',
                               '--train_dir=%s' % train_dir)
    assert proc.returncode == 1
    assert not train_dir.exists()
    [error] = [line for line in proc.stderr.splitlines() if line.startswith('error:')]
    assert ('the checkpoint of global step 2 could not be saved in %s: --train_dir is no '
            'longer a folder (removed during the run)' % train_dir) in error

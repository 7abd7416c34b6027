"""One run at a time per output folder: the hold of a --train_dir (and an --eval_dir).

Two training runs writing one --train_dir interleave their checkpoints and flip its
`checkpoint` state file between them, so a crash there resumes from the other run's weights
(issue 33.2). A run therefore holds each folder it writes into for as long as it runs:

  - --train_dir: held by a training run (checkpoints, summaries) and by a forward-only run
    that writes summaries there (--summary_verbosity >= 1); in a cluster only by the chief
    (worker 0; the controller with distributed_all_reduce), the one task that writes there.
    An --eval run only reads --train_dir: it never holds it, so it can evaluate the
    checkpoints of the training run holding it (finding none yet, it names that run:
    `live_holder`).
  - the folder of the eval summaries: --eval_dir, else <train_dir>/eval with
    --summary_verbosity >= 1 (lifecycle/summaries.EvalSummaryWriter), held by an --eval run
    and by a training run that evaluates during training.
  - dry runs (--dry_run, --plan_scaling) write nothing and hold nothing.
  - a folder on one of TensorFlow's file systems (gs://, ram://: runtime/file_systems.py) is
    not held: an object store has no lock to take (preflight/output_paths.py warns once).

The hold is the file `tf_cnn_benchmarks.hold` in the folder, one JSON line of the holder's pid,
host name, start time (UTC) and command line, under an exclusive `flock` on the file (atomic:
exactly one process gets it; the kernel drops it when the process ends however it ends). It is
taken before TensorFlow loads (cli.py) and again, re-entrantly, by `BenchmarkCNN.run` for
library callers. It is released (the file removed) when the run ends: normally, by an error,
by SIGINT/SIGTERM (lifecycle/signals.py), also by SIGTERM before the run's own handlers are
installed and by the second signal's immediate abort (`release_all`).

A second run finds the lock taken and stops with one line (`HeldError`) naming the holder and
the fix; nothing is built. A hold file without its lock is stale (the holder was killed with
SIGKILL or its host rebooted): when it names this host, its process is gone (or its pid was
reused by another program, which does not hold the lock) and the run takes it over with one
`warning:` line saying which of these /proc established (`stale_pid_state`). A stale file
naming another host is refused like a live hold: the lock does not say whether a process
elsewhere is alive (NFS mounted with `nolock` keeps locks per host), so the user deletes the
file once that run is known to be gone.

Before it holds them, the command makes the missing folders above its output paths, as the
original's gfile.MakeDirs did (`make_parent_folders`; which folders, and the words of their
flags, are preflight/output_paths.py's `folders_to_make`, found by the usage check).
"""

from __future__ import annotations

import calendar
import errno
import fcntl
import json
import os
import signal
import socket
import sys
import threading
import time

from .. import cnn_util, run_plan
from ..params import ParamsError, cluster_rules
from . import file_systems

HOLD_FILE = 'tf_cnn_benchmarks.hold'
_READ_TRIES = 20  # a holder writes its line right after it takes the lock: wait 1 s at most


class HeldError(cnn_util.BenchmarkError):
    """The folder is held by another run (or by a stale hold of another host)."""


class HoldFileError(cnn_util.BenchmarkError):
    """The folder or its hold file cannot be made."""


def held_dirs(p) -> list[tuple[str, str]]:
    """The folders a run holds, as (flag as the messages name it, path), in that order.

    Args:
      p: the run's Params (after the cluster was resolved: job_name, task_index set).

    Returns:
      [('--train_dir', path), ('--eval_dir', path)] or a part of it (see the module docstring);
      [] for dry runs, ps tasks and the workers that are not the chief. Remote folders are
      left out.
    """
    if p.dry_run or p.plan_scaling or p.list_models:
        return []
    # The folders first: a lock holds only local ones ('' for a remote folder or none);
    # <train_dir>/eval is where --train_dir is.
    train_dir = p.train_dir if p.train_dir and not file_systems.is_remote(p.train_dir) else ''
    eval_dir = p.eval_dir if p.eval_dir and not file_systems.is_remote(p.eval_dir) else ''
    train_dir_exists = bool(train_dir) and os.path.isdir(train_dir)
    # Then the run: whether it evaluates, and whether this task is the one that writes there.
    evaluates = run_plan.evaluates(p)
    if not cluster_rules.is_chief_task(p.job_name, p.task_index, p.variable_update):
        return []
    out = []  # the folders the run writes into
    trains = bool(p.train_dir) and not p.eval and (
        not p.forward_only or p.summary_verbosity >= 1)
    if trains and train_dir:
        out.append(('--train_dir', train_dir))
    if evaluates and p.eval_dir:
        if eval_dir:
            out.append(('--eval_dir', eval_dir))
    elif evaluates and train_dir and p.summary_verbosity >= 1 and (trains or train_dir_exists):
        out.append(('--eval_dir', os.path.join(train_dir, 'eval')))
    return out


def _now_utc() -> str:
    return time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())


def _pid_alive(pid) -> bool:
    try:
        pid = int(pid)
    except (TypeError, ValueError):
        return False
    if pid <= 0:  # os.kill(0, ...) would signal our own process group
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _proc_start(pid: int) -> tuple[str, float] | None:
    """(state letter, start time in seconds since the epoch) of process `pid` from Linux's
    /proc/PID/stat (fields 3 and 22, the start in clock ticks after /proc/stat's btime), or
    None when /proc does not tell."""
    try:
        with open('/proc/%d/stat' % pid, encoding='utf-8', errors='replace') as f:
            fields = f.read().rsplit(')', 1)[1].split()
        with open('/proc/stat', encoding='utf-8') as f:
            boot = next(float(line.split()[1]) for line in f if line.startswith('btime '))
        return fields[0], boot + int(fields[19]) / os.sysconf('SC_CLK_TCK')
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def _program(pid: int) -> str:
    """The program of process `pid` (its command line's first word's base name), or '?'."""
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            first = f.read().split(b'\0', 1)[0].decode('utf-8', 'replace')
    except OSError:
        return '?'
    return os.path.basename(first) or '?'


def stale_pid_state(holder: dict) -> str:
    """What is established about the pid of a stale hold of this host (its lock is free),
    as the take-over warning says it.

    Returns one of: 'that process is gone' (no such pid); 'that process is gone (it exited; a
    zombie until its parent reaps it)'; 'that process is gone and its pid N now belongs to
    another program, PROG, started after the hold' (/proc's start time of the pid is later
    than the hold's 'started', which has one-second resolution); 'pid N is alive but no longer
    holds the lock' (it started before the hold; what it is could not be established further).
    """
    pid = holder.get('pid')
    if not _pid_alive(pid):
        return 'that process is gone'
    pid = int(pid)
    proc = _proc_start(pid)
    if proc is not None and proc[0] in ('Z', 'X'):
        return 'that process is gone (it exited; a zombie until its parent reaps it)'
    try:
        started = calendar.timegm(time.strptime(str(holder.get('started')),
                                                '%Y-%m-%d %H:%M:%S UTC'))
    except ValueError:
        started = None
    if proc is not None and started is not None and proc[1] > started + 1.0:
        return ('that process is gone and its pid %d now belongs to another program, %s, '
                'started after the hold' % (pid, _program(pid)))
    return 'pid %d is alive but no longer holds the lock' % pid


def _read_fd(fd: int) -> dict | None:
    os.lseek(fd, 0, os.SEEK_SET)
    data = b''
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    try:
        holder = json.loads(data.decode('utf-8'))
    except (UnicodeDecodeError, ValueError):
        return None
    return holder if isinstance(holder, dict) and 'pid' in holder else None


def describe_holder(holder: dict | None) -> str:
    """'pid 4242 on host gpu7, started 2026-12-02 15:40:01 UTC' (or what is known of it)."""
    if not holder:
        return 'a process that has not written its hold file yet'
    return 'pid %s on host %s, started %s' % (holder.get('pid', '?'), holder.get('host', '?'),
                                              holder.get('started', '?'))


def live_holder(directory: str) -> dict | None:
    """The record of the run holding `directory` (its hold file's pid, host, start time and
    command), or None: no hold file, an unreadable one, a stale one of this host (its pid
    gone), or a remote folder.

    Read only: no lock is taken, since even a moment's shared lock would make a run starting
    then stop as held. A pid of this host that is alive is taken for the holder (a reused pid
    reads as one); a hold of another host is returned as it is (this host cannot tell
    whether that run is alive).
    """
    if not directory or file_systems.is_remote(directory):
        return None
    try:
        with open(os.path.join(directory, HOLD_FILE), 'rb') as f:
            holder = json.loads(f.read().decode('utf-8'))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(holder, dict) or 'pid' not in holder:
        return None
    if holder.get('host') == socket.gethostname() and not _pid_alive(holder['pid']):
        return None
    return holder


class DirHold:
    """The hold of one folder by this process (made by `acquire`; `release` gives it back).

    Attributes:
      flag: '--train_dir' or '--eval_dir'.
      directory: the folder, as given.
      path: the hold file.
      took_over: the stale holder's record when this hold replaced one, else None.
    """

    def __init__(self, flag: str, directory: str, fd: int, made_dir: bool,
                 took_over: dict | None):
        self.flag, self.directory = flag, directory
        self.path = os.path.join(directory, HOLD_FILE)
        self._fd = fd
        self._made_dir = made_dir
        self.took_over = took_over

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Removes the hold file and drops the lock (idempotent; never raises). A folder the
        hold made and nothing else was written into is removed too. A hold file that cannot
        be removed (the folder made read-only during the run) gets one `warning:` line; the
        lock is dropped all the same, so the next run there takes the file over as stale. One
        whose folder is gone (removed, or replaced by a file) went with it: nothing is said."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.unlink(self.path)  # before the lock goes: a waiter re-checks the file it locked
        except (FileNotFoundError, NotADirectoryError):
            pass
        except OSError as e:
            try:
                cnn_util.warn('could not remove the hold file %s of %s (%s): the next run there '
                              'takes it over as stale; delete it when no run uses the folder'
                              % (self.path, self.flag, e.strerror or e))
            except (OSError, ValueError):  # stderr closed or full: the release goes on
                pass
        try:
            os.close(fd)
        except OSError:
            pass
        if self._made_dir:
            try:
                os.rmdir(self.directory)
            except OSError:  # checkpoints or summaries were written there: they stay
                pass


def _record(argv: list[str] | None) -> bytes:
    return (json.dumps({'pid': os.getpid(), 'host': socket.gethostname(), 'started': _now_utc(),
                        'command': ' '.join(argv if argv is not None else sys.argv)})
            + '\n').encode('utf-8')


def _held_message(flag: str, directory: str, path: str, holder: dict | None,
                  live: bool) -> str:
    what = describe_holder(holder)
    if live:
        return ('%s %s is held by another run (%s; hold file %s): two runs in one folder '
                'interleave their checkpoints. Wait for it to end, stop it, or give another %s'
                % (flag, directory, what, path, flag))
    return ('%s %s is held by a run on another host (%s; hold file %s) whose lock this host '
            'cannot see. If that run is gone, delete %s; else wait for it or give another %s'
            % (flag, directory, what, path, path, flag))


def acquire(flag: str, directory: str, argv: list[str] | None = None) -> DirHold:
    """Takes the hold of `directory` (made when missing; its parent must exist).

    Args:
      flag: the flag naming the folder, for messages ('--train_dir').
      directory: the folder.
      argv: the command line recorded in the hold file (default sys.argv).

    Returns:
      The DirHold. A stale hold of this host is taken over with one `warning:` line.

    Raises:
      HeldError: another process holds the folder, or a stale hold names another host.
      HoldFileError: the folder or the hold file cannot be made (preflight/output_paths.py
        checks the folders first), a full disk included: the line says the fix, and the folder
        is left as it was (the hold file this made removed, the folder too when this made it).
    """
    path = os.path.join(directory, HOLD_FILE)
    made_dir = False
    try:
        made_dir = _make_dir(directory)
        return _acquire(flag, directory, path, made_dir, argv)
    except OSError as e:
        if made_dir:
            try:
                os.rmdir(directory)
            except OSError:
                pass
        fix = ('free space on its disk, or give another %s' % flag
               if e.errno in (errno.ENOSPC, errno.EDQUOT)
               else 'give another %s (a folder this user can write)' % flag)
        raise HoldFileError('%s %s: cannot make its hold file %s: %s; %s' % (
            flag, directory, path, e.strerror or e, fix)) from None


def _make_dir(directory: str) -> bool:
    if os.path.isdir(directory):
        return False
    try:
        os.mkdir(directory)
    except FileExistsError:  # another task made it meanwhile
        return False
    return True


def _acquire(flag, directory, path, made_dir, argv) -> DirHold:
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                os.close(fd)
                raise
            holder = None
            for _ in range(_READ_TRIES):
                holder = _read_fd(fd)
                if holder is not None:
                    break
                time.sleep(0.05)
            os.close(fd)
            raise HeldError(_held_message(flag, directory, path, holder, live=True)) from None
        try:
            now = os.stat(path)
        except FileNotFoundError:
            now = None
        mine = os.fstat(fd)
        if now is None or (now.st_dev, now.st_ino) != (mine.st_dev, mine.st_ino):
            os.close(fd)  # the holder released it between our open and our lock: again
            continue
        break
    previous = _read_fd(fd)
    if previous is None and os.fstat(fd).st_size:
        cnn_util.warn('%s %s: took over a hold file that names no holder (%s, unreadable)'
                      % (flag, directory, path))
    if previous is not None and previous.get('host') != socket.gethostname():
        os.close(fd)
        raise HeldError(_held_message(flag, directory, path, previous, live=False))
    if previous is not None:
        gone = stale_pid_state(previous)
        cnn_util.warn('%s %s: took over the stale hold of %s (%s; killed, its host '
                      'restarted, or it could not remove this file?). Check the latest '
                      'checkpoint before trusting it'
                      % (flag, directory, describe_holder(previous), gone))
    record = _record(argv)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, record, 0)
        os.fsync(fd)
    except OSError:  # a full disk: no empty hold file left behind (the lock is ours)
        if previous is None:
            os.remove(path)
        os.close(fd)
        raise
    return DirHold(flag, directory, fd, made_dir, previous)


_ACTIVE: dict[str, DirHold] = {}
_LOCK = threading.Lock()
_PREVIOUS_SIGTERM: list = []


def release_all() -> None:
    """Releases every hold of this process (before an immediate exit: lifecycle/signals.py)."""
    locked = _LOCK.acquire(timeout=1.0)  # called from the signal watcher thread too
    try:
        holds = list(_ACTIVE.values())
        _ACTIVE.clear()
    finally:
        if locked:
            _LOCK.release()
    for hold in holds:
        hold.release()


def _on_sigterm(signum, frame):
    """SIGTERM while the default action holds (graph building, before the run's handlers):
    release, then die of the signal as the default would."""
    del frame
    release_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


class RunHolds:
    """The holds of one run (a context manager): `with hold_run_dirs(p): ...`.

    Re-entrant within a process: a folder this process holds already is not taken again (the
    command holds before TensorFlow loads, then BenchmarkCNN.run asks again); only the
    outermost RunHolds releases it.
    """

    def __init__(self, wanted: list[tuple[str, str]], argv: list[str] | None = None):
        self._wanted = wanted
        self._argv = argv
        self.holds: list[DirHold] = []
        self._sigterm_installed = False

    def __enter__(self):
        try:
            for flag, directory in self._wanted:
                key = os.path.realpath(directory)
                with _LOCK:
                    if key in _ACTIVE and _ACTIVE[key].held:
                        continue
                hold = acquire(flag, directory, self._argv)
                with _LOCK:
                    _ACTIVE[key] = hold
                self.holds.append(hold)
        except BaseException:
            self._release()
            raise
        if (self.holds and threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL):
            signal.signal(signal.SIGTERM, _on_sigterm)
            self._sigterm_installed = True
        return self

    def _release(self) -> None:
        with _LOCK:
            for hold in self.holds:
                key = os.path.realpath(hold.directory)
                if _ACTIVE.get(key) is hold:
                    del _ACTIVE[key]
        for hold in self.holds:
            hold.release()
        self.holds = []

    def __exit__(self, *exc):
        if self._sigterm_installed and signal.getsignal(signal.SIGTERM) is _on_sigterm:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        self._release()
        return False


def make_parent_folders(wanted) -> list[str]:
    """Makes the missing local folders `wanted` names, outermost first, and returns one line
    per flag that needed some, e.g. 'Made the missing folders /tmp/a, /tmp/a/b for
    --train_dir=/tmp/a/b/run1': [] when none was missing.

    Args:
      wanted: (the flag as a message names it, folder) pairs, outermost first
        (preflight/output_paths.folders_to_make).

    Raises:
      ParamsError: a folder cannot be made after all (the usage check tried it first; another
        process may have changed the disk meanwhile).
    """
    made: dict[str, list[str]] = {}
    for flag, folder in wanted:
        try:
            os.mkdir(folder)
        except FileExistsError:  # another task of the cluster made it meanwhile
            continue
        except OSError as e:
            raise ParamsError('%s cannot be written: cannot create %s: %s. Choose another '
                              'path.' % (flag, folder, e.strerror or e)) from None
        made.setdefault(flag, []).append(folder)
    return ['Made the missing folder%s %s for %s' % (
        's' if len(folders) > 1 else '', ', '.join(folders), flag)
        for flag, folders in made.items()]


def hold_run_dirs(p, argv: list[str] | None = None) -> RunHolds:
    """The holds of the folders `held_dirs(p)` names; take them with `with`.

    Raises (on entering):
      HeldError: a folder is held by another run (see `acquire`).
    """
    return RunHolds(held_dirs(p), argv)

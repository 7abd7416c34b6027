"""Starts a ps/worker cluster of tf_cnn_benchmarks tasks on this machine and waits for it.
Without arguments it starts a real cluster at once: 1 ps and 2 worker tasks training the
default model (trivial, 100 steps; about 18 s and 140 lines on a 2-core CPU); --help and
--version start nothing.

    python -m tools.launch_cluster --num_ps=1 --num_workers=2 -- \\
        --model=resnet50 --batch_size=32 --variable_update=parameter_server

    tf_cnn_cluster --num_workers=2 -- --variable_update=collective_all_reduce --num_batches=50

Every flag after `--` (or any flag this launcher does not know) is passed to every task; the
launcher adds --job_name, --task_index, --ps_hosts, --worker_hosts and, for
--variable_update=distributed_all_reduce, --controller_host with a controller task. Without host
lists, each task gets a free port on --host (default 127.0.0.1, a loopback address; TensorFlow's
server still listens on that port of every interface, and each task prints a `note:` line
saying so: docs/clusters.md, Security). With --ps_hosts /
--worker_hosts / --controller_host the tasks use those addresses, still as processes on this
machine (for several machines, run the shell recipe of docs/clusters.md on each one).

Output: each task's lines (stdout and stderr), prefixed with its role ('[ps0] ', '[worker1] ',
'[controller] '), also written to <role>.log in --log_dir when given; 'error: ...' lines (the
tasks' and the launcher's own) go to stderr, the rest to stdout. The same error line from
several tasks (a bad flag makes every task fail alike) is printed once, naming them all:
'[ps0,worker0,worker1] error: ...' (task error lines wait up to COLLAPSE_SECS for this). At the
end the launcher prints each worker's own images/sec (its `this worker's images/sec` line) and
the cluster total. When a task exits with a non-zero status, or on Ctrl-C / SIGTERM / SIGHUP, or
after --timeout_secs, or when the reader of its stdout goes away (`| head`: exit 141, quietly),
every other task is stopped (workers and controller first, so a chief can save while the ps
still serves, then the ps tasks: SIGTERM, then SIGKILL after --kill_grace_secs) and the launcher
exits non-zero naming the task: the task's status, 130 on Ctrl-C, 143 on SIGTERM, 129 on SIGHUP
(as a run and the sweep do), 124 on timeout; after Ctrl-C, SIGTERM or the timeout it still
prints the workers' images/sec and the cluster total the tasks printed as they stopped (or why
there is none: a worker stopped in its start-up or warm-up). A task stopped by a signal of its
own (130 after SIGINT, 143 after SIGTERM, 129 after SIGHUP: it saved first) is named as
interrupted, not failed: 'worker0 was interrupted (SIGINT, exit status 130)', and the launcher
exits with its status. A task killed by SIGKILL is named as killed (the out-of-memory killer, or
a kill -9: give fewer --num_workers). After a task failed, the warning and error lines of the
tasks being stopped follow from it: they go to their logs only, and one `[launcher]` line counts
them. The chief's MLPerf lines (`:::MLLOG ...`, --ml_perf) are relayed without the prefix, so
`grep '^:::MLLOG'` finds them as in a run on one host. Checked once, before any task starts
(tools/cluster_checks.py: one `error:` line): exit status 2 for bad launcher flags (a --host
that is not this machine's, a --log_dir that cannot be made), task flags the command would
refuse before TensorFlow loads, or tasks that cannot fit this host's available memory together
(tools/cluster_memory.py); 1 for a --data_dir without a dataset, as the command.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import threading
import time

from tf_cnn_benchmarks import cnn_util, console
from tf_cnn_benchmarks.hardware import user_dirs
from tf_cnn_benchmarks.metrics import cluster_tasks
from tf_cnn_benchmarks.runtime import output_streams
from tf_cnn_benchmarks.tools import cluster_checks, command_parser
from tf_cnn_benchmarks.tools.launch_plan import plan_tasks

LaunchError = cluster_checks.LaunchError  # the checks' refusal, as callers of the launcher name it

_TOTAL = re.compile(r'^total images/sec: ([0-9.]+)')
# A worker of several: its own figure, after its `total images/sec` (the cluster's rate as it
# sees it: cluster/figures.py).
_OWN = re.compile(r"^this worker's images/sec: ([0-9.]+)")
# A worker that timed no step (stopped before its first timed step): its reason.
_NO_TOTAL = re.compile(r'^total images/sec: none \((.*)\)$')
# The chief's cluster figure: `cluster images/sec: X (...)`; before the words `total
# images/sec` were kept for the total line alone, `cluster total images/sec: X` (old logs).
_CLUSTER_TOTAL = re.compile(r'^cluster (?:total )?images/sec: ([0-9.]+)')
# Seconds a task's error line waits for the same line from other tasks before it is printed.
COLLAPSE_SECS = 1.0
# MLPerf's log lines (lifecycle/mlperf_log.py; the chief prints them): relayed without a prefix.
MLLOG_PREFIX = ':::MLLOG'
ENTRY_SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            'tf_cnn_benchmarks.py')


def _status_clause(roles: str, status: int) -> str:
    """'worker0 exited with status 1'; a task a SIGINT or SIGTERM stopped (`stopped_by`) as
    interrupted; for another signal, what sent it and the fix."""
    signum = stopped_by(status)
    if signum is not None:
        return '%s %s interrupted (%s, exit status %d)' % (
            roles, 'were' if ',' in roles else 'was', signum.name, status)
    if status == -signal.SIGKILL:
        return ('%s was killed (SIGKILL: the kernel\'s out-of-memory killer, or a kill -9); '
                'if memory ran out, give fewer --num_workers' % roles)
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = 'signal %d' % -status
        return '%s was stopped by %s' % (roles, name)
    return '%s exited with status %d' % (roles, status)


def _roles_text(roles: list[str]) -> str:
    """'worker0, worker1' or, past 4 roles, 'worker0, worker1, worker2 and 61 more'."""
    return ', '.join(roles) if len(roles) <= 4 else '%s and %d more' % (
        ', '.join(roles[:3]), len(roles) - 3)


class Task:
    """One running task: its process, a thread copying its output with a role prefix."""

    def __init__(self, spec: dict, command: list[str], out, lock, log_dir: str | None,
                 err=None, on_error=None):
        """Starts the task.

        Args:
          spec: a plan_tasks entry.
          command: the interpreter and script; spec['args'] are appended.
          out, err: streams for the task's lines and for its 'error: ...' lines.
          lock: serialises writes to out and err.
          log_dir: folder of <role>.log, or None.
          on_error: called with (role, line) for each 'error: ...' line instead of writing it
            to err (the launcher collapses identical lines of several tasks).
        """
        self.role = spec['role']
        self._on_error = on_error
        self.job = spec['job']
        self.images_per_sec = None
        self.untimed = None  # why, when it printed `total images/sec: none (why)`
        self.cluster_images_per_sec = None
        self._muted = False
        self.muted_lines = 0  # warning and error lines not shown since `mute`
        self._out, self._err, self._lock = out, err or out, lock
        self._log = open(os.path.join(log_dir, self.role + '.log'), 'w') if log_dir else None
        env = dict(os.environ, PYTHONUNBUFFERED='1')
        env[cluster_tasks.LAUNCHER_ENV] = str(os.getpid())  # the tasks' host load: its own
        self.proc = subprocess.Popen(command + spec['args'], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env=env, start_new_session=True)
        self._thread = threading.Thread(target=self._copy, daemon=True, name=self.role)
        self._thread.start()

    def _copy(self) -> None:
        for raw in self.proc.stdout:
            line = raw.decode('utf-8', 'replace').rstrip('\n')
            match = _TOTAL.match(line) or _OWN.match(line)  # its own figure comes second
            if match:
                self.images_per_sec = float(match.group(1))
            match = _NO_TOTAL.match(line)
            if match:
                self.untimed = match.group(1)
            match = _CLUSTER_TOTAL.match(line)
            if match:
                self.cluster_images_per_sec = float(match.group(1))
            if self._muted and line.startswith(('error: ', 'warning: ')):
                with self._lock:  # flush_errors counts there too
                    self.muted_lines += 1
            elif line.startswith('error: ') and self._on_error is not None:
                self._on_error(self.role, line)
            else:
                stream = self._err if line.startswith('error: ') else self._out
                # The chief's MLPerf lines stay as the package printed them (docs' grep).
                prefix = '' if line.startswith(MLLOG_PREFIX) else '[%s] ' % self.role
                with self._lock:
                    stream.write('%s%s\n' % (prefix, line))
                    stream.flush()
            if self._log:
                self._log.write(line + '\n')
                self._log.flush()

    def mute(self) -> None:
        """From now on its warning and error lines go to its log only, counted in
        `muted_lines`: the task is being stopped because another one failed."""
        self._muted = True

    def finish_output(self, timeout: float = 5.0) -> None:
        self._thread.join(timeout)
        if self._log:
            self._log.close()

    def signal(self, signum: int) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signum)
            except ProcessLookupError:
                pass  # exited between poll() and killpg()


class Launcher:
    """Starts the tasks, relays their output, waits, and tears everything down on failure."""

    def __init__(self, opts, tasks: list[dict], out=None, err=None):
        self.opts = opts
        self.specs = tasks
        self.out, self.err = out or sys.stdout, err or sys.stderr  # console's guarded streams
        self.lock = threading.Lock()
        # Set when the reader of stdout went away (`| head`): the tasks stop as on SIGINT.
        self.reader_gone = threading.Event()
        self.tasks: list[Task] = []
        # Task error lines not printed yet: line -> [first arrival (monotonic s), roles].
        self._pending_errors: dict[str, list] = {}
        self._shown_errors: set[str] = set()

    def task_error(self, role: str, line: str) -> None:
        """Holds a task's 'error: ...' line back to collapse it with the same line of others.

        A line already printed for another task is not printed again.
        """
        with self.lock:
            if line in self._shown_errors:
                return
            self._pending_errors.setdefault(line, [time.monotonic(), []])[1].append(role)

    def flush_errors(self, min_age_secs: float = 0.0, from_roles: set | None = None) -> None:
        """Prints the held error lines at least min_age_secs old, once each, to stderr:
        `[ps0,worker0,worker1] error: ...` (the tasks that printed it, in task order).

        With `from_roles` (the failed tasks), the lines of the other tasks are counted as
        muted instead (`Task.mute`): they follow from the failure."""
        order = {spec['role']: i for i, spec in enumerate(self.specs)}
        by_role = {t.role: t for t in self.tasks}
        with self.lock:
            now = time.monotonic()
            for line, (since, roles) in list(self._pending_errors.items()):
                if now - since >= min_age_secs:
                    roles = sorted(set(roles), key=lambda role: order.get(role, len(order)))
                    if from_roles is not None:
                        for role in roles:
                            if role not in from_roles and role in by_role:
                                by_role[role].muted_lines += 1
                        roles = [role for role in roles if role in from_roles]
                        if not roles:
                            del self._pending_errors[line]
                            continue
                    self.err.write('[%s] %s\n' % (','.join(roles), line))
                    self._shown_errors.add(line)
                    del self._pending_errors[line]
            self.err.flush()

    def _await_same_errors(self, failed: Task) -> None:
        """After a task failed: lets its output drain and gives the other tasks up to
        COLLAPSE_SECS after its first held error line to report the same error."""
        failed.finish_output()
        with self.lock:
            oldest = min((since for since, _ in self._pending_errors.values()), default=None)
        if oldest is None:
            return
        while (time.monotonic() < oldest + COLLAPSE_SECS
               and any(t.proc.poll() is None for t in self.tasks)):
            time.sleep(0.05)
        for task in self.tasks:
            if task.proc.poll() is not None:
                task.finish_output(timeout=1.0)

    def say(self, text: str) -> None:
        """Prints `[launcher] text`: on stderr when text is an 'error: ...' line."""
        stream = self.err if text.startswith('error: ') else self.out
        with self.lock:
            stream.write('[launcher] %s\n' % text)
            stream.flush()

    def start(self) -> None:
        """Starts every task; from now until `wait` returns, a reader of stdout that goes away
        (`| head`) sets `reader_gone` instead of raising where the launcher printed."""
        output_streams.watch_reader(self.reader_gone.set)
        command = [self.opts.python, ENTRY_SCRIPT]
        if self.opts.log_dir:
            os.makedirs(self.opts.log_dir, exist_ok=True)
        for spec in self.specs:
            task = Task(spec, command, self.out, self.lock, self.opts.log_dir, self.err,
                        on_error=self.task_error)
            self.tasks.append(task)
            self.say('started %s (pid %d): %s' % (task.role, task.proc.pid,
                                                  ' '.join(spec['args'][:2])))

    def stop_all(self) -> None:
        """Stops every running task: workers and controller first (SIGTERM lets a chief finish
        its step and save its checkpoint while the ps still serves), then the ps tasks; each
        group gets SIGKILL when still running after --kill_grace_secs."""
        groups = [[t for t in self.tasks if t.job != 'ps'],
                  [t for t in self.tasks if t.job == 'ps']]
        for group in groups:
            for task in group:
                task.signal(signal.SIGTERM)
            deadline = time.monotonic() + self.opts.kill_grace_secs
            while time.monotonic() < deadline and any(t.proc.poll() is None for t in group):
                time.sleep(0.05)
            late = [task for task in group if task.proc.poll() is None]
            if late:
                self.say('%s did not stop within %g s; killing %s' % (
                    _roles_text([t.role for t in late]), self.opts.kill_grace_secs,
                    'it' if len(late) == 1 else 'them'))
            for task in late:
                task.signal(signal.SIGKILL)
        for task in self.tasks:
            task.proc.wait()
            task.finish_output()
        self.flush_errors()

    def kill_all(self) -> None:
        """SIGKILL to every task still running (a second Ctrl-C while `stop_all` waits)."""
        for task in self.tasks:
            if task.proc.poll() is None:
                task.signal(signal.SIGKILL)
        for task in self.tasks:
            task.proc.wait()
            task.finish_output()

    def wait(self) -> int:
        """Waits for every task; returns the launcher's exit status."""
        try:
            return self._wait()
        finally:
            output_streams.unwatch_reader(self.reader_gone.set)

    def _wait(self) -> int:
        deadline = (time.monotonic() + self.opts.timeout_secs) if self.opts.timeout_secs else None
        while True:
            self.flush_errors(COLLAPSE_SECS)
            failed = [t for t in self.tasks if t.proc.poll() not in (None, 0)]
            if failed:
                first = failed[0]
                self._await_same_errors(first)
                for task in self.tasks:  # what they say while stopped follows from the failure
                    if task.proc.poll() is None:
                        task.mute()
                self.flush_errors(from_roles={t.role for t in self.tasks
                                              if t.proc.poll() not in (None, 0)})
                self.say('error: %s' % self._failures())
                self.stop_all()
                self._say_muted()
                status = first.proc.returncode
                return 128 + stopped_by(status) if stopped_by(status) else max(status, 1)
            if all(t.proc.poll() == 0 for t in self.tasks):
                for task in self.tasks:
                    task.finish_output()
                self.flush_errors()
                self.summary()
                return 0
            if self.reader_gone.is_set():  # saving their work, quietly: exit 141
                self.stop_all()
                return 128 + signal.SIGPIPE
            if deadline is not None and time.monotonic() > deadline:
                running = [t.role for t in self.tasks if t.proc.poll() is None]
                self.say('error: timeout after %g s (--timeout_secs); still running: %s; '
                         'stopping them' % (self.opts.timeout_secs, ', '.join(running)))
                self.stop_all()
                self.summary(stopped=True)
                return 124
            time.sleep(0.1)

    def _failures(self) -> str:
        """'worker0 exited with status 1; stopping the other tasks', one clause per status; a
        task a signal stopped 'was interrupted (SIGINT, exit status 130)'."""
        by_status: dict[int, list[str]] = {}
        for task in self.tasks:
            if task.proc.poll() not in (None, 0):
                by_status.setdefault(task.proc.returncode, []).append(task.role)
        text = '; '.join(_status_clause(_roles_text(roles), status)
                         for status, roles in by_status.items())
        if any(task.proc.poll() is None for task in self.tasks):
            text += '; stopping the other tasks'
        return text

    def _say_muted(self) -> None:
        """One line for the warning and error lines of the tasks stopped after a failure
        (`Task.mute`), which the terminal did not show."""
        muted = {t.role: t.muted_lines for t in self.tasks if t.muted_lines}
        if muted:
            where = ('in %s' % os.path.join(self.opts.log_dir, '<role>.log')
                     if self.opts.log_dir else 'not kept (--log_dir=DIR keeps every line)')
            self.say('%s of the stopped tasks (%s) left out: %s' % (
                cnn_util.counted(sum(muted.values()), 'warning and error line'),
                _roles_text(list(muted)), where))

    def summary(self, stopped: bool = False) -> None:
        """Each worker's own images/sec (its `this worker's images/sec` line; a cluster of
        one worker, or a worker that printed no such line: its `total images/sec`), then the
        cluster total: the chief's `cluster images/sec` line (`cluster total images/sec` in
        older versions) when it printed one, else the workers' sum. These lines say `cluster
        images/sec`, never `total images/sec` (only the tasks' total lines hold those words).

        Args:
          stopped: the launcher stopped the tasks (Ctrl-C, SIGTERM, --timeout_secs): their
            figures cover the steps run until then; a worker that printed none (stopped in
            its start-up or warm-up, which time nothing) makes one line saying why there is
            no cluster total instead of a sum of the others.

        A worker whose total line said it timed nothing (`total images/sec: none (why)`:
        stopped at its first timed step) gets that line, and leaves the total out the same
        way, stopped by the launcher or not.
        """
        total = 0.0
        missing, untimed = [], []
        for task in self.tasks:
            if task.job != 'worker':
                continue
            if task.untimed is not None:
                self.say('%s images/sec: none (%s)' % (task.role, task.untimed))
                untimed.append(task.role)
                continue
            if task.images_per_sec is None:
                missing.append(task.role)
                continue
            self.say('%s images/sec: %.2f' % (task.role, task.images_per_sec))
            total += task.images_per_sec
        reported = [t.cluster_images_per_sec for t in self.tasks
                    if t.cluster_images_per_sec is not None]
        if reported:
            self.say('cluster images/sec: %.2f' % reported[0])
        elif stopped and missing:
            self.say('no cluster images/sec: %s stopped before printing %s total '
                     '(in the start-up or the warm-up, which time nothing)' % (
                         _roles_text(missing), 'its' if len(missing) == 1 else 'their'))
        elif untimed:
            self.say('no cluster images/sec: %s timed no step' % _roles_text(untimed))
        elif total:
            self.say('cluster images/sec: %.2f (sum of the workers)' % total)


def stopped_by(status: int) -> signal.Signals | None:
    """SIGINT, SIGTERM or SIGHUP when a task's exit status says a signal stopped it: 128 + N
    after its clean stop (tf_cnn_benchmarks saves, then exits 130, 143 or 129), -N when the
    signal killed it; None otherwise."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if status in (128 + signum, -signum):
            return signum
    return None


class _Parser(command_parser.CommandParser):
    """argparse's errors as one `error:` line (LaunchError), not a usage block."""

    usage_error = LaunchError


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = _Parser(
        prog='tf_cnn_cluster', description=__doc__.split('\n\n')[0],
        epilog='Flags after -- (and unknown flags) go to every tf_cnn_benchmarks task.')
    parser.add_argument('--num_ps', type=int, default=None,
                        help='ps tasks (default: 1 for parameter_server and '
                             'distributed_replicated, else 0)')
    parser.add_argument('--num_workers', type=int, default=2, help='worker tasks (default 2)')
    parser.add_argument('--host', default='127.0.0.1',
                        help='an address of this machine to pick free ports on and to name '
                             'in the host lists (default 127.0.0.1: loopback; TensorFlow\'s '
                             'servers listen on every interface whatever it is)')
    parser.add_argument('--ps_hosts', help='host:port list of the ps tasks (instead of '
                                           '--num_ps and free ports)')
    parser.add_argument('--worker_hosts', help='host:port list of the workers')
    parser.add_argument('--controller_host', help='host:port of the controller '
                                                  '(distributed_all_reduce)')
    parser.add_argument('--log_dir', type=user_dirs.expand_home,
                        help='also write each task\'s output to <log_dir>/<role>.log')
    parser.add_argument('--timeout_secs', type=float, default=0,
                        help='stop everything after this many seconds and exit 124 '
                             '(0: no limit)')
    parser.add_argument('--kill_grace_secs', type=float, default=5.0,
                        help='seconds between SIGTERM and SIGKILL when stopping tasks')
    parser.add_argument('--version', action='store_true',  # answered in main, never parsed
                        help=console.VERSION_HELP)
    parser.add_argument('--python', default=sys.executable, type=user_dirs.expand_home,
                        help='Python interpreter of the tasks')
    if '--' in argv:
        cut = argv.index('--')
        opts, unknown = parser.parse_known_args(argv[:cut])
        typo = _launcher_typo(unknown, parser)
        unknown += argv[cut + 1:]
    else:
        opts, unknown = parser.parse_known_args(argv)
        typo = _launcher_typo(unknown, parser)
    if typo:
        raise LaunchError(typo)
    cluster_checks.check_launcher_values(opts)
    return opts, unknown


def _launcher_typo(given: list[str], parser: argparse.ArgumentParser) -> str | None:
    """command_parser.misspelt_option for the launcher's options (`given`: the unknown
    arguments before `--`)."""
    return command_parser.misspelt_option(
        given, [o[2:] for a in parser._actions for o in a.option_strings if o.startswith('--')],
        'tf_cnn_cluster')

def main(argv: list[str]) -> int:
    """Runs the launcher (argv: its arguments, without the program name); returns its exit
    status."""
    version = console.answer_version(argv)
    if version is not None:
        return version
    try:
        opts, passthrough = parse_args(argv)
        tasks = plan_tasks(opts, passthrough)
        cluster_checks.check_memory(tasks, cluster_checks.check_task_flags(tasks))
        cluster_checks.check_log_dir(opts.log_dir, [task['role'] for task in tasks])  # makes it
    except LaunchError as e:
        print('error: %s' % e, file=sys.stderr, flush=True)
        return e.status
    launcher = Launcher(opts, tasks)
    # SIGINT explicitly too: a launcher started from a background job (`cmd &` in a script, a CI
    # step) inherits SIGINT ignored, and Python then installs no KeyboardInterrupt for it.
    # SIGHUP ignored from the start (`nohup tf_cnn_cluster ... &`) stays ignored.
    previous = {signum: signal.signal(signum, _raise_interrupt)
                for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
                if signum != signal.SIGHUP or signal.getsignal(signum) != signal.SIG_IGN}
    try:
        launcher.start()
        return launcher.wait()
    except OSError as e:  # a log file or a task that cannot be created
        launcher.say('error: cannot start the tasks: %s; stopping them' % e)
        launcher.stop_all()
        output_streams.unwatch_reader(launcher.reader_gone.set)
        return 1
    except KeyboardInterrupt as e:
        signum = getattr(e, 'signum', signal.SIGINT)
        launcher.say('interrupted%s; stopping every task' % (
            '' if signum == signal.SIGINT else ' (%s)' % signal.Signals(signum).name))
        try:
            launcher.stop_all()
        except KeyboardInterrupt as again:  # a second signal: no more grace for the tasks
            for other in previous:
                signal.signal(other, signal.SIG_IGN)
            second = getattr(again, 'signum', signal.SIGINT)
            launcher.say('interrupted again%s; killing every task' % (
                '' if second == signal.SIGINT else ' (%s)' % signal.Signals(second).name))
            launcher.kill_all()
        for other in previous:  # every task has stopped: nothing left to interrupt
            signal.signal(other, signal.SIG_IGN)
        launcher.summary(stopped=True)  # the figures the tasks printed as they stopped
        return 128 + signum  # 130 after Ctrl-C, 143 after SIGTERM, 129 after SIGHUP, as a run
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class Interrupted(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP received by the launcher (`signum`): it stops every task, then
    exits 128 + signum."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_interrupt(signum, frame):
    del frame
    raise Interrupted(signum)


def run_main() -> None:
    """Console entry point of the `tf_cnn_cluster` command."""
    console.finish(lambda: main(sys.argv[1:]))


if __name__ == '__main__':
    run_main()

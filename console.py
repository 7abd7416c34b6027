"""The entry points of the console commands (setup.py's console_scripts): Ctrl-C ends quietly
from the first moment.

Python turns Ctrl-C into KeyboardInterrupt, and one that landed while a command's modules were
still importing (absl, numpy, the command's own: the first ~0.3 s of every command, --help
included) printed a traceback. Each entry point here installs a SIGINT handler that ends the
process with one line, `error: interrupted`, and exit status 130 (128 + SIGINT, what a shell
reports for a command ended by Ctrl-C) before it imports its command; once that has loaded,
Ctrl-C is KeyboardInterrupt again, which the commands handle themselves (cli.py,
lifecycle/signals.py), and one they let out ends the same way. Where SIGINT is ignored (a job
started in the background by a shell without job control), it stays ignored: here, and in the
run (lifecycle/signals.py handled_signals), so a later Ctrl-C in that terminal stops nothing.

A command that Ctrl-C ended (status 130: a run stopped cleanly after it, a sweep or a cluster
interrupted, or the import above) ends by SIGINT itself, as Python does after an uncaught
KeyboardInterrupt: `finish` lets one quiet KeyboardInterrupt out, and the interpreter, once it
has shut down as usual (threads joined, atexit handlers run, output flushed), sets SIGINT's
default action and sends it to itself (CPython's Modules/main.c, exit_sigint). A shell then
reports 130 and, as the "wait and cooperative exit" convention has it, stops the script or
loop that ran the command (`for i in 1 2; do tf_cnn_benchmarks ...; done`: Ctrl-C stops the
loop, not run 1 alone); a Python caller's subprocess sees returncode -2. `main` functions
still return 130 (cli.main, the tools' mains).

Every command ends through `finish`: a reader of its output that went away
(`tf_cnn_sweep --help | head -1`) ends it quietly with exit status 141 (128 + SIGPIPE, what a
shell reports for a Unix tool killed by SIGPIPE), with no traceback, whichever print met it.
stdout or stderr that cannot be written (a full disk, /dev/full, a closed descriptor) does not
stop a command (runtime/output_streams.py): its work goes on, and `finish` ends it with one
line saying what was lost and exit status 74 (output_streams.OUTPUT_LOST_STATUS). A training
or evaluation run whose reader goes away (`tf_cnn_benchmarks ... | grep -m1 'total
images/sec'`) is stopped as a signal stops it (lifecycle/signals.py: after the current step,
its checkpoint, results JSON and database record written), then ends quietly with 141 too.
Every command's stdout and stderr write a character their encoding cannot (PYTHONIOENCODING=
ascii: a non-ASCII path or label, the sweep report's '±') as a backslash escape, never a
UnicodeEncodeError (output_streams.install, here before anything else).

Every command answers `--version` with the same line (`version_line`), here before it imports
anything (and in its own main too, for its `python -m` form: `answer_version`).

Importing this module loads nothing but the standard library and runtime/output_streams.py
(which imports only the standard library; the package's `__init__` loads its names on first
use), so the handler is in place a few milliseconds after Python starts.
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
from collections.abc import Callable

from .runtime import output_streams

#: Exit status of a command ended by Ctrl-C: 128 + SIGINT.
INTERRUPTED_STATUS = 128 + signal.SIGINT

#: Exit status of a command whose reader went away: 128 + SIGPIPE, as a shell reports it.
SIGPIPE_STATUS = output_streams.READER_GONE_STATUS

#: The help line of every command's --version.
VERSION_HELP = 'print the version line (the same as tf_cnn_benchmarks --version) and exit'

#: The flags that ask a command for its help (absl's and argparse's spellings).
HELP_FLAGS = frozenset(('-h', '--help', '-help', '--helpfull', '--helpshort'))


def _exit_interrupted(signum=None, frame=None) -> None:
    """Ends the process at once: `error: interrupted` on stderr, then by SIGINT (a shell's
    status 130; no traceback, no clean-up: nothing has started yet)."""
    try:
        os.write(2, b'error: interrupted\n')
    except OSError:  # stderr on a full disk: the status says it
        pass
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
    os._exit(INTERRUPTED_STATUS)  # SIGINT blocked in this thread: the status says it


class _QuietInterrupt:
    """sys.excepthook while `end_interrupted`'s KeyboardInterrupt leaves the program: prints
    nothing for it (its `error:` line, if any, came before), Python's hook for anything else."""

    def __init__(self, interrupt: KeyboardInterrupt, hook):
        self.interrupt, self.hook = interrupt, hook

    def __call__(self, kind, value, traceback):
        if value is not self.interrupt:
            self.hook(kind, value, traceback)


def end_interrupted() -> None:
    """Ends a command that Ctrl-C stopped by SIGINT, once the interpreter has shut down as
    usual: raises a KeyboardInterrupt that prints nothing (`_QuietInterrupt`), which, left
    uncaught by the program, makes Python end by SIG_DFL and kill(getpid(), SIGINT) after its
    shutdown (the module docstring). Objects are frozen first (gc.freeze), so the shutdown
    skips the collections TensorFlow's objects would cost (runtime_env.exit_process).

    Raises:
      KeyboardInterrupt: always.
    """
    interrupt = KeyboardInterrupt()
    sys.excepthook = _QuietInterrupt(interrupt, sys.excepthook)
    gc.freeze()
    raise interrupt


def version_line() -> str:
    """'tf_cnn_benchmarks 0.2.0 (TensorFlow 2.21.0)': the package's version and the installed
    TensorFlow's, read from its package metadata (TensorFlow is not imported); the line of
    every command's `--version`."""
    from importlib import metadata
    try:
        from . import __version__
    except ImportError:  # a folder named like the package ahead of the install: its metadata
        __version__ = metadata.version('tf_cnn_benchmarks')
    tf_version = 'not installed'
    for dist in ('tensorflow', 'tensorflow-cpu', 'tf-nightly'):
        try:
            tf_version = metadata.version(dist)
            break
        except metadata.PackageNotFoundError:
            continue
    return 'tf_cnn_benchmarks %s (TensorFlow %s)' % (__version__, tf_version)


def answer_version(args: list[str]) -> int | None:
    """Prints `version_line()` when `args` (the command's arguments, without the program name)
    ask for `--version` before any `--` (what follows `--` goes to the runs of tf_cnn_sweep
    and tf_cnn_cluster), unless they ask for help too (help wins, as in every command).

    Returns:
      None when `--version` was not asked for; else the command's exit status: 0, or 141
      (SIGPIPE_STATUS) when the reader of stdout went away (`tf_cnn_sweep --version | true`):
      no traceback, and Python's flush at exit cannot fail again.
    """
    asked = args[:args.index('--')] if '--' in args else args
    if '--version' not in asked or HELP_FLAGS & set(asked):
        return None
    return print_version()


def print_version() -> int:
    """Prints `version_line()`; returns 0, or 141 (SIGPIPE_STATUS) when the reader of stdout
    went away (stdout then points at /dev/null, so Python's flush at exit cannot fail again)."""
    try:
        print(version_line(), flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return SIGPIPE_STATUS
    return 0


def finish(main: Callable[[], int | None],
           exit_process: Callable[[int | None], None] = sys.exit) -> None:
    """Calls a command's `main` and ends the process with its status, the one way every
    command ends (the console scripts and the `python -m` forms).

    A BrokenPipeError (the reader of stdout went away: `... --help | head -1`, from any print
    of the command, or from the last flush here) becomes exit status 141 (SIGPIPE_STATUS), with
    no traceback: stdout then points at /dev/null, so Python's flush at exit cannot fail again.
    Output lost on the way (runtime/output_streams.py: stdout or stderr on a full disk,
    /dev/full, closed) gets its one `error:` line here, and the status 74 in place of 0.
    Status 130 (INTERRUPTED_STATUS: Ctrl-C stopped the command) ends the process by SIGINT
    instead (`end_interrupted`), after the same flush and line.

    Args:
      main: the command's main, without arguments; returns the exit status or raises
        SystemExit (absl's and argparse's --help do).
      exit_process: how the process ends with the status: sys.exit, or
        runtime_env.exit_process for a command that loaded TensorFlow.

    Raises:
      SystemExit: from `exit_process`, with the command's status (141, 74 as above).
      KeyboardInterrupt: for status 130 (`end_interrupted`).
    """
    output_streams.install()
    try:
        try:
            status = main()
        except SystemExit as e:
            status = e.code
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = SIGPIPE_STATUS
    status = output_streams.report_loss(status)
    if status == INTERRUPTED_STATUS:
        end_interrupted()
    exit_process(status)


def run(module: str, function: str = 'run_main') -> None:
    """Imports `module` of the package with Ctrl-C ending the process quietly, then calls its
    `function` (the command's main, which exits with the command's status).

    Args:
      module: the command's module, relative to the package ('.cli', '.tools.sweep').
      function: its entry function, called without arguments (it reads sys.argv).

    Raises:
      SystemExit: 0 (141) after `--version`, answered before the command imports; else
        whatever the command raises (its status).
      KeyboardInterrupt: when Ctrl-C ended the command (`end_interrupted`: the process then
        ends by SIGINT); after `error: interrupted` when the command let Ctrl-C's out.
    """
    output_streams.install()
    status = answer_version(sys.argv[1:])
    if status is not None:
        raise SystemExit(output_streams.report_loss(status))
    quiet = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if quiet:
        signal.signal(signal.SIGINT, _exit_interrupted)
    try:
        main = getattr(importlib.import_module(module, __package__), function)
    finally:
        if quiet:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        main()
    except KeyboardInterrupt as e:
        if isinstance(sys.excepthook, _QuietInterrupt) and e is sys.excepthook.interrupt:
            raise  # end_interrupted's: the command has said what it had to
        print('error: interrupted', file=sys.stderr, flush=True)
        end_interrupted()


def tf_cnn_benchmarks() -> None:
    """The `tf_cnn_benchmarks` command (cli.py)."""
    run('.cli')


def tf_cnn_build_tfrecords() -> None:
    """The `tf_cnn_build_tfrecords` command (tools/build_imagenet_tfrecords.py)."""
    run('.tools.build_imagenet_tfrecords')


def tf_cnn_cluster() -> None:
    """The `tf_cnn_cluster` command (tools/launch_cluster.py)."""
    run('.tools.launch_cluster')


def tf_cnn_sweep() -> None:
    """The `tf_cnn_sweep` command (tools/sweep/)."""
    run('.tools.sweep')


def tf_cnn_results() -> None:
    """The `tf_cnn_results` command (tools/results_cli.py)."""
    run('.tools.results_cli')

"""What `tf_cnn_results` says when a command fails in a way no rule of it foresaw (a bug): one
`error:` line naming the command, the error and where it was raised, and exit status 70
(significance.INTERNAL, EX_SOFTWARE of sysexits.h, as output_streams' 74 is EX_IOERR), never a
traceback: a status no rule gives, so that a CI job neither passes it with a warning (3: not
judged) nor reads it as a regression (1). `regressions --json` still prints its object
(tools/results_cli.py `_refuse`, verdict 'internal error'), so that the `regressions.json` a CI
job saves is JSON on this exit status too.
"""

from __future__ import annotations

import os
import traceback

from tf_cnn_benchmarks.metrics import significance

from . import command_parser

#: The commands of `tf_cnn_results`, as its first word that names one.
COMMANDS = ('list', 'show', 'history', 'regressions', 'html', 'ingest')

def command_of(argv: list[str]) -> str | None:
    """The command `argv` (without the program name) runs: its first word that names one."""
    return next((a for a in argv if a in COMMANDS), None)


def gate_json(argv: list[str]) -> bool:
    """Whether the command is `regressions --json`, read from the arguments as given (those
    that failed to parse too): its first word that names a command is `regressions`."""
    return command_of(argv) == 'regressions' and command_parser.last_boolean(argv, 'json')


def _where(error: BaseException) -> str:
    """'history/tarone.py:25' for the innermost frame of `error`'s traceback, relative to the
    package's folder where it is inside it ('' without a traceback)."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return ''
    last = frames[-1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.abspath(last.filename)
    if path.startswith(root + os.sep):
        path = os.path.relpath(path, root)
    return '%s:%d' % (path, last.lineno)


def failure(error: Exception, argv: list[str]) -> tuple[str, int]:
    """The message (without 'error: ') and exit status of a command that raised `error`.

    Args:
      error: the exception, with its traceback.
      argv: the command line without the program name.

    Returns:
      ('regressions failed: OverflowError: int too large to convert to float (at
      history/tarone.py:25); nothing was judged. This is a bug of tf_cnn_results: please
      report it with the command line', 70).
    """
    command = command_of(argv) or 'the command'
    where = _where(error)
    text = '%s: %s' % (type(error).__name__, str(error).splitlines()[0] if str(error) else '')
    message = '%s failed: %s%s%s. This is a bug of tf_cnn_results: please report it with the ' \
        'command line' % (command, text.rstrip(': '), ' (at %s)' % where if where else '',
                          '; nothing was judged' if command == 'regressions' else '')
    return message, significance.INTERNAL

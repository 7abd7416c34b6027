"""The argparse parser of the commands that use argparse (tf_cnn_results, tf_cnn_cluster).

Two changes to argparse, the same for every such command: a bad argument raises the command's
usage error (one `error:` line, not argparse's usage block), and the help meets a reader that
went away (`tf_cnn_results --help | head -1`) with BrokenPipeError, which `console.finish`
turns into exit status 141. argparse itself writes its help inside `except OSError: pass`, so
the command ended with status 0 as if the reader had read it all.
"""

from __future__ import annotations

import argparse
import sys


class CommandParser(argparse.ArgumentParser):
    """argparse.ArgumentParser with the commands' usage errors and help (module docstring).

    Subclasses set `usage_error`, the exception a bad argument raises with the message
    '<argparse's message> (see <prog> --help)'. Subcommand parsers (`add_subparsers`) are of
    the same class.
    """

    usage_error: type[Exception] = ValueError

    def error(self, message):
        """Raises `usage_error` (argparse would print its usage block and exit 2)."""
        raise self.usage_error('%s (see %s --help)' % (message, self.prog))

    def print_help(self, file=None):
        """Writes the help to `file` (stdout); a reader that went away raises BrokenPipeError.

        Raises:
          BrokenPipeError: the reader of stdout went away.
        """
        (file or sys.stdout).write(self.format_help())

"""The argparse parser of the commands that use argparse (tf_cnn_results, tf_cnn_cluster).

Four changes to argparse, the same for every such command: a bad argument raises the command's
usage error (one `error:` line, not argparse's usage block); an unknown option's names the
closest known ones and the subcommand's help (`parse_args`); the help meets a reader that
went away (`tf_cnn_results --help | head -1`) with BrokenPipeError, which `console.finish`
turns into exit status 141 (argparse itself writes its help inside `except OSError: pass`, so
the command ended with status 0 as if the reader had read it all); and a boolean option
(`add_boolean`) takes the forms a tf_cnn_benchmarks flag takes: `--NAME`, `--noNAME`,
`--NAME=true` or `=false` (also t, f, 1, 0, as absl reads them: `boolean_value`).
"""

from __future__ import annotations

import argparse
import difflib
import sys

#: The values a boolean flag takes after '=' (absl's words, case aside: `--json=True` too).
TRUE_WORDS = ('true', 't', '1')
FALSE_WORDS = ('false', 'f', '0')


def boolean_value(arg: str, name: str) -> bool | None:
    """What `arg` sets boolean flag `name` to: True for `--NAME` and `--NAME=true` (t, 1),
    False for `--noNAME` and `--NAME=false` (f, 0); None when `arg` is not that flag.

    Raises:
      ValueError: the flag with a value that is no boolean ('--json=yes: a boolean flag takes
        true or false (also --json, --nojson)'), or `--noNAME=VALUE`.
    """
    given, has_value, value = arg.partition('=')
    if given == '--no' + name:
        if has_value:
            raise ValueError('--no%s=%s: --no%s takes no value; write --no%s or --%s=false'
                             % (name, value, name, name, name))
        return False
    if given != '--' + name:
        return None
    if not has_value or value.lower() in TRUE_WORDS:
        return True
    if value.lower() in FALSE_WORDS:
        return False
    raise ValueError('--%s=%s: a boolean flag takes true or false (also --%s, --no%s)'
                     % (name, value, name, name))


def last_boolean(argv: list[str], name: str) -> bool:
    """What the arguments as given (those that failed to parse too) set boolean flag `name`
    to: the last of `--NAME`, `--NAME=true`, `--noNAME`, `--NAME=false` wins; False without
    one. A malformed value (`--json=maybe`) counts as the form it was given in (on for
    `--json=...`, off for `--nojson=...`): a command's refusal of it answers in that form."""
    wanted = False
    for arg in argv:
        try:
            value = boolean_value(arg, name)
        except ValueError:
            value = not arg.startswith('--no')
        wanted = wanted if value is None else value
    return wanted


class BooleanAction(argparse.Action):
    """A boolean option: `--NAME` sets True, `--noNAME` False (`CommandParser.add_boolean`);
    `--NAME=VALUE` is read before argparse sees it (`CommandParser.parse_known_args`)."""

    def __init__(self, option_strings, dest, default=False, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, not option_string.startswith('--no'))


class CommandParser(argparse.ArgumentParser):
    """argparse.ArgumentParser with the commands' usage errors, help and booleans (module
    docstring).

    Subclasses set `usage_error`, the exception a bad argument raises with the message
    '<argparse's message> (see <prog> --help)'. Subcommand parsers (`add_subparsers`) are of
    the same class.
    """

    usage_error: type[Exception] = ValueError

    def add_boolean(self, name: str, help: str) -> None:
        """Adds boolean option `--NAME` (default False) with `--noNAME` (module docstring)."""
        self.add_argument('--' + name, '--no' + name, dest=name, action=BooleanAction,
                          help=help)

    def parse_known_args(self, args=None, namespace=None):
        """argparse's, with `--NAME=VALUE` of a boolean option read first (as `--NAME` or
        `--noNAME`; arguments after `--` are left alone).

        Raises:
          `usage_error`: a boolean option's value is no boolean.
        """
        args = list(sys.argv[1:] if args is None else args)
        names = self._boolean_names()
        out = []
        for i, arg in enumerate(args):
            if arg == '--':
                out += args[i:]
                break
            name = arg.partition('=')[0].lstrip('-')
            name = name[2:] if name.startswith('no') and name[2:] in names else name
            if '=' in arg and name in names and arg.startswith('--'):
                try:
                    value = boolean_value(arg, name)
                except ValueError as e:
                    raise self.usage_error('%s (see %s --help)' % (e, self.prog)) from None
                arg = '--%s%s' % ('' if value else 'no', name)
            out.append(arg)
        return super().parse_known_args(out, namespace)

    def parse_args(self, args=None, namespace=None):
        """argparse's, with an unknown option's error pointing at the subcommand's help and
        suggesting the closest known options ('unrecognized arguments: --modle=trivial; did
        you mean --model? (see tf_cnn_results list --help)').

        Raises:
          `usage_error`: a bad argument.
        """
        args = list(sys.argv[1:] if args is None else args)
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            sub = self._subcommand(args)
            known = [o[2:] for a in (sub or self)._actions for o in a.option_strings
                     if o.startswith('--')]  # compared without the '--' all of them share
            close = list(dict.fromkeys(  # the closest first
                m for e in extras if e.startswith('--')
                for m in difflib.get_close_matches(e.partition('=')[0][2:], known, 3)))
            hint = '; did you mean %s?' % ' or '.join('--' + m for m in close) if close else ''
            raise self.usage_error('unrecognized arguments: %s%s (see %s --help)' % (
                ' '.join(extras), hint, (sub or self).prog))
        return parsed

    def _subcommand(self, args: list[str]) -> argparse.ArgumentParser | None:
        """The subcommand's parser the first argument naming one chooses, or None."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                for arg in args:
                    if arg in action.choices:
                        return action.choices[arg]
        return None

    def _boolean_names(self) -> set:
        """The names of the boolean options of this parser and its subcommands' (so that the
        forms are read however argparse hands the arguments on)."""
        names = set()
        for action in self._actions:
            if isinstance(action, BooleanAction):
                names.add(action.dest)
            elif isinstance(action, argparse._SubParsersAction):
                for sub in set(action.choices.values()):
                    if isinstance(sub, CommandParser):
                        names |= sub._boolean_names()
        return names

    def error(self, message):
        """Raises `usage_error` (argparse would print its usage block and exit 2)."""
        raise self.usage_error('%s (see %s --help)' % (message, self.prog))

    def print_help(self, file=None):
        """Writes the help to `file` (stdout); a reader that went away raises BrokenPipeError.

        Raises:
          BrokenPipeError: the reader of stdout went away.
        """
        (file or sys.stdout).write(self.format_help())


def misspelt_option(given: list[str], own: list[str], command: str) -> str | None:
    """For the first of `given` (arguments a command passes on to its runs as tf_cnn_benchmarks
    flags) that is no run flag but close to one of the command's own options `own` (names
    without '--'): '--num_wrkers is neither a tf_cnn_cluster option nor a tf_cnn_benchmarks
    flag; did you mean --num_workers? (see tf_cnn_cluster --help)'; else None (the runs' own
    check names a misspelt run flag: "Did you mean: num_batches").
    """
    from absl import flags

    from tf_cnn_benchmarks import params
    from tf_cnn_benchmarks.params import absl_flags
    run_flags = flags.FlagValues()
    params.define_flags(run_flags)
    absl_flags.register(run_flags)
    for arg in given:
        name = arg[2:].partition('=')[0] if arg.startswith('--') else None
        if not name or name in run_flags or (name.startswith('no') and name[2:] in run_flags):
            continue
        close = difflib.get_close_matches(name, own, 1, 0.75)
        if close:
            return ('--%s is neither a %s option nor a tf_cnn_benchmarks flag; did you mean '
                    '--%s? (see %s --help)' % (name, command, close[0], command))
    return None

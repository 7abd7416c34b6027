"""Checks the lines of `--flagfile` files before absl reads them, naming the file and line.

absl reads a flagfile as one command-line argument per line, taken literally after stripping
the line's ends (`absl/flags/_flagvalues.py`, `_get_flag_file_lines`): no shell runs over it.
So a quoted value keeps its quotes (`--data_dir="/data/x"` names the folder `"/data/x"`, quotes
included), two flags on one line are one value (`--model=trivial --batch_size=4` asks for the
model 'trivial --batch_size=4'), and a nested `--flagfile=common.txt` is opened from the working
directory, not from the folder of the file that names it. A flagfile that names itself, or one
naming it (a loop), absl skips with a warning and runs without its flags. Each of these is one
ParamsError line here, naming the file, the line and the fix.

Grammar of a line absl accepts, as checked here:

    line     := blank | comment | flag
    comment  := '#' ... | '//' ...          (at the very start of the line)
    flag     := '--' name [ '=' value ]     (value: the rest of the line, unquoted)

Loads no TensorFlow.
"""

from __future__ import annotations

import os
import re

from .. import cnn_util

# A word of a line that is itself a flag: `--batch_size=4`, `--use_fp16`, `'--model=x`.
_FLAG_WORD = re.compile(r"""^['"]?--(?P<name>[A-Za-z_]\w*)(=|['"]?$)""")
_DIRECTIVE = ('--flagfile=', '-flagfile=')
_ONE_FLAG = 'a flagfile holds one flag a line, unquoted'


class FlagfileError(ValueError):
    """A flagfile line absl would misread, or a nested flagfile that cannot be opened."""


def _directive_file(arg: str) -> str | None:
    """The file a `--flagfile=FILE` argument or line names (user expanded), or None."""
    for prefix in _DIRECTIVE:
        if arg.startswith(prefix):
            return os.path.expanduser(arg[len(prefix):].strip())
    return None


def _top_level_files(args: list[str]) -> list[str]:
    """The flagfiles named on the command line (`--flagfile=F`, `--flagfile F`), in order."""
    files, rest = [], list(args)
    while rest:
        arg = rest.pop(0)
        if arg == '--':
            break
        if arg in ('--flagfile', '-flagfile') and rest:
            files.append(os.path.expanduser(rest.pop(0)))
        elif _directive_file(arg) is not None:
            files.append(_directive_file(arg))
    return files


def _unquoted(value: str) -> str | None:
    """`value` without its surrounding quotes, or None when it is not quoted."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in '"\'':
        return value[1:-1]
    return None


def check_line(line: str, where: str) -> None:
    """Raises FlagfileError when absl would misread this flagfile line.

    Args:
      line: one line of a flagfile, stripped; not blank, not a comment.
      where: 'FILE line N', for the message.

    Raises:
      FlagfileError: two flags on the line, a quoted value, `--name value` with a space, or a
        line that is not a flag.
    """
    if not line.startswith('-'):
        raise FlagfileError('%s reads %r: %s, each line starting with --name (absl would take '
                            'this line as a positional argument)' % (where, line, _ONE_FLAG))
    words = line.split()
    extra = [w.strip('\'"') for w in words[1:] if _FLAG_WORD.match(w)]
    if extra:
        raise FlagfileError('%s reads %s: %s (absl takes the whole line as one argument); put '
                            '%s on a line of its own'
                            % (where, line, _ONE_FLAG, ' and '.join(extra)))
    name, equals, value = line.partition('=')
    if equals:
        plain = _unquoted(value.strip())
        if plain is not None:
            raise FlagfileError('%s reads %s: %s (absl keeps the quotes in the value); write '
                                '%s=%s' % (where, line, _ONE_FLAG, name, plain))
    elif len(words) > 1 and re.fullmatch(r'--?\w+', words[0]):
        value = line[len(words[0]):].strip()
        raise FlagfileError('%s reads %s: a flagfile holds one flag a line, as --name=value '
                            '(absl takes %r as the name of a flag); write %s=%s'
                            % (where, line, line, words[0], _unquoted(value) or value))


def _check_file(path: str, stack: list[tuple[str, str]]) -> None:
    """Checks every line of one flagfile and, recursively, the flagfiles it names.

    Args:
      path: the flagfile as absl will open it (relative paths: from the working directory).
      stack: the flagfiles being read, outermost first, as (path, real path) pairs.

    Raises:
      FlagfileError: a misread line, a nested flagfile that cannot be opened, or a loop of
        flagfiles (absl would skip the repeated one with a warning and run without it).
    """
    if not path:
        return
    try:
        with open(path, encoding='utf-8') as f:
            lines = f.readlines()
    except (OSError, UnicodeDecodeError):
        return  # absl's own message (cli: 'Unable to open flagfile ...', 'not UTF-8 text')
    stack.append((path, os.path.realpath(path)))
    for number, raw in enumerate(lines, start=1):
        if raw.isspace() or raw.startswith(('#', '//')):
            continue
        where = '%s line %d' % (path, number)
        nested = _directive_file(raw)
        if nested is None:
            check_line(raw.strip(), where)
            continue
        if nested and not os.path.isfile(nested):
            beside = os.path.join(os.path.dirname(os.path.abspath(path)), nested)
            hint = ('; it is beside %s: write --flagfile=%s' % (os.path.basename(path), beside)
                    if not os.path.isabs(nested) and os.path.isfile(beside) else '')
            raise FlagfileError(
                '%s reads --flagfile=%s: no such file in %s (absl opens a nested flagfile from '
                'the working directory, not from the folder of the file naming it)%s'
                % (where, nested, os.path.dirname(os.path.abspath(nested)), hint))
        _check_loop(nested, stack, where)
        _check_file(nested, stack)
    stack.pop()


def _check_loop(nested: str, stack: list[tuple[str, str]], where: str) -> None:
    """Raises FlagfileError when `nested` (named at `where`) is a flagfile being read."""
    real = os.path.realpath(nested)
    opened = [real_path for _, real_path in stack]
    if real not in opened:
        return
    loop = [shown for shown, _ in stack[opened.index(real):]] + [nested]
    raise FlagfileError(
        '%s reads --flagfile=%s: a circular flagfile (%s); absl would skip it with a warning and '
        'run without its flags; remove this line' % (where, nested, ' -> '.join(loop)))


def check_flagfiles(args: list[str]) -> None:
    """Checks every flagfile the command line names, nested ones included, before absl.

    Args:
      args: the command-line arguments after the program name.

    Raises:
      FlagfileError: one line naming the file, the line and the fix: an empty --flagfile=, two
        flags on a line, a quoted value, a line that is not `--name=value`, or a nested
        flagfile not found (with the folder it was looked for in), a relative one where the
        working folder no longer exists (cnn_util.working_folder_problem). A top-level
        flagfile that cannot be opened otherwise is left to absl's own message.
    """
    for path in _top_level_files(args):
        if not path:
            raise FlagfileError('--flagfile= names no file (an unset variable in a script?): '
                                'give the flag file\'s path, or drop --flagfile')
        gone = cnn_util.working_folder_problem([('--flagfile', path)])
        if gone:
            raise FlagfileError(gone)
        _check_file(path, [])

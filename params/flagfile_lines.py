"""Checks the lines of `--flagfile` files before absl reads them, naming the file and line.

absl reads a flagfile as one command-line argument per line, taken literally after stripping
the line's ends (`absl/flags/_flagvalues.py`, `_get_flag_file_lines`): no shell runs over it.
So a quoted value keeps its quotes (`--data_dir="/data/x"` names the folder `"/data/x"`, quotes
included), two flags on one line are one value (`--model=trivial --batch_size=4` asks for the
model 'trivial --batch_size=4'), and a nested `--flagfile=common.txt` is opened from the working
directory, not from the folder of the file that names it. A flagfile that names itself, or one
naming it (a loop), absl skips with a warning and runs without its flags. Each of these is one
ParamsError line here, naming the file, the line and the fix.

The flagfiles are read here, once each (`expand_flagfiles`), and absl parses the flags they
hold in their place: a file that can be read only once (`--flagfile=<(...)`, a pipe) keeps its
flags; one that cannot be read as a flag file (/proc/self/mem, /dev/zero, not UTF-8) is one
line naming it (a UTF-8 byte-order mark that starts a file, Notepad's, is no text: dropped,
where absl itself would read its first line as a positional argument); an error in a flag read
from a file names the file and line (flag_parsing.py), as does a rule's error about flags all
read from one file (`FlagOrigins`: cli.py); a flagfile that holds no flag (/dev/null) is
reported (`Expanded.empty`).

Grammar of a line absl accepts, as checked here:

    line     := blank | comment | flag
    comment  := '#' ... | '//' ...          (at the very start of the line)
    flag     := '--' name [ '=' value ]     (value: the rest of the line, unquoted)

Loads no TensorFlow.
"""

from __future__ import annotations

import codecs
import os
import re
from typing import NamedTuple

from .. import cnn_util

# A word of a line that is itself a flag: `--batch_size=4`, `--use_fp16`, `'--model=x`.
_FLAG_WORD = re.compile(r"""^['"]?--(?P<name>[A-Za-z_]\w*)(=|['"]?$)""")
_DIRECTIVE = ('--flagfile=', '-flagfile=')
_ONE_FLAG = 'a flagfile holds one flag a line, unquoted'
#: The byte-order mark some editors put first in a UTF-8 file (Notepad's "UTF-8 with BOM").
BOM = '\ufeff'
#: A `--flagfile=` of no file, on the command line or a flagfile's line (which absl skips).
EMPTY_FLAGFILE = ('--flagfile= names no file (an unset variable in a script?): give the flag '
                  "file's path, or drop --flagfile")
#: A flagfile larger than this is no flag file (/dev/zero would fill the memory).
MAX_FLAGFILE_BYTES = 1 << 20


class FlagfileError(cnn_util.ShownMessage, ValueError):
    """A flagfile line absl would misread, or a nested flagfile that cannot be opened; a
    path's undecodable bytes read as '\\xff' in its message (cnn_util.shown_name)."""


def _directive_file(arg: str) -> str | None:
    """The file a `--flagfile=FILE` argument or line names (user expanded), or None."""
    for prefix in _DIRECTIVE:
        if arg.startswith(prefix):
            return os.path.expanduser(arg[len(prefix):].strip())
    return None


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
    if line.startswith(BOM):  # the file's own mark is dropped (`read_flagfile`): files joined
        raise FlagfileError('%s starts with a UTF-8 byte-order mark (U+FEFF, invisible in most '
                            'editors: files joined by cat?); delete it (absl would take this '
                            'line as a positional argument)' % where)
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


class Expanded(NamedTuple):
    """The command line with every --flagfile replaced by its flags (`expand_flagfiles`).

    Attributes:
      args: the arguments, each `--flagfile=F` (or `--flagfile F`) replaced by F's flag lines,
        stripped, in place (nested flagfiles too), as absl would expand them.
      origins: {index in args: 'FILE line N'} of each argument read from a flagfile.
      empty: the flagfiles that hold no flag (an empty file, /dev/null, only comments).
    """

    args: list
    origins: dict
    empty: list

    def flag_origins(self, known) -> FlagOrigins:
        """Where each flag given got its value (`FlagOrigins`), for the names in `known` (the
        defined flags; `--noname` is flag `name`); the arguments after `--` are no flags."""
        lines, given = {}, set()
        for index, arg in enumerate(self.args):
            if arg == '--':
                break
            if not arg.startswith('-'):
                continue  # a value of `--name value`, or a positional argument
            name = arg.lstrip('-').split('=', 1)[0]
            if name not in known and name.startswith('no') and name[2:] in known:
                name = name[2:]
            if name not in known:
                continue
            given.add(name)
            where = self.origins.get(index)
            if where is None:
                lines.pop(name, None)
            else:
                path, _, number = where.rpartition(' line ')
                lines[name] = (path, int(number))
        return FlagOrigins(lines, frozenset(given))

    def origin_of(self, message: str) -> str:
        """`message` (a parse error naming a flag as `--name` or 'name') prefixed by
        'FILE line N: ' when the argument it is about was read from a flagfile, else `message`
        as it is. The argument is the first (the parser stops at it) of: those whose
        `name=value` the message quotes, else those of the name it names, else those it names
        as `--noname` (`--nodistortions=true`); one from the command line gets no prefix."""
        named = {a or b for a, b in _NAMED.findall(message)}
        plain = {n[2:] for n in named if n.startswith('no')}
        ranked = []
        for index, arg in enumerate(self.args):
            text = arg.lstrip('-')
            name = text.split('=', 1)[0]
            if '=' in text and text in message and name in named:
                ranked.append((0, index))
            elif name in named:
                ranked.append((1, index))
            elif name in plain or (name.startswith('no') and name[2:] in named):
                ranked.append((2, index))
        if not ranked:
            return message
        index = min(ranked)[1]
        return '%s: %s' % (self.origins[index], message) if index in self.origins else message


_NAMED = re.compile(r"--(\w+)|'(\w+)'")


class FlagOrigins(NamedTuple):
    """Where each flag of a parsed command line got its value (`Expanded.flag_origins`).

    Attributes:
      lines: {flag name: (flagfile path, line number)} of each flag whose value (the last one
        given: absl's later flag wins) was read from a flagfile line; a flag whose value came
        from the command line is not in it.
      given: the names of every flag given, from a flagfile or the command line.
    """

    lines: dict
    given: frozenset

    def locate(self, message: str) -> str:
        """`message` (a rule's usage error naming flags as `--name`) prefixed by where its
        flags were set, 'FILE line N: ' or 'FILE lines N and M: ', when every flag it names
        that was given was read from one flagfile; where they came from several places (two
        files, a file and the command line), each flag's: '--a from FILE line N, --b from the
        command line: '; else `message` as it is (every flag from the command line, no flag
        given). Flags it names that were not given (a default, a fix it advises:
        '--all_reduce_spec=xring') do not count."""
        named = []  # in the message's order
        for name in re.findall(r'--(\w+)', message):
            if name not in self.given and name.startswith('no'):
                name = name[2:]  # --nodistortions
            if name in self.given and name not in named:
                named.append(name)
        if not set(named) & set(self.lines):
            return message
        files = {self.lines[name][0] for name in named if name in self.lines}
        if len(files) != 1 or not set(named) <= set(self.lines):
            return '%s: %s' % (', '.join(
                '--%s from %s' % (name, '%s line %d' % self.lines[name] if name in self.lines
                                  else 'the command line') for name in named), message)
        numbers = sorted({self.lines[name][1] for name in named})
        shown = ', '.join(str(n) for n in numbers[:-1])
        return '%s line%s %s: %s' % (
            files.pop(), 's' if shown else '',
            '%s and %d' % (shown, numbers[-1]) if shown else numbers[-1], message)


def _label(path: str, where: str | None) -> str:
    return '--flagfile=%s' % path + (' (%s)' % where if where else '')


def read_flagfile(path: str, where: str | None = None) -> list[str]:
    """The lines of flagfile `path`, read once (a pipe, `<(...)`, can be read only once),
    with their line ends.

    Args:
      path: as given (relative: from the working directory).
      where: 'FILE line N' of a nested flagfile's directive, for the messages.

    Raises:
      FlagfileError: the file cannot be opened or read (its path and why: a folder,
        permissions, /proc/self/mem's I/O error), is larger than MAX_FLAGFILE_BYTES (/dev/zero),
        or is not UTF-8 text (a UTF-16 file named so). A leading UTF-8 byte-order mark is
        dropped.
    """
    try:
        with open(path, 'rb') as f:
            data = f.read(MAX_FLAGFILE_BYTES + 1)
    except OSError as e:
        raise FlagfileError('%s cannot be read: %s; give the path of a text file of '
                            '--name=value lines this user can read'
                            % (_label(path, where), e.strerror or e)) from None
    if len(data) > MAX_FLAGFILE_BYTES:
        raise FlagfileError('%s is not a flag file: more than %d MiB (a device such as '
                            '/dev/zero, or another kind of file?); give a text file of '
                            '--name=value lines' % (_label(path, where),
                                                    MAX_FLAGFILE_BYTES >> 20))
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise FlagfileError('%s is UTF-16 text (it starts with a UTF-16 byte-order mark: '
                            'Notepad\'s "Unicode"); save it as UTF-8' % _label(path, where))
    # Notepad's "UTF-8 with BOM": the mark is no text (absl, which opens a flagfile as plain
    # UTF-8, would take '\ufeff--model=x' for a positional argument; its lines are read here).
    bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        text = data[bom:].decode('utf-8')
    except UnicodeDecodeError as e:  # saved as Latin-1, ...
        at = bom + e.start
        raise FlagfileError('%s is not UTF-8 text (byte %#04x at position %d); save it as '
                            'UTF-8' % (_label(path, where), data[at], at)) from None
    return text.splitlines(keepends=True)


def _file_args(path: str, stack: list[tuple[str, str]], where: str | None,
               out: Expanded) -> None:
    """Appends the flags of one flagfile (and, in place, of the flagfiles it names) to `out`,
    checking every line.

    Args:
      path: the flagfile as absl would open it (relative paths: from the working directory).
      stack: the flagfiles being read, outermost first, as (path, real path) pairs.
      where: 'FILE line N' of the directive naming `path` (None on the command line).
      out: what is expanded so far.

    Raises:
      FlagfileError: an unreadable file (`read_flagfile`), a misread line, a `--flagfile=`
        line of no file or a `--flagfile` line without `=PATH`, a nested flagfile that cannot
        be found, or a loop of flagfiles (absl would skip the repeated one with a warning and
        run without it).
    """
    lines = read_flagfile(path, where)
    before = len(out.args)
    stack.append((path, os.path.realpath(path)))
    for number, raw in enumerate(lines, start=1):
        if raw.isspace() or raw.startswith(('#', '//')):
            continue
        line_where = '%s line %d' % (path, number)
        nested = _directive_file(raw.strip())  # absl strips a line's blanks first
        if raw.strip() in ('--flagfile', '-flagfile'):  # absl: the next argument is its file
            raise FlagfileError('%s reads %s without a file: write --flagfile=PATH on one line '
                                '(absl would open the argument after it as the file)'
                                % (line_where, raw.strip()))
        if nested is None:
            check_line(raw.strip(), line_where)
            out.origins[len(out.args)] = line_where
            out.args.append(raw.strip())
            continue
        if not nested:  # absl would read it as nothing: the command line's usage error
            raise FlagfileError('%s: %s' % (line_where, EMPTY_FLAGFILE))
        if not os.path.exists(nested):
            beside = os.path.join(os.path.dirname(os.path.abspath(path)), nested)
            hint = ('; it is beside %s: make the line --flagfile=%s (unquoted: absl reads a '
                    "flagfile's lines as they are, no shell)" % (os.path.basename(path), beside)
                    if not os.path.isabs(nested) and os.path.isfile(beside) else '')
            raise FlagfileError(
                '%s reads --flagfile=%s: no such file in %s (absl opens a nested flagfile from '
                'the working directory, not from the folder of the file naming it)%s'
                % (line_where, nested, os.path.dirname(os.path.abspath(nested)), hint))
        _check_loop(nested, stack, line_where)
        _file_args(nested, stack, line_where, out)
    stack.pop()
    if len(out.args) == before:
        out.empty.append(path)


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


def expand_flagfiles(args: list[str]) -> Expanded:
    """Reads every flagfile the command line names, nested ones included, once, and puts its
    flags in its place (absl's expansion: a later flag wins), checking each line.

    Args:
      args: the command-line arguments after the program name.

    Returns:
      An Expanded: the arguments absl is to parse (no --flagfile left before `--`), where each
      one read from a file came from, and the flagfiles that hold no flag.

    Raises:
      FlagfileError: one line naming the file (and the line) and the fix: an empty
        --flagfile=, a file that cannot be read, is not text or too large, two flags on a line,
        a quoted value, a line that is not `--name=value`, a nested flagfile not found (with
        the folder it was looked for in), a loop of flagfiles, or a relative one where the
        working folder no longer exists (cnn_util.working_folder_problem).
    """
    out = Expanded([], {}, [])
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg in ('--flagfile', '-flagfile') and rest:
            path = os.path.expanduser(rest.pop(0))
        elif _directive_file(arg) is not None:
            path = _directive_file(arg)
        else:
            out.args.append(arg)
            if arg == '--':  # absl stops there too
                out.args.extend(rest)
                break
            continue
        if not path:
            raise FlagfileError(EMPTY_FLAGFILE)
        gone = cnn_util.working_folder_problem([('--flagfile', path)])
        if gone:
            raise FlagfileError(gone)
        _file_args(path, [], None, out)
    return out


def check_flagfiles(args: list[str]) -> None:
    """`expand_flagfiles` for its checks only (raises FlagfileError as it does)."""
    expand_flagfiles(args)

"""Command-line flags -> Params, with absl's parse errors turned into one readable line.

Shared by the `tf_cnn_benchmarks` command (cli.py) and the sweep (tools/sweep/cli.py), which checks
the flags it passes to every run before the first run starts. Loads no TensorFlow.
"""

from __future__ import annotations

import re

from absl import flags

from . import cnn_util, params
from .hardware import user_dirs
from .params import absl_flags, configs, flagfile_lines
from .params.flag_names import OTHER_NAMES, suggest_flag  # noqa: F401 (re-exported)

# absl reports a bad boolean with its exception's argument tuple:
# "flag --distortions=maybe: ('Non-boolean argument to boolean flag', 'maybe')".
_BOOLEAN_ERROR = re.compile(
    r"^flag --(?P<name>\w+)=(?P<value>.*): \('Non-boolean argument to boolean flag'")

# ... and a malformed number with Python's own words:
# "flag --batch_size=abc: invalid literal for int() with base 10: 'abc'".
_NUMBER_ERROR = re.compile(r"^flag --(?P<name>\w+)=(?P<value>.*): (?P<kind>invalid literal for "
                           r"int\(\)|could not convert string to float)")


def describe_flag_error(error: flags.Error) -> str:
    """The first line of an absl parse error, without absl's prefixes and tuples, ending in
    '(see --help)'."""
    message = str(error).splitlines()[0]
    if message.startswith('ERROR:'):  # absl's own prefix ('ERROR:: Unable to open ...')
        message = message.split(':', 1)[1].lstrip(': ')
    number = _NUMBER_ERROR.match(message)
    if number:
        message = '--%s=%s: takes %s' % (
            number['name'], number['value'],
            'an integer' if number['kind'].startswith('invalid literal for int') else 'a number')
    boolean = _BOOLEAN_ERROR.match(message)
    if boolean:
        name = boolean['name']
        message = ('--%s=%s: a boolean flag takes true or false (also --%s, --no%s)'
                   % (name, boolean['value'], name, name))
    return message + ' (see --help)'


def _unknown_flag_message(error: flags.UnrecognizedFlagError, known: list[str]) -> str:
    """absl's unknown-flag line, its 'Did you mean' from `suggest_flag` where that finds one."""
    meant = suggest_flag(error.flagname, known)
    if meant is None:
        return describe_flag_error(error)
    return "Unknown command line flag '%s'. Did you mean: %s ? (see --help)" % (
        error.flagname, meant)


_NEGATED_WITH_VALUE = re.compile(r'^--no(?P<name>\w+)=(?P<value>.*) does not take an argument')


def describe_value_error(error: ValueError) -> str:
    """absl's ValueError for a negated boolean given a value, in one line with the fix."""
    negated = _NEGATED_WITH_VALUE.match(str(error))
    if negated:
        name = negated['name']
        return ('--no%s=%s: --no%s takes no value; write --no%s or --%s=false'
                % (name, negated['value'], name, name, name))
    return '%s (see --help)' % str(error).splitlines()[0]


#: absl's help flags (absl.app defines them for a program it runs, as the original's was), each
#: a boolean: what it asks for when true ('help': the flags' help, 'helpfull': that and absl's
#: own flags' help, 'xml': --helpxml's XML).
HELP_FLAGS = {'help': 'help', 'helpshort': 'help', 'helpfull': 'helpfull', 'helpxml': 'xml'}
_TRUE, _FALSE = ('true', 't', '1'), ('false', 'f', '0')


def help_request(argv: list[str]) -> tuple[str | None, list[str]]:
    """What `argv` (argv[0] is the program) asks of the command instead of a run, and argv
    without absl's help flags.

    `--help`, `-h`, `-?`, `--helpshort` (also `=true`) ask for 'help', `--helpfull` for
    'helpfull', `--helpxml` for 'xml' (the first one given wins); set false (`--help=false`,
    `--nohelp`) they ask for nothing and are dropped, as absl drops them. `--version` asks
    for 'version' unless help is asked for too (help wins, as in every command), also as
    `--version=true`; `--version=false` and
    `--noversion` ask for nothing and are dropped. Arguments after `--` are left alone.

    Returns:
      ('help', 'helpfull', 'xml', 'version' or None, the other arguments).

    Raises:
      params.ParamsError: a help flag with a value that is not a boolean (`--help=maybe`).
    """
    wanted, rest, version = None, [argv[0]], False
    for i, arg in enumerate(argv[1:], 1):
        if arg == '--':
            rest += argv[i:]
            break
        if arg == '--noversion' or arg.startswith('--version='):  # absl's boolean forms
            value = arg.partition('=')[2].lower()
            if value and value not in _TRUE + _FALSE:
                raise params.ParamsError('%s: a boolean flag takes true or false (also '
                                         '--version, --noversion)' % arg)
            version = version or value in _TRUE
            continue
        if arg in ('-h', '-?'):
            wanted = wanted or 'help'
            continue
        name, has_value, value = arg.lstrip('-').partition('=')
        negated = name.startswith('no') and name[2:] in HELP_FLAGS and not has_value
        if not arg.startswith('-') or (name not in HELP_FLAGS and not negated):
            rest.append(arg)
            continue
        if has_value and value.lower() not in _TRUE + _FALSE:
            raise params.ParamsError('--%s=%s: a boolean flag takes true or false (also --%s, '
                                     '--no%s)' % (name, value, name, name))
        if not negated and (not has_value or value.lower() in _TRUE):
            wanted = wanted or HELP_FLAGS[name]
    if wanted is None and (version or '--version' in rest[:rest.index('--') if '--' in rest
                                                        else None]):
        wanted = 'version'
    return wanted, rest


def parse_flags(argv: list[str], flag_values: flags.FlagValues | None = None, *,
                quiet: bool = False) -> params.Params:
    """Parses argv (argv[0] is the program) into Params (not yet validated).

    Args:
      argv: the program name, then the flags (`--name=value`, `--flagfile=FILE`).
      flag_values: where the flags are defined and parsed: a fresh FlagValues by default (the
        command passes absl's global FLAGS).
      quiet: no `warning:` line (a flagfile that holds no flag): for a caller that parses the
        same flags again and again (the sweep's check of each configuration).

    Raises:
      params.ParamsError: an unknown flag, a malformed value (naming the flagfile and line it
        came from, when it came from one), a stray positional argument, or a flagfile that
        cannot be read or has a line absl would misread (flagfile_lines.py).
    """
    return parse_flags_located(argv, flag_values, quiet=quiet)[0]


def parse_flags_located(argv: list[str], flag_values: flags.FlagValues | None = None, *,
                        quiet: bool = False) -> tuple[params.Params, flagfile_lines.FlagOrigins]:
    """`parse_flags`, and where each flag given got its value (flagfile_lines.FlagOrigins:
    its `locate` names the flagfile and lines of a rule's error about flags read from one).

    Raises:
      params.ParamsError: as `parse_flags`.
    """
    if flag_values is None:
        flag_values = flags.FlagValues()
    if 'model' not in flag_values:
        params.define_flags(flag_values)
    absl_flags.register(flag_values)  # --alsologtostderr, --only_check_args, ... as absl's
    rest, expanded = _parse(flag_values, argv, quiet)
    if len(rest) > 1:
        raise params.ParamsError(
            'unexpected positional argument %r; flags take the form --name=value (booleans: '
            '--name, --noname or --name=false)' % rest[1])
    return (home_expanded(params.make_params_from_flags(flag_values)),
            expanded.flag_origins(frozenset(flag_values)))


#: The flags whose value is a path that a leading `~` may start: the path flags and
#: --results_db (--flagfile's `~` is flagfile_lines.py's).
HOME_PATH_FLAGS = params.PATH_FLAGS + ('results_db',)


def home_expanded(p: params.Params) -> params.Params:
    """`p` with a leading `~` of each path flag's value expanded (user_dirs.expand_home):
    the shell leaves `--train_dir=~/runs` as typed (it expands `~` only at a word's start),
    and a folder named '~' in the working folder is never what was meant. A remote URI or a
    path without `~` is unchanged."""
    changed = {name: user_dirs.expand_home(getattr(p, name)) for name in HOME_PATH_FLAGS
               if isinstance(getattr(p, name), str) and getattr(p, name).startswith('~')}
    return p._replace(**changed) if changed else p


def _parse(flag_values: flags.FlagValues, argv: list[str],
           quiet: bool) -> tuple[list[str], flagfile_lines.Expanded]:
    """flag_values(argv) with the configuration read first (params/configs.py expand) and the
    flagfiles read and checked here (flagfile_lines.expand_flagfiles); absl's errors as
    ParamsError. A --config that came from a --flagfile is read first too: a second pass.
    Returns absl's remaining arguments and the expanded command line."""
    argv, config = configs.expand(argv), None
    while True:
        try:
            expanded = flagfile_lines.expand_flagfiles(list(argv[1:]))
        except flagfile_lines.FlagfileError as e:
            raise params.ParamsError(str(e)) from None
        try:
            rest = flag_values([argv[0]] + expanded.args, known_only=False)
        except flags.UnrecognizedFlagError as e:
            raise params.ParamsError(expanded.origin_of(
                _unknown_flag_message(e, list(flag_values)))) from None
        except flags.Error as e:
            raise params.ParamsError(expanded.origin_of(describe_flag_error(e))) from None
        except ValueError as e:  # absl: "--nodistortions=true does not take an argument"
            raise params.ParamsError(expanded.origin_of(describe_value_error(e))) from None
        name = flag_values['config'].value
        try:
            if config is not None or name is None or configs.expanded(argv, name):
                break
            argv, config = configs.expand(argv, name), name
        except params.ParamsError as e:  # a --config line of a flagfile: its file and line
            raise params.ParamsError(expanded.origin_of(str(e))) from None
    if not quiet:
        for path in expanded.empty:
            cnn_util.warn('--flagfile=%s holds no flag (an empty file, or only comments): '
                          'nothing of the run is set by it' % path)
    return rest, expanded

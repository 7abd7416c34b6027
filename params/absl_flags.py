"""absl's own flags, which the original command took because absl.app ran it: absl.logging's
(--logtostderr, --alsologtostderr, --log_dir, --v/--verbosity, --logger_levels,
--stderrthreshold, --showprefixforinfo) and absl.app's (--only_check_args and the debugger and
profiler switches --run_with_pdb, --pdb_post_mortem/--pdb, --run_with_profiling,
--profile_file, --use_cprofile_for_profiling). Old job scripts give them; here they parse.

* `register(flag_values)`: absl's own definitions of them on a FlagValues (absl defines them on
  its global FLAGS when absl.logging and absl.app are imported; another FlagValues, such as the
  sweep's check of its runs' flags, gets copies).
* `only_check_args(flag_values)`: --only_check_args, which the command (cli.py) answers after
  the checks made before TensorFlow loads: exit 0, or the usage error's 2, nothing run.
* `no_effect_lines(flag_values)`: one line per other one given, saying why it does nothing
  here: the command prints its lines itself (print, not absl's logging, which it never
  starts) and is not run by absl.app.
* `HELP_TEXT`: the paragraph --help ends with; `help_modules()`: the modules whose flags
  --helpfull lists after this project's.

Loads no TensorFlow.
"""

from __future__ import annotations

import copy

from absl import app as absl_app  # noqa: F401 (defines its flags on flags.FLAGS)
from absl import flags
from absl import logging as absl_logging  # noqa: F401 (likewise)

#: Why each of absl's flags (by its name; --v is --verbosity's short name, --pdb an alias of
#: --pdb_post_mortem) does nothing in this command, and what to use instead.
_NOT_LOGGED = 'the command prints its lines itself, not through absl\'s logging'
NO_EFFECT = {
    'logtostderr': _NOT_LOGGED + ' (its warnings and errors go to stderr, the rest to stdout)',
    'alsologtostderr': _NOT_LOGGED + ' (its warnings and errors go to stderr, the rest to '
                       'stdout)',
    'log_dir': _NOT_LOGGED + ', and writes no log file: redirect its output to keep it '
               '(> run.log 2>&1)',
    'verbosity': _NOT_LOGGED + '; TensorFlow\'s own C++ log follows TF_CPP_MIN_LOG_LEVEL and '
                 'TF_CPP_MAX_VLOG_LEVEL',
    'logger_levels': _NOT_LOGGED + ', and sets TensorFlow\'s Python logger to ERROR once it '
                     'loads',
    'stderrthreshold': _NOT_LOGGED + ' (its warnings and errors go to stderr, the rest to '
                       'stdout)',
    'showprefixforinfo': _NOT_LOGGED + ' (its lines carry no log prefix)',
    'run_with_pdb': 'absl.app does not run this command; for the debugger: python -m pdb -m '
                    'tf_cnn_benchmarks.tf_cnn_benchmarks ...',
    'pdb_post_mortem': 'absl.app does not run this command; for the debugger: python -m pdb '
                       '-m tf_cnn_benchmarks.tf_cnn_benchmarks ...',
    'run_with_profiling': 'absl.app does not run this command; for a Python profile: python -m '
                          'cProfile -o FILE -m tf_cnn_benchmarks.tf_cnn_benchmarks ... '
                          '(TensorFlow\'s ops: --trace_file, --tfprof_file)',
    'profile_file': 'absl.app does not run this command; for a Python profile: python -m '
                    'cProfile -o FILE -m tf_cnn_benchmarks.tf_cnn_benchmarks ...',
    'use_cprofile_for_profiling': 'absl.app does not run this command (see --run_with_profiling)',
}
#: Every name absl's flags are registered under (short names and aliases included).
NAMES = ('logtostderr', 'alsologtostderr', 'log_dir', 'verbosity', 'v', 'logger_levels',
         'stderrthreshold', 'showprefixforinfo', 'only_check_args', 'run_with_pdb',
         'pdb_post_mortem', 'pdb', 'run_with_profiling', 'profile_file',
         'use_cprofile_for_profiling')
#: absl's aliases among NAMES: alias -> the flag it sets.
_ALIASES = {'pdb': 'pdb_post_mortem'}
#: The flag a short name or alias stands for, as the lines name it.
_SPELLED = {'verbosity': '--v/--verbosity', 'pdb_post_mortem': '--pdb_post_mortem/--pdb'}

HELP_TEXT = """\
absl's own flags, as the original took them: --only_check_args runs the checks
made before TensorFlow loads and exits (0, or 2 on a usage error); absl.logging's
--logtostderr, --alsologtostderr, --log_dir, --v/--verbosity, --logger_levels,
--stderrthreshold, --showprefixforinfo and absl.app's --run_with_pdb,
--pdb_post_mortem, --run_with_profiling, --profile_file parse, and each set away
from its default prints one warning (this command prints its lines itself);
--undefok=NAME,... ignores those unknown flags. --helpfull adds their help."""


def help_modules() -> tuple[str, ...]:
    """The modules defining absl's flags on flags.FLAGS, for --helpfull (FlagValues.module_help)."""
    return ('absl.app', 'absl.logging')


def register(flag_values: flags.FlagValues) -> None:
    """Registers absl's flags (NAMES) on `flag_values`, from absl's own definitions: on absl's
    global FLAGS they are there once absl.app and absl.logging are imported (this module
    imports both); another FlagValues gets unparsed copies, one per flag (--v stays one flag
    with --verbosity; --pdb is absl's alias of the copy of --pdb_post_mortem), so that parsing
    it sets nothing of FLAGS. Names already defined on `flag_values` are left as they are.

    Args:
      flag_values: where the command's flags are defined (params.define_flags).
    """
    copies = {}
    for name in NAMES:
        if name in flag_values:
            continue
        if name in _ALIASES:
            flags.DEFINE_alias(name, _ALIASES[name], flag_values=flag_values)
            continue
        flag = flags.FLAGS[name]
        if id(flag) not in copies:
            copies[id(flag)] = copy.deepcopy(flag)
            copies[id(flag)].unparse()
        flag_values[name] = copies[id(flag)]


def only_check_args(flag_values: flags.FlagValues) -> bool:
    """Whether the parsed `flag_values` ask for --only_check_args."""
    return 'only_check_args' in flag_values and bool(flag_values['only_check_args'].value)


def no_effect_lines(flag_values: flags.FlagValues) -> list[str]:
    """One line per flag of NO_EFFECT the parsed `flag_values` hold from the command line (a
    flagfile or --config included) at another value than absl's default, in NO_EFFECT's
    order: '--alsologtostderr has no effect here: the command prints its lines itself, not
    through absl's logging (...)'. One at its default (--nologtostderr,
    --showprefixforinfo) asks for nothing absl's logging would do otherwise: no line."""
    out = []
    for name in NO_EFFECT:
        flag = flag_values[name] if name in flag_values else None
        if flag is not None and flag.present and flag.value != flag.default:
            out.append('%s has no effect here: %s' % (_SPELLED.get(name, '--' + name),
                                                        NO_EFFECT[name]))
    return out

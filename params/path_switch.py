"""A flag that is a path or off: `--results_db=PATH`, `--results_db` (the default place),
`--noresults_db` (nothing).

absl understands `--noNAME` only for boolean flags, so the flag is one: its value is None (on,
at the default place), False (`--noNAME`, `--NAME=false`) or the path given (`--NAME=PATH`;
the path goes after '=', as `--NAME PATH` would read PATH as another argument). It works in
flag files too, and --help lists it as `--[no]NAME`.
"""

from __future__ import annotations

from absl import flags

OFF_WORDS = ('false', 'off', 'no')
ON_WORDS = ('true', 'on', 'yes')


class PathSwitchParser(flags.ArgumentParser):
    """Parses 'true' (the default place: None), 'false' (off: False) or a path."""

    syntactic_help = 'a path after =, or the --no form for none'

    def parse(self, argument):
        if argument is None or argument is True:
            return None
        if argument is False:
            return False
        text = str(argument)
        if text.lower() in ON_WORDS:
            return None
        if text.lower() in OFF_WORDS:
            return False
        if not text.strip():
            raise ValueError('takes a file name after = (or --no<flag> for none)')
        return text

    def flag_type(self):
        return 'path or off'


class PathSwitchFlag(flags.Flag):
    """The flag itself: boolean for absl's parser, a path or False in value."""

    def __init__(self, name, default, help_string):
        super().__init__(PathSwitchParser(), flags.ArgumentSerializer(), name, default,
                         help_string, boolean=True)

    def _serialize(self, value):
        if value is None:
            return '--%s' % self.name
        if value is False:
            return '--no%s' % self.name
        return '--%s=%s' % (self.name, value)


def define(name: str, default, help_string: str, flag_values: flags.FlagValues) -> None:
    """Registers a PathSwitchFlag (the definer of the table's 'path_or_off' kind) as a flag of
    the params package, where --help lists the table's flags."""
    flags.DEFINE_flag(PathSwitchFlag(name, default, help_string), flag_values,
                      module_name=__name__.rpartition('.')[0])

"""Where the results database is (history/store.py re-exports these): --results_db=PATH,
else TF_CNN_RESULTS_DB (read as the flag is: `variable_value`), else
`$XDG_DATA_HOME/tf_cnn_benchmarks/results.sqlite` (`~/.local/share`): `default_path()`. No
SQLite here.
"""

from __future__ import annotations

import os

from ..hardware import user_dirs
from ..params import path_switch

FILE_NAME = 'results.sqlite'
#: The environment variable that names the database when --results_db is not given.
PATH_VARIABLE = 'TF_CNN_RESULTS_DB'


def data_folder(environ=None) -> str:
    """`$XDG_DATA_HOME/tf_cnn_benchmarks` (else under ~/.local/share): the default folder."""
    return os.path.join(user_dirs.base_folder('XDG_DATA_HOME', ('.local', 'share'), environ),
                        'tf_cnn_benchmarks')


def variable_value(environ=None):
    """TF_CNN_RESULTS_DB read as --results_db is (params/path_switch.py): None (unset, empty,
    'true': the default place), False ('false', 'off', 'no': record nothing), or its path."""
    environ = os.environ if environ is None else environ
    given = environ.get(PATH_VARIABLE, '').strip()
    if not given or given.lower() in path_switch.ON_WORDS:
        return None
    if given.lower() in path_switch.OFF_WORDS:
        return False
    return user_dirs.expand_home(given, environ)


def default_path(environ=None) -> str:
    """The database of a run without --results_db: TF_CNN_RESULTS_DB's path when it names one
    (`~` expanded), else `data_folder()`'s results.sqlite."""
    given = variable_value(environ)
    if isinstance(given, str):
        return given
    return os.path.join(data_folder(environ), FILE_NAME)


def default_origin(environ=None) -> str:
    """Where `default_path` took the path from, for a message: ' (not given: TF_CNN_RESULTS_DB)',
    ' (not given: under XDG_DATA_HOME)' or ' (not given: under ~/.local/share)'."""
    environ = os.environ if environ is None else environ
    if isinstance(variable_value(environ), str):
        return ' (not given: %s)' % PATH_VARIABLE
    xdg = os.path.isabs(environ.get('XDG_DATA_HOME') or '')
    return ' (not given: under %s)' % ('XDG_DATA_HOME' if xdg else '~/.local/share')


def resolve_path(value) -> str | None:
    """The file a --results_db value names: None (or True) -> `default_path()` (None where
    TF_CNN_RESULTS_DB is off); False -> None (off); a path -> itself, `~` expanded."""
    if value is False:
        return None
    if value is None or value is True:
        return None if variable_value() is False else default_path()
    return user_dirs.expand_home(str(value))


def home_problem(path: str) -> str | None:
    """Why the results database `path` cannot be made where it is: 'is under the home folder
    /nonexistent (HOME), which does not exist and is not made' (user_dirs.py), or None."""
    home = user_dirs.absent_home(path)
    return user_dirs.absent_home_text(home) if home else None


def run_path(value) -> str | None:
    """The database a run records into: `resolve_path(value)`, except that the default place
    (--results_db not given) under a home folder that does not exist is None, as
    --noresults_db: the run is not recorded and the home folder is not made
    (preflight/output_paths.py says so in one warning line)."""
    path = resolve_path(value)
    if value in (None, True) and path and home_problem(path):
        return None
    return path

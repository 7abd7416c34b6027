"""Where the results database is (history/store.py re-exports these): --results_db=PATH,
else TF_CNN_RESULTS_DB (read as the flag is: `variable_value`), else
`$XDG_DATA_HOME/tf_cnn_benchmarks/results.sqlite` (`~/.local/share`): `default_path()`; and
whether a run can write it there (`write_problem`, `default_problem`). No SQLite here.

The default place (neither --results_db nor TF_CNN_RESULTS_DB given) that a run cannot use,
under a home folder that does not exist or on storage it cannot write (a read-only home in a
locked-down container), costs the run its record, not the run: store.run_path is None there
and the run's check says so in one warning line (preflight/output_paths.py); store.py adds a
database there of a newer schema (its `default_problem`, which reads the file). A database
named by --results_db or TF_CNN_RESULTS_DB that cannot be written is a usage error.
"""

from __future__ import annotations

import os

from .. import cnn_util
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


def read_only_reason(path: str) -> str | None:
    """Why the results database at `path` cannot be written here, or None.

    A database in WAL mode needs its file and its folder writable (the -wal and -shm files
    are made beside it). Read-only storage is told by the file system's flag (statvfs
    ST_RDONLY: a read-only mount, which stops root too) or by access(2) (permissions, an
    immutable file or folder).
    """
    folder = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(folder):
        folder = os.path.dirname(folder)
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return '%s is on a read-only file system' % folder
    except OSError:
        pass
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return 'the file is read-only'
    if not os.access(folder, os.W_OK | os.X_OK):
        return 'its folder %s is not writable' % folder
    return None


#: The fixes of a database a run cannot write (`write_problem`), for a named one.
ANOTHER_PATH = 'give another --results_db=PATH'
RUN_NEEDS_ANOTHER = 'a run needs another --results_db=PATH'
READ_ONLY_COMMANDS = ("tf_cnn_results' read-only commands (list, show, history, regressions, "
                      'html) read it, a run needs another --results_db=PATH')


def write_problem(database: str) -> tuple[str, str] | None:
    """Why a run could not write the results database `database` (its content is
    store.check_file's), or None; tried for real, because os.access lets root pass on
    read-only and special file systems (/proc).

    A database that does not exist yet: under a home folder that does not exist (never
    made), below a file, on read-only storage (`read_only_reason`); else in its folder, when
    that exists, a file is made and removed (a folder such as /proc exists but holds no
    file: the reason says so); else its missing folders must be creatable (the store makes
    every level) under the nearest existing folder, where a folder is made and removed.
    An existing one: the file is opened for appending (nothing is written) and a file is
    made and removed in its folder (WAL's -wal and -shm files go there): on a read-only
    mount, or a file or folder whose permission bits deny this user, the run would train and
    then fail to record.

    Returns:
      None, or (what, fix): what follows the database's path in a message ('cannot be made:
      /h is on a read-only file system', 'is under the home folder /h (HOME), which ...'),
      and the fix for a database given by name (ANOTHER_PATH, RUN_NEEDS_ANOTHER or
      READ_ONLY_COMMANDS).
    """
    folder = os.path.dirname(os.path.abspath(database))
    if os.path.exists(database):
        try:
            open(database, 'ab').close()
            problem = cnn_util.write_problem(folder)
        except OSError as e:
            problem = 'opening it for writing: %s' % (e.strerror or e)
        if problem:
            return ('cannot be written: %s' % (read_only_reason(database) or problem),
                    READ_ONLY_COMMANDS)
        return None
    home = home_problem(database)
    if home:
        return home, ANOTHER_PATH
    existing = folder
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        return 'cannot be made: %s is a file, not a folder' % existing, ANOTHER_PATH
    reason = read_only_reason(database)  # a read-only mount (EROFS) or permission bits
    if reason:
        return 'cannot be made: %s' % reason, RUN_NEEDS_ANOTHER
    if existing == folder:  # the file itself is all there is to make
        problem = cnn_util.write_problem(folder)
        if problem:
            return 'cannot be made: %s' % _cannot_hold(folder, problem), ANOTHER_PATH
        return None
    probe = os.path.join(existing, '.tf_cnn_benchmarks_probe_%d' % os.getpid())
    try:
        os.mkdir(probe)
        os.rmdir(probe)
    except OSError as e:
        return ('cannot be made: the folder %s exists but no folder can be made in it (%s)'
                % (existing, e.strerror or e)), ANOTHER_PATH
    return None


def _cannot_hold(folder: str, problem: str) -> str:
    """cnn_util.write_problem's `problem` for the existing `folder` as a reason: 'the folder
    /proc exists but cannot hold files (a special file system: making a file there fails: No
    such file or directory)', or the problem as it is ('cannot write in /x: Read-only file
    system')."""
    special = 'cannot write in %s: not a normal folder (making a file there fails: ' % folder
    if problem.startswith(special):
        return cnn_util.cannot_hold_text(folder, problem[len(special):-1])
    return problem


def default_problem(value, environ=None) -> str | None:
    """Why a run with --results_db `value` does not record at all, or None: the database is
    its default place (`value` None or True) and that is under a home folder that does not
    exist ('is under the home folder /h (HOME), which does not exist and is not made', also
    TF_CNN_RESULTS_DB's path there), or, neither --results_db nor TF_CNN_RESULTS_DB naming
    it, cannot be made or written there (`write_problem`'s 'cannot be made: /h is on a
    read-only file system')."""
    if value not in (None, True):
        return None
    path = resolve_path(value)
    if not path:
        return None
    home = home_problem(path)
    if home:
        return home
    if variable_value(environ) is not None:  # named by TF_CNN_RESULTS_DB: the run's check
        return None
    problem = write_problem(path)
    return problem[0] if problem else None

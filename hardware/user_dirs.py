"""The user's default folders: the home folder as `~` reads it, the XDG base folders under it,
and whether a default place lies under a home folder that does not exist.

`~` is $HOME, or where HOME is unset or empty the account's home folder in the password
database (`home`, `home_origin`): os.path.expanduser's rule, except for an empty HOME (a CI
job's `HOME=`), which expanduser reads as the root folder and a plain join as the working
folder (the results database and the calibration record went into ./.local/share and
./.cache of the folder the command ran in, silently); an account with no home at all has
`NO_HOME`, which does not exist. The default places of this program are
under it unless an XDG variable or the program's own variable names another folder: the results
database (`$XDG_DATA_HOME`, else `~/.local/share`: history/store.py), the calibration record and
the shard scan cache (`$XDG_CACHE_HOME`, else `~/.cache`: hardware/calibration.py,
input_data/shard_scan.py).

A home folder that does not exist (a CI job's HOME=/nonexistent, a service account's) is never
made: a place under it is not used (`absent_home` says which home), each user of one says so in
one `warning:` line naming what is not kept and goes on, and runtime/runtime_env.py keeps
TensorFlow's Keras and matplotlib, which write their own settings under `~` when they load,
away from it. The standard library only: the command reads it before TensorFlow loads.
"""

from __future__ import annotations

import os

#: The home folder of an account that has none (HOME unset or empty, and no home folder in the
#: password database): `~` itself, as os.path.expanduser leaves it; never a folder (`absent_home`).
NO_HOME = '~'


def home(environ=None) -> str:
    """The home folder `~` names: $HOME when HOME is set and not empty, else (unset, or empty:
    `HOME=`) the account's home folder in the password database, else NO_HOME."""
    environ = os.environ if environ is None else environ
    if environ.get('HOME'):
        return environ['HOME']
    try:
        import pwd
        return pwd.getpwuid(os.getuid()).pw_dir or NO_HOME
    except (ImportError, KeyError):  # no password database, or no entry for this user
        return NO_HOME


def home_origin(environ=None) -> str:
    """Where `home` came from, for a message: 'HOME', or 'HOME is unset: the account's home
    folder in the password database' ('HOME is empty: ...' for `HOME=`)."""
    environ = os.environ if environ is None else environ
    if environ.get('HOME'):
        return 'HOME'
    return 'HOME is %s: the account\'s home folder in the password database' % (
        'empty' if 'HOME' in environ else 'unset')


def base_folder(variable: str, tail: tuple[str, ...], environ=None) -> str:
    """`$variable` when set to an absolute path (an XDG base folder: 'XDG_DATA_HOME'), else
    `home()` joined with `tail` (('.local', 'share')): the XDG Base Directory Specification
    ignores an empty or relative value."""
    environ = os.environ if environ is None else environ
    given = environ.get(variable) or ''
    return given if os.path.isabs(given) else os.path.join(home(environ), *tail)


def expand_home(path: str, environ=None) -> str:
    """`path` with a leading `~` or `~user` as the shell expands it (os.path.expanduser; `~`
    is `home()`), else unchanged: a path flag's value after '=' (`--results_db=~/r.sqlite`),
    which the shell leaves as typed, means what TF_CNN_RESULTS_DB='~/r.sqlite' and
    --flagfile=~/f mean, not a folder named '~'."""
    if not path.startswith('~'):
        return path
    if path == '~' or path.startswith('~/'):
        return home(environ) + path[1:]
    return os.path.expanduser(path)


def absent_home(path: str, environ=None) -> str | None:
    """The home folder when `path` lies under it (or is it) and it does not exist; None when
    the home folder exists, or `path` is elsewhere. NO_HOME never exists: a path under it
    starts with `~/`."""
    folder = home(environ)
    if folder == NO_HOME:
        return NO_HOME if path == NO_HOME or path.startswith(NO_HOME + os.sep) else None
    if os.path.isdir(folder):
        return None
    folder = os.path.abspath(folder)
    full = os.path.abspath(path)
    return folder if full == folder or full.startswith(folder.rstrip(os.sep) + os.sep) else None


def absent_home_text(folder: str, environ=None) -> str:
    """'is under the home folder /nonexistent (HOME), which does not exist and is not made':
    the reason a default place under `folder` (`absent_home`'s) is not used; for a home that
    is a file (HOME=/etc/passwd), '..., which is a file, not a folder'; for NO_HOME, 'is
    under the home folder ~, which this account does not have (...)'."""
    if folder == NO_HOME:
        return ('is under the home folder ~, which this account does not have (HOME is %s, and '
                'the password database names no home folder for it)'
                % ('empty' if 'HOME' in (os.environ if environ is None else environ)
                   else 'unset'))
    what = ('is a file, not a folder' if os.path.isfile(folder)
            else 'is not a folder' if os.path.lexists(folder)  # a dangling link, a device
            else 'does not exist and is not made')
    return 'is under the home folder %s (%s), which %s' % (folder, home_origin(environ), what)

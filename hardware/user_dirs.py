"""The user's default folders: the home folder as `~` reads it, the XDG base folders under it,
and whether a default place lies under a home folder that does not exist.

`~` is $HOME, or where HOME is unset the account's home folder in the password database
(os.path.expanduser's rule: `home`, `home_origin`). The default places of this program are
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


def home(environ=None) -> str:
    """The home folder `~` names: $HOME when HOME is set (even empty, as expanduser reads it),
    else the account's home folder in the password database ('' when there is none)."""
    environ = os.environ if environ is None else environ
    if 'HOME' in environ:
        return environ['HOME']
    try:
        import pwd
        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError):  # no password database, or no entry for this user
        return ''


def home_origin(environ=None) -> str:
    """Where `home` came from, for a message: 'HOME', or 'HOME is unset: the account's home
    folder in the password database'."""
    environ = os.environ if environ is None else environ
    if 'HOME' in environ:
        return 'HOME'
    return 'HOME is unset: the account\'s home folder in the password database'


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
        return home(environ) + path[1:] if home(environ) else path
    return os.path.expanduser(path)


def absent_home(path: str, environ=None) -> str | None:
    """The home folder when `path` lies under it (or is it) and it does not exist; None when
    the home folder exists, or `path` is elsewhere."""
    folder = home(environ)
    if not folder or os.path.isdir(folder):
        return None
    folder = os.path.abspath(folder)
    full = os.path.abspath(path)
    return folder if full == folder or full.startswith(folder.rstrip(os.sep) + os.sep) else None


def absent_home_text(folder: str, environ=None) -> str:
    """'is under the home folder /nonexistent (HOME), which does not exist and is not made':
    the reason a default place under `folder` (`absent_home`'s) is not used; for a home that
    is a file (HOME=/etc/passwd), '..., which is a file, not a folder'."""
    what = ('is a file, not a folder' if os.path.isfile(folder)
            else 'is not a folder' if os.path.lexists(folder)  # a dangling link, a device
            else 'does not exist and is not made')
    return 'is under the home folder %s (%s), which %s' % (folder, home_origin(environ), what)

"""The paths `tf_cnn_results` writes, checked before any work: history's --png, html's
OUT_DIR, and the database a command names (`--results_db=PATH` or $TF_CNN_RESULTS_DB).

Each check returns the one line of a usage error (results_cli.py raises it: `error:` and exit
status 2), or None: a file path ending in a path separator names a folder, a symbolic link
that leads nowhere or a loop of them is named as such, a folder on the way that is a file is
called a file, and the folder is tried for real (cnn_util.write_problem).
"""

from __future__ import annotations

import os

from tf_cnn_benchmarks import cnn_util
from tf_cnn_benchmarks.runtime import file_systems


def output_problem(path: str, is_file: bool) -> str | None:
    """Why history's --png (`is_file`: a file whose folder must exist) or html's OUT_DIR (a
    folder, made with its missing parents) cannot be written, or None.

    Returns:
      None, or one line naming the path, what is wrong (it is a folder, or a file; it names a
      folder, ending in '/'; a symbolic link that leads nowhere, or a loop of them; its folder
      does not exist, or is a file; it cannot be written there) and the fix.
    """
    what = '--png=%s' % path if is_file else 'html OUT_DIR %s' % path
    fix = 'give a file name in a folder this user can write' if is_file else (
        'give a folder this user can write (made when missing) for its index.html')
    named_folder = is_file and file_systems.folder_name_problem(path, 'history.png')
    if named_folder:
        return '%s: %s' % (what, named_folder)
    loop = file_systems.link_loop(path)
    if loop:
        return '%s: it is %s; %s' % (what, loop, fix)
    if is_file and os.path.isdir(path):
        return '%s is a folder; %s' % (what, fix)
    if not is_file and os.path.exists(path) and not os.path.isdir(path):
        return '%s is a file, not a folder; %s' % (what, fix)
    link = not is_file and not os.path.exists(path) and file_systems.dangling_link_on(path)
    if link:  # os.makedirs would fail on it ('File exists')
        return '%s: %s; %s' % (what, link, fix)
    folder = os.path.dirname(os.path.abspath(path)) if is_file else os.path.abspath(path)
    if is_file and not os.path.isdir(folder):
        shown = os.path.dirname(path)
        if os.path.exists(folder):
            return '%s: %s is a file, not a folder; %s' % (what, shown, fix)
        link = file_systems.dangling_link_on(folder)
        if link:
            return '%s: %s; %s' % (what, link, fix)
        return '%s: its folder %s does not exist; create it, or %s' % (what, shown, fix)
    while not os.path.exists(folder):
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder):
        return '%s: %s is a file, not a folder; %s' % (what, folder, fix)
    problem = cnn_util.write_problem(folder)
    return '%s: %s; %s' % (what, problem, fix) if problem else None


def database_name_problem(path: str, given: str | None, variable: str) -> str | None:
    """Why `path`, the database a command reads or writes, cannot be one: it ends in a path
    separator (`--results_db=/tmp/x/dbdir/` names a folder, where SQLite would make or look
    for a file without the separator); else None.

    Args:
      path: the database's path (results_cli.database_path).
      given: --results_db's value as given, or None (then the path is `variable`'s).
      variable: the environment variable that names the database without the flag.
    """
    problem = file_systems.folder_name_problem(path, 'results.sqlite')
    if not problem:
        return None
    return '%s: %s' % ('--results_db=%s' % given if given else '$%s=%s' % (variable, path),
                       problem)

"""Up-front checks that a run's output paths can be written (before TensorFlow loads).

A --train_dir that cannot be created used to fail after the graph was built, minutes into a run;
the command calls `check_output_paths` right after `params.validate_params`.

Missing folders are made, as the original's gfile.MakeDirs made them: a directory flag's
folder with its missing parents, a file flag's folder. The check here makes and removes them
(nothing is left behind when the run stops on a later usage error); the command then makes the
parents of the outputs it writes (`make_parent_folders`; a --dry_run writes only
--benchmark_log_dir's JSON: `written_outputs`) and says which it made, so that a mistyped prefix
(`--trace_file=/tmp/tarce/t.json`) shows at once where its files go. Each path given, and the
longest file the run writes, must fit the system's path limits (preflight/path_lengths.py),
checked first: a path over PATH_MAX cannot even be looked up.

A path with a scheme (`gs://bucket/run1`, `ram://x`: runtime/file_systems.py) is refused
before TensorFlow loads when no file system can serve its scheme (`check_path_schemes`);
the local checks do not apply to it (one `warning:` line says so), and once TensorFlow has
loaded a file is written and removed in each remote output folder (`check_remote_paths`).
"""

from __future__ import annotations

import codecs
import os
import sys
import tempfile

from .. import cnn_util
from .. import params as params_lib
from ..hardware import calibration
from ..history import store
from ..params import Params, ParamsError
from ..runtime import dir_hold, file_systems
from . import path_lengths

_OUTPUT_DIRS = ('train_dir', 'benchmark_log_dir', 'eval_dir')
#: The fix a run's warning gives for the default database it does not record into.
DEFAULT_PLACE_FIX = 'give --results_db=PATH to record it, or --noresults_db to record nothing'

_OUTPUT_FILES = ('trace_file', 'graph_file', 'tfprof_file', 'plot_file',
                 'partitioned_graph_file_prefix')
#: The file flags (and the database) whose value must name a file, with an example name for
#: the fix of one ending in a path separator (file_systems.folder_name_problem); not
#: --partitioned_graph_file_prefix, a prefix, where `dir/` names the files' folder.
FILE_EXAMPLES = {'trace_file': 'trace.json', 'graph_file': 'graph.pbtxt',
                 'tfprof_file': 'profile.txt', 'plot_file': 'plot.png',
                 'plan_scaling_png': 'scaling.png', 'results_db': 'results.sqlite'}
# Paths TensorFlow itself opens by name (checkpoints, summaries, the graph file): it takes them
# as UTF-8, so a name the file system encoding could only escape cannot reach it.
_TENSORFLOW_PATHS = ('train_dir', 'graph_file', 'checkpoint_path', 'eval_dir')


def encoding_problem(path: str) -> str | None:
    """Why TensorFlow cannot be given `path` by name, or None.

    TensorFlow takes a name as UTF-8. A name this process could only read as surrogate escapes
    is not: under a UTF-8 file system encoding the name's bytes are not valid UTF-8 (the name
    itself must change); under an ASCII one (the C locale) any non-ASCII name is read so, and
    a UTF-8 locale reads it.
    """
    try:
        path.encode('utf-8')
    except UnicodeEncodeError:
        encoding = sys.getfilesystemencoding()
        if codecs.lookup(encoding).name == 'utf-8':
            raw = os.fsencode(path)
            try:
                raw.decode('utf-8')
                first = ''
            except UnicodeDecodeError as e:
                first = ' (byte %#04x at offset %d)' % (raw[e.start], e.start)
            return ('its name is not valid UTF-8%s, and TensorFlow takes names as UTF-8; '
                    'rename it (or give another path) with a name in UTF-8' % first)
        return ('its name is not ASCII and this process reads names as %s (the locale), so '
                'TensorFlow cannot be given it; run under a UTF-8 locale (LC_ALL=C.UTF-8) or '
                'with PYTHONUTF8=1' % encoding)
    return None


#: `path` as a message shows it: undecodable bytes as '\\xff' (cnn_util's, re-exported).
shown_name = cnn_util.shown_name


#: Tries of `_creatable_dir_problem` when the folder vanished between its making and the test
#: file: the cluster's tasks, started together, probe the same missing folder, and each removes
#: what it made.
PROBE_TRIES = 5


def _creatable_dir_problem(path: str) -> str | None:
    """Why directory `path` cannot exist or be made by this process, or None if it can.

    Tried for real: the missing directories are made and a file is created in `path`, then
    everything made is removed again (permissions, read-only or special file systems such as
    /proc, over-long names: what would stop the run is met here, not after the graph is built).
    A folder another task of the cluster made and removed again meanwhile (its own probe) is
    tried again, up to PROBE_TRIES times.
    """
    for _ in range(PROBE_TRIES):
        problem = _probe(path)
        if problem is not _VANISHED:
            return problem
    return ('cannot create a file in %s: it was removed as soon as it was made, %d times '
            '(another process removes it)' % (os.path.abspath(path), PROBE_TRIES))


_VANISHED = object()  # `_probe`: the folder was there, then gone before the test file


def _probe(path: str):
    """One try of `_creatable_dir_problem`: its problem, None, or _VANISHED (the folder was
    gone when the test file was made in it; a folder still there where making a file fails
    with ENOENT is a special file system's, /proc: `cnn_util.cannot_hold_text`)."""
    if not os.path.exists(path):  # a dangling link or a loop of links, on the way or itself
        link = file_systems.dangling_link_on(path)
        if link:
            return link
    missing = [os.path.abspath(path)]
    while not os.path.exists(missing[-1]):
        missing.append(os.path.dirname(missing[-1]))
    parent, missing = missing[-1], missing[-2::-1]  # outermost missing directory first
    if not os.path.isdir(parent):
        return '%s is a file, not a directory' % parent
    made = []
    try:
        for folder in missing:
            step = 'cannot create %s' % folder
            try:
                os.mkdir(folder)
            except FileExistsError:  # another task of the cluster made it meanwhile
                if os.path.isdir(folder):
                    continue
                raise
            made.append(folder)
        step = 'cannot create a file in %s' % os.path.abspath(path)
        tempfile.TemporaryFile(dir=path).close()
    except OSError as e:
        if step.startswith('cannot create a file'):
            if os.path.isdir(path) and e.errno in cnn_util.SPECIAL_FOLDER_ERRNOS:
                return cnn_util.cannot_hold_text(os.path.abspath(path), e.strerror or str(e))
            if isinstance(e, FileNotFoundError):
                return _VANISHED  # removed by another task's probe meanwhile
        return '%s: %s' % (step, e.strerror or e)
    finally:
        for folder in reversed(made):
            try:
                os.rmdir(folder)
            except OSError:  # another process put files there meanwhile: theirs
                pass
    return None


def _missing_folders(folder: str) -> list[str]:
    """The folders of local path `folder` that do not exist, outermost first (absolute)."""
    missing = []
    folder = os.path.abspath(folder)
    while not os.path.exists(folder):
        missing.append(folder)
        folder = os.path.dirname(folder)
    return missing[::-1]


def written_outputs(p: Params) -> tuple[str, ...]:
    """The output flags whose files `p`'s command writes, in cli.py's order of modes:
    --calibrate writes only the calibration record (none of them); --plan_scaling the plan's
    JSON into --benchmark_log_dir and --plan_scaling_png (preflight/scaling_plan.py); --dry_run
    its report's JSON into --benchmark_log_dir (preflight/dry_run.py); a run (training, an
    --eval) `output_dirs`, the file flags (its hooks: lifecycle/wiring.py) and the results
    database ('results_db')."""
    if p.calibrate:
        return ()
    if p.plan_scaling:
        return ('benchmark_log_dir', 'plan_scaling_png')
    if p.dry_run:
        return ('benchmark_log_dir',)
    return output_dirs(p) + _OUTPUT_FILES + ('results_db',)


def parent_folders(p: Params) -> list[tuple[str, str]]:
    """The missing folders above each local output path that `p`'s command writes
    (`written_outputs`; a --dry_run's --train_dir is checked, not made): (flag, folder) pairs,
    outermost first, each folder once: a directory flag's parents (the folder itself is made
    where the run writes into it: runtime/dir_hold.py, the hooks), a file flag's folder and
    its parents."""
    out, seen = [], set()
    paths = [(name, named_database(p) if name == 'results_db' else getattr(p, name))
             for name in written_outputs(p)]
    for name, path in paths:
        if not path or file_systems.is_remote(path):
            continue
        if name in FILE_EXAMPLES and os.path.islink(path):  # written at the link's target
            path = file_systems.write_target(path)
        for folder in _missing_folders(os.path.dirname(os.path.abspath(path))):
            if folder not in seen:
                seen.add(folder)
                out.append((name, folder))
    return out


def named_database(p: Params) -> str | None:
    """The results database's path when the user named it (--results_db=PATH, or
    $TF_CNN_RESULTS_DB without the flag), else None (off, or the default place under the
    XDG data folder, whose folders are made as that specification expects)."""
    if isinstance(p.results_db, str):
        return p.results_db
    if p.results_db is not False and isinstance(store.variable_value(), str):
        return store.default_path()
    return None


def _flag_text(p: Params, name: str) -> str:
    """'--train_dir=/tmp/a' for a message; the database named by the environment as
    '$TF_CNN_RESULTS_DB=/tmp/r.sqlite'."""
    if name == 'results_db' and not isinstance(p.results_db, str):
        return '$%s=%s' % (store.PATH_VARIABLE, store.default_path())
    return '--%s=%s' % (name, getattr(p, name))


def folders_to_make(p: Params) -> list[tuple[str, str]]:
    """`parent_folders` with each flag as a message names it (`_flag_text`): the (flag,
    folder) pairs runtime/dir_hold.make_parent_folders makes once every check passed."""
    return [(_flag_text(p, name), folder) for name, folder in parent_folders(p)]


def make_parent_folders(p: Params) -> list[str]:
    """Makes the folders `parent_folders` names, as the original's gfile.MakeDirs did, and
    returns one line per flag that needed some, e.g. 'Made the missing folders /tmp/a,
    /tmp/a/b for --train_dir=/tmp/a/b/run1' (runtime/dir_hold.make_parent_folders, which the
    command calls with the usage check's `folders_to_make`): [] when none was missing.

    Raises:
      ParamsError: a folder cannot be made after all (`check_output_paths` tried it first;
        another process may have changed the disk meanwhile).
    """
    return dir_hold.make_parent_folders(folders_to_make(p))


def check_path_schemes(p: Params) -> None:
    """Refuses, before TensorFlow loads, a path flag whose scheme no file system serves
    (`file_systems.scheme_problem`), and a scheme where only a local file will do (the
    results database, params.LOCAL_PATH_FLAGS).

    Raises:
      ParamsError: naming the flag, the scheme and what provides it.
    """
    for name in params_lib.PATH_FLAGS:
        path = getattr(p, name)
        if not file_systems.is_remote(path):
            continue
        if name in params_lib.LOCAL_PATH_FLAGS:
            raise ParamsError('--%s=%s: this file is written by matplotlib on a local disk; '
                              'give a local path' % (name, path))
        problem = file_systems.scheme_problem(path)
        if problem:
            raise ParamsError('--%s=%s: %s' % (name, path, problem))
    if isinstance(p.results_db, str) and file_systems.is_remote(p.results_db):
        raise ParamsError('--results_db=%s: the results database is an SQLite file, which '
                          'needs a local disk; give a local path (tf_cnn_results can read a '
                          'copy)' % p.results_db)


def output_dirs(p: Params) -> tuple[str, ...]:
    """The directory flags whose folders `p`'s run writes into. An --eval only reads
    --train_dir (its checkpoints; runtime/dir_hold.py does not hold it either), unless its
    summaries go to <train_dir>/eval (--summary_verbosity >= 1 without --eval_dir): a
    training directory on read-only storage can be evaluated."""
    if p.eval and not (p.summary_verbosity >= 1 and not p.eval_dir):
        return tuple(n for n in _OUTPUT_DIRS if n != 'train_dir')
    return _OUTPUT_DIRS


def remote_outputs(p: Params) -> list[str]:
    """The output flags of `p` that name remote paths, as '--flag=value'."""
    return ['--%s=%s' % (n, getattr(p, n)) for n in output_dirs(p) + _OUTPUT_FILES
            if file_systems.is_remote(getattr(p, n))]


def check_working_folder(p: Params) -> None:
    """Refuses a relative path flag (params.PATH_FLAGS, --results_db, or TF_CNN_RESULTS_DB's
    path) when the working folder no longer exists (cnn_util.working_folder_problem): every
    look-up of it would fail with 'No such file or directory'.

    Raises:
      ParamsError: naming the working folder, the flag and the fix (absolute paths, or cd to
        an existing folder).
    """
    given = [('--' + name, getattr(p, name)) for name in params_lib.PATH_FLAGS]
    if isinstance(p.results_db, str):
        given.append(('--results_db', p.results_db))
    elif p.results_db is None and isinstance(store.variable_value(), str):
        given.append((store.PATH_VARIABLE, store.default_path()))
    problem = cnn_util.working_folder_problem(given)
    if problem:
        raise ParamsError(problem)


def check_output_paths(p: Params) -> None:
    """Checks up front that every output directory and file of the run can be written.

    Directories (--train_dir, --benchmark_log_dir, --eval_dir; an --eval's --train_dir only
    where its summaries go: `output_dirs`) and the folders of files (--trace_file,
    --graph_file, --tfprof_file, --plot_file) may not exist yet, with any of their parents:
    they must be makeable under the nearest existing folder (a file flag must not name a
    directory). Each is tried for real (made, a file created in it, then removed again):
    nothing is left behind (`make_parent_folders` makes the parents for the run).

    Paths TensorFlow opens by name must be UTF-8 (`encoding_problem`). Each local path given,
    and the longest file the run writes, must fit PATH_MAX and NAME_MAX (path_lengths.py),
    checked before the paths are looked up. The results database (--results_db, or its
    default place) must be ours (store.check_file) and writable (tried: store.write_problem),
    or can be made; its default place (neither --results_db nor TF_CNN_RESULTS_DB given)
    under a home folder that does not exist, or on storage this user cannot write (a
    read-only home), or holding a database of a newer schema than this program knows (an older
    install beside a newer one), is not used: one `warning:` line says the run is not
    recorded, why, and the fix (store.default_problem, store.run_path), and the run goes on.

    Remote paths: see `check_path_schemes`; one `warning:` line names them and the checks
    that do not apply there. --plan_scaling_png is a file as above; with --calibrate, the
    calibration record (TF_CNN_CALIBRATION's path, or the cache folder's) must be writable.

    Raises:
      ParamsError: naming the flag, the path and what is wrong with it.
    """
    check_path_schemes(p)
    for name in _TENSORFLOW_PATHS:
        path = getattr(p, name)
        problem = path and encoding_problem(path)
        if problem:
            raise ParamsError('--%s=%s cannot be used: %s.' % (name, shown_name(path), problem))
    _check_file_names(p)
    path_lengths.check_given_paths(p)
    if writes := any(getattr(p, name) for name in _OUTPUT_DIRS + _OUTPUT_FILES):
        path_lengths.check_path_lengths(p)
    checks = [(name, getattr(p, name), False) for name in output_dirs(p)]
    checks += [(name, getattr(p, name), True) for name in _OUTPUT_FILES + ('plan_scaling_png',)]
    for name, path, is_file in checks:
        if not path or file_systems.is_remote(path):
            continue
        loop = is_file and file_systems.link_loop(path)
        if loop:
            problem = 'it is %s; give a file name that leads to a file' % loop
        elif is_file and os.path.isdir(path):
            problem = 'it is a directory; give a file name'
        elif is_file and os.path.exists(path) and not os.path.isfile(path):
            # A device or pipe: written under a temporary name and renamed over, it would be
            # replaced by a regular file (/dev/full, /dev/null).
            problem = 'it is not a regular file (a device or a pipe); give a file name'
        elif name == 'plot_file' and not path.lower().endswith('.png'):
            problem = 'the plot is a PNG image; give a name ending in .png'
        else:  # a file flag's link: its target's folder (written there: write_target)
            written = file_systems.write_target(path) if os.path.islink(path) else path
            problem = _creatable_dir_problem((os.path.dirname(written) or '.') if is_file
                                             else path)
        if problem:
            raise ParamsError('--%s=%s cannot be written: %s. %s'
                              % (name, path, problem, _remedy(p, name)))
    if writes:
        _warn_remote_outputs(p)
    if p.calibrate:
        _check_calibration_record()
    database = store.resolve_path(p.results_db)
    unused = database and store.default_problem(p.results_db)
    if unused:  # the default place, under no home or on storage this user cannot write
        cnn_util.warn('the run is not recorded in the results database: its default place %s '
                      '%s; %s' % (database, unused, DEFAULT_PLACE_FIX))
        database = None
    problem = database and store.check_file(database)
    if database and not problem:
        cannot = store.write_problem(database)
        problem = cannot and 'the results database %s %s; %s' % (database, *cannot)
    if problem:
        raise ParamsError('--results_db%s: %s (or --noresults_db to record nothing)' % (
            store.default_origin() if p.results_db in (None, True) else '', problem))


def _check_file_names(p: Params) -> None:
    """Refuses a file flag (FILE_EXAMPLES) or the named results database whose value ends in
    a path separator (`--graph_file=/tmp/x/g/`): it names a folder, where the run would write
    a file without the separator or fail once it has trained.

    Raises:
      ParamsError: naming the flag, its value and a file name in that folder.
    """
    for name, example in FILE_EXAMPLES.items():
        path = named_database(p) if name == 'results_db' else getattr(p, name)
        problem = file_systems.folder_name_problem(path, example)
        if problem:
            raise ParamsError('%s cannot be written: %s' % (_flag_text(p, name), problem))


def _check_calibration_record() -> None:
    """--calibrate stores into the calibration record (hardware/calibration.py: the path of
    TF_CNN_CALIBRATION, else the cache folder's): refused before TensorFlow loads when it is
    off or cannot be written.

    Raises:
      ParamsError: naming the variable, the path and what is wrong with it.
    """
    path = calibration.record_path()
    if path is None:
        raise ParamsError('--calibrate with %s=off: there is no record to store into (unset '
                          'it, or set it to a file)' % calibration.ENV)
    problem = calibration.record_problem(path)  # its fix names TF_CNN_CALIBRATION
    if problem:
        raise ParamsError('--calibrate: the record %s %s' % (path, problem))


def _warn_remote_outputs(p: Params) -> None:
    """One `warning:` line naming the remote outputs (`remote_outputs`), if any, and the local
    checks that do not apply to them."""
    remote = remote_outputs(p)
    if remote:
        schemes = sorted({file_systems.scheme(r.split('=', 1)[1]) + '://' for r in remote})
        cnn_util.warn('%s: written through TensorFlow\'s file system%s (%s), where the checks '
                      'of a local disk do not apply: no hold of the folder against a second '
                      'run, no free-space, path-length or write test before TensorFlow loads '
                      '(then a file is written and removed there)'
                      % (', '.join(remote), '' if len(schemes) == 1 else 's',
                         ', '.join(schemes)))


def check_remote_paths(p: Params) -> None:
    """Once TensorFlow has loaded: every remote path's scheme is served, and a file can be
    written (and is removed again) in each remote output folder (`output_dirs`: --train_dir,
    --eval_dir, --benchmark_log_dir; and the folder of each file flag), so that missing
    credentials or a missing bucket stop the run before it trains, not at its save.

    Raises:
      ParamsError: a scheme without a file system (`file_systems.unregistered_problem`), or
        a folder where nothing can be written (TensorFlow's reason).
    """
    for name in params_lib.PATH_FLAGS:
        path = getattr(p, name)
        problem = file_systems.is_remote(path) and file_systems.unregistered_problem(path)
        if problem:
            raise ParamsError('--%s=%s: %s' % (name, getattr(p, name), problem))
    folders = {}
    for name in output_dirs(p):
        folders.setdefault(getattr(p, name), name)
    for name in _OUTPUT_FILES:
        path = getattr(p, name)
        if path:
            folders.setdefault(path.rsplit('/', 1)[0], name)
    for folder, name in folders.items():
        if file_systems.is_remote(folder):
            problem = _remote_write_problem(folder)
            if problem:
                raise ParamsError('--%s=%s cannot be written: %s. %s'
                                  % (name, getattr(p, name), problem, _remedy(p, name)))


def _remedy(p: Params, name: str) -> str:
    """The end of an unwritable path's error: 'Choose another path.'; for an --eval's
    --train_dir, written only for its summaries (`output_dirs`), the flag that moves them."""
    if name == 'train_dir' and p.eval:
        return ('An --eval writes only its summaries there: give --eval_dir=DIR (a folder '
                'this user can write) or --summary_verbosity=0.')
    return 'Choose another path.'


def _remote_write_problem(folder: str) -> str | None:
    """Why no file can be written in remote `folder` (made when missing), or None."""
    probe = '%s/.tf_cnn_benchmarks_probe_%d' % (folder.rstrip('/'), os.getpid())
    try:
        file_systems.makedirs(folder)
        file_systems.write_remote(probe, b'probe')
        file_systems.remove(probe)
    except OSError as e:
        return cnn_util.error_summary(e)
    return None

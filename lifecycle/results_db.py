"""Every finished run into the results database (history/store.py): the `RecordHook` of a
training or forward-only run, `record` for an evaluation.

The hook stamps result['finished_utc'] in phase `end` (so the results JSON has it too, and an
ingest of that JSON later finds the same run) and records the complete result in phase
`report`; a training or forward-only run on one host then prints one line after its total
block: `Recorded as run 17 in /d/results.sqlite (tf_cnn_results show 17)` (the database's
path absolute, the command with --results_db=PATH for a database not the default:
`database_flag`, every argument quoted for a shell: cnn_util.shell_arg), or, where the
default place cannot be used (a home folder that does not exist, read-only storage), `Not
recorded in a results database: <why>; <the fix>` (`unrecorded_line`; --noresults_db says
nothing). Only the chief of a cluster records (wiring.make_hooks), once, with the cluster's
total images/sec (result['cluster_images_per_sec'], cluster/coordination.py); it and an
--eval run say no id, their output's documented last lines staying last (`RecordHook`'s say_id).

A complete run is never lost while its write waits for another process's lock (up to
store.BUSY_TIMEOUT_SECS; the wait is said: history/write_wait.py): its results are on disk
before the write begins, in its --benchmark_log_dir JSON or else a pending copy in
`unrecorded/` (below), removed once the row is committed. A run killed meanwhile (SIGKILL, a
second signal: its abort line says where the results are, `RecordHook.unrecorded`) leaves
that JSON for `tf_cnn_results ingest`, which adds a run already in the database only once.

The file was checked before the run (preflight/output_paths.py: ours, and writable, tried).
A write that still fails at the end (the lock held by another process past its timeout, a
full disk, storage turned read-only, or any other error: a value SQLite cannot bind) does not
fail the finished run: a warning says why (a full disk in those words, with the fix:
history/disk_errors.py) and where the results are for a later `tf_cnn_results ingest` (with
--results_db=PATH naming this database unless it is the default): the run's JSON in
--benchmark_log_dir when it was written there, else the copy written for that, in the first
place that takes it (`unrecorded_dirs`): `unrecorded/` beside the database, the
default database's folder's `unrecorded/`, the system's temporary folder. A database file
this write made and left without a run (with its -wal and -shm files) is removed, and so is a
folder made for a copy that could not be written.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from typing import NamedTuple

from .. import cnn_util
from ..history import disk_errors, records, store
from ..runtime import file_systems
from . import results_log, run_hooks


def now_utc() -> str:
    """Now, as a result's 'finished_utc': 'YYYY-MM-DDTHH:MM:SS.ffffffZ'."""
    return records.utc_text()


def _can_write_under(folder: str) -> bool:
    """True when `folder` exists writable, or its nearest existing parent is writable storage
    (write_json makes the missing levels)."""
    while not os.path.exists(folder):
        folder = os.path.dirname(folder)
    return os.path.isdir(folder) and store.read_only_reason(os.path.join(folder, 'x')) is None


def _usable(folder: str) -> bool:
    """`_can_write_under`, and not under a home folder that does not exist (never made)."""
    return store.home_problem(folder) is None and _can_write_under(folder)


def unrecorded_dirs(database: str) -> list[str]:
    """Where the results of runs that could not be recorded may go, in order:
    <database folder>/unrecorded, the default database's folder's `unrecorded`
    (store.data_folder), `tf_cnn_benchmarks-unrecorded` in the system's temporary folder;
    those on storage that cannot be written left out (the last kept regardless), and never
    a folder under a home folder that does not exist."""
    candidates = [os.path.join(os.path.dirname(os.path.abspath(database)), 'unrecorded'),
                  os.path.join(store.data_folder(), 'unrecorded'),
                  os.path.join(tempfile.gettempdir(), 'tf_cnn_benchmarks-unrecorded')]
    usable = [c for i, c in enumerate(candidates) if c not in candidates[:i] and _usable(c)]
    return usable if candidates[-1] in usable else usable + candidates[-1:]


def unrecorded_dir(database: str) -> str:
    """The first of `unrecorded_dirs`: where such results go when it can be written."""
    return unrecorded_dirs(database)[0]


def database_flag(database: str) -> str:
    """' --results_db=PATH' naming `database` for a `tf_cnn_results` command line, or '' when
    it is the default database (store.default_path, not named by TF_CNN_RESULTS_DB: a shell
    without the run's environment reads the same file): a command pasted from a run's line
    then reads or writes the database the run used. The path is quoted for a shell where it
    needs it (" --results_db='/d/ré sults.db'": cnn_util.shell_arg)."""
    if (store.variable_value() is None
            and os.path.abspath(database) == os.path.abspath(store.default_path())):
        return ''
    return ' ' + cnn_util.shell_arg('--results_db=' + database)


def ingest_command(path: str, database: str) -> str:
    """'`tf_cnn_results ingest PATH --results_db=DB`' (`database_flag`; PATH quoted for a
    shell where it needs it)."""
    return '`tf_cnn_results ingest %s%s`' % (shlex.quote(path), database_flag(database))


def recorded_line(database: str, run_id: int) -> str:
    """The run's line once recorded: 'Recorded as run 17 in /d/results.sqlite
    (tf_cnn_results show 17)' (`database_flag` added for a database not the default)."""
    return 'Recorded as run %d in %s (tf_cnn_results show %d%s)' % (
        run_id, database, run_id, database_flag(database))


#: The fix `unrecorded_line` gives.
UNRECORDED_FIX = 'give --results_db=PATH to record runs (--noresults_db: record nothing)'


def unrecorded_line(reason: str) -> str:
    """The run's last line where `recorded_line` would stand, when its default database
    cannot be used: 'Not recorded in a results database: its default place is under the home
    folder /h (HOME), which does not exist and is not made; give --results_db=PATH to record
    runs (--noresults_db: record nothing)'. `reason`: store.default_problem's text."""
    return 'Not recorded in a results database: its default place %s; %s' % (
        reason, UNRECORDED_FIX)


def _logged_json(result: dict) -> str | None:
    """The run's --benchmark_log_dir JSON (result['results_file']) when it was written."""
    copy = result.get('results_file')
    return copy if copy and (file_systems.is_remote(copy) or os.path.isfile(copy)) else None


class Copy(NamedTuple):
    """A copy of a run's result written for a later ingest (`_copy`): its path (None when no
    place took it), why each place before it did not, and whether its folder was made for it."""
    path: str | None
    problems: list
    made_folder: bool = False


def _copy(database: str, result: dict, quiet: bool = False) -> Copy:
    """Writes `result` as JSON into the first of `unrecorded_dirs(database)` that takes it
    (a folder another run removed meanwhile, emptied, is made again once)."""
    problems = []
    for folder in unrecorded_dirs(database):
        made = not os.path.isdir(folder)
        for again in (False, True):
            try:
                path = results_log.write_json(dict(result), folder, quiet=quiet)
                return Copy(path, problems, made)
            except cnn_util.BenchmarkError as e:
                if again or os.path.isdir(folder):
                    problems.append(str(e))
                    break
    return Copy(None, problems)


def _discard(copy: Copy) -> None:
    """Removes the pending copy of a run now recorded, and its `unrecorded/` folder when
    this run made it and it is empty now (another run's pending copy keeps it)."""
    try:
        os.remove(copy.path)
        if copy.made_folder:
            os.rmdir(os.path.dirname(copy.path))
    except OSError:
        pass


def record(database: str | None, result: dict, kept=None) -> int | None:
    """Records `result` into `database` (None: recording is off), quietly (RecordHook says
    the id it was recorded under: `recorded_line`).

    The results are on disk before the write begins, which may wait up to
    store.BUSY_TIMEOUT_SECS for another process's lock: the run's --benchmark_log_dir JSON,
    else a pending copy in the first of `unrecorded_dirs` (written quietly, removed once the
    row is committed). A run killed while it waits (a second signal, SIGKILL) leaves that
    file for `tf_cnn_results ingest`, which adds a run already recorded only once.

    Args:
      database: the database file, or None.
      result: the run's complete result dict.
      kept: None, or (path or None) -> None: told the JSON that holds the results while they
        are not in the database (before the write; the copy kept after a failed one), and
        None once they are (RecordHook.unrecorded, for a second signal's abort line).

    Returns:
      The run's id in the database; None when recording is off, the run was there already,
      or the write failed (then warned about: the module docstring).
    """
    if not database:
        return None
    result.setdefault('finished_utc', records.utc_text())
    existed = os.path.exists(database)
    pending = None
    copy = _logged_json(result)
    if copy is None:
        pending = _copy(database, result, quiet=True)
        copy = pending.path
    if kept is not None:
        kept(copy)
    try:
        run_id = store.record_result(database, result)
    except Exception as e:  # any failure to write the row: the finished run keeps its result
        if not isinstance(e, (store.StoreError, records.RecordError)):
            e = '%s: %s' % (type(e).__name__, e)  # unforeseen: say what it was
        if not existed and os.path.exists(database):
            disk_errors.remove_unused_file(database)  # made by this write, holding no run
        copy = keep_unrecorded(database, result, e, pending)
        if kept is not None:
            kept(copy)
        return None
    if pending is not None and pending.path:
        _discard(pending)
    if kept is not None:
        kept(None)
    return run_id


def _ingest_hint(database: str, read_only: str | None, path: str) -> str:
    """How to record the results at `path` later: into `database`, or, where it is
    read-only, into one that can be written."""
    if read_only:
        return ('`tf_cnn_results ingest %s --results_db=PATH` records them into a database '
                'that can be written' % shlex.quote(path))
    return '%s records them' % ingest_command(path, database)


def keep_unrecorded(database: str, result: dict, error, pending=None) -> str | None:
    """Warns (one line) that `result` was not recorded in `database` because of `error`, and
    says where its results are for a later ingest (the command names `database` unless it is
    the default: `database_flag`): its --benchmark_log_dir JSON (result['results_file']) when
    that was written, else the pending copy `record` wrote (`pending`, a `Copy`), else a copy
    written now into the first of `unrecorded_dirs` that takes it.

    Returns:
      The JSON's path, or None when no copy could be written anywhere.
    """
    read_only = store.read_only_reason(database)
    if read_only:
        head = 'the run was not recorded in the results database %s: %s' % (database, read_only)
    else:
        head = 'the run was not recorded in the results database: %s' % error
    copy = _logged_json(result)
    if copy:
        cnn_util.warn('%s. Its results are in %s (--benchmark_log_dir): %s'
                      % (head, copy, _ingest_hint(database, read_only, copy)))
        return copy
    path, problems, _ = pending if pending is not None else _copy(database, result)
    if path is None:
        cnn_util.warn('%s; nor could its results be kept: %s' % (head, '; '.join(problems)))
        return None
    if pending is not None:  # written quietly before the write began
        cnn_util.log_fn('Results written to %s' % path)
    instead = ' instead' if read_only or problems else ''
    if problems:
        instead += ' (%s)' % '; '.join(problems)
    cnn_util.warn('%s. Its results are in %s%s: %s' % (
        head, path, instead, _ingest_hint(database, read_only, os.path.dirname(path))))
    return path


class RecordHook(run_hooks.RunHook):
    """Stamps the finish time (phase `end`) and records the run (phase `report`), then says
    under which id in one line (`recorded_line`; not for a second signal's salvage, whose
    abort line names it).

    Args:
      database: the database file (store.run_path of --results_db; made absolute, so that
        its line's command works from any folder), or None when --noresults_db or its
        default place cannot be used: then only the finish time is stamped.
      unused: why the default place cannot be used (store.default_problem), when that is why
        `database` is None: the run then ends with `unrecorded_line` where `recorded_line`
        would stand (with `say_id`); None for --noresults_db, which says nothing.
      eval_run: an --eval run's hook, which records nothing when no checkpoint was evaluated.
      say_id: print `recorded_line` once recorded; False for a cluster's chief, whose last
        line is the cluster's images/sec (cluster/figures.py; tools/launch_cluster.py reads
        it), and for an --eval run, whose output ends with its total block or stop line.

    A run that timed nothing (stopped in the warm-up, result['stopped_in_warmup'], or a
    cluster's worker stopped at its first timed step: result['images_per_sec'] None) is not
    recorded.

    Attributes:
      run_id: the run's id once recorded, else None.
      unrecorded_in: the JSON that holds the results while they are not in the database (the
        --benchmark_log_dir JSON, or `record`'s copy), else None.
    """

    output = 'the record in the results database'
    output_flag = '--results_db'

    def __init__(self, database: str | None, eval_run: bool = False, say_id: bool = True,
                 unused: str | None = None):
        self.database = results_log.absolute(database)
        self.unused = None if database else unused
        self.eval_run = eval_run
        self.say_id = say_id
        self.run_id = None
        self.unrecorded_in = None
        self._own_copy = False  # unrecorded_in is `record`'s copy, not --benchmark_log_dir's

    def end(self, result):
        result['finished_utc'] = now_utc()

    def report(self, result):
        if self.eval_run and not result.get('evals'):  # no checkpoint was evaluated
            return
        if results_log.timed_nothing(result):
            return
        if self.unused and self.say_id and not result.get('aborted_by_signal'):
            cnn_util.log_fn(unrecorded_line(self.unused))
        self._own_copy = _logged_json(result) is None
        self.run_id = record(self.database, result, kept=self._kept)
        if self.run_id is not None and self.say_id and not result.get('aborted_by_signal'):
            cnn_util.log_fn(recorded_line(self.database, self.run_id))

    def _kept(self, path: str | None) -> None:
        self.unrecorded_in = path

    def written(self, result):
        return (['the record in the results database %s (run %d)' % (self.database, self.run_id)]
                if self.run_id is not None else [])

    def unrecorded(self) -> str | None:
        """For a second signal's abort line (signals.SignalHook): while the results are not
        (yet) in the database, 'its results are in JSON, not recorded in the results
        database D: `tf_cnn_results ingest JSON --results_db=D` records them' (without 'its
        results are in JSON, ' for the --benchmark_log_dir JSON, which the line names
        already); else None."""
        if not self.database or self.run_id is not None or not self.unrecorded_in:
            return None
        where = 'its results are in %s, ' % self.unrecorded_in if self._own_copy else ''
        return '%snot recorded in the results database %s: %s' % (
            where, self.database, _ingest_hint(
                self.database, store.read_only_reason(self.database), self.unrecorded_in))

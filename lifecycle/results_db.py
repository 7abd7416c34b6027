"""Every finished run into the results database (history/store.py): the `RecordHook` of a
training or forward-only run, `record` for an evaluation.

The hook stamps result['finished_utc'] in phase `end` (so the results JSON has it too, and an
ingest of that JSON later finds the same run) and records the complete result in phase
`report`. Only the chief of a cluster records (wiring.make_hooks), once, with the cluster's
total images/sec (result['cluster_images_per_sec'], cluster/coordination.py).

The file was checked before the run (preflight/output_paths.py: ours, and writable, tried).
A write that still fails at the end (the lock held by another process past its timeout, a
full disk, storage turned read-only, or any other error: a value SQLite cannot bind) does not
fail the finished run: a warning says why (a full disk in those words, with the fix:
history/disk_errors.py) and where the results are for a later `tf_cnn_results ingest`: the
run's JSON in --benchmark_log_dir when it was written there, else a copy written for that,
in the first place that takes it (`unrecorded_dirs`): `unrecorded/` beside the database, the
default database's folder's `unrecorded/`, the system's temporary folder. A database file
this write made and left without a run (with its -wal and -shm files) is removed, and so is a
folder made for a copy that could not be written.
"""

from __future__ import annotations

import os
import tempfile

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


def record(database: str | None, result: dict) -> int | None:
    """Records `result` into `database` (None: recording is off), quietly: the run's output
    ends with its total block, as documented.

    Returns:
      The run's id in the database; None when recording is off, the run was there already,
      or the write failed (then warned about: the module docstring).
    """
    if not database:
        return None
    result.setdefault('finished_utc', records.utc_text())
    existed = os.path.exists(database)
    try:
        return store.record_result(database, result)
    except Exception as e:  # any failure to write the row: the finished run keeps its result
        if not isinstance(e, (store.StoreError, records.RecordError)):
            e = '%s: %s' % (type(e).__name__, e)  # unforeseen: say what it was
        if not existed and os.path.exists(database):
            disk_errors.remove_unused_file(database)  # made by this write, holding no run
        keep_unrecorded(database, result, e)
        return None


def keep_unrecorded(database: str, result: dict, error) -> str | None:
    """Warns (one line) that `result` was not recorded in `database` because of `error`, and
    says where its results are for a later ingest: its --benchmark_log_dir JSON
    (result['results_file']) when that was written, else a copy written into the first of
    `unrecorded_dirs` that takes it.

    Returns:
      The JSON's path, or None when no copy could be written anywhere.
    """
    read_only = store.read_only_reason(database)
    if read_only:
        head = 'the run was not recorded in the results database %s: %s' % (database, read_only)
        ingest = '`tf_cnn_results ingest %s --results_db=PATH` records them into a database ' \
            'that can be written'
    else:
        head = 'the run was not recorded in the results database: %s' % error
        ingest = '`tf_cnn_results ingest %s` records them'
    copy = result.get('results_file')
    if copy and (file_systems.is_remote(copy) or os.path.isfile(copy)):
        cnn_util.warn('%s. Its results are in %s (--benchmark_log_dir): %s'
                      % (head, copy, ingest % copy))
        return copy
    problems = []
    for folder in unrecorded_dirs(database):
        try:
            path = results_log.write_json(dict(result), folder)
        except cnn_util.BenchmarkError as second:
            problems.append(str(second))
            continue
        instead = ' instead' if read_only or problems else ''
        if problems:
            instead += ' (%s)' % '; '.join(problems)
        cnn_util.warn('%s. Its results are in %s%s: %s' % (head, path, instead, ingest % folder))
        return path
    cnn_util.warn('%s; nor could its results be kept: %s' % (head, '; '.join(problems)))
    return None


class RecordHook(run_hooks.RunHook):
    """Stamps the finish time (phase `end`) and records the run (phase `report`).

    Args:
      database: the database file (store.resolve_path of --results_db), or None when
        --noresults_db: then only the finish time is stamped.
      eval_run: an --eval run's hook, which records nothing when no checkpoint was evaluated.

    A run that timed nothing (stopped in the warm-up, result['stopped_in_warmup'], or a
    cluster's worker stopped at its first timed step: result['images_per_sec'] None) is not
    recorded.
    """

    output = 'the record in the results database'
    output_flag = '--results_db'

    def __init__(self, database: str | None, eval_run: bool = False):
        self.database = database
        self.eval_run = eval_run
        self.run_id = None

    def end(self, result):
        result['finished_utc'] = now_utc()

    def report(self, result):
        if self.eval_run and not result.get('evals'):  # no checkpoint was evaluated
            return
        if results_log.timed_nothing(result):
            return
        self.run_id = record(self.database, result)

    def written(self, result):
        return (['the record in the results database %s (run %d)' % (self.database, self.run_id)]
                if self.run_id is not None else [])

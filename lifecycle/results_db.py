"""Every finished run into the results database (history/store.py): the `RecordHook` of a
training or forward-only run, `record` for an evaluation.

The hook stamps result['finished_utc'] in phase `end` (so the results JSON has it too, and an
ingest of that JSON later finds the same run) and records the complete result in phase
`report`. Only the chief of a cluster records (wiring.make_hooks), once, with the cluster's
total images/sec (result['cluster_images_per_sec'], cluster/coordination.py).

The file was checked before the run (preflight/output_paths.py: ours, and writable, tried).
A write that still fails at the end (the lock held by another process past its timeout, a
full disk, or any other error: a value SQLite cannot bind) does not fail the finished run:
the result is written as a results JSON into the folder `unrecorded/` beside the database,
with a warning naming the `tf_cnn_results ingest` that records it later. A database whose
storage turned read-only during the run cannot hold that folder either: the warning says the
location is read-only, and the JSON goes to the default database's folder (`unrecorded_dir`).
"""

from __future__ import annotations

import os
import tempfile

from .. import cnn_util
from ..history import records, store
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


def unrecorded_dir(database: str) -> str:
    """Where the results of runs that could not be recorded go: <database folder>/unrecorded;
    where that folder is on read-only storage, the default database's folder's `unrecorded`
    (store.data_folder), else `tf_cnn_benchmarks-unrecorded` in the system's temporary
    folder; never a folder under a home folder that does not exist."""
    candidates = [os.path.join(os.path.dirname(os.path.abspath(database)), 'unrecorded'),
                  os.path.join(store.data_folder(), 'unrecorded'),
                  os.path.join(tempfile.gettempdir(), 'tf_cnn_benchmarks-unrecorded')]
    return next((c for c in candidates if _usable(c)), candidates[-1])


def record(database: str | None, result: dict) -> int | None:
    """Records `result` into `database` (None: recording is off), quietly: the run's output
    ends with its total block, as documented.

    Returns:
      The run's id in the database; None when recording is off, the run was there already,
      or the write failed (then warned about, the result kept as JSON in `unrecorded_dir`).
    """
    if not database:
        return None
    result.setdefault('finished_utc', records.utc_text())
    try:
        run_id = store.record_result(database, result)
    except Exception as e:  # any failure to write the row: the finished run keeps its result
        if not isinstance(e, (store.StoreError, records.RecordError)):
            e = '%s: %s' % (type(e).__name__, e)  # unforeseen: say what it was
        kept = unrecorded_dir(database)
        try:
            path = results_log.write_json(dict(result), kept)
        except cnn_util.BenchmarkError as second:
            cnn_util.warn('the run was not recorded in the results database: %s; nor could '
                          'its results be kept: %s' % (e, second))
            return None
        read_only = store.read_only_reason(database)
        if read_only:
            cnn_util.warn('the run was not recorded in the results database %s: %s. Its '
                          'results are in %s instead: `tf_cnn_results ingest %s '
                          '--results_db=PATH` records them into a database that can be written'
                          % (database, read_only, path, kept))
        else:
            cnn_util.warn('the run was not recorded in the results database: %s. Its results '
                          'are in %s: `tf_cnn_results ingest %s` records them' % (e, path, kept))
        return None
    return run_id


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

    salvage_name = "the results database's record"

    def __init__(self, database: str | None, eval_run: bool = False):
        self.database = database
        self.eval_run = eval_run

    def end(self, result):
        result['finished_utc'] = now_utc()

    def report(self, result):
        if self.eval_run and not result.get('evals'):  # no checkpoint was evaluated
            return
        if results_log.timed_nothing(result):
            return
        record(self.database, result)

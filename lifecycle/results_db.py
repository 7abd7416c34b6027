"""Every finished run into the results database (history/store.py): the `RecordHook` of a
training or forward-only run, `record` for an evaluation.

The hook stamps result['finished_utc'] in phase `end` (so the results JSON has it too, and an
ingest of that JSON later finds the same run) and records the complete result in phase
`report`. Only the chief of a cluster records (wiring.make_hooks), once, with the cluster's
total images/sec (result['cluster_images_per_sec'], cluster/coordination.py).

The file was checked before the run (preflight/output_paths.py). A write that still fails at
the end (the lock held by another process past its timeout, a full disk) does not fail the
finished run: the result is written as a results JSON into the folder `unrecorded/` beside
the database, with a warning naming the `tf_cnn_results ingest` that records it later.
"""

from __future__ import annotations

import os

from .. import cnn_util
from ..history import records, store
from . import results_log, run_hooks


def now_utc() -> str:
    """Now, as a result's 'finished_utc': 'YYYY-MM-DDTHH:MM:SS.ffffffZ'."""
    return records.utc_text()


def database_of(p) -> str | None:
    """The database file a run records into (--results_db, else the default place), None with
    --noresults_db."""
    return store.resolve_path(p.results_db)


def unrecorded_dir(database: str) -> str:
    """Where the results of runs that could not be recorded go: <database folder>/unrecorded."""
    return os.path.join(os.path.dirname(os.path.abspath(database)), 'unrecorded')


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
    except (store.StoreError, records.RecordError) as e:
        kept = unrecorded_dir(database)
        try:
            path = results_log.write_json(dict(result), kept)
        except cnn_util.BenchmarkError as second:
            cnn_util.warn('the run was not recorded in the results database: %s; nor could '
                          'its results be kept: %s' % (e, second))
            return None
        cnn_util.warn('the run was not recorded in the results database: %s. Its results are '
                      'in %s: `tf_cnn_results ingest %s` records them' % (e, path, kept))
        return None
    return run_id


class RecordHook(run_hooks.RunHook):
    """Stamps the finish time (phase `end`) and records the run (phase `report`).

    Args:
      database: the database file (store.resolve_path of --results_db), or None when
        --noresults_db: then only the finish time is stamped.
      eval_run: an --eval run's hook, which records nothing when no checkpoint was evaluated.
    """

    def __init__(self, database: str | None, eval_run: bool = False):
        self.database = database
        self.eval_run = eval_run

    def end(self, result):
        result['finished_utc'] = now_utc()

    def report(self, result):
        if self.eval_run and not result.get('evals'):  # no checkpoint was evaluated
            return
        record(self.database, result)

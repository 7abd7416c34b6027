"""`tf_cnn_results ingest PATH...`: existing sweep folders and run JSONs into the database.

A PATH is a folder (searched through, every level) or a file: a sweep's `results.jsonl`
(tools/sweep/results.py) or a run's results JSON `tf_cnn_benchmarks_*.json`
(--benchmark_log_dir, lifecycle/results_log.py). A successful sweep record is read from its
run's JSON when that is still in the record's run_dir (all its figures), else from the record
itself. Runs already in the database (the same content_key, history/records.py) add nothing:
ingesting a folder twice, or runs the runs recorded themselves, changes nothing, so folders
copied from many hosts merge into one database.

A cluster writes one JSON per worker (each task's --benchmark_log_dir), but a run that
records itself stores only its chief's row (lifecycle/results_db.py), with the cluster's total
images/sec; ingest does the same: another task's JSON (its own share, no cluster total: see
`other_task`) is skipped and named on one line of the summary.

A run JSON of a run that timed nothing (stopped by a signal in the warm-up: no images/sec,
history/records.py timed_nothing) is a result the run did not record (lifecycle/results_db.py),
and ingest does the same: it is left out, named on a 'left out:' line, and is no unreadable
file (the exit status stays 0).

Nothing is skipped silently: failed sweep runs, unreadable lines, files that are no results,
runs that timed nothing and the JSONs of a cluster's other tasks are counted and named in the
summary, and so are the other `*.json` files of a folder, which are not read (`Unread`): a
run's folder holds JSONs that are no results (`--trace_file`'s timeline, a calibration copy),
and reading them all would fail every such ingest, while a results JSON renamed by hand
(`hostA-lenet.json`) would otherwise be left out without a word; given by its path, a file is
read whatever its name.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import glob
import json
import os

from .. import cnn_util
from ..metrics import configuration
from ..runtime import file_systems
from . import records, store

SWEEP_FILE = 'results.jsonl'
RUN_JSON = 'tf_cnn_benchmarks_*.json'


class NoResultsError(ValueError):
    """A folder given to ingest holds no result file at any level (the message says which):
    a bad argument (exit status 2)."""


#: How many of the files not read the summary names (the count covers them all).
UNREAD_NAMED = 5


class NothingReadError(NoResultsError):
    """No file or line read holds a result (corrupt, empty, not a run's): bad data, as a file
    skipped beside good ones is (exit status 1); the database untouched."""


@dataclasses.dataclass
class Summary:
    """What an ingest did.

    Attributes:
      added: runs new to the database.
      present: runs it had already (the same content_key).
      failed_runs: sweep records of runs that did not succeed (nothing to record).
      in_sweeps: run JSONs found again inside an ingested sweep's folder (counted once).
      copies: run JSONs of a run another run JSON of this ingest holds already (a copy of
        the file: the same content_key; counted once).
      problems: 'PATH: why' for each file or line that is no result.
      left_out: 'PATH: why' for each result of a run that timed nothing (not recorded, as
        the run does not record it).
      other_tasks: 'TASK (PATH)' for each JSON of a cluster task other than the chief.
      unread: the '*.json' files of the folders given whose names are no run JSON's
        (RUN_JSON), not read (the module docstring says why).
    """
    added: int = 0
    present: int = 0
    failed_runs: int = 0
    in_sweeps: int = 0
    copies: int = 0
    problems: list = dataclasses.field(default_factory=list)
    left_out: list = dataclasses.field(default_factory=list)
    other_tasks: list = dataclasses.field(default_factory=list)
    unread: list = dataclasses.field(default_factory=list)

    def lines(self) -> list[str]:
        """The summary as printed: one line, then one 'skipped:' line per problem, one 'left
        out:' line per run that timed nothing, and one for the cluster tasks' JSONs other
        than the chief's."""
        counted = cnn_util.counted
        head = ('ingested: %s, %d already in the database, %s not recorded, %s skipped' % (
            counted(self.added, 'new run'), self.present,
            counted(self.failed_runs, 'failed sweep run'),
            counted(len(self.problems), 'file or line', 'files or lines')))
        if self.left_out:
            head += ', %s left out (no images/sec)' % counted(len(self.left_out), 'run')
        if self.other_tasks:
            head += ', %s not the chief\'s' % counted(len(self.other_tasks), 'cluster task JSON')
        if self.in_sweeps:
            head += ' (%s read as their sweep\'s runs)' % counted(self.in_sweeps, 'run JSON')
        if self.copies:
            head += ' (%s of a run read once)' % counted(self.copies, 'copy', 'copies')
        if self.unread:
            head += ', %s not read' % counted(len(self.unread), 'other JSON file')
        lines = ([head] + ['skipped: %s' % p for p in self.problems]
                 + ['left out: %s' % p for p in self.left_out])
        if self.other_tasks:
            lines.append(
                'skipped: %s other than the chief\'s, each the task\'s own '
                'share of a run recorded once, by its chief\'s JSON with the cluster total (as '
                'the run records itself): %s' % (cnn_util.counted(len(self.other_tasks),
                                                                  'cluster task JSON'),
                                                 ', '.join(self.other_tasks)))
        if self.unread:
            lines.append(unread_line(self.unread))
        return lines


def unread_line(unread: list[str]) -> str:
    """The summary's line on the JSON files of a folder not read: 'not read: 1 JSON file not
    named tf_cnn_benchmarks_*.json (...): /runs/hostA-lenet.json' (the first UNREAD_NAMED)."""
    more = len(unread) - UNREAD_NAMED
    return ('not read: %s not named %s (a folder\'s run JSONs are read by that name; give a '
            'results JSON renamed by hand as a PATH of its own to ingest it): %s%s'
            % (cnn_util.counted(len(unread), 'JSON file'), RUN_JSON,
               ', '.join(unread[:UNREAD_NAMED]), ' and %d more' % more if more > 0 else ''))


def find_files(paths: list[str], unread: list | None = None) -> tuple[list[str], list[str]]:
    """(sweep results files, run JSONs) under `paths`, each sorted, none twice.

    Args:
      paths: folders (searched through, every level) and files (each read, whatever its name).
      unread: where given, the '*.json' files of the folders not named RUN_JSON are added
        to it, sorted (not read: the module docstring says why).

    Raises:
      FileNotFoundError: a path does not exist (named in the message; a symbolic link that
        leads nowhere, or a loop of them, named so: file_systems.dangling_link_on).
      NoResultsError: a folder holds neither a sweep's results file nor a run JSON at any
        level (a mistyped folder would otherwise ingest nothing and exit 0).
    """
    sweeps, runs, others = set(), set(), set()
    for path in paths:
        if not os.path.exists(path):  # a dangling link or a loop of links: named as such
            raise FileNotFoundError(file_systems.dangling_link_on(path)
                                    or '%s does not exist' % path)
        if os.path.isfile(path):
            (sweeps if os.path.basename(path).endswith('.jsonl') else runs).add(
                os.path.abspath(path))
            continue
        found = 0
        for folder, dirs, files in os.walk(path):
            dirs.sort()
            for name in files:
                full = os.path.abspath(os.path.join(folder, name))
                if name == SWEEP_FILE:
                    sweeps.add(full)
                elif fnmatch.fnmatch(name, RUN_JSON):
                    runs.add(full)
                else:
                    if name.endswith('.json'):
                        others.add(full)
                    continue
                found += 1
        if not found:
            raise NoResultsError(
                '%s holds no result file at any level (ingest reads a sweep\'s %s and run '
                'JSONs %s); give the sweep\'s --output_dir or the run\'s --benchmark_log_dir'
                % (path, SWEEP_FILE, RUN_JSON) + _unread_hint(path, others))
    if unread is not None:
        unread.extend(sorted(others - runs))
    return sorted(sweeps), sorted(runs)


def _unread_hint(folder: str, others: set) -> str:
    """'; of its other JSON files, give a results JSON renamed by hand as a PATH: ...' for
    the files of `others` under `folder`, or ''."""
    inside = sorted(p for p in others if p.startswith(os.path.abspath(folder) + os.sep))
    if not inside:
        return ''
    return ('; it holds %s of other names, read only when given as a PATH of its own (a '
            'results JSON renamed by hand): %s%s' % (
                cnn_util.counted(len(inside), 'JSON file'), ', '.join(inside[:UNREAD_NAMED]),
                ' and %d more' % (len(inside) - UNREAD_NAMED)
                if len(inside) > UNREAD_NAMED else ''))


def _read_json(path: str):
    with open(path, encoding='utf-8') as f:
        return json.load(f)


def other_task(result: dict) -> str | None:
    """The task ('worker 1') when `result` is a cluster task's other than the chief's, else
    None (a one-host run's, or the chief's).

    The chief's result (worker 0's, or the controller's) holds 'cluster_images_per_sec', the
    total over the workers (cluster/coordination.py); another worker's holds only its own
    images/sec, a share of the same run, and is not a run of its own.
    """
    workers = result.get('num_workers')
    if not isinstance(workers, int) or workers <= 1:
        return None
    if result.get('cluster_images_per_sec') is not None:
        return None
    params = result.get('params') if isinstance(result.get('params'), dict) else {}
    return str(result.get('task') or '%s %s' % (params.get('job_name') or 'task',
                                                 params.get('task_index')))


def _run_json_of(sweep_dir: str, record: dict) -> dict | None:
    """The last results JSON in the record's run folder that is no other cluster task's than
    the chief's, None when there is none."""
    found = sorted(glob.glob(os.path.join(sweep_dir, record.get('run_dir') or '', RUN_JSON)))
    for path in reversed(found):
        try:
            result = _read_json(path)
        except (OSError, ValueError):
            continue
        if isinstance(result, dict) and other_task(result) is None:
            return result
    return None


def _record_key(record: dict) -> tuple:
    """A sweep record's key as the sweep reads it (tools/sweep/results.py load_records): with
    the model it ran, so that a format-1 record of a renamed model ('mobilenet', MobileNet v1)
    and a record of today's under the same key (a resumed sweep's) are two runs."""
    key = record['key']  # KeyError, TypeError: not a sweep record
    config = record.get('config') if isinstance(record.get('config'), dict) else {}
    return configuration.stored_model(config.get('model'), configuration.format_of(record)), key


def sweep_rows(path: str, summary: Summary, label: str | None = None) -> list[dict]:
    """The rows of a sweep's results file (the last record of each key, as the sweep reads
    it); counts failed runs and bad lines in `summary`."""
    sweep_dir = os.path.dirname(path)
    source = 'sweep %s' % sweep_dir
    latest = {}
    with open(path, encoding='utf-8', errors='replace') as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                latest[_record_key(record)] = (number, record)
            except (ValueError, KeyError, TypeError):
                summary.problems.append('%s line %d: not a sweep record' % (path, number))
    rows = []
    for number, record in latest.values():
        if record.get('status') != 'ok':
            summary.failed_runs += 1
            continue
        result = _run_json_of(sweep_dir, record)
        try:
            if result is not None:
                rows.append(records.from_result(result, source=source, label=label))
            else:
                rows.append(records.from_sweep_record(record, source=source, label=label))
        except records.NothingTimedError as e:
            summary.left_out.append('%s line %d: %s' % (path, number, e))
        except (records.RecordError, ValueError, KeyError, TypeError) as e:
            summary.problems.append('%s line %d: %s' % (path, number, e))
    return rows


def json_row(path: str, summary: Summary, label: str | None = None) -> dict | None:
    """The row of one run JSON, or None (the problem, the run that timed nothing, or the
    cluster task other than the chief, counted in `summary`)."""
    try:
        result = _read_json(path)
        if not isinstance(result, dict):
            raise records.RecordError('not a JSON object')
        task = other_task(result)
        if task is not None:
            summary.other_tasks.append('%s (%s)' % (task, path))
            return None
        return records.from_result(result, source='json %s' % path, label=label)
    except records.NothingTimedError as e:  # as the run itself: not recorded
        summary.left_out.append('%s: %s' % (path, e))
        return None
    except (OSError, ValueError, KeyError, TypeError) as e:
        summary.problems.append('%s: %s' % (path, getattr(e, 'strerror', None) or e))
        return None


def ingest(db_path: str, paths: list[str], label: str | None = None) -> Summary:
    """Loads every sweep folder and run JSON under `paths` into the database at `db_path`.

    Args:
      db_path: the results database (made when missing).
      paths: folders and files (see the module docstring).
      label: the label of runs that have none of their own (--label).

    Returns:
      Summary.

    Raises:
      FileNotFoundError: a path does not exist.
      NoResultsError: a folder holds no result file (the database untouched).
      NothingReadError: no file read holds a result (the database untouched).
      store.StoreError: the database cannot be used.
    """
    summary = Summary()
    sweeps, runs = find_files(paths, summary.unread)
    rows = []
    for path in sweeps:
        rows += sweep_rows(path, summary, label)
    in_sweeps = {row['content_key'] for row in rows}
    seen = set(in_sweeps)
    for path in runs:
        row = json_row(path, summary, label)
        if row is not None and row['content_key'] in in_sweeps:
            summary.in_sweeps += 1
        elif row is not None and row['content_key'] in seen:  # another JSON of this run
            summary.copies += 1
        elif row is not None:
            seen.add(row['content_key'])
            rows.append(row)
    if (not rows and summary.problems and not summary.failed_runs and not summary.in_sweeps
            and not summary.copies and not summary.other_tasks and not summary.left_out):
        raise NothingReadError(
            'none of the %s read holds a result (the first: %s); ingest reads a '
            'sweep\'s %s and run JSONs %s%s' % (
                cnn_util.counted(len(sweeps) + len(runs), 'file'), summary.problems[0],
                SWEEP_FILE, RUN_JSON, '; ' + unread_line(summary.unread) if summary.unread else ''))
    with store.opened(db_path) as conn:
        ids = store.insert_rows(conn, rows, db_path)
    summary.added = sum(1 for i in ids if i is not None)
    summary.present = len(ids) - summary.added
    return summary

"""The results database's schema: its columns' types and the migrations that bring a file of an
older schema to SCHEMA_VERSION (history/store.py runs them in one transaction when it opens
the file; user_version is the schema version).

Schema history (`MIGRATIONS`):
  1  meta (key, value), runs (records.ROW_FIELDS but config_key), unique index on content_key
  2  runs.config_key (from each row's configuration columns), a series' index (config_key,
     hostname, run_utc)
  3  runs.given_flags_json (NULL for the runs recorded before: history/run_flags.py derives
     their flags from params_json)
  4  runs.config_key ends in '|cpus_allowed=N' for the runs whose host load recorded their
     allowed CPUs (records.config_key): runs pinned to other CPU counts are other series
  5  a renamed model's runs (metrics/configuration.py RENAMED_MODELS) are its old network's:
     runs.model and config_key 'mobilenet' -> 'mobilenet_v1' (only the code of before the
     rename, of results format 1, wrote a file of schema 4 or older; it refuses a newer one),
     params_json as run
  6  runs.top_1_accuracy, runs.top_5_accuracy (REAL: the last evaluation's, records.py; NULL
     for the runs recorded before, whose results kept no accuracy)
  7  runs.latency_p90_ms (REAL: a forward-only run's or an evaluation's per-batch p90 latency,
     records.py), filled for the runs recorded before from their figures_json's
     'latency_ms' p90 (a run's results JSON kept it all along) or a sweep record's figures;
     NULL where neither has it (a training run, a run too short for percentiles)
"""

from __future__ import annotations

import json
import sqlite3

from ..metrics import configuration
from . import records

SCHEMA_VERSION = 7

_TEXT = {'content_key', 'run_utc', 'source', 'label', 'config_key', 'model', 'mode',
         'precision', 'variable_update', 'device', 'data', 'hostname', 'tf_version',
         'cpu_model', 'cpu_flags', 'gpus', 'onednn', 'params_json', 'environment_json',
         'figures_json', 'given_flags_json'}
_INTEGER = {'batch_size', 'num_devices', 'num_workers', 'image_size', 'global_batch_size',
            'num_steps'}


def _column_type(name: str) -> str:
    return 'TEXT' if name in _TEXT else 'INTEGER' if name in _INTEGER else 'REAL'


#: The columns each later schema version added (version 1's table has the others).
ADDED_IN = {2: ('config_key',), 3: ('given_flags_json',),
            6: ('top_1_accuracy', 'top_5_accuracy'), 7: ('latency_p90_ms',)}
ADDED_COLUMNS = tuple(name for version in sorted(ADDED_IN) for name in ADDED_IN[version])


def _create_v1(conn: sqlite3.Connection) -> None:
    columns = ',\n  '.join('%s %s' % (name, _column_type(name)) for name in records.ROW_FIELDS
                           if name not in ADDED_COLUMNS)
    conn.execute('CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)')
    conn.execute('CREATE TABLE runs (\n  id INTEGER PRIMARY KEY,\n  recorded_utc TEXT NOT '
                 'NULL,\n  %s)' % columns)
    conn.execute('CREATE UNIQUE INDEX runs_content_key ON runs (content_key)')
    conn.execute("INSERT INTO meta VALUES ('created_utc', ?)", (records.utc_text(),))
    conn.execute("INSERT INTO meta VALUES ('format', 'tf_cnn_benchmarks results database')")


def _add_config_key(conn: sqlite3.Connection) -> None:
    conn.execute('ALTER TABLE runs ADD COLUMN config_key TEXT')
    names = ', '.join(records.CONFIG_FIELDS)
    for row in conn.execute('SELECT id, %s FROM runs' % names).fetchall():
        key = records.config_key(dict(zip(records.CONFIG_FIELDS, row[1:])))
        conn.execute('UPDATE runs SET config_key = ? WHERE id = ?', (key, row[0]))
    conn.execute('CREATE INDEX runs_series ON runs (config_key, hostname, run_utc)')


def _add_given_flags(conn: sqlite3.Connection) -> None:
    conn.execute('ALTER TABLE runs ADD COLUMN given_flags_json TEXT')


def _key_allowed_cpus(conn: sqlite3.Connection) -> None:
    names = ', '.join(records.CONFIG_FIELDS)
    for row in conn.execute('SELECT id, figures_json, %s FROM runs' % names).fetchall():
        try:
            figures = json.loads(row[1] or 'null')
        except ValueError:
            figures = None
        cpus = configuration.cpus_of((figures or {}).get('host_load')
                                     if isinstance(figures, dict) else None)
        if cpus is not None:
            key = records.config_key(dict(zip(records.CONFIG_FIELDS, row[2:])), cpus)
            conn.execute('UPDATE runs SET config_key = ? WHERE id = ?', (key, row[0]))


def _rename_old_models(conn: sqlite3.Connection) -> None:
    names = ', '.join(records.CONFIG_FIELDS)
    for old, today in configuration.RENAMED_MODELS.items():
        for row in conn.execute('SELECT id, config_key, %s FROM runs WHERE model = ?' % names,
                                (old,)).fetchall():
            config = dict(zip(records.CONFIG_FIELDS, row[2:]), model=today)
            key = records.config_key(config, records.cpus_in_key(row[1]))
            conn.execute('UPDATE runs SET model = ?, config_key = ? WHERE id = ?',
                         (today, key, row[0]))


def _add_accuracy(conn: sqlite3.Connection) -> None:
    for name in ADDED_IN[6]:
        conn.execute('ALTER TABLE runs ADD COLUMN %s REAL' % name)


def _figures_p90(text: str | None) -> float | None:
    """The p90 latency (ms) a row's figures_json kept: a run's 'latency_ms' block, or a
    sweep record's 'sweep_figures' 'latency_p90_ms'; None without one."""
    try:
        figures = json.loads(text or 'null')
    except ValueError:
        return None
    if not isinstance(figures, dict):
        return None
    latency = figures.get('latency_ms')
    sweep = figures.get('sweep_figures')
    value = (latency.get('p90') if isinstance(latency, dict) else
             sweep.get('latency_p90_ms') if isinstance(sweep, dict) else None)
    return records.finite_number(value)


def _add_p90(conn: sqlite3.Connection) -> None:
    conn.execute('ALTER TABLE runs ADD COLUMN latency_p90_ms REAL')
    for run_id, text in conn.execute('SELECT id, figures_json FROM runs').fetchall():
        p90 = _figures_p90(text)
        if p90 is not None:
            conn.execute('UPDATE runs SET latency_p90_ms = ? WHERE id = ?', (p90, run_id))


MIGRATIONS = {1: _create_v1, 2: _add_config_key, 3: _add_given_flags, 4: _key_allowed_cpus,
              5: _rename_old_models, 6: _add_accuracy, 7: _add_p90}

#: What each migration adds, in a few words, for the note of a file a write migrated
#: (history/upgrades.py); the module docstring has the whole story.
DESCRIPTIONS = {
    2: 'each run\'s configuration key',
    3: 'the flags each run was given',
    4: 'the allowed CPUs in the configuration key',
    5: 'the runs of mobilenet renamed mobilenet_v1',
    6: 'the columns top_1_accuracy and top_5_accuracy',
    7: 'the column latency_p90_ms, filled for the runs stored from their latency figures',
}

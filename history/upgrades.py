"""What a change of the results database's schema says to its user (history/store.py calls
these): the note of a file a write migrated (`note_migrated`: the versions of
tf_cnn_benchmarks that can no longer write it), and why a run's default database of a newer
schema is not used (`newer_reason`: the run goes on unrecorded, store.default_problem).

An upgrading user's first run migrated the default database without a word, and the older
install beside it (a cron job) then refused every run; the note says so at that moment.
"""

from __future__ import annotations

from .. import cnn_util, package_info
from .schema import DESCRIPTIONS, SCHEMA_VERSION

#: The first version of tf_cnn_benchmarks that wrote each schema version, where it tells
#: installs apart: 0.2.0 wrote schemas 1 to 6 (the schema grew within it), so those have
#: none. A new schema raises package_info.VERSION and gets its entry (docs/CONTRIBUTING.md).
FIRST_WRITTEN_BY = {7: '0.3.0'}


def first_writer(version: int) -> str | None:
    """The first tf_cnn_benchmarks version ('0.3.0') that wrote schema `version`, or None
    where that is not known (the schemas before 7)."""
    return FIRST_WRITTEN_BY.get(version)


def migrated_line(path: str, old: int, new: int) -> str:
    """The note of the database `path` a write migrated from schema `old` to `new`: 'the
    results database /d/results.sqlite was upgraded from schema 6 to 7 (the column
    latency_p90_ms, ...); tf_cnn_benchmarks before 0.3.0 can no longer write it' (each
    step's schema.DESCRIPTIONS, 'schema N: ' before each when there are several; 'before
    this version' where `first_writer(new)` is not known)."""
    steps = [v for v in range(old + 1, new + 1) if v in DESCRIPTIONS]
    what = '; '.join(('schema %d: ' % v if len(steps) > 1 else '') + DESCRIPTIONS[v]
                     for v in steps)
    return ('the results database %s was upgraded from schema %d to %d%s; tf_cnn_benchmarks '
            'before %s can no longer write it' % (
                path, old, new, ' (%s)' % what if what else '',
                first_writer(new) or 'this version'))


def note_migrated(path: str, old: int, new: int) -> None:
    """Prints `migrated_line` (cnn_util.note, stderr) when a file of schema `old` (0: a new
    file, which says nothing) was brought to `new` by this opening."""
    if 0 < old < new:
        cnn_util.note(migrated_line(path, old, new))


def newer_reason(version: int) -> str:
    """Why a run does not record into its default database of schema `version`, newer than
    SCHEMA_VERSION, as store.default_problem's text (it follows the path): 'holds a results
    database of schema version 8, newer than this tf_cnn_benchmarks (0.3.0) knows (7), left
    untouched: upgrade tf_cnn_benchmarks to record there'."""
    return ('holds a results database of schema version %d, newer than this tf_cnn_benchmarks '
            '(%s) knows (%d), left untouched: upgrade tf_cnn_benchmarks to record there'
            % (version, package_info.VERSION, SCHEMA_VERSION))

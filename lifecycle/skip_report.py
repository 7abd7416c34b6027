"""The records --skip_corrupt_records skipped while reading, in the total block and the result.

The input pipeline counts them (input_data/skipped_records.py, one `warning:` line per shard
cut short, and per record the pipeline cannot use, as it happens); this hook adds the count to
the run's end: a `skipped records:` line after `total images/sec` and
`result['skipped_records']` (records skipped an epoch, 0 when none).
"""

from __future__ import annotations

from . import run_hooks


class SkipReportHook(run_hooks.RunHook):
    """Reports the records the pipeline skipped (only for a pipeline that can skip)."""

    def __init__(self):
        self._skipped = None

    def begin(self, ctx: run_hooks.RunContext) -> None:
        self._skipped = ctx.info.pipeline.skipped

    def total_lines(self, loop) -> list[str]:
        if self._skipped is None:
            return []
        skipped = self._skipped
        if not skipped.records:
            return ['skipped records: none (--skip_corrupt_records; record CRCs checked as '
                    'read)']
        parts = []
        if skipped.by_shard:
            parts.append('the ends of %d shard(s) from their first bad record'
                         % len(skipped.by_shard))
        if skipped.unusable_records:
            parts.append('%d record(s) the pipeline cannot use (another schema, a label '
                         'outside the classes) in %d shard(s)'
                         % (skipped.unusable_records, len(skipped.unusable)))
        return ['skipped records: %d an epoch, %s (--skip_corrupt_records)'
                % (skipped.records, ' and '.join(parts))]

    def end(self, result: dict) -> None:
        if self._skipped is not None:
            result['skipped_records'] = self._skipped.records

"""The records --skip_corrupt_records skipped while reading, in the total block and the result.

The input pipeline counts them (input_data/skipped_records.py, one `warning:` line per shard
cut short, and per record the pipeline cannot use, as it happens), with the readable records
of the shards left out at start-up (one `warning:` line each, dataset_info); this hook adds
the count to the run's end: a `skipped records:` line after `total images/sec` and
`result['skipped_records']` (records skipped an epoch, 0 when none; a lower bound when
shards were left out at start-up).
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
        if not skipped.records and not skipped.left_out:
            return ['skipped records: none (--skip_corrupt_records; record CRCs checked as '
                    'read)']
        parts = []
        if skipped.left_out:
            # The records after a shard's damage cannot be counted: the count is a lower bound.
            parts.append('%d corrupt shard(s) left out at start-up with their %d readable '
                         'record(s) (those after the damage cannot be counted)'
                         % (len(skipped.left_out), skipped.left_out_records))
        if skipped.by_shard:
            parts.append('the ends of %d shard(s) from their first bad record'
                         % len(skipped.by_shard))
        if skipped.unusable_records:
            parts.append('%d record(s) the pipeline cannot use (another schema, a label '
                         'outside the classes, an image that does not decode) in %d shard(s)'
                         % (skipped.unusable_records, len(skipped.unusable)))
        count = '%d an epoch' % skipped.records
        if skipped.left_out:
            count = 'at least ' + count if skipped.records else 'uncounted'
        return ['skipped records: %s, %s (--skip_corrupt_records)' % (count, ' and '.join(parts))]

    def end(self, result: dict) -> None:
        if self._skipped is not None:
            result['skipped_records'] = self._skipped.records

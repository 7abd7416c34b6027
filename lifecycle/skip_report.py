"""The records --skip_corrupt_records skipped while reading, in the total block and the result.

The input pipeline counts them (input_data/skipped_records.py, one `warning:` line per shard
cut short, and per record the pipeline cannot use, as it happens), with the readable records
of the shards left out at start-up (one `warning:` line each, dataset_info); this hook adds
the count to the run's end: a `skipped records:` line after `total images/sec` and
`result['skipped_records']` (records skipped an epoch, 0 when none; a lower bound when
shards were left out at start-up), then, when records were skipped while reading, an `epochs:`
line: the header's Num epochs counted the records found at start-up, an epoch reads fewer.
An evaluation's own line after its accuracy is `skipped_line` (eval_runner.log_eval).
"""

from __future__ import annotations

from .. import cnn_util
from . import run_hooks


class SkipReportHook(run_hooks.RunHook):
    """Reports the records the pipeline skipped (only for a pipeline that can skip), and
    those the evaluations during training skipped.

    Args:
      evaluations: the run's eval_during_training.EvalDuringTrainingHook, or None: its evaluations'
        skipped records get a line of their own (their own pipeline reads the validation
        records; the training line counted only the training pipeline's).
    """

    def __init__(self, evaluations=None):
        self._skipped = None
        self._plan = None
        self._evaluations = evaluations

    def begin(self, ctx: run_hooks.RunContext) -> None:
        self._skipped = ctx.info.pipeline.skipped
        self._plan = ctx.plan

    def total_lines(self, loop) -> list[str]:
        if self._skipped is None:
            return []
        evaluations = self.evaluations_line()
        return self._training_lines(loop, evaluations is not None) + (
            [evaluations] if evaluations else [])

    def evaluations_line(self) -> str | None:
        """'skipped records in the evaluations: ...' when the evaluations during training
        skipped records (the last one's count), else None."""
        evals = getattr(self._evaluations, 'evals', None)
        if not evals or not evals[-1].get('skipped_records'):
            return None
        last = evals[-1]
        return ('skipped records in the evaluations: %d of the %s records an evaluation '
                '(--skip_corrupt_records; named in the warnings above; the accuracy lines '
                'count the records left)' % (last['skipped_records'], last['subset']))

    def _training_lines(self, loop, evaluations_skipped: bool) -> list[str]:
        skipped = self._skipped
        if not skipped.records and not skipped.left_out:
            return ['skipped records: none%s (--skip_corrupt_records; record CRCs checked as '
                    'read)' % (' in training' if evaluations_skipped else '')]
        parts = []
        if skipped.left_out:
            # The records after a shard's damage cannot be counted: the count is a lower bound.
            parts.append('%d corrupt shard(s) left out at start-up with their %d readable '
                         'record(s) (those after the damage cannot be counted)'
                         % (len(skipped.left_out), skipped.left_out_records))
        crc = sum(len(v) for v in getattr(skipped, 'crc_bad', {}).values())
        if crc:
            parts.append('%d record(s) whose data CRC fails in %d shard(s) (the records after '
                         'each are read)' % (crc, sum(1 for v in skipped.crc_bad.values() if v)))
        ends = [path for path, n in skipped.by_shard.items()
                if n > len(getattr(skipped, 'crc_bad', {}).get(path, ()))]
        if ends:
            parts.append('the ends of %d shard(s) that could not be read past a record'
                         % len(ends))
        if skipped.unusable_records:
            parts.append('%d record(s) the pipeline cannot use (another schema, a label '
                         'outside the classes, an image that does not decode) in %d shard(s)'
                         % (skipped.unusable_records, len(skipped.unusable)))
        count = '%d an epoch' % skipped.records
        if skipped.left_out:
            count = 'at least ' + count if skipped.records else 'uncounted'
        lines = ['skipped records: %s, %s (--skip_corrupt_records)' % (count, ' and '.join(parts))]
        epochs = self.epochs_line(loop)
        return lines + ([epochs] if epochs else [])

    def epochs_line(self, loop) -> str | None:
        """'epochs: ...' when records were skipped while reading in a run that steps through
        the data: the header's Num epochs and the epoch of --num_epochs and the schedules
        count the records found at start-up (less the shards left out then), but an epoch
        reads only those left; None otherwise."""
        plan, skipped = self._plan, self._skipped
        while_reading = skipped.records - skipped.left_out_records
        if plan is None or not while_reading or loop is None:
            return None
        counted = plan.examples_per_epoch
        read = counted - while_reading
        if read <= 0:
            return None
        steps = getattr(loop, 'num_steps', plan.num_batches)
        images = steps * plan.global_batch_size
        if '%.2f' % (images / read) == '%.2f' % (images / float(counted)):
            return None  # the header's figure holds to its two decimals
        return ('epochs: with the %s an epoch skipped while reading, an epoch reads %d '
                'records, not the %d counted: the %d timed steps read %.2f epochs of them, not '
                "the header's %.2f (which --num_epochs and the learning-rate schedule count)"
                % (cnn_util.counted(while_reading, 'record'), read, counted, steps,
                   images / read, images / float(counted)))

    def end(self, result: dict) -> None:
        if self._skipped is not None:
            result['skipped_records'] = self._skipped.records


def skipped_line(r: dict) -> str | None:
    """The line after an evaluation's accuracy with --skip_corrupt_records, e.g. 'skipped
    records: 55 of the validation records (--skip_corrupt_records: 55 while reading, their
    slots not scored); the 73 examples scored are distinct records, each once'; None without
    the flag. Records of shards left out at start-up are not among those the header counted
    (nothing stands in for them); a record skipped while reading leaves its slot unscored
    (preprocessing's full pass): no record is scored twice to fill it."""
    skipped = r.get('skipped_records')
    if skipped is None:
        return None
    if not skipped:
        return 'skipped records: none (--skip_corrupt_records)'
    left_out = r.get('skipped_left_out') or 0
    parts = []
    if left_out:
        parts.append('%d readable in shards left out at start-up, not among the records the '
                     'header counted' % left_out)
    if skipped > left_out:
        parts.append('%d while reading, their slots not scored' % (skipped - left_out))
    passes = r.get('passes', 1.0)
    scored = ('distinct records, each scored once' if passes <= 1 else
              'the records left, each once a pass (%.2f passes)' % passes)
    return ('skipped records: %d of the %s records (--skip_corrupt_records: %s); the %d '
            'examples scored are %s' % (skipped, r['subset'], '; '.join(parts),
                                         r['num_examples'], scored))

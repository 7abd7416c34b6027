"""--skip_corrupt_records while reading: a shard is read up to its first bad record, the rest of
it is skipped, counted and reported; a record the pipeline cannot use (another schema, a label
outside the model's classes, an image that does not decode) is skipped alone, counted and
reported. The shards left out at start-up (dataset_info: truncated, a corrupt length field)
are counted with them, so that the run's closing line says all that was skipped.

The record CRCs are checked by TensorFlow's reader as the run reads them (there is no CRC pass
at start-up, see `shard_scan`). Without the flag a bad record fails the step
(`data_errors` names the shard and the record). With it, each shard is read by its own
`tf.data.TFRecordDataset` whose errors are ignored: TensorFlow's reader then ends that shard
at the record it could not read (it moves on to the next file rather than retry), so the
records from there to the shard's end, whose number the start-up header walk counted, are
skipped. A shard is opened (in Python, once each time it is read) before TensorFlow's
reader gets it: that reader retries a file it cannot open without end (an error the flag then
ignores, again and again, at 100% CPU), so a shard that cannot be opened any more (removed, or
its permission taken away, after the start-up check of `shard_files`) is read as no file, all
its records skipped and named once; only a shard lost in the instant between the two opens
would still be retried. A marker after each shard's records carries how many were read; when
fewer than counted, `SkippedRecords` prints one `warning:` line naming the shard, the record
and how many records were skipped (the first time that shard falls short), and keeps the
counts.

Each record read is also checked as the pipelines will parse and decode it
(record_schema.usable: its schema, a non-empty image, its label within the model's classes,
its image decodes: a JPEG at 1/8 scale, `record_schema.decodes`); one that fails is dropped.
The check runs in TensorFlow's ops, records in parallel (no Python per record); it costs one
scaled decode per record read, with this flag only. The records are numbered before the
check, so a gap in the numbers after it names the dropped ones: each is reported once, in the
form every bad record is named ("record N (index N-1) of PATH (image/filename 'NAME'):
PROBLEM", the first MAX_WARNED of a run one `warning:` line each) and counted.
"""

from __future__ import annotations

import os
import threading

import tensorflow as tf

from .. import cnn_util
from ..runtime import file_systems
from . import compression, record_schema

#: Records the pipeline cannot use that are named in a warning line each; the rest are counted.
MAX_WARNED = 5
UNDECODABLE = 'its image does not decode'


class SkippedRecords:
    """The records that the readers of one pipeline skipped, per shard.

    Args:
      num_classes: the model's classes: a record whose label lies outside [0, num_classes)
        is skipped; None: labels are not checked here.
      left_out: the shards left out at start-up (dataset_info.SkippedShard: path, reason,
        readable_records), already reported by a warning each; their readable records count
        as skipped.

    Attributes:
      by_shard: path -> records skipped at the last reading of that shard (a shard is read
        once an epoch).
      passes: how many times shards fell short (each reading of a damaged shard counts).
      unusable: path -> indices of the records the pipeline cannot use (skipped every epoch).
      left_out: as given.
      unopened: path -> the reason a shard could not be opened when last read (it could at
        start-up); all its records are then skipped.
    """

    def __init__(self, num_classes: int | None = None, left_out: tuple = ()):
        self.num_classes = num_classes
        self.by_shard: dict[str, int] = {}
        self.passes = 0
        self.unusable: dict[str, set[int]] = {}
        self.left_out = tuple(left_out)
        self.unopened: dict[str, str] = {}  # path -> why it could not be opened in the run
        self._libjpeg_said = False  # record_schema.LIBJPEG_LINES was said
        self._lock = threading.Lock()

    @property
    def records(self) -> int:
        """Records skipped in one epoch: the readable records of the shards left out at
        start-up, the ends of the shards that fell short and the records the pipeline cannot
        use."""
        return self.left_out_records + sum(self.by_shard.values()) + self.unusable_records

    @property
    def left_out_records(self) -> int:
        """Readable records of the shards left out at start-up (a lower bound: the records
        after a shard's damage cannot be counted)."""
        return sum(s.readable_records for s in self.left_out)

    @property
    def unusable_records(self) -> int:
        """Records skipped an epoch because the pipeline cannot use them."""
        return sum(len(v) for v in self.unusable.values())

    def read_shard(self, path: tf.Tensor, expected: tf.Tensor,
                   compression: tf.Tensor | str = '') -> tf.data.Dataset:
        """The records of one shard, ending at its first record that cannot be read.

        Args:
          path: string scalar, the shard (bytes of the file system's name).
          expected: int64 scalar, the shard's records counted by the header walk.
          compression: '', 'GZIP' or 'ZLIB' (a string scalar tensor or a str).

        Returns:
          A dataset of string scalars (serialized records).
        """
        # TensorFlow's reader moves on after a record it cannot read, but retries a file it
        # cannot open, without end (ignore_errors then spun at 100% CPU, deaf to Ctrl-C):
        # the shard is opened here first, and one that cannot be is read as no file at all.
        opened = tf.py_function(self._can_open, [path], tf.bool)
        opened.set_shape([])
        names = tf.boolean_mask(tf.reshape(path, [1]), tf.reshape(opened, [1]))
        records = tf.data.TFRecordDataset(names, compression_type=compression).ignore_errors()
        marked = records.map(lambda r: (r, tf.constant(False))).concatenate(
            tf.data.Dataset.from_tensors((tf.constant(b''), tf.constant(True))))
        counted = marked.scan(tf.constant(0, tf.int64),
                              lambda n, x: (n + 1, (x[0], x[1], n)))
        # The check fails (and ignore_errors drops) a record the pipeline cannot use; the
        # numbers of the records kept then have a gap where it was. It decodes each image
        # (scaled): records in parallel, in their order.
        checked = counted.map(lambda record, is_marker, read: (tf.cond(
            is_marker, lambda: record,
            lambda: record_schema.usable(record, self.num_classes, decode=True)),
            is_marker, read), num_parallel_calls=tf.data.AUTOTUNE,
            deterministic=True).ignore_errors()
        gaps = checked.scan(tf.constant(0, tf.int64),
                            lambda next_, x: (x[2] + 1, (x[0], x[1], x[2], next_)))

        def keep(record, is_marker, read, first_dropped):
            del record
            noted = tf.cond(first_dropped < read,
                            lambda: tf.py_function(self._note_unusable,
                                                   [path, first_dropped, read], tf.bool),
                            lambda: tf.constant(True))
            with tf.control_dependencies([noted]):
                is_marker = tf.identity(is_marker)

            def at_marker():  # dropped; reports a shard that fell short
                noted = tf.cond(read < expected,
                                lambda: tf.py_function(self._note, [path, read, expected],
                                                       tf.bool),
                                lambda: tf.constant(True))
                return tf.logical_not(noted)

            return tf.cond(is_marker, at_marker, lambda: tf.constant(True))

        return gaps.filter(keep).map(lambda record, is_marker, read, first_dropped: record)

    def _can_open(self, path) -> bool:
        """Whether the shard can be opened now (it could at start-up: shard_files); one that
        cannot is named by `_note` with the reason kept here."""
        name = os.fsdecode(path.numpy())
        try:
            file_systems.check_readable(name)
        except OSError as e:
            with self._lock:
                self.unopened[name] = e.strerror or cnn_util.error_summary(e)
            return False
        with self._lock:
            self.unopened.pop(name, None)
        return True

    def _note(self, path, read, expected) -> bool:
        name = os.fsdecode(path.numpy())
        read, expected = int(read.numpy()), int(expected.numpy())
        with self._lock:
            first = name not in self.by_shard
            self.by_shard[name] = expected - read
            self.passes += 1
            total = self.records
            unopened = self.unopened.get(name)
        if unopened and first:
            cnn_util.warn('skipped all %d records of %s (%d skipped an epoch so far): it cannot '
                          'be opened any more (%s; it could at start-up); '
                          '--skip_corrupt_records' % (expected, name, total, unopened))
        elif first:
            cnn_util.warn('skipped records %d..%d (indices %d..%d) of %s (%d of its %d records; '
                          '%d skipped an epoch so far): %s cannot be read (a CRC check failed, '
                          'or the file changed after the start-up scan); --skip_corrupt_records'
                          % (read + 1, expected, read, expected - 1, name, expected - read,
                             expected, total, compression.record_name(read)))
        return True

    def _note_unusable(self, path, first, end) -> bool:
        """Records [first, end) of `path` were dropped by the check: named (the first
        MAX_WARNED of the run) and counted, once per record."""
        name = os.fsdecode(path.numpy())
        indices = range(int(first.numpy()), int(end.numpy()))
        # The shards are read in parallel: one decision per record, and the lines are printed
        # under the same lock so that the "more records" line always follows the named ones.
        with self._lock:
            seen = self.unusable.setdefault(name, set())
            new = [i for i in indices if i not in seen]
            seen.update(new)
            start = self.unusable_records - len(new)
            for k, i in enumerate(new, start=start):
                if k < MAX_WARNED:
                    # The check's other failures have a phrase of record_problem's.
                    named = record_schema.describe_record(name, i, self.num_classes,
                                                          UNDECODABLE)
                    note = ''
                    if (named.endswith(UNDECODABLE) and not self._libjpeg_said
                            and record_schema.image_is_jpeg(name, i)):  # once a run
                        self._libjpeg_said = True
                        note = ' (%s)' % record_schema.LIBJPEG_LINES
                    cnn_util.warn('skipped %s; --skip_corrupt_records%s' % (named, note))
                elif k == MAX_WARNED:
                    cnn_util.warn('more records the pipeline cannot use are skipped (the first '
                                  '%d are named above); the total block counts them' % MAX_WARNED)
        return True

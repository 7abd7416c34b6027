"""--skip_corrupt_records while reading: a shard is read up to its first bad record, the rest of
it is skipped, counted and reported.

The record CRCs are checked by TensorFlow's reader as the run reads them (there is no CRC pass
at start-up, see `shard_scan`). Without the flag a bad record fails the step
(`data_errors` names the shard and the record). With it, each shard is read by its own
`tf.data.TFRecordDataset` whose errors are ignored: TensorFlow's reader then ends that shard
at the record it could not read (it moves on to the next file rather than retry), so the
records from there to the shard's end, whose number the start-up header walk counted, are
skipped. A marker after each shard's records carries how many were read; when fewer than
counted, `SkippedRecords` prints one `warning:` line naming the shard, the record and how many
records were skipped (the first time that shard falls short), and keeps the counts.
"""

from __future__ import annotations

import os
import threading

import tensorflow as tf

from .. import cnn_util


class SkippedRecords:
    """The records that the readers of one pipeline skipped, per shard.

    Attributes:
      by_shard: path -> records skipped at the last reading of that shard (a shard is read
        once an epoch).
      passes: how many times shards fell short (each reading of a damaged shard counts).
    """

    def __init__(self):
        self.by_shard: dict[str, int] = {}
        self.passes = 0
        self._lock = threading.Lock()

    @property
    def records(self) -> int:
        """Records skipped in one epoch: the sum over the shards that fell short."""
        return sum(self.by_shard.values())

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
        records = tf.data.TFRecordDataset(path, compression_type=compression).ignore_errors()
        marked = records.map(lambda r: (r, tf.constant(False))).concatenate(
            tf.data.Dataset.from_tensors((tf.constant(b''), tf.constant(True))))
        counted = marked.scan(tf.constant(0, tf.int64),
                              lambda n, x: (n + 1, (x[0], x[1], n)))

        def keep(record, is_marker, read):
            del record

            def at_marker():  # dropped; reports a shard that fell short
                noted = tf.cond(read < expected,
                                lambda: tf.py_function(self._note, [path, read, expected],
                                                       tf.bool),
                                lambda: tf.constant(True))
                return tf.logical_not(noted)

            return tf.cond(is_marker, at_marker, lambda: tf.constant(True))

        return counted.filter(keep).map(lambda record, is_marker, read: record)

    def _note(self, path, read, expected) -> bool:
        name = os.fsdecode(path.numpy())
        read, expected = int(read.numpy()), int(expected.numpy())
        with self._lock:
            first = name not in self.by_shard
            self.by_shard[name] = expected - read
            self.passes += 1
            total = self.records
        if first:
            cnn_util.warn('skipped records %d..%d of %s (%d of its %d records; %d skipped an '
                          'epoch so far): record %d cannot be read (a CRC check failed, or the '
                          'file changed after the start-up scan); --skip_corrupt_records'
                          % (read, expected - 1, name, expected - read, expected, total, read))
        return True

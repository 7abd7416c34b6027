"""--skip_corrupt_records while reading: a record whose data CRC fails is skipped alone (the
records after it are found by their lengths and read), counted and reported; so is a record the
pipeline cannot use (another schema, a label outside the model's classes, an image that does
not decode). The shards left out at start-up (dataset_info: truncated, a corrupt length field)
are counted with them, so that the run's closing line says all that was skipped.

The record CRCs are checked by TensorFlow's reader as the run reads them (there is no CRC pass
at start-up, see `shard_scan`). Without the flag a bad record fails the step
(`data_errors` names the shard and the record). With it, each shard is read by its own
`tf.data.TFRecordDataset` whose errors are ignored: TensorFlow's reader then ends that shard
at the record it could not read (it moves on to the next file rather than retry). A marker
after each shard's records carries how many were read; when fewer than counted, the records
from there are read by their offsets (`record_tail`: each record's length field says where the
next starts), each whose data CRC fails skipped alone and named in one `warning:` line (the
first time that shard is read). Where the framing itself is lost (a file changed since the
start-up walk, a compressed shard), the rest of the shard is skipped, named in one line too. A
shard is opened (in Python, once each time it is read) before TensorFlow's reader gets it:
that reader retries a file it cannot open without end (an error the flag then ignores, again
and again, at 100% CPU), so a shard that cannot be opened any more (removed, or its permission
taken away, after the start-up check of `shard_files`) is read as no file, all its records
skipped and named once; only a shard lost in the instant between the two opens would still be
retried.

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
from . import compression, record_schema, record_tail

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
        once an epoch): those whose data CRC fails, and its end where the reading stopped.
      crc_bad: path -> indices of the records whose data CRC fails (skipped every epoch).
      stop_reasons: path -> why the reading of that shard stopped before its end.
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
        self.crc_bad: dict[str, set[int]] = {}  # path -> records whose data CRC failed
        self.stop_reasons: dict[str, str] = {}  # path -> why its tail could not be read
        self._ends_warned: set[str] = set()  # shards whose skipped end was named
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
        """The records of one shard, without those that cannot be read or used (the records
        after one whose data CRC fails are read by their offsets; the reading ends where the
        framing is lost).

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
        # Where TensorFlow's reader stopped short (a record whose data CRC fails), the records
        # after it are read by their offsets (record_tail), each bad one skipped alone; the
        # marker then carries where reading had to stop (the shard's end when it did not).
        counted = counted.map(lambda record, is_marker, read: tf.cond(
            is_marker & (read < expected),
            lambda: self._tail(path, read, expected, compression),
            lambda: (tf.reshape(record, [1]), tf.reshape(is_marker, [1]),
                     tf.reshape(read, [1])))).unbatch()
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

    def _tail(self, path, read, expected, compression):
        """The records after the one where TensorFlow's reader stopped, then the marker:
        ([records..., b''], [False..., True], [indices..., stop]) (tensors of one shape)."""
        records, indices = tf.py_function(self._read_tail, [path, read, expected, compression],
                                          [tf.string, tf.int64])
        records.set_shape([None])
        indices.set_shape([None])  # the last is the marker's: where reading stopped
        return (tf.concat([records, [b'']], 0),
                tf.concat([tf.zeros_like(records, tf.bool), [True]], 0), indices)

    def _read_tail(self, path, read, expected, kind):
        """record_tail.read_tail of a shard TensorFlow's reader stopped short in (not of a
        compressed one, nor of one that cannot be opened: their records from `read` on are
        skipped, as before); names its bad records once (the first reading) and counts them."""
        name = os.fsdecode(path.numpy())
        read, expected = int(read.numpy()), int(expected.numpy())
        with self._lock:
            unopened = name in self.unopened
        if unopened or kind.numpy():
            return tf.constant([], tf.string), tf.constant([read], tf.int64)
        tail = record_tail.read_tail(name, read, expected)
        stop = expected if tail.stop is None else tail.stop
        with self._lock:
            first = name not in self.crc_bad
            self.crc_bad.setdefault(name, set()).update(tail.bad)
            if tail.bad:
                self.by_shard[name] = len(self.crc_bad[name]) + expected - stop
                self.passes += 1
            total = self.records
        if first and tail.bad:
            shown = ', '.join(compression.record_name(i) for i in tail.bad[:3])
            more = ' and %d more' % (len(tail.bad) - 3) if len(tail.bad) > 3 else ''
            cnn_util.warn('skipped %s of %s (%d of its %d records; %d skipped an epoch so '
                          'far): %s its data CRC; the records after %s are read '
                          '(found by their lengths); --skip_corrupt_records'
                          % (shown + more, name, len(tail.bad), expected, total,
                             'each fails' if len(tail.bad) > 1 else 'it fails',
                             'them' if len(tail.bad) > 1 else 'it'))
        if tail.stop is not None:
            self.stop_reasons[name] = tail.reason
        return (tf.constant(tail.records, tf.string),
                tf.constant(tail.indices + [stop], tf.int64))

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
        """The shard's records `read`..`expected`-1 could not be read (with those whose CRC
        failed before them, they are the shard's skipped records): named once, counted."""
        name = os.fsdecode(path.numpy())
        read, expected = int(read.numpy()), int(expected.numpy())
        with self._lock:
            first = name not in self._ends_warned
            self._ends_warned.add(name)
            bad_before = sum(1 for i in self.crc_bad.get(name, ()) if i < read)
            self.by_shard[name] = expected - read + bad_before
            self.passes += 1
            total = self.records
            unopened = self.unopened.get(name)
            why = self.stop_reasons.get(name)
        if unopened and first:
            cnn_util.warn('skipped all %d records of %s (%d skipped an epoch so far): it cannot '
                          'be opened any more (%s; it could at start-up); '
                          '--skip_corrupt_records' % (expected, name, total, unopened))
        elif first:
            cnn_util.warn('skipped records %d..%d (indices %d..%d) of %s (%d of its %d records; '
                          '%d skipped an epoch so far): %s; --skip_corrupt_records'
                          % (read + 1, expected, read, expected - 1, name, expected - read,
                             expected, total, why or (
                                 '%s cannot be read (the file changed after the start-up '
                                 'scan?)' % compression.record_name(read))))
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
            crc_bad = self.crc_bad.get(name, ())  # skipped by the reader, already counted
            new = [i for i in indices if i not in seen and i not in crc_bad]
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

"""Input-data errors: a session.run error caused by bad input records, as one-line DataError.

Run-time data errors (a label outside the model's classes, an undecodable image, a corrupt
record, a shard that could not be opened any more) surface as tf.errors.OpError from
session.run; `data_errors()` turns them into one-line `cnn_util.DataError`s. The label check
of the pipelines (preprocessing.py) puts LABEL_ERROR_MARKER in its message so that it is
recognised here.
"""

from __future__ import annotations

import contextlib
import re

import tensorflow as tf

from .. import cnn_util

LABEL_ERROR_MARKER = 'label_out_of_range:'
_CLASSES_RE = re.compile(r'must lie in \[0, (\d+)\)')
# TensorFlow's parse errors of a feature of another type or count (example_proto_fast_parsing).
_SCHEMA_WORDS = ("Data types don't match", 'values != expected', 'is required but could not be')


def _located(files: tuple[str, ...], what: str, num_classes: int | None = None) -> str:
    """'; WHAT: record N of PATH (image/filename ...): PROBLEM' from a search of the shards
    (bad_images.locate_unusable_record, up to 30 s), or '' without shards."""
    if not files:
        return ''
    from . import bad_images
    return '; %s: %s' % (what, bad_images.locate_unusable_record(list(files),
                                                                num_classes=num_classes))


def _nothing_left(skipped) -> cnn_util.DataError:
    """The error of a stream that ended because --skip_corrupt_records skipped every record."""
    return cnn_util.DataError(
        'no record is left to read: --skip_corrupt_records skipped every record of the shards '
        '(%d an epoch, named in the warnings above); re-encode the images that do not decode '
        'and write the shards again (tf_cnn_build_tfrecords), or give a --data_dir of usable '
        'records' % skipped.records)


def to_data_error(error: tf.errors.OpError, where: str = '',
                  files: tuple[str, ...] = (), skipped=None) -> cnn_util.DataError | None:
    """Translates a session.run error caused by bad input data into a DataError, else None.

    Args:
      error: the error raised by session.run.
      where: the data directory (or any phrase) to name in the message.
      files: the TFRecord shards being read; the first record the pipeline cannot use (an
        undecodable image, another schema, a label outside the classes) is then located in
        them (bad_images.locate_unusable_record, up to 30 s) and the message names its shard,
        record, image/filename and problem; so is a record whose CRC fails
        (corrupt_records.locate); so is a shard that could not be opened any more
        (shard_files.open_failure).
      skipped: the pipeline's skipped_records.SkippedRecords (--skip_corrupt_records), or
        None: its stream, repeated without end, only ends (OutOfRangeError) when every record
        was skipped, which is then said.
    """
    if isinstance(error, tf.errors.OutOfRangeError) and skipped is not None:
        return _nothing_left(skipped)
    message = error.message
    suffix = ' (data: %s)' % where if where else ''
    if isinstance(error, (tf.errors.NotFoundError, tf.errors.PermissionDeniedError)) or (
            "Can't open" in message):  # tf.data's readers; RecordInput's
        from . import shard_files
        unopened = shard_files.open_failure(message, files)
        if unopened is not None:
            return unopened
    if isinstance(error, tf.errors.InvalidArgumentError) and LABEL_ERROR_MARKER in message:
        start = message.index(LABEL_ERROR_MARKER) + len(LABEL_ERROR_MARKER)
        detail = message[start:].split('\n')[0].split('[[')[0].strip().replace("\\'", "'")
        classes = _CLASSES_RE.search(detail)
        return cnn_util.DataError('label out of range: %s%s' % (
            detail.replace('] [', ': [', 1),
            _located(files, 'first such record', int(classes.group(1)) if classes else None)))
    if isinstance(error, tf.errors.DataLossError):
        from . import corrupt_records
        if files and corrupt_records.offsets_in(message):
            where_bad = corrupt_records.locate(files, message)
        else:
            where_bad = 'in one of the shards read (%s)' % cnn_util.error_summary(error)
        return cnn_util.DataError(
            'corrupt TFRecord record: %s%s; --skip_corrupt_records skips such a record (and '
            'counts what it skips)' % (where_bad, suffix))
    if isinstance(error, tf.errors.InvalidArgumentError) and (
            'Could not parse example input' in message):
        return cnn_util.DataError(
            'a TFRecord record is not a tf.train.Example%s%s; write the shards with '
            'tf_cnn_build_tfrecords (or the ImageNet/CIFAR-10 format of docs/real-data.md)'
            % (suffix, _located(files, 'first such record')))
    node = error.op.name if error.op is not None else ''
    decode_words = ('Unknown image file format', 'Invalid JPEG data', 'decode', 'Decode',
                    'Invalid PNG', 'Not a JPEG')
    if isinstance(error, tf.errors.InvalidArgumentError) and (
            'input_pipeline' in node or any(w in message for w in decode_words + _SCHEMA_WORDS)):
        hint = ''
        if 'Input is empty' in message:
            hint = ' (a record without image/encoded: not an ImageNet-format tf.train.Example?)'
        elif any(w in message for w in _SCHEMA_WORDS):
            hint = ' (a record of another schema than the ImageNet format)'
        fix = ('; write the shards with tf_cnn_build_tfrecords (the ImageNet format of '
               'docs/real-data.md), or --skip_corrupt_records to skip such records'
               if hint else '')
        if not hint and any(w in message for w in decode_words):
            fix = ('; re-encode or remove that image and write its shard again '
                   '(tf_cnn_build_tfrecords), or --skip_corrupt_records to skip the records '
                   'whose image does not decode (each named, and counted)')
            if 'JPEG' in message:  # libjpeg's own lines, printed straight to stderr
                from .record_schema import LIBJPEG_LINES
                fix += '; ' + LIBJPEG_LINES
        return cnn_util.DataError('an input record could not be processed: %s%s%s%s%s'
                                  % (cnn_util.error_summary(error), hint, suffix,
                                     _located(files, 'first record the pipeline cannot use'),
                                     fix))
    return None


@contextlib.contextmanager
def data_errors(where: str = '', files: tuple[str, ...] = (), skipped=None):
    """Inside the block, input-data errors from session.run become one-line DataErrors.

    Args:
      where: the data directory (or any phrase) to name in the messages.
      files: the TFRecord shards being read (see to_data_error), or ().
      skipped: the pipeline's SkippedRecords, or None (see to_data_error).

    Raises:
      DataError: a label outside the model's classes, an undecodable image, a corrupt record,
        every record skipped by --skip_corrupt_records.
    """
    try:
        yield
    except tf.errors.OpError as e:
        translated = to_data_error(e, where, files, skipped)
        if translated is None:
            raise
        raise translated from None

"""The ImageNet-format record the pipelines read, and why a record is not one they can use.

The pipelines parse every record with `features()` (image_processing.parse_batch): one
`image/encoded` string, one int64 `image/class/label` (-1 where absent) and the float boxes
`image/object/bbox/{ymin,xmin,ymax,xmax}`; a label must lie in [0, num_classes). A record of
another schema (a float label, two labels, int64 boxes) fails TensorFlow's batched parse with a
message that names neither the shard nor the record; a label of -1 (absent or stored) fails the
label check. This module says, for one record, what is wrong in the words of the schema
(`record_problem`, read with the protocol buffer in Python), names a record by shard, index
and `image/filename` (`describe_record`), and gives the graph check that drops such records,
and those whose image does not decode, under --skip_corrupt_records (`usable`).
"""

from __future__ import annotations

import tensorflow as tf

from . import compression

ENCODED, LABEL, FILENAME = 'image/encoded', 'image/class/label', 'image/filename'
BOX_KEYS = tuple('image/object/bbox/' + k for k in ('ymin', 'xmin', 'ymax', 'xmax'))
_KINDS = {'int64_list': 'an int64 (Int64List)', 'float_list': 'a float (FloatList)',
          'bytes_list': 'bytes (BytesList)', None: 'empty (no value list)'}


def features() -> dict:
    """The parse spec of the pipelines (tf.io.parse_example)."""
    spec = {ENCODED: tf.io.FixedLenFeature([], tf.string, default_value=''),
            LABEL: tf.io.FixedLenFeature([], tf.int64, default_value=-1)}
    for key in BOX_KEYS:
        spec[key] = tf.io.VarLenFeature(tf.float32)
    return spec


def _values(feature):
    kind = feature.WhichOneof('kind')
    return kind, (list(getattr(feature, kind).value) if kind else [])


def record_problem(serialized: bytes, num_classes: int | None = None) -> str | None:
    """Why the pipeline cannot use one serialized record, or None when its schema and label
    are fine (its image may still fail to decode).

    Args:
      serialized: one TFRecord record.
      num_classes: the model's classes (labels must lie in [0, num_classes)); None: the
        label's range is not checked.

    Returns:
      A phrase such as 'image/class/label is a float (FloatList), not an int64',
      'image/class/label holds 2 values (one is read)', 'label -1 outside [0, 1001) (stored
      so)' or 'no image/class/label (read as -1)'.
    """
    from google.protobuf.message import DecodeError
    try:
        example = tf.train.Example.FromString(serialized)
    except DecodeError:
        return 'not a tf.train.Example'
    feature = example.features.feature
    if ENCODED not in feature:
        return 'no %s' % ENCODED
    kind, values = _values(feature[ENCODED])
    if kind != 'bytes_list' or len(values) != 1 or not values[0]:
        return '%s is %s with %d value(s), not one non-empty bytes value' % (
            ENCODED, _KINDS[kind], len(values))
    if LABEL not in feature:
        return 'no %s (read as -1)' % LABEL
    kind, values = _values(feature[LABEL])
    if kind != 'int64_list':
        return '%s is %s, not an int64' % (LABEL, _KINDS[kind])
    if len(values) != 1:
        return '%s holds %d values (one is read)' % (LABEL, len(values))
    for key in BOX_KEYS:
        if key in feature and _values(feature[key])[0] not in ('float_list', None):
            return '%s is %s, not float' % (key, _KINDS[_values(feature[key])[0]])
    if num_classes is not None and not 0 <= values[0] < num_classes:
        return 'label %d outside [0, %d)' % (values[0], num_classes)
    return None


def _record(path: str, index: int) -> bytes | None:
    """Record `index` of a shard, or None when it has fewer or cannot be read. TensorFlow's
    own record reader (the one tf.compat.v1.io.tf_record_iterator wraps, without its
    deprecation warning)."""
    from tensorflow.python.lib.io import _pywrap_record_io
    try:
        reader = _pywrap_record_io.RecordIterator(path, compression.detect(path))
        for i in range(index + 1):
            record = next(reader)
            if i == index:
                return record
    except (StopIteration, tf.errors.OpError):
        return None
    return None


def filename_of(serialized: bytes) -> str:
    """A record's `image/filename`, '' when it has none or does not parse."""
    try:
        values = tf.train.Example.FromString(serialized).features.feature[FILENAME]
        return values.bytes_list.value[0].decode('utf-8', 'replace')
    except Exception:  # noqa: BLE001 - any record that does not say is nameless
        return ''


def image_is_jpeg(path: str, index: int) -> bool:
    """Whether record `index` of a shard holds JPEG bytes (FF D8 FF) in image/encoded."""
    record = _record(path, index)
    try:
        values = tf.train.Example.FromString(record).features.feature[ENCODED]
        return values.bytes_list.value[0][:3] == b'\xff\xd8\xff'
    except Exception:  # noqa: BLE001 - a record that does not parse holds no JPEG
        return False


#: Whose the bare lines on stderr next to an image that does not decode are: libjpeg (inside
#: TensorFlow's JPEG decoder) prints them itself, bypassing TensorFlow's log level, each time it
#: meets the image (with --skip_corrupt_records, each time the record is read and checked).
LIBJPEG_LINES = ("the bare lines on stderr such as 'Input file read error', 'Premature end of "
                 "JPEG file' or 'Improper call to JPEG library in state 201' are libjpeg's, "
                 'printed each time it meets such an image')


def describe_record(path: str, index: int, num_classes: int | None = None,
                    default: str = '') -> str:
    """'record N (index N-1) of PATH (image/filename 'NAME'): PROBLEM', the form of every
    record named (compression.record_name).

    Args:
      path: the shard; index: the record, counted from 0.
      num_classes: see `record_problem`.
      default: the problem to say when `record_problem` finds none (e.g. 'its image does not
        decode'); '' leaves it out.
    """
    record = _record(path, index)
    name = filename_of(record) if record is not None else ''
    problem = record_problem(record, num_classes) if record is not None else None
    problem = problem or default
    return '%s of %s%s%s' % (compression.record_name(index), path,
                             " (image/filename '%s')" % name if name else '',
                             ': ' + problem if problem else '')


def usable(record: tf.Tensor, num_classes: int | None, decode: bool = False) -> tf.Tensor:
    """`record` (string scalar) passed through a check that fails (InvalidArgumentError) when
    the pipeline cannot use it: its parse with `features()` fails, its image is empty, its
    label lies outside [0, num_classes), or (with `decode`) its image does not decode
    (`decodes`)."""
    parsed = tf.io.parse_single_example(record, features())
    checks = [tf.debugging.assert_greater(tf.strings.length(parsed[ENCODED]), 0)]
    if num_classes is not None:
        label = parsed[LABEL]
        checks.append(tf.debugging.assert_equal((label >= 0) & (label < num_classes), True))
    if decode:
        with tf.control_dependencies(checks):
            checks = [decodes(parsed[ENCODED])]
    with tf.control_dependencies(checks):
        return tf.identity(record)


def decodes(encoded: tf.Tensor) -> tf.Tensor:
    """An op that fails (InvalidArgumentError) when image bytes do not decode as the pipelines
    decode them (image_processing: JPEG by libjpeg, any other format by decode_image).

    A JPEG is decoded at 1/8 scale (libjpeg's scaled IDCT, `ratio=8`): every byte of its
    entropy-coded data is still read, so junk bytes and a file cut short fail as they fail the
    full decode (all 80 cuts at 30/60/90/99% of 20 shared ImageNet JPEGs failed at both
    scales), at a fraction of the full decode's cost. Other formats are decoded whole.

    Args:
      encoded: string scalar, the bytes of `image/encoded`.

    Returns:
      A bool scalar (True), to be run as a control dependency.
    """
    def jpeg():
        return tf.size(tf.io.decode_jpeg(encoded, channels=3, ratio=8,
                                         dct_method='INTEGER_FAST')) >= 0

    def other():
        return tf.size(tf.io.decode_image(encoded, channels=3, expand_animations=False)) >= 0

    return tf.cond(tf.io.is_jpeg(encoded), jpeg, other)

"""The records of a shard after one whose data CRC fails, found by their lengths and read.

TensorFlow's TFRecord reader ends a file at a record it cannot read. Yet every record is framed
by its own length (an 8-byte little-endian length, its 4-byte masked CRC-32C, the data, the
data's 4-byte CRC): from the start of a record whose data is damaged, its length field, checked
by its own CRC, says where the next record starts. So --skip_corrupt_records skips such a record
alone: `read_tail` walks the headers to the record where TensorFlow's reader stopped, then reads
each record from there with TensorFlow's random-access record reader (which checks both CRCs),
passing over each record whose data CRC fails. It stops where the framing itself is lost (a
length field whose CRC fails, a file cut inside a record, a file that cannot be read), as the
start-up walk would have (a file changed since): the rest of the shard is then skipped, as
before. Compressed shards are not resumed: their stream's own check finds damage at start-up
(input_data/compression.py), so one that falls short during the run changed since.

Costs: one header read per record before the stop (a few bytes each) and one record read per
record after it, in Python, each time the damaged shard is read (once an epoch); the records
after the stop are handed to tf.data at once (at most one shard's bytes in memory); nothing
for an intact shard.
"""

from __future__ import annotations

import dataclasses
import struct

import tensorflow as tf

from ..runtime import file_systems
from . import compression
from .record_crc import masked_crc32c

_HEADER = 12


@dataclasses.dataclass
class Tail:
    """What `read_tail` read.

    Attributes:
      records: the serialized records read, in order.
      indices: their indices in the shard (counted from 0).
      bad: indices of the records whose data CRC failed, skipped.
      stop: the index where reading had to stop (the records from there to the shard's end
        are skipped), or None when it reached the shard's end.
      reason: why it stopped ('' when it did not).
    """

    records: list = dataclasses.field(default_factory=list)
    indices: list = dataclasses.field(default_factory=list)
    bad: list = dataclasses.field(default_factory=list)
    stop: int | None = None
    reason: str = ''


def _header(f, offset: int) -> tuple[int | None, str]:
    """(length, '') of the record at `offset`, or (None, why it cannot be framed)."""
    f.seek(offset)
    header = f.read(_HEADER)
    if len(header) < _HEADER:
        return None, 'the file ends at byte %d, inside a record header' % (offset + len(header))
    (length,), (crc,) = struct.unpack('<Q', header[:8]), struct.unpack('<I', header[8:])
    if masked_crc32c(header[:8]) != crc:
        return None, 'its length field fails its CRC'
    return length, ''


def read_tail(path: str, start: int, expected: int) -> Tail:
    """The records `start`..`expected`-1 of an uncompressed shard, each whose data CRC fails
    skipped alone (see the module docstring).

    Args:
      path: the shard (local or remote: runtime/file_systems.py).
      start: the index where TensorFlow's reader stopped.
      expected: the shard's records, counted at start-up.

    Returns:
      A Tail; never raises for the file's contents or an unreadable file (its `stop` and
      `reason` say so).
    """
    tail = Tail()
    try:
        with file_systems.open_file(path, 'rb') as f:
            offset = 0
            for index in range(start):  # the headers up to the record where TF stopped
                length, reason = _header(f, offset)
                if length is None:
                    return Tail(stop=start, reason='%s: %s' % (compression.record_name(index),
                                                               reason))
                offset += _HEADER + length + 4
            from tensorflow.python.lib.io import _pywrap_record_io
            reader = _pywrap_record_io.RandomRecordReader(path)
            try:
                for index in range(start, expected):
                    length, reason = _header(f, offset)
                    if length is None:
                        tail.stop = index
                        tail.reason = '%s: %s' % (compression.record_name(index), reason)
                        return tail
                    try:
                        record, offset = reader.read(offset)
                    except tf.errors.DataLossError:  # the data CRC: this record alone
                        tail.bad.append(index)
                        offset += _HEADER + length + 4
                        continue
                    tail.records.append(record)
                    tail.indices.append(index)
            finally:
                reader.close()
    except (OSError, tf.errors.OpError) as e:
        tail.stop = tail.indices[-1] + 1 if tail.indices else start
        tail.stop = max([tail.stop] + [i + 1 for i in tail.bad])
        tail.reason = 'it cannot be read from %s: %s' % (
            compression.record_name(tail.stop), getattr(e, 'message', None) or e)
    return tail

"""Names the shard and the record behind TensorFlow's "corrupted record at N" error.

TensorFlow's record readers (`RecordInput`, `tf.data.TFRecordDataset`) check each record's two
CRCs as they read it, so the run finds a corrupt record when it reaches it (no CRC pass at
start-up, see `shard_scan`). The error is a DataLossError whose message says only
`corrupted record at N`: N is the byte offset of the record's data (its data CRC failed) or of
its header (its length CRC failed), counted in the shard's uncompressed stream, and neither the
shard nor the record index is named. `locate` finds them: in each shard, the record that starts
at N - 12 or N (a walk of the headers up to N, one read per record, data skipped) whose CRC
does not match (for a compressed shard, in its decompressed stream).
"""

from __future__ import annotations

import re
import struct

from ..runtime import file_systems
from . import compression, record_crc

OFFSET_RE = re.compile(r'corrupted record at (\d+)')
_HEADER = 12  # 8-byte length + 4-byte masked CRC of the length
_SHOWN = 3  # shards named when several hold a bad record at the same offset


def offsets_in(message: str) -> list[int]:
    """The byte offsets of the `corrupted record at N` phrases of an error message."""
    return sorted({int(n) for n in OFFSET_RE.findall(message)})


def _data_ok(path: str, start: int) -> bool:
    """True when the data CRC of the record starting at byte `start` of `path` matches (checked
    by TensorFlow's reader)."""
    import tensorflow as tf
    from tensorflow.python.lib.io import _pywrap_record_io
    try:
        _pywrap_record_io.RandomRecordReader(path).read(start)
        return True
    except tf.errors.DataLossError:
        return False


def _compressed_record_at(path: str, kind: str, offset: int) -> tuple[int, int, str] | None:
    """`_record_at` for a compressed shard: offsets count in its decompressed stream."""
    try:
        for index, (start, length, crc, data) in enumerate(
                compression.frames(path, kind, with_data=True)):
            if start > offset:
                return None
            if start == offset and record_crc.masked_crc32c(struct.pack('<Q', length)) != crc:
                return index, start, 'its length field fails its CRC'
            if start + _HEADER == offset:
                stored = struct.unpack('<I', data[-4:])[0]
                return (index, start, 'its data fails its CRC') \
                    if record_crc.masked_crc32c(data[:-4]) != stored else None
    except ValueError:
        return None
    return None


def _record_at(path: str, offset: int) -> tuple[int, int, str] | None:
    """(record index, start byte, what fails) of the bad record of `path` that TensorFlow
    reports at `offset`, or None when `path` has none there.

    Raises:
      OSError: the file cannot be read.
    """
    kind = compression.detect(path)
    if kind:
        return _compressed_record_at(path, kind, offset)
    size = file_systems.getsize(path)
    with file_systems.open_file(path, 'rb') as f:
        start = index = 0
        while start + _HEADER <= size and start <= offset:
            f.seek(start)
            header = f.read(_HEADER)
            length, crc = struct.unpack('<QI', header)
            if record_crc.masked_crc32c(header[:8]) != crc:
                return (index, start, 'its length field fails its CRC') if start == offset \
                    else None
            if start + _HEADER == offset:
                return (index, start, 'its data fails its CRC') if not _data_ok(path, start) \
                    else None
            start += _HEADER + length + 4
            index += 1
    return None


def locate(files: tuple[str, ...] | list[str], message: str) -> str:
    """Describes where the records of a "corrupted record at N" error are.

    Args:
      files: the TFRecord shards the failing reader read.
      message: the DataLossError's message.

    Returns:
      e.g. 'record 3 (index 2, byte 152) of /data/train-00001-of-00002: its data fails its
      CRC' (compression.record_name), or a
      phrase saying that no shard holds such a record now (the files changed since).
    """
    found = []
    for offset in offsets_in(message):
        for path in files:
            try:
                kind = compression.detect(path)
                if not kind and file_systems.getsize(path) <= offset:
                    continue
                hit = _record_at(path, offset)
            except OSError:
                continue
            if hit:
                found.append('%s of %s: %s' % (compression.record_name(hit[0], 'byte %d%s' % (
                    hit[1], ' of the %s stream uncompressed' % kind if kind else '')), path,
                    hit[2]))
    if not found:
        return ('no shard of the %d read holds a bad record there now (did the files change '
                'during the run?)' % len(files))
    extra = len(found) - _SHOWN
    return '; '.join(found[:_SHOWN]) + ('; and %d more' % extra if extra > 0 else '')

"""Compressed TFRecord shards: which compression a shard has, and the walk of its records.

TensorFlow writes GZIP or ZLIB TFRecords (`tf.io.TFRecordOptions(compression_type=...)`): the
whole file is one compressed stream of the usual framing (8-byte little-endian length, 4-byte
masked CRC-32C of it, the data, 4-byte masked CRC-32C of the data). Its readers take the
compression as an argument and never guess it, so each shard's is detected here, with no flag:

  - uncompressed: the first 12 bytes are a record header whose length CRC matches (checked
    first: a record of 0x8b1f bytes starts with the GZIP magic);
  - GZIP: the magic bytes 1f 8b (RFC 1952);
  - ZLIB: a zlib header (RFC 1950: compression method 8, (CMF * 256 + FLG) % 31 == 0) whose
    first decompressed bytes are a record header with a matching length CRC (the 2-byte header
    alone would match 1 in 31 uncompressed files whose first header is damaged).

`walk` decompresses a shard once (the scan cache then remembers it, see `shard_scan`), counting
its records and checking their framing; the compressed stream's own check (GZIP's CRC-32 of the
whole stream, ZLIB's Adler-32) then covers every byte, so a damaged compressed shard is found at
start-up, unlike an uncompressed one, whose data CRCs are checked as the run reads them.
"""

from __future__ import annotations

import struct
import zlib
from typing import Iterator

import numpy as np

from ..runtime import file_systems
from .record_crc import masked_crc32c_of_lengths


def record_name(index: int, detail: str = '') -> str:
    """How every message names a record of a shard: by its place counted from 1 and its index
    counted from 0, 'record 3 (index 2)' (with `detail`: 'record 3 (index 2, byte 152)').
    docs/real-data.md says so."""
    return 'record %d (index %d%s)' % (index + 1, index, ', ' + detail if detail else '')


def after_records(count: int) -> str:
    """Where a damage follows `count` complete records: 'after record 3 (index 2)', or
    'before the end of the first record'."""
    return 'after %s' % record_name(count - 1) if count else 'before the end of the first record'

GZIP, ZLIB = 'GZIP', 'ZLIB'
KINDS = ('', GZIP, ZLIB)  # TensorFlow's compression_type values; '' is uncompressed
_WBITS = {GZIP: 16 + zlib.MAX_WBITS, ZLIB: zlib.MAX_WBITS}
_CHUNK = 1 << 20  # compressed bytes read at a time
_PIECE = 8 << 20  # decompressed bytes at a time, at most
_SUSPECT_LENGTH = 1 << 28  # a longer length field has its CRC checked before it is read
_HEADER = 12


def _crc_of_length_ok(header: bytes) -> bool:
    (length,), (crc,) = struct.unpack('<Q', header[:8]), struct.unpack('<I', header[8:12])
    return int(masked_crc32c_of_lengths(np.array([length], np.uint64))[0]) == crc


def detect(path: str) -> str:
    """The compression of a TFRecord file: '', 'GZIP' or 'ZLIB' (see the module docstring).

    A file that is none of them (damaged, or not a TFRecord file) is called uncompressed, and
    its header walk then says what is wrong.

    Raises:
      OSError: the file cannot be read.
    """
    with file_systems.open_file(path, 'rb') as f:
        head = f.read(_HEADER)
        if len(head) < 2 or (len(head) == _HEADER and _crc_of_length_ok(head)):
            return ''
        if head[:2] == b'\x1f\x8b':
            return GZIP
        cmf, flg = head[0], head[1]
        if cmf & 0x0F != 8 or (cmf * 256 + flg) % 31:
            return ''
        f.seek(0)
        try:
            start = zlib.decompressobj(_WBITS[ZLIB]).decompress(f.read(64 << 10), _HEADER)
        except zlib.error:
            return ''
    return ZLIB if len(start) == _HEADER and _crc_of_length_ok(start) else ''


def _stream(path: str, kind: str) -> Iterator[bytes]:
    """The decompressed bytes of `path`, in pieces of at most `_PIECE` bytes; raises ValueError
    with a phrase when the stream is corrupt, truncated or followed by other bytes."""
    inflater = zlib.decompressobj(_WBITS[kind])
    with file_systems.open_file(path, 'rb') as f:
        while not inflater.eof:
            data = f.read(_CHUNK)
            if not data:
                raise ValueError('the %s stream ends early (the file is truncated)' % kind)
            while data and not inflater.eof:
                try:
                    piece = inflater.decompress(data, _PIECE)
                except zlib.error as e:
                    raise ValueError('corrupt %s data (zlib: %s)' % (
                        kind, str(e).split(': ')[-1])) from None
                data = inflater.unconsumed_tail
                if piece:
                    yield piece
        if inflater.unused_data or f.read(1):
            raise ValueError('bytes after the end of the %s stream' % kind)


def frames(path: str, kind: str, *, with_data: bool = False
           ) -> Iterator[tuple[int, int, int, bytes | None]]:
    """The records of a compressed TFRecord file, in order, as framed in its decompressed
    stream.

    Yields:
      (start, length, length_crc, data): the record's byte offset in the decompressed stream,
      its length field and stored length CRC, and (with_data) its data followed by its 4-byte
      data CRC, else None.

    Raises:
      ValueError: the stream is damaged (a phrase naming what, after the records yielded), or
        the framing ends inside a record ('truncated: ...').
      OSError: the file cannot be read.
    """
    buffer, at, start, index = b'', 0, 0, 0  # at: the next unread byte of buffer
    need, header = _HEADER, None
    pieces = _stream(path, kind)
    while True:
        while len(buffer) - at < need:
            try:
                piece = next(pieces)
            except StopIteration:
                left = len(buffer) - at
                if header is None and left == 0:
                    return
                if header is None:
                    raise ValueError('truncated: %d stray bytes %s'
                                     % (left, after_records(index))) from None
                if not _crc_of_length_ok(header):
                    raise _bad_length(index, start) from None
                raise ValueError('truncated: %s at byte %d of the uncompressed stream '
                                 'needs %d bytes, the stream ends at %d'
                                 % (record_name(index), start, _HEADER + need,
                                    start + _HEADER + left)
                                 ) from None
            buffer = buffer[at:] + piece
            at = 0
        if header is None:
            header = buffer[at:at + _HEADER]
            at += _HEADER
            (length,) = struct.unpack('<Q', header[:8])
            if length > _SUSPECT_LENGTH and not _crc_of_length_ok(header):
                raise _bad_length(index, start)
            need = length + 4
            continue
        (length,), (crc,) = struct.unpack('<Q', header[:8]), struct.unpack('<I', header[8:])
        yield start, length, crc, (buffer[at:at + need] if with_data else None)
        at += need
        start += _HEADER + need
        index += 1
        header, need = None, _HEADER


def _bad_length(index: int, start: int) -> ValueError:
    return ValueError('corrupt length field of %s at byte %d of the uncompressed stream'
                      % (record_name(index), start))


def walk(path: str, kind: str) -> tuple[int, str | None]:
    """Counts the records of a compressed TFRecord file and checks its stream and framing.

    Returns:
      (records, problem): the complete records before any damage, and None for an intact file
      or one phrase, e.g. 'GZIP-compressed: the GZIP stream ends early (the file is truncated)
      after record 40 (index 39)' or 'GZIP-compressed: corrupt length field of record 4 (index
      3) at byte 312 of
      the uncompressed stream'.

    Raises:
      OSError: the file cannot be read.
    """
    starts, lengths, crcs = [], [], []
    problem = None
    try:
        for start, length, crc, _ in frames(path, kind):
            starts.append(start)
            lengths.append(length)
            crcs.append(crc)
    except ValueError as e:
        problem = str(e)
        if problem.startswith(('the %s' % kind, 'bytes after')):
            problem += ' ' + after_records(len(starts))
    if lengths:
        bad = np.flatnonzero(masked_crc32c_of_lengths(np.array(lengths, np.uint64))
                             != np.array(crcs, np.uint32))
        if bad.size:
            first = int(bad[0])
            return first, '%s-compressed: %s' % (kind, _bad_length(first, starts[first]))
    return len(starts), ('%s-compressed: %s' % (kind, problem) if problem else None)


def describe(kinds: list[str] | tuple[str, ...]) -> str:
    """' (3 GZIP-compressed)', ' (2 GZIP-, 1 ZLIB-compressed)' or '' for the header."""
    counts = [(sum(1 for k in kinds if k == kind), kind) for kind in (GZIP, ZLIB)]
    counts = [(n, kind) for n, kind in counts if n]
    if not counts:
        return ''
    return ' (%s-compressed)' % '-, '.join('%d %s' % c for c in counts)

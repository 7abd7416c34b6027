"""Start-up scans of TFRecord shards: a fast header walk and a cache of shards seen before.

Before a run uses a shard, its records are counted and its framing checked (each record is an
8-byte little-endian length, a 4-byte masked CRC-32C of the length, the data and a 4-byte CRC of
the data): TensorFlow's own readers take a file cut off inside a record for a normal end of
file, so truncation is only noticed here. A GZIP- or ZLIB-compressed shard (detected per shard,
`compression`) is decompressed once and walked the same way. The data CRCs are not read up
front: TensorFlow's record reader checks each record's CRCs as it reads it, and a mismatch fails
the step, where `corrupt_records.locate` names the shard and the record.

Costs, for a data set never seen (measured figures are in the README):
  - `walk_headers`: reads each shard in blocks of `BLOCK_BYTES` (small records: many headers
    per read) or with one positioned read per record (large records: the data is skipped), and
    checks all length CRCs of a shard at once with numpy; shards are walked in parallel threads,
    whose reads overlap (a network file system gains most).
  - For a data set seen before, `ScanCache` answers from a file in the user's cache directory
    (`$XDG_CACHE_HOME/tf_cnn_benchmarks/shard_scans.json`, else `~/.cache/...`), keyed by each
    shard's absolute path, size and modification time (ns): one `stat` per shard, whatever the
    number of records. A shard whose size or modification time changed is walked again. An
    entry written less than `RACY_SECS` after the shard's last modification is not trusted (file
    system timestamps are coarse: a write in the same tick would keep the time; git's "racy
    clean" rule). Only intact shards are cached; a damaged one is reported on every run.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import tempfile
import time

import numpy as np

from .. import cnn_util
from ..hardware import user_dirs
from ..runtime import file_systems
from . import compression
from .record_crc import masked_crc32c, masked_crc32c_of_lengths

BLOCK_BYTES = 1 << 20
SMALL_RECORD_BYTES = 16 << 10  # smaller records are walked a block at a time
RACY_SECS = 2.0
CACHE_VERSION = 1
MAX_CACHE_ENTRIES = 200000  # the newest scans are kept (about 30 MB of JSON)


# --- The header walk.

def walk_headers(path: str) -> tuple[int, bool]:
    """Counts the records of a TFRecord file by walking the headers, without reading the data
    of large records.

    Args:
      path: a TFRecord file (uncompressed), local or remote (runtime/file_systems.py: read
        with the same block and page reads through tf.io.gfile).

    Returns:
      (records, intact): the number of records, and False when the file is truncated or a length
      field is corrupt (then `walk_tfrecord_headers` says exactly where).

    Raises:
      OSError: the file cannot be read.
    """
    if file_systems.is_remote(path):
        size = file_systems.getsize(path)
        with file_systems.open_file(path, 'rb') as f:
            def pread(n, offset):
                f.seek(offset)
                return f.read(n)
            return _walk_frames(pread, size)
    fd = os.open(path, os.O_RDONLY)
    try:
        return _walk_frames(lambda n, offset: os.pread(fd, n, offset), os.fstat(fd).st_size)
    finally:
        os.close(fd)


def _walk_frames(pread, size: int) -> tuple[int, bool]:
    """`walk_headers` over `pread(n, offset) -> bytes` of a file of `size` bytes."""
    lengths, crcs = [], []
    offset, block, block_start, length = 0, b'', 0, 0
    unpack = struct.Struct('<QI').unpack_from
    while offset < size:
        at = offset - block_start
        if at + 12 > len(block):
            # After a small record read a block of headers; after a large one, one page.
            block_start, at = offset, 0
            block = pread(BLOCK_BYTES if length < SMALL_RECORD_BYTES else 4096, offset)
            if len(block) < 12:
                return len(lengths), False  # stray bytes after the last record
        length, crc = unpack(block, at)
        end = offset + 16 + length
        if end > size:
            return len(lengths), False
        lengths.append(length)
        crcs.append(crc)
        offset = end
    if lengths and not np.array_equal(masked_crc32c_of_lengths(np.array(lengths, np.uint64)),
                                      np.array(crcs, np.uint32)):
        return len(lengths), False
    return len(lengths), True


# --- The cache.

def cache_path() -> str:
    """$XDG_CACHE_HOME/tf_cnn_benchmarks/shard_scans.json, else under ~/.cache."""
    return os.path.join(user_dirs.base_folder('XDG_CACHE_HOME', ('.cache',)),
                        'tf_cnn_benchmarks', 'shard_scans.json')


def _key(path: str) -> str:
    if file_systems.is_remote(path):
        return path
    return os.fsencode(os.path.abspath(path)).decode('utf-8', 'surrogateescape')


class ScanCache:
    """Scan results of intact shards, keyed by absolute path, size and modification time.

    Args:
      path: the cache file; default `cache_path()`.
      warn: called with one line when the file exists but cannot be used (it is then ignored
        and rewritten by `save`, or, where its folder is not writable, left alone: the line
        says so).
    """

    def __init__(self, path: str | None = None, warn=cnn_util.warn):
        self.path = path or cache_path()
        self._warn = warn
        self._entries: dict[str, dict] = {}
        self._dirty = False
        self._unwritable = False  # said by _load: the folder of an unusable file is read-only
        self._load()

    def _load(self) -> None:
        try:
            with open(self.path, encoding='utf-8') as f:
                data = json.load(f)
            if not isinstance(data, dict) or data.get('version') != CACHE_VERSION or \
                    not isinstance(data.get('shards'), dict):
                raise ValueError('not a shard scan cache of version %d' % CACHE_VERSION)
            self._entries = data['shards']
        except FileNotFoundError:
            pass
        except (OSError, ValueError, UnicodeDecodeError) as e:
            folder = os.path.dirname(self.path)
            if os.access(folder, os.W_OK):
                self._warn('ignoring the shard scan cache %s (%s); every shard is walked and '
                           'the file rewritten' % (self.path, e))
                return
            # Said once here: `save` then writes nothing and says nothing more.
            self._unwritable = True
            self._warn('ignoring the shard scan cache %s (%s); every shard is walked, and the '
                       'file cannot be rewritten (its folder %s is not writable by this user): '
                       'set XDG_CACHE_HOME to a folder this user can write to keep the scans'
                       % (self.path, e, folder))

    def get(self, path: str, stat: os.stat_result) -> dict | None:
        """The cached {'records': int, 'compression': str} of `path`, or None when it is
        absent, stale (size or modification time changed) or racy. Entries written before
        compressed shards were read have no compression: they were uncompressed ('')."""
        entry = self._entries.get(_key(path))
        try:
            if (entry is None or entry['size'] != stat.st_size
                    or entry['mtime_ns'] != stat.st_mtime_ns
                    or entry['scanned_ns'] - stat.st_mtime_ns < RACY_SECS * 1e9):
                return None
            return {'records': int(entry['records']),
                    'compression': str(entry.get('compression', ''))}
        except (KeyError, TypeError, ValueError):
            return None

    def put(self, path: str, stat: os.stat_result, records: int, compression: str = '') -> None:
        """Records the scan of an intact shard ('', 'GZIP' or 'ZLIB', see `compression`)."""
        self._entries[_key(path)] = {'size': stat.st_size, 'mtime_ns': stat.st_mtime_ns,
                                     'scanned_ns': time.time_ns(), 'records': records,
                                     'compression': compression}
        self._dirty = True

    def save(self) -> None:
        """Writes the file (atomically) when something changed; a cache that cannot be
        written only costs the next run its speed, so a problem is one warning line. A cache
        under a home folder that does not exist (user_dirs.py) is not written: the home
        folder is not made."""
        if not self._dirty or self._unwritable:
            return
        home = user_dirs.absent_home(self.path)
        if home:  # not made: one line, and the scans are only this run's
            self._dirty = False
            self._warn('the shard scans are not cached: the cache %s %s; set XDG_CACHE_HOME '
                       'to a folder this user can write to keep them'
                       % (self.path, user_dirs.absent_home_text(home)))
            return
        if len(self._entries) > MAX_CACHE_ENTRIES:
            newest = sorted(self._entries.items(), key=lambda kv: kv[1].get('scanned_ns', 0))
            self._entries = dict(newest[-MAX_CACHE_ENTRIES:])
        folder = os.path.dirname(self.path)
        try:
            os.makedirs(folder, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, prefix='.shard_scans.')
            with os.fdopen(fd, 'w', encoding='utf-8') as f:
                json.dump({'version': CACHE_VERSION, 'shards': self._entries}, f)
            os.replace(tmp, self.path)
            self._dirty = False
        except OSError as e:
            print('warning: cannot write the shard scan cache %s: %s' % (self.path, e),
                  file=sys.stderr)


# --- A subset's scan.

def _walk(path: str, locate_problem) -> tuple[str, int, str | None]:
    """(compression, records, problem or None) of one shard."""
    kind = compression.detect(path)
    if kind:
        return (kind, *compression.walk(path, kind))
    count, intact = walk_headers(path)
    return ('', count, None) if intact else ('', *locate_problem(path))


def scan_files(files: list[str], *, locate_problem, cache: ScanCache | None
               ) -> tuple[dict, dict, dict]:
    """Counts TFRecord shards and checks their framing, from the cache where it knows them.

    Each shard's compression is detected (`compression.detect`); a compressed shard is
    decompressed once to be walked (its stream's own check covers every byte).

    Args:
      files: the shards.
      locate_problem: path -> (records, problem phrase) for a damaged uncompressed file
        (`walk_tfrecord_headers`).
      cache: a ScanCache, or None to walk every shard.

    Returns:
      (records, problems, kinds): {path: records before any damage}, {path: problem} for the
      damaged files and {path: '', 'GZIP' or 'ZLIB'}. Data CRCs of uncompressed shards are not
      checked here (see the module docstring).
    """
    import concurrent.futures
    stats = {f: file_systems.stat(f) for f in files}
    known = {f: cache.get(f, stats[f]) for f in files} if cache is not None else {}
    todo = [f for f in files if not known.get(f)]
    records = {f: known[f]['records'] for f in files if known.get(f)}
    kinds = {f: known[f]['compression'] for f in files if known.get(f)}
    problems = {}
    if todo:
        with concurrent.futures.ThreadPoolExecutor(min(32, len(todo))) as pool:
            walked = pool.map(lambda f: _walk(f, locate_problem), todo)
            for path, (kind, count, problem) in zip(todo, walked, strict=True):
                records[path], kinds[path] = count, kind
                if problem:
                    problems[path] = problem
    if cache is not None:
        for f in todo:
            if f not in problems:
                cache.put(f, stats[f], records[f], kinds[f])
        cache.save()
    return records, problems, kinds


def walk_tfrecord_headers(path: str) -> tuple[int, str | None]:
    """Counts the records of a TFRecord file by walking the headers, without reading the data.

    Args:
      path: a TFRecord file (uncompressed), local or remote (runtime/file_systems.py).

    Returns:
      (records, problem): the number of complete records before any damage, and None for an
      intact file or one phrase describing a truncation or a corrupt length field.
    """
    size = file_systems.getsize(path)
    offset = records = 0
    with file_systems.open_file(path, 'rb') as f:
        while offset < size:
            header = f.read(12)
            if len(header) < 12:
                return records, ('truncated: %d stray bytes %s (file size %d)'
                                 % (len(header), compression.after_records(records), size))
            (length,) = struct.unpack('<Q', header[:8])
            (crc,) = struct.unpack('<I', header[8:])
            if masked_crc32c(header[:8]) != crc:
                return records, ('corrupt length field of %s at byte %d'
                                 % (compression.record_name(records), offset))
            end = offset + 12 + length + 4
            if end > size:
                return records, ('truncated: %s at byte %d needs %d bytes, the file '
                                 'ends at %d' % (compression.record_name(records), offset,
                                                 end - offset, size))
            offset = end
            records += 1
            f.seek(offset)
    return records, None

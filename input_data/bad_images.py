"""Finds the record behind an "image could not be decoded" (or "not a tf.train.Example") error.

TensorFlow's decode error ("Unknown image file format", "Invalid JPEG data") names neither the
shard nor the record. After such an error, `locate_undecodable_image` reads the shards again in
their order, decodes every image in parallel and reports the first record that does not parse or
decode, with its `image/filename` when the record has one, so that the user can remove or
re-encode it. It stops after a time budget (full ImageNet would take many minutes).
"""

from __future__ import annotations

import os
import time

import tensorflow as tf

from .. import cnn_util
from . import compression

tf1 = tf.compat.v1

_BATCH = 256
# Own thread pools, so these sessions never size TensorFlow's process-wide ones.
_PRIVATE_THREADS = tf1.ConfigProto(use_per_session_threads=True)


def _checked_records(files: list[str], kinds: list[str]) -> tf.data.Dataset:
    """(file index, record index, ok) for every record that parses and decodes, then per file a
    sentinel (file index, record count, False); records that fail are dropped by ignore_errors.
    kinds: each file's compression ('', 'GZIP' or 'ZLIB')."""
    features = {'image/encoded': tf.io.FixedLenFeature([], tf.string)}

    def decode(file_index, record_index, record):
        encoded = tf.io.parse_single_example(record, features)['image/encoded']
        image = tf.io.decode_image(encoded, channels=3, expand_animations=False)
        return file_index, record_index, tf.size(image) >= 0  # always True, after decoding

    def per_file(file_index, path, kind):
        records = tf.data.TFRecordDataset(path, compression_type=kind).enumerate()
        checked = records.map(lambda i, r: decode(file_index, i, r),
                              num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
        checked = checked.apply(tf.data.experimental.ignore_errors(log_warning=False))
        count = tf.data.TFRecordDataset(path, compression_type=kind).reduce(
            tf.constant(0, tf.int64), lambda c, _: c + 1)
        sentinel = tf.data.Dataset.from_tensors((file_index, count, tf.constant(False)))
        return checked.concatenate(sentinel)

    index = tf.data.Dataset.from_tensor_slices(
        (tf.range(len(files), dtype=tf.int64), tf.constant([os.fsencode(f) for f in files]),
         tf.constant(kinds, tf.string)))
    return index.flat_map(per_file).batch(_BATCH)


def _record_filename(path: str, record_index: int) -> str:
    """The `image/filename` feature of one record, or '' when it has none or does not parse."""
    graph = tf.Graph()
    with graph.as_default():
        record = tf.data.TFRecordDataset(os.fsencode(path),
                                         compression_type=compression.detect(path))
        record = record.skip(record_index).take(1)
        name = record.map(lambda r: tf.io.parse_single_example(r, {
            'image/filename': tf.io.FixedLenFeature([], tf.string, default_value='')})[
                'image/filename'])
        name = name.apply(tf.data.experimental.ignore_errors(log_warning=False))
        get = tf1.data.make_one_shot_iterator(name).get_next()
        with tf1.Session(graph=graph, config=_PRIVATE_THREADS) as sess:
            try:
                return sess.run(get).decode('utf-8', 'replace')
            except tf.errors.OutOfRangeError:
                return ''


def locate_undecodable_image(files: list[str], budget_secs: float = 30.0) -> str:
    """Describes the first record of `files` whose image does not parse or decode.

    Args:
      files: TFRecord shards (ImageNet format: an `image/encoded` feature per record), in the
        order to search.
      budget_secs: wall seconds after which the search gives up.

    Returns:
      'record N of PATH (image/filename NAME)' (records counted from 0), or 'none, ...' saying
      that none was found or how many records were searched when the budget ran out.
    """
    if not files:
        return 'none, no shards to search'
    deadline = time.monotonic() + budget_secs
    graph = tf.Graph()
    with graph.as_default():
        kinds = [compression.detect(f) for f in files]
        get = tf1.data.make_one_shot_iterator(_checked_records(list(files), kinds)).get_next()
    searched, expected = 0, (0, 0)  # the next (file index, record index) a good record has
    with tf1.Session(graph=graph, config=_PRIVATE_THREADS) as sess:
        while time.monotonic() < deadline:
            try:
                file_indices, record_indices, oks = sess.run(get)
            except tf.errors.OutOfRangeError:
                return 'none, every record of the %d shard(s) decodes' % len(files)
            except tf.errors.OpError as e:  # e.g. a truncated shard
                return 'the search stopped at a corrupt shard: %s' % cnn_util.error_summary(e)
            for f, r, ok in zip(file_indices.tolist(), record_indices.tolist(), oks.tolist()):
                # A good record must be the expected one; a file's sentinel carries its record
                # count, which the expected index must have reached. Otherwise `expected` failed.
                if (f, r) != expected:
                    name = _record_filename(files[expected[0]], expected[1])
                    return 'record %d of %s%s' % (expected[1], files[expected[0]],
                                                  " (image/filename '%s')" % name if name else '')
                expected = (f, r + 1) if ok else (f + 1, 0)
                searched += ok
    return 'none among the first %d records searched (%.0f s budget)' % (searched, budget_secs)

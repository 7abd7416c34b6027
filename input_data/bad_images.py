"""Finds the record behind an input error: an image that does not decode, a record of another
schema (a float or a second label, no image), a label outside the model's classes.

TensorFlow's errors ("Unknown image file format", "Data types don't match", the label check's
batch of labels) name neither the shard nor the record. After such an error,
`locate_unusable_record` reads the shards again in their order, parses each record as the
pipelines do, checks its label and decodes its image in parallel, and reports the first record
that fails, with its `image/filename` when it has one and what is wrong with it
(record_schema.describe_record), so that the user can remove or re-encode it. It stops after a
time budget (full ImageNet would take many minutes).
"""

from __future__ import annotations

import os
import time

import tensorflow as tf

from .. import cnn_util
from . import compression, record_schema

tf1 = tf.compat.v1

_BATCH = 256
# Own thread pools, so these sessions never size TensorFlow's process-wide ones.
_PRIVATE_THREADS = tf1.ConfigProto(use_per_session_threads=True)


def _checked_records(files: list[str], kinds: list[str],
                     num_classes: int | None) -> tf.data.Dataset:
    """(file index, record index, ok) for every record the pipelines can use (it parses with
    their schema, its label is in range, its image decodes), then per file a sentinel (file
    index, record count, False); records that fail are dropped by ignore_errors. kinds: each
    file's compression ('', 'GZIP' or 'ZLIB')."""
    def decode(file_index, record_index, record):
        record = record_schema.usable(record, num_classes)
        encoded = tf.io.parse_single_example(record, record_schema.features())[
            record_schema.ENCODED]
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


def locate_unusable_record(files: list[str], budget_secs: float = 30.0,
                           num_classes: int | None = None) -> str:
    """Describes the first record of `files` that the pipeline cannot use.

    Args:
      files: TFRecord shards (ImageNet format), in the order to search.
      budget_secs: wall seconds after which the search gives up.
      num_classes: the model's classes, to check each label against; None: labels are not
        checked.

    Returns:
      "record N (index N-1) of PATH (image/filename 'NAME'): PROBLEM" (PROBLEM from
      record_schema.record_problem, else 'its image does not decode'), or 'none, ...' saying
      that none was found or how many records were searched when the budget ran out.
    """
    if not files:
        return 'none, no shards to search'
    deadline = time.monotonic() + budget_secs
    graph = tf.Graph()
    with graph.as_default():
        kinds = [compression.detect(f) for f in files]
        get = tf1.data.make_one_shot_iterator(
            _checked_records(list(files), kinds, num_classes)).get_next()
    searched, expected = 0, (0, 0)  # the next (file index, record index) a good record has
    with tf1.Session(graph=graph, config=_PRIVATE_THREADS) as sess:
        while time.monotonic() < deadline:
            try:
                file_indices, record_indices, oks = sess.run(get)
            except tf.errors.OutOfRangeError:
                return 'none, the pipeline can use every record of the %d shard(s)' % len(files)
            except tf.errors.OpError as e:  # e.g. a truncated shard
                return 'the search stopped at a corrupt shard: %s' % cnn_util.error_summary(e)
            for f, r, ok in zip(file_indices.tolist(), record_indices.tolist(), oks.tolist()):
                # A good record must be the expected one; a file's sentinel carries its record
                # count, which the expected index must have reached. Otherwise `expected` failed.
                if (f, r) != expected:
                    return record_schema.describe_record(files[expected[0]], expected[1],
                                                         num_classes, 'its image does not decode')
                expected = (f, r + 1) if ok else (f + 1, 0)
                searched += ok
    return 'none among the first %d records searched (%.0f s budget)' % (searched, budget_secs)

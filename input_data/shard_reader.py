"""tf.data's reading of a subset's TFRecord shards: each with its compression, interleaved.

Used by the tf.data pipeline of preprocessing.py (--use_datasets, an evaluation's full pass,
--skip_corrupt_records, or shards of mixed compression, which RecordInput cannot read: it takes
one compression for all its files). TensorFlow's reader checks each record's CRCs as it reads
it; a bad one fails the step (`data_errors` then names it), or, with a `SkippedRecords`
(--skip_corrupt_records), ends that shard, the rest counted and reported
(input_data/skipped_records.py).
"""

from __future__ import annotations

import os

import tensorflow as tf


def interleaved_records(scan, *, cycle_length: int, shuffle_seed: int | None = None,
                        skipped=None, sloppy: bool = False) -> tf.data.Dataset:
    """The serialized records of a subset's shards.

    Args:
      scan: the subset's dataset_info.SubsetScan (files, records per file, compression).
      cycle_length: shards read at once.
      shuffle_seed: None to read the shards in their order (evaluation); else the seed of a
        shuffle of the shards (training).
      sloppy: the records come in the order they are ready, not in the interleave's
        (--datasets_sloppy_parallel_interleave); False: the same seed gives the same order.
      skipped: an input_data.skipped_records.SkippedRecords, to skip a shard's records from
        its first bad one; None: a bad record fails the step.

    Returns:
      A dataset of string scalars.
    """
    files = tf.data.Dataset.from_tensor_slices((
        [os.fsencode(f) for f in scan.files],
        tf.constant(scan.records_per_file, tf.int64),
        tf.constant(list(scan.compression), tf.string)))
    if shuffle_seed is not None:
        files = files.shuffle(len(scan.files), seed=shuffle_seed)

    def read(path, expected, compression):
        if skipped is not None:
            return skipped.read_shard(path, expected, compression)
        return tf.data.TFRecordDataset(path, compression_type=compression)

    return files.interleave(read, cycle_length=cycle_length, num_parallel_calls=tf.data.AUTOTUNE,
                            deterministic=not sloppy)

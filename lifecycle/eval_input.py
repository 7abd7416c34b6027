"""The input of an evaluation: the records an EvalPlan scores, each once, in full batches.

Training input shuffles and repeats, which an evaluation must not: a record read twice counts
twice and another not at all. The evaluator reads real data with tf.data in a fixed order and
without shuffling (also when training reads with RecordInput):

    records, in order --repeat, take--> run_plan.EvalPlan.num_examples records, marked valid
      + padding: the first record again, marked not valid, up to num_batches x global batch
      -> batches of the per-device batch -> eval preprocessing (central crop) -> staging

Every batch is full (the models take a static batch size), and `count_correct` counts top-1 and
top-5 hits over the valid slots only. Each device's batch of a step is the next batch of the one
stream, so the devices together read each slot once. The one-shot iterator lives in the
session: each evaluation (a new session) starts the stream again from the first record.

ImageNet-format shards are read as --use_datasets does (parallel interleave, deterministic
order); CIFAR-10 as its training pipeline does. Honoured: --datasets_use_caching,
--datasets_prefetch_buffer_size, --datasets_num_private_threads, --batch_group_size (capped at
the batches of one evaluation). --datasets_repeat_cached_sample and --shuffle_buffer_size do not
apply. Synthetic data needs none of this: `make_eval_input` returns the synthetic pipeline.
"""

from __future__ import annotations

import tensorflow as tf

from .. import preprocessing

tf1 = tf.compat.v1


class _FullPass:
    """Turns a tf.data pipeline of preprocessing.py into the stream of the module docstring.

    Args:
      eval_plan: the run_plan.EvalPlan (batches, examples scored, global batch).
      **kwargs: the pipeline's arguments, without `train` (always eval preprocessing).
    """

    def __init__(self, *, eval_plan, **kwargs):
        self.eval_plan = eval_plan
        super().__init__(train=False, **kwargs)
        # One evaluation's stream ends after its batches: never stage more than it reads.
        self.staging_depth = max(1, min(self.staging_depth, eval_plan.num_batches))
        self.description = '%s; tf.data without shuffling, %s, %s' % (
            self.dataset.describe(self.subset),
            'each record once' if eval_plan.num_examples <= eval_plan.examples_per_epoch
            else 'records in a fixed order, round again', self._processing_phrase())

    def _staged_dtypes(self) -> list:
        return super()._staged_dtypes() + [tf.bool]  # the validity mask, [batch]

    def _make_dataset(self) -> tf.data.Dataset:
        p, plan = self.params, self.eval_plan
        records = self._records()
        if p.datasets_use_caching:
            records = records.cache()
        slots = plan.num_batches * plan.global_batch_size
        scored = records.repeat().take(plan.num_examples).map(_valid)
        padding = records.take(1).repeat(slots - plan.num_examples).map(_padding)
        ds = scored.concatenate(padding).batch(self.batch_size, drop_remainder=True)
        ds = ds.map(self._process_marked, num_parallel_calls=tf.data.AUTOTUNE,
                    deterministic=True)
        return self._prefetched(ds)

    def _process_marked(self, records, valid):
        images, labels = self._process_batch(records)
        return images, labels, valid


def _valid(record):
    return record, tf.constant(True)


def _padding(record):
    return record, tf.constant(False)


class ImagenetEvalInput(_FullPass, preprocessing.DatasetPipeline):
    """ImageNet-format TFRecords, for an evaluation (see the module docstring)."""


class Cifar10EvalInput(_FullPass, preprocessing.Cifar10Pipeline):
    """CIFAR-10 pickle batches, for an evaluation (see the module docstring)."""


def make_eval_input(plan, dataset) -> preprocessing.InputPipeline:
    """The input pipeline of an evaluation.

    Args:
      plan: the run's run_plan.RunPlan, with its EvalPlan (`plan.eval`).
      dataset: the run's input_data.dataset_info.Dataset.

    Returns:
      For real data, a pipeline whose `build(devices)` returns (images, labels, valid) per
      device: images as in preprocessing.py, labels int32 [batch], valid bool [batch] (False for
      padding slots). For synthetic data, preprocessing.SyntheticInput ((images, labels) pairs,
      every slot scored).

    Raises:
      DataError: the subset's files are missing or corrupt.
    """
    ev = plan.eval
    if dataset.synthetic:
        return preprocessing.pipeline_for(plan, dataset, train=False, subset=ev.subset,
                                          batch_size=ev.per_device_batch_size)
    kind = Cifar10EvalInput if dataset.spec.file_format == 'cifar10_pickle' else \
        ImagenetEvalInput
    return kind(eval_plan=ev, params=plan.params, dataset=dataset, subset=ev.subset,
                batch_size=ev.per_device_batch_size, image_size=plan.image_size,
                num_classes=plan.num_classes, data_format=plan.data_format,
                dtype=plan.compute_dtype)


def count_correct(logits, labels, valid, num_classes: int) -> tf.Tensor:
    """Top-1 hits, top-5 hits and scored examples of one batch, over its valid slots.

    Args:
      logits: [batch, num_classes] float.
      labels: [batch] int32.
      valid: [batch] bool (False: a padding slot), or None when every slot counts.
      num_classes: classes of the model; top-5 is top-min(5, num_classes).

    Returns:
      int64 [3]: (top-1 hits, top-5 hits, examples scored).
    """
    logits = tf.cast(logits, tf.float32)
    if valid is None:
        valid = tf.ones_like(labels, tf.bool)
    hits = [tf.logical_and(tf.nn.in_top_k(labels, logits, k), valid)
            for k in (1, min(5, num_classes))]
    return tf.stack([tf.reduce_sum(tf.cast(x, tf.int64)) for x in hits + [valid]])

"""The interface every input pipeline implements (preprocessing.py builds them): the batch
types and `InputPipeline`, and `ImportedPipeline`, a built pipeline's ops found in another
graph (a frozen forward-only graph). preprocessing.py re-exports these names."""

from __future__ import annotations

import abc
from typing import NamedTuple

import tensorflow as tf


class Batch(NamedTuple):
    """One device's batch of a step: images as in the module docstring, labels int32 [batch]."""

    images: tf.Tensor
    labels: tf.Tensor


class ScoredBatch(NamedTuple):
    """One device's batch of an evaluation's full pass (`full_pass`): images and labels as in
    Batch; valid bool [batch], False for the padding slots that are not scored."""

    images: tf.Tensor
    labels: tf.Tensor
    valid: tf.Tensor


class InputPipeline(abc.ABC):
    """Produces per-device batches (Batch, or ScoredBatch in the full-pass mode).

    Args:
      batch_size: images per device per step.
      image_size: height and width in pixels.
      num_classes: labels lie in [0, num_classes).
      data_format: 'NHWC' or 'NCHW'.
      dtype: dtype of the images (tf.float32, tf.float16 or tf.bfloat16).
      full_pass: None, or the run_plan.EvalPlan of an evaluation: the pipeline's mode that
        reads its records in a fixed order, each scored once (see `make_input_pipeline`), and
        yields ScoredBatch.

    Attributes (everything callers use; every pipeline has each of them):
      warmup_ops: ops to run once before the first step (fill the staging areas).
      step_ops: ops to run with every step (stage the next batch).
      staging_depth: batches each device holds after warm-up (--batch_group_size for staged
        pipelines, 0 for synthetic input, which stages nothing).
      size_ops: one int32 scalar per device: batches now in its staging area ([] if none).
      drain_ops: ops that empty the staging areas, to run once after the last step.
      description: one phrase for the header, e.g. 'synthetic' or 'imagenet (tfrecord, 10 files)'.
      record_files: the TFRecord shards read (ImageNet format), () otherwise: where
        `input_data.data_errors` looks for an image that does not decode.
      skipped: the input_data.skipped_records.SkippedRecords of a pipeline that skips bad
        records (--skip_corrupt_records), else None.
    """

    description = ''  # a pipeline's own, set by its class or its constructor

    def __init__(self, *, batch_size, image_size, num_classes, data_format, dtype,
                 full_pass=None):
        self.batch_size = batch_size
        self.image_size = image_size
        self.num_classes = num_classes
        self.data_format = data_format
        self.dtype = dtype
        self.warmup_ops: list = []
        self.full_pass = full_pass
        self.step_ops: list = []
        self.staging_depth = 0
        self.size_ops: list = []
        self.drain_ops: list = []
        self.record_files: tuple[str, ...] = ()
        self.skipped = None

    def image_shape(self) -> list[int]:
        """Shape of one device's image batch in the data format."""
        if self.data_format == 'NHWC':
            return [self.batch_size, self.image_size, self.image_size, 3]
        return [self.batch_size, 3, self.image_size, self.image_size]

    @abc.abstractmethod
    def build(self, devices: list[str]) -> list[Batch] | list[ScoredBatch]:
        """Builds the pipeline into the default graph.

        Args:
          devices: device strings of the towers, e.g. ['/cpu:0', '/cpu:1'].

        Returns:
          One Batch per device (a ScoredBatch in the full-pass mode), each placed on its device.
        """

    def step_ops_for(self, step: int, num_steps: int) -> list:
        """The puts to run with step `step` (0-based) of a run of `num_steps` steps after the
        warm-up: `step_ops`, except for the last `staging_depth` steps, so the run ends with
        every staged batch consumed."""
        return list(self.step_ops) if step < num_steps - self.staging_depth else []

    def op_names(self) -> list[str]:
        """Names of every op the pipeline's callers run (kept when a graph is frozen)."""
        return ([op.name for op in self.warmup_ops + self.step_ops + self.drain_ops]
                + [t.op.name for t in self.size_ops])

    def imported_into(self, graph) -> InputPipeline:
        """This built pipeline as seen in `graph`, a copy of its graph (a frozen graph made by
        import_graph_def): the same attributes, each op and tensor looked up by name."""
        return ImportedPipeline(self, graph)


class ImportedPipeline(InputPipeline):
    """A built pipeline's ops in another graph (see InputPipeline.imported_into); `build` is
    not available: the batches already exist there."""

    def __init__(self, source: InputPipeline, graph):
        super().__init__(batch_size=source.batch_size, image_size=source.image_size,
                         num_classes=source.num_classes, data_format=source.data_format,
                         dtype=source.dtype)
        self.warmup_ops = [graph.get_operation_by_name(op.name) for op in source.warmup_ops]
        self.step_ops = [graph.get_operation_by_name(op.name) for op in source.step_ops]
        self.size_ops = [graph.get_tensor_by_name(t.name) for t in source.size_ops]
        self.drain_ops = [graph.get_operation_by_name(op.name) for op in source.drain_ops]
        self.staging_depth = source.staging_depth
        self.description = source.description
        self.record_files = source.record_files
        self.skipped = source.skipped

    def build(self, devices):
        raise ValueError('an imported pipeline is already built')

"""Input pipelines: each produces one batch of images and labels per device for every step.

The run loop only sees the `InputPipeline` interface:

    batches = pipeline.build(devices)     # [(images, labels)] per device, placed on that device
    session.run(pipeline.warmup_ops)      # once, before the first step (primes staging areas)
    session.run([train_op] + pipeline.step_ops)   # every step (stages the next batch)

Image value range, for synthetic and real data alike: float in [-1, 1] (a real pixel p in 0..255
becomes p / 127.5 - 1), in the compute dtype, laid out in the run's data format:
[batch, height, width, 3] for NHWC, [batch, 3, height, width] for NCHW. Labels are int32 class ids
in [0, num_classes); synthetic labels avoid 0, ImageNet's background class.

`make_input_pipeline` picks the pipeline of a dataset (see `dataset_info`):

  - `SyntheticInput`: no files.
  - `RecordInputPipeline` (ImageNet TFRecords, the default): stage 1 a `RecordInput` op reads the
    shards with one thread per file (up to 64) into a shuffle buffer; stage 2 the batch's records
    are parsed together, then each image has its own chain of ops (crop window, decode, flip,
    resize) running in parallel with the others, and one concat assembles the device's batch,
    normalised in one pass (see `image_processing`); stage 3 a
    `StagingArea` per device.
  - `DatasetPipeline` (ImageNet TFRecords with --use_datasets, --skip_corrupt_records or mixed
    compression): stage 1 tf.data (input_data/shard_reader.py), stage 2 the same batch
    processing as a parallel map over batches, then prefetch; stage 3 the same staging areas.
  - `Cifar10Pipeline`: the pickle batches through tf.data (CIFAR-10 has no RecordInput form,
    --use_datasets does not apply), stage 3 the same staging areas.

Staging (stage 3), the software pipelining of the performance guide: each device has a
`StagingArea`, created with its put and get ops on the device, so the host-to-device copy of a batch
happens in the put, while the device computes on the previous batch. `warmup_ops` fill each area
with --batch_group_size batches; every step then takes one batch (the get feeds the model) and
`step_ops` put the next. To end a run with empty staging areas, run `drain_ops` after the last step
(training: every step runs the same fetches, so one executor serves them all), or use
`step_ops_for(step, num_steps)`, which leaves out the puts of the last --batch_group_size steps
(evaluation, whose tf.data stream ends after its batches: every put matched by a get; both fetch
lists are made callables before the timer, so the second executor is not built in the loop).
Run-time data errors (a label outside the model's classes, an undecodable image, a corrupt
record) surface as tf.errors.OpError from session.run; input_data/data_errors.py turns them into
one-line `cnn_util.DataError`s.
"""

from __future__ import annotations

import abc
import atexit
import os
import shutil
import tempfile
import warnings

import tensorflow as tf
from tensorflow.python.ops import data_flow_ops

from . import cnn_util
from .input_data import image_processing, input_phrases, shard_reader
from .input_data.data_errors import LABEL_ERROR_MARKER
from .input_data.pipeline_interface import (  # noqa: F401 (re-exported for callers)
    Batch,
    ImportedPipeline,
    InputPipeline,
    ScoredBatch,
)
from .runtime import file_systems, runtime_env

tf1 = tf.compat.v1

# Where reading and preprocessing run (the host's CPU, also in a cluster task).
HOST_DEVICE = '/cpu:0'


class SyntheticInput(InputPipeline):
    """Random images and labels created once on each device and reused at every step.

    Images are uniform in [-1, 1] (the range of preprocessed real images), so a model's first
    loss is the same as on real data: about ln(num_classes). They live in a local (not
    trainable, not saved) variable on the tower's device, so no host-to-device copy happens per
    step. Labels are uniform in [1, num_classes) for ImageNet-sized label spaces (0 is background)
    and in [0, num_classes) otherwise.
    """

    description = 'synthetic'

    def build(self, devices):
        batches = []
        low = 1 if self.num_classes > 1000 else 0
        for index, device in enumerate(devices):
            with tf1.device(device), tf1.name_scope('synthetic_input_%d' % index):
                # Drawn in NHWC and transposed, so both layouts hold the same images.
                nhwc = [self.batch_size, self.image_size, self.image_size, 3]
                initial = tf1.random_uniform(nhwc, -1.0, 1.0, dtype=tf.float32)
                if self.data_format == 'NCHW':
                    initial = tf.transpose(initial, [0, 3, 1, 2])
                images = tf1.Variable(
                    tf.cast(initial, self.dtype), trainable=False,
                    collections=[tf1.GraphKeys.LOCAL_VARIABLES], name='images')
                # Kept as int64: TensorFlow has no GPU kernel for an int32 resource variable.
                labels = tf1.Variable(
                    tf.cast(tf1.random_uniform([self.batch_size], low, self.num_classes,
                                               dtype=tf.int32), tf.int64),
                    trainable=False, collections=[tf1.GraphKeys.LOCAL_VARIABLES],
                    name='labels')
                batch = Batch(tf.identity(images), tf.cast(labels, tf.int32))
                if self.full_pass is not None:  # every slot of a synthetic evaluation scores
                    batch = ScoredBatch(*batch, tf.ones([self.batch_size], tf.bool))
                batches.append(batch)
        return batches


class StagedPipeline(InputPipeline):
    """Base of the real-data pipelines: batches made on the host, staged per device.

    Subclasses implement `_host_batches`; this class checks the labels, casts and lays out the
    images, and adds the staging areas (see the module docstring).

    Args:
      params: the run's `params.Params`.
      dataset: a `dataset_info.Dataset` with files.
      subset: 'train' or 'validation'.
      train: training (random) or eval (deterministic) preprocessing.
      **kwargs: the InputPipeline arguments.

    Attributes:
      scan: the `dataset_info.SubsetScan` of the files read.
    """

    def __init__(self, *, params, dataset, subset, train, **kwargs):
        super().__init__(**kwargs)
        self.params = params
        self.dataset = dataset
        self.subset = subset
        self.train = train
        self.staging_depth = params.batch_group_size
        if self.full_pass is not None:
            # One evaluation's stream ends after its batches: never stage more than it reads.
            self.staging_depth = max(1, min(self.staging_depth, self.full_pass.num_batches))
        self.scan = dataset.scan(subset)
        if dataset.spec.file_format == 'tfrecord':
            self.record_files = tuple(self.scan.files)
        self.process_kwargs = dict(
            image_size=self.image_size, train=train, distortions=params.distortions,
            color=params.distort_color, resize_method=params.resize_method)

    @abc.abstractmethod
    def _host_batches(self, num_devices: int, *, warmup: bool) -> list[tuple[tf.Tensor, tf.Tensor]]:
        """Builds one batch per device on the host.

        Args:
          num_devices: number of batches to return.
          warmup: True for the extra batches of warm-up (--batch_group_size > 1).

        Returns:
          num_devices pairs: images float32 [batch, size, size, 3] in [-1, 1], labels int32
          [batch] as stored in the records.
        """

    def _finish(self, images, labels, *extra):
        """Label check, dtype cast and data-format transpose, on the host; `extra` per-example
        tensors (the full pass's validity mask) pass through."""
        valid = tf.reduce_all((labels >= 0) & (labels < self.num_classes))
        source = ''
        if self.num_classes == self.dataset.num_classes:
            source = self.dataset.classes_source
            if '--num_classes' not in source:
                source += '; --num_classes sets them'
            source = ' (%s)' % source
        message = '%s labels must lie in [0, %d), the classes of the model%s (-1: stored so, ' \
                  'or a record without image/class/label); a batch of %s %s holds' % (
                      LABEL_ERROR_MARKER, self.num_classes, source, self.dataset.data_dir,
                      self.subset)
        message = message.encode('utf-8', 'surrogateescape')  # a non-ASCII --data_dir, any locale
        check = tf1.Assert(valid, [message, labels], summarize=self.batch_size)
        with tf.control_dependencies([check]):
            labels = tf.identity(labels)
        images = tf.cast(images, self.dtype)
        if self.data_format == 'NCHW':
            images = tf.transpose(images, [0, 3, 1, 2])
        images.set_shape(self.image_shape())
        labels.set_shape([self.batch_size])
        return (images, labels, *extra)

    def _staged_dtypes(self) -> list:
        """Dtypes of one staged batch: images and labels (and the full pass's validity mask,
        bool [batch])."""
        return [self.dtype, tf.int32] + ([tf.bool] if self.full_pass is not None else [])

    def _describe(self, reading: str) -> str:
        """The header phrase of the pipeline: the subset, how it is read, how processed."""
        if self.full_pass is not None:
            reading = input_phrases.full_pass_reading(self.full_pass, self.params)
        return '%s; %s, %s' % (self.dataset.describe(self.subset), reading,
                               input_phrases.processing_phrase(self.params, self.train))

    def build(self, devices):
        if self.warmup_ops:
            raise ValueError('build() was already called on this pipeline')
        with tf1.device(HOST_DEVICE), tf1.name_scope('input_pipeline'):
            waves = [self._host_batches(len(devices), warmup=False)]
            for _ in range(1, self.staging_depth):
                waves.append(self._host_batches(len(devices), warmup=True))
            waves = [[self._finish(*batch) for batch in wave] for wave in waves]
        batches = []
        for index, device in enumerate(devices):
            with tf1.device(device), tf1.name_scope('input_staging_%d' % index):
                dtypes = self._staged_dtypes()
                shapes = [self.image_shape()] + [[self.batch_size]] * (len(dtypes) - 1)
                area = data_flow_ops.StagingArea(dtypes, shapes=shapes)
                puts = [area.put(list(wave[index])) for wave in waves]
                self.step_ops.append(puts[0])
                self.warmup_ops.extend(puts)
                self.size_ops.append(area.size())
                self.drain_ops.append(area.clear())
                # Unstage's outputs have no static shape in the GraphDef (its shape function
                # knows none): EnsureShape writes them there, so that Grappler -- the memory
                # estimate of preflight/memory_estimate.py, and the run's own optimizers --
                # sees the batch's dimensions, not unknown ones it counts as 1 each.
                staged = [tf.ensure_shape(tensor, shape)
                          for tensor, shape in zip(area.get(), shapes, strict=True)]
                batches.append(Batch(*staged) if self.full_pass is None else ScoredBatch(*staged))
        return batches


class RecordInputPipeline(StagedPipeline):
    """ImageNet TFRecords read by `RecordInput`, each image processed by its own ops.

    Honours --shuffle_buffer_size (records in RecordInput's buffer), --tf_random_seed (its
    seed), --distortions, --distort_color, --resize_method, --fuse_decode_and_crop,
    --batch_group_size; in a cluster each worker starts at a different file (shift ratio
    task_index / workers).
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._pattern = self._record_pattern()
        self._readers = 0
        self.parallelism = min(64, len(self.scan.files))
        self.description = self._describe(
            input_phrases.record_input_reading(self.params, self.scan))

    @staticmethod
    def exact_pattern(dataset, subset: str) -> str | None:
        """The subset's glob when it matches exactly the scanned, usable files (RecordInput
        takes one pattern), else None."""
        pattern = dataset.file_pattern(subset)
        if sorted(file_systems.glob(pattern)) == sorted(dataset.scan(subset).files):
            return pattern
        return None

    def _record_pattern(self) -> str:
        """A glob matching exactly the scanned, usable files: the subset's, else (skipped or
        stray local files) one of a private folder of links to them."""
        pattern = self.exact_pattern(self.dataset, self.subset)
        if pattern is not None:
            return pattern
        # Skipped or stray files: a private folder of links to the usable shards.
        folder = tempfile.mkdtemp(prefix='tf_cnn_shards_')
        atexit.register(shutil.rmtree, folder, True)
        for path in self.scan.files:
            os.symlink(os.path.abspath(path), os.path.join(folder, os.path.basename(path)))
        return os.path.join(folder, '*')

    def _host_batches(self, num_devices, *, warmup):
        p = self.params
        per_device = self.batch_size
        total = per_device * num_devices
        shift = 0.0
        if p.job_name == 'worker' and p.worker_hosts:
            shift = p.task_index / len(p.worker_hosts)
        self._readers += 1
        reader = data_flow_ops.RecordInput(
            file_pattern=os.fsencode(self._pattern), batch_size=total,
            compression_type=self.scan.compression[0] or None,
            buffer_size=2 * total if warmup else max(p.shuffle_buffer_size, total),
            parallelism=1 if warmup else self.parallelism, shift_ratio=shift,
            seed=p.tf_random_seed + self._readers - 1, name='record_input_%d' % self._readers)
        records = tf.split(reader.get_yield_op(), num_devices)
        return [image_processing.preprocess_imagenet_batch(
            device_records, per_device, fuse_decode_and_crop=p.fuse_decode_and_crop,
            **self.process_kwargs) for device_records in records]


class _TfDataPipeline(StagedPipeline):
    """Shared tf.data plumbing: options, batching, one iterator for all devices."""

    def _records(self) -> tf.data.Dataset:
        raise NotImplementedError

    def _process_batch(self, records):
        """string [batch] -> (images float32 [batch, s, s, 3] in [-1, 1], labels int32 [batch])."""
        raise NotImplementedError

    def _make_dataset(self) -> tf.data.Dataset:
        if self.full_pass is not None:
            return self._full_pass_dataset()
        p = self.params
        ds = self._records()
        if p.datasets_use_caching:
            ds = ds.cache()
        if self.train:
            ds = ds.shuffle(p.shuffle_buffer_size, seed=p.tf_random_seed)
        # Batch the records, then process whole batches in parallel: the per-batch work
        # (parsing, box and window arithmetic) is vectorised and each image's decode chain runs
        # independently inside the map function, as in the RecordInput pipeline.
        ds = ds.repeat().batch(self.batch_size, drop_remainder=True)
        with warnings.catch_warnings():
            # Random ops in the map functions take their seeds from the graph seed, as intended.
            warnings.filterwarnings('ignore', message='Seed .* from outer graph')
            # The batches in the order they were read (unless `sloppy`: a training run's
            # --datasets_sloppy_parallel_interleave), several processed at once. A training
            # batch's random ops (crop, flip, colour) are one stateful kernel each, shared by
            # the calls in flight, so their draws go to the batches in the order the calls
            # reach them: with TensorFlow's op determinism asked (runtime_env.op_determinism)
            # one batch is processed at a time, and equal seeds give equal batches.
            parallel = 1 if self.train and runtime_env.op_determinism() else tf.data.AUTOTUNE
            ds = ds.map(self._process_batch, num_parallel_calls=parallel,
                        deterministic=not self.sloppy)
        if p.datasets_repeat_cached_sample:
            ds = ds.take(1).cache().repeat()
        return self._prefetched(ds)

    def _full_pass_dataset(self) -> tf.data.Dataset:
        """The stream of an evaluation (`full_pass`, see `make_input_pipeline`): batches of
        (images, labels, valid)."""
        plan = self.full_pass
        records = self._records()
        if self.params.datasets_use_caching:
            records = records.cache()
        slots = plan.num_batches * plan.global_batch_size
        # Whole passes, then the first records of a last partial one: with every record
        # readable, the records going round from the first. A record --skip_corrupt_records
        # skips leaves its slot to padding: another record is never read twice in its place
        # (the scored count is then the distinct records read, once a pass).
        passes, rest = divmod(plan.num_examples, plan.examples_per_epoch)
        scored = records.repeat(passes).concatenate(records.take(rest)).take(
            plan.num_examples).map(lambda r: (r, tf.constant(True)))
        padding = records.take(1).cache().repeat().map(lambda r: (r, tf.constant(False)))
        ds = scored.concatenate(padding).take(slots).batch(self.batch_size,
                                                           drop_remainder=True)
        ds = ds.map(lambda records, valid: (*self._process_batch(records), valid),
                    num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
        return self._prefetched(ds)

    @property
    def sloppy(self) -> bool:
        """Whether the records and batches may come in the order they are ready rather than
        the order they were read: a training run's --datasets_sloppy_parallel_interleave
        (evaluations always read in order). False (the default): the same --tf_random_seed
        gives the same batches, in the same order."""
        return bool(self.train and self.params.datasets_sloppy_parallel_interleave)

    def _prefetched(self, ds: tf.data.Dataset) -> tf.data.Dataset:
        """`ds` with --datasets_prefetch_buffer_size batches prefetched, on a private thread
        pool of --datasets_num_private_threads threads when that is set."""
        p = self.params
        ds = ds.prefetch(p.datasets_prefetch_buffer_size)
        if p.datasets_num_private_threads:
            options = tf.data.Options()
            options.threading.private_threadpool_size = p.datasets_num_private_threads
            ds = ds.with_options(options)
        return ds

    def _host_batches(self, num_devices, *, warmup):
        """One get_next per device, each after the one made before it (a control input):
        several devices' batches are taken in one session.run, and without the chain the
        device that got the next batch would be whichever get_next ran first. Each depends
        only on those made before it, so fetching the first wave's never runs a later one's."""
        del warmup  # Every get_next yields new batches.
        if not hasattr(self, '_iterator'):
            self._iterator = tf1.data.make_one_shot_iterator(self._make_dataset())
            self._last_get = None
        batches = []
        for _ in range(num_devices):
            with tf.control_dependencies([self._last_get] if self._last_get is not None else []):
                batch = self._iterator.get_next()
            self._last_get = batch[0].op
            batches.append(batch)
        return batches


class DatasetPipeline(_TfDataPipeline):
    """ImageNet TFRecords read by tf.data (--use_datasets).

    Honours --datasets_parallel_interleave_cycle_length (files read at once, default: all, up to
    64), --datasets_num_private_threads, --datasets_use_caching (caches the serialized records),
    --datasets_repeat_cached_sample, --datasets_prefetch_buffer_size (batches per device),
    --shuffle_buffer_size and the processing flags of RecordInputPipeline.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.cycle_length = input_phrases.cycle_length(self.params, self.scan)
        if self.params.skip_corrupt_records:
            from .input_data import skipped_records
            self.skipped = skipped_records.SkippedRecords(self.num_classes, self.scan.skipped)
        self.description = self._describe(input_phrases.dataset_reading(
            self.params, self.scan, self.train, self.full_pass is not None))

    def _records(self):
        return shard_reader.interleaved_records(
            self.scan, cycle_length=self.cycle_length, skipped=self.skipped,
            shuffle_seed=self.params.tf_random_seed if self.train else None,
            sloppy=self.sloppy)

    def _process_batch(self, records):
        return image_processing.preprocess_imagenet_batch(
            records, self.batch_size, fuse_decode_and_crop=self.params.fuse_decode_and_crop,
            **self.process_kwargs)


class Cifar10Pipeline(_TfDataPipeline):
    """CIFAR-10 pickle batches through tf.data (fixed-length records of a temporary file)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        from .input_data import cifar10_data
        self._record_file, count = cifar10_data.write_record_file(list(self.scan.files))
        self._record_bytes = cifar10_data.RECORD_BYTES
        if count != self.scan.num_examples:
            raise cnn_util.DataError('CIFAR-10 files in %s changed while being read'
                                     % self.dataset.data_dir)
        if self.num_classes < cifar10_data.NUM_CLASSES:
            raise cnn_util.DataError('CIFAR-10 labels lie in [0, 10) but the model has %d classes'
                                     % self.num_classes)
        self.description = self._describe(input_phrases.tf_data_phrase(self.params, self.train))

    def _records(self):
        return tf.data.FixedLengthRecordDataset(self._record_file, self._record_bytes)

    def _process_batch(self, records):
        raw = tf.io.decode_raw(records, tf.uint8)  # [batch, 1 + 3072]
        labels = tf.cast(raw[:, 0], tf.int32)
        images = tf.transpose(tf.reshape(raw[:, 1:], [-1, 3, 32, 32]), [0, 2, 3, 1])
        return image_processing.preprocess_cifar10_batch(images, **self.process_kwargs), labels


def make_input_pipeline(params, dataset, *, batch_size: int, image_size: int, num_classes: int,
                        data_format: str, dtype, train: bool, subset: str | None = None,
                        full_pass=None) -> InputPipeline:
    """The input pipeline of a dataset.

    Args:
      params: the run's `params.Params`.
      dataset: from `dataset_info.get_dataset(params)`.
      batch_size: images per device per step.
      image_size: the model's input height and width in pixels.
      num_classes: the model's classes; real labels outside [0, num_classes) raise.
      data_format: 'NHWC' or 'NCHW'.
      dtype: dtype of the images (tf.float32, tf.float16, tf.bfloat16).
      train: training (random crops, flips) or eval (central crop) preprocessing.
      subset: 'train' or 'validation'; default --data_subset, else 'train' when training and
        'validation' for eval.
      full_pass: the run_plan.EvalPlan of an evaluation, for the full-pass mode (eval
        preprocessing whatever `train` says): its records read in a fixed order without
        shuffling, `full_pass.num_examples` of them marked valid, then padding slots (the
        first record again, marked not valid) up to num_batches x global batch, so that every
        batch is full and the devices together read each slot once; the slots of records
        --skip_corrupt_records skips are padding too (no record is scored twice in a pass to
        fill them). ImageNet-format shards
        are then read as --use_datasets does (also when training uses RecordInput), CIFAR-10
        as its training pipeline does; --batch_group_size is capped at the evaluation's
        batches; --datasets_repeat_cached_sample and --shuffle_buffer_size do not apply.

    Returns:
      SyntheticInput for synthetic data; Cifar10Pipeline for CIFAR-10; DatasetPipeline with
      --use_datasets, a full pass, --skip_corrupt_records (RecordInput's reader stops the run
      at a bad record), shards of mixed compression (RecordInput reads one kind) or a remote
      folder whose glob matches other files too (no links can be made there), else
      RecordInputPipeline, for ImageNet TFRecords.

    Raises:
      DataError: the subset's files are missing, inconsistent or corrupt (see
        `dataset_info.Dataset.scan`).
    """
    common = dict(batch_size=batch_size, image_size=image_size, num_classes=num_classes,
                  data_format=data_format, dtype=dtype, full_pass=full_pass)
    if dataset.synthetic:
        return SyntheticInput(**common)
    train = train and full_pass is None
    subset = subset or params.data_subset or ('train' if train else 'validation')
    real = dict(params=params, dataset=dataset, subset=subset, train=train, **common)
    if dataset.spec.file_format == 'cifar10_pickle':
        return Cifar10Pipeline(**real)
    if reads_with_tf_data(params, dataset, subset, full_pass is not None):
        return DatasetPipeline(**real)
    return RecordInputPipeline(**real)


def reads_with_tf_data(params, dataset, subset: str, full_pass: bool = False) -> bool:
    """Whether ImageNet-format shards of `subset` are read by tf.data (DatasetPipeline) rather
    than RecordInput: --use_datasets, a full pass, --skip_corrupt_records, shards of mixed
    compression, or a remote folder whose glob matches other files too."""
    kinds = set(dataset.scan(subset).compression)
    return bool(params.use_datasets or full_pass or params.skip_corrupt_records or
                len(kinds) > 1 or (file_systems.is_remote(dataset.data_dir) and
                                   RecordInputPipeline.exact_pattern(dataset, subset) is None))


def describe_train_input(plan, dataset) -> str | None:
    """The reading and processing of the run's training or forward-only input, without making
    the pipeline: the header's `Input:` value (the pipeline's `description` after the dataset's
    phrase), e.g. 'RecordInput (8 files in parallel, shuffle buffer 10000), distortions,
    bilinear resize'; None for synthetic data (nothing is read)."""
    if dataset.synthetic:
        return None
    p, subset = plan.params, plan.subset
    if dataset.spec.file_format == 'cifar10_pickle':
        reading = input_phrases.tf_data_phrase(p, plan.training)
    elif reads_with_tf_data(p, dataset, subset):
        reading = input_phrases.dataset_reading(p, dataset.scan(subset), plan.training)
    else:
        reading = input_phrases.record_input_reading(p, dataset.scan(subset))
    return '%s, %s' % (reading, input_phrases.processing_phrase(p, plan.training))


def pipeline_for(plan, dataset, *, train: bool, subset: str | None = None,
                 batch_size: int | None = None, params=None, full_pass=None) -> InputPipeline:
    """`make_input_pipeline` with the run plan's values: per-device batch, image size, classes,
    data format, compute dtype and subset.

    Args:
      plan: the run's run_plan.RunPlan.
      dataset: the run's dataset (input_data.dataset_info.Dataset).
      train: training (random) or eval (deterministic) preprocessing.
      subset: the subset to read, when not the plan's (`plan.subset`, the one the header
        names: --data_subset, else 'validation' with --eval and 'train' otherwise, forward-only
        runs included).
      batch_size: images per device, when not the plan's (an eval batch).
      params: Params to read input options from, when not the plan's (smaller buffers).
      full_pass: as for make_input_pipeline.
    """
    return make_input_pipeline(
        params or plan.params, dataset, batch_size=batch_size or plan.per_device_batch_size,
        image_size=plan.image_size, num_classes=plan.num_classes, data_format=plan.data_format,
        dtype=plan.compute_dtype, train=train, subset=subset or plan.subset, full_pass=full_pass)


def describe_eval_input(plan, dataset) -> str:
    """The description of the input of one evaluation of the run (`eval_pipeline_for`'s
    `description`), without making the pipeline: for the header's 'Eval:' line, printed before
    the evaluation's graph exists. E.g. 'synthetic', or 'imagenet (in /data), validation: 5
    examples counted in 2 TFRecord shards, ...; tf.data without shuffling, each record once,
    central crop, bilinear resize'."""
    if dataset.synthetic:
        return SyntheticInput.description
    ev = plan.eval
    return '%s; %s, %s' % (dataset.describe(ev.subset),
                           input_phrases.full_pass_reading(ev, plan.params),
                           input_phrases.eval_processing(plan.params))


def eval_pipeline_for(plan, dataset) -> InputPipeline:
    """The input of one evaluation of the run: `pipeline_for` in the full-pass mode of the
    plan's EvalPlan (`plan.eval`: its subset and per-device batch); its `build` returns one
    ScoredBatch per device.

    Raises:
      DataError: the subset's files are missing or corrupt.
    """
    ev = plan.eval
    return pipeline_for(plan, dataset, train=False, subset=ev.subset,
                        batch_size=ev.per_device_batch_size, full_pass=ev)

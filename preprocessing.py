"""Input pipelines: each produces one batch of images and labels per device for every step.

The run loop only sees the `InputPipeline` interface:

    batches = pipeline.build(devices)     # [(images, labels)] per device, placed on that device
    session.run(pipeline.warmup_ops)      # once, before the first step (primes staging areas)
    session.run([train_op] + pipeline.step_ops)   # every step (stages the next batch)

Image value range, for synthetic and real data alike: float in [-1, 1] (a real pixel p in 0..255
becomes p / 127.5 - 1), in the compute dtype, laid out in the run's data format:
[batch, height, width, 3] for NHWC, [batch, 3, height, width] for NCHW. Labels are int32 class ids
in [0, num_classes); synthetic labels avoid 0, ImageNet's background class.
"""

from __future__ import annotations

import abc

import tensorflow as tf

tf1 = tf.compat.v1


class InputPipeline(abc.ABC):
    """Produces per-device batches of (images, labels).

    Args:
      batch_size: images per device per step.
      image_size: height and width in pixels.
      num_classes: labels lie in [0, num_classes).
      data_format: 'NHWC' or 'NCHW'.
      dtype: dtype of the images (tf.float32, tf.float16 or tf.bfloat16).

    Attributes:
      warmup_ops: ops to run once before the first step (fill the staging areas).
      step_ops: ops to run with every step (stage the next batch).
      description: one phrase for the header, e.g. 'synthetic' or 'imagenet (tfrecord, 10 files)'.
    """

    def __init__(self, *, batch_size, image_size, num_classes, data_format, dtype):
        self.batch_size = batch_size
        self.image_size = image_size
        self.num_classes = num_classes
        self.data_format = data_format
        self.dtype = dtype
        self.warmup_ops: list = []
        self.step_ops: list = []
        self.description = ''

    def image_shape(self) -> list[int]:
        """Shape of one device's image batch in the data format."""
        if self.data_format == 'NHWC':
            return [self.batch_size, self.image_size, self.image_size, 3]
        return [self.batch_size, 3, self.image_size, self.image_size]

    @abc.abstractmethod
    def build(self, devices: list[str]) -> list[tuple[tf.Tensor, tf.Tensor]]:
        """Builds the pipeline into the default graph.

        Args:
          devices: device strings of the towers, e.g. ['/cpu:0', '/cpu:1'].

        Returns:
          One (images, labels) pair per device, each placed on its device: images as described in
          the module docstring, labels [batch] int32.
        """


class SyntheticInput(InputPipeline):
    """Random images and labels created once on each device and reused at every step.

    Images are uniform in [-1, 1] (the range of preprocessed real images), so a model's first
    loss is the same as on real data: about ln(num_classes). They live in a local (not
    trainable, not saved) variable on the tower's device, so no host-to-device copy happens per
    step. Labels are uniform in [1, num_classes) for ImageNet-sized label spaces (0 is background)
    and in [0, num_classes) otherwise.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.description = 'synthetic'

    def build(self, devices):
        batches = []
        low = 1 if self.num_classes > 1000 else 0
        for index, device in enumerate(devices):
            with tf1.device(device), tf1.name_scope('synthetic_input_%d' % index):
                initial = tf1.random_uniform(self.image_shape(), -1.0, 1.0, dtype=tf.float32)
                images = tf1.Variable(
                    tf.cast(initial, self.dtype), trainable=False, collections=[tf1.GraphKeys.LOCAL_VARIABLES],
                    name='images')
                labels = tf1.Variable(
                    tf1.random_uniform([self.batch_size], low, self.num_classes, dtype=tf.int32),
                    trainable=False, collections=[tf1.GraphKeys.LOCAL_VARIABLES],
                    name='labels')
                batches.append((tf.identity(images), tf.identity(labels)))
        return batches

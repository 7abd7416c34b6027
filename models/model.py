"""Base class of every model: defaults (image size, batch and learning rate) and the network build.

A model file holds only architecture: a subclass of `CNNModel` whose `add_inference(cnn)` adds the
layers through a `ConvNetBuilder`. The base adds the final classifier layer and the loss.
"""

from __future__ import annotations

import collections

import tensorflow as tf

from . import convnet_builder

tf1 = tf.compat.v1

BuildNetworkResult = collections.namedtuple(
    'BuildNetworkResult', ['logits', 'aux_logits', 'update_ops', 'decay_tensors'],
    defaults=((),))
BuildNetworkResult.__doc__ = """Output of `CNNModel.build_network`.

logits: [batch, num_classes] float32. aux_logits: [batch, num_classes] float32 or None (Inception's
auxiliary head). update_ops: batch-norm moving-average updates of this tower (training only).
decay_tensors: the trainable variables the network read outside batch norm (kernels, depthwise
kernels, biases): what weight decay applies to, the original's rule (its filter_l2_loss_vars)."""


class DefaultSchedule(collections.namedtuple(
        'DefaultSchedule', ['rates', 'steps', 'epochs', 'warmup_steps', 'warmup_epochs',
                            'decay'], defaults=((), (), 0, 0, None))):
    """A model's default learning-rate schedule in global steps, as the original benchmark's
    models define theirs (each model's `get_learning_rate` there).

    rates: the rates in turn; rates[0] is the rate before any change (the peak after a warm-up).
    steps, epochs: rate i + 1 applies from global step steps[i] + 1 on (the original's
      tf.train.piecewise_constant: rate i while step <= steps[i]); epochs[i] is the epoch
      steps[i] stands for (for the header's text).
    warmup_steps, warmup_epochs: while global step < warmup_steps the rate is
      rates[0] x step / warmup_steps (linear from 0; Goyal et al. 2017, section 2.2).
    decay: None, or (factor, every_steps, every_epochs): the rate is multiplied by
      factor ** floor(step / every_steps) (the original's staircase tf.train.exponential_decay).
    """


def schedule_tensor(spec: DefaultSchedule, global_step):
    """`spec`'s rate at `global_step` (int64 scalar tensor) as a float32 scalar tensor."""
    step = tf.cast(global_step, tf.float32)
    lr = tf.constant(spec.rates[0], tf.float32)
    for boundary, rate in zip(spec.steps, spec.rates[1:]):
        lr = tf1.where(global_step > boundary, tf.constant(rate, tf.float32), lr)
    if spec.decay is not None:
        factor, every_steps, _ = spec.decay
        lr = lr * tf.pow(tf.constant(factor, tf.float32), tf.floor(step / every_steps))
    if spec.warmup_steps > 0:
        ramp = spec.rates[0] * step / float(spec.warmup_steps)
        lr = tf1.where(global_step < spec.warmup_steps, ramp, lr)
    return lr


class CNNModel:
    """A convolutional network with its defaults.

    Args:
      name: registry name, e.g. 'resnet50'.
      image_size: default input height and width in pixels.
      batch_size: default per-device batch size.
      learning_rate: default learning rate: the constant rate of `default_schedule`, or
        the first rate of a subclass's schedule at the default batch.
      fixed_image_size: True when the architecture only accepts `image_size` (it flattens a
        fixed spatial map into a fully connected layer); False when any size at least
        `min_image_size` works (global average pooling before the classifier).
      min_image_size: the smallest input size the architecture accepts.
      dataset: 'imagenet' or 'cifar10': the dataset the architecture is defined for.
    """

    #: Whether the network's convolutions are followed by batch norm unless a layer says
    #: otherwise (the builder's default; a fact of the architecture, set by the subclass).
    uses_batch_norm = False
    #: The batch norm after this network's convolutions, and of its stand-alone batch norms
    #: unless a layer says otherwise: {'decay', 'epsilon', 'scale'} (ConvNetBuilder.batch_norm).
    #: The original benchmark's values for the model; by default its builder's (no trainable
    #: scale, decay 0.999, epsilon 0.001). tests/test_batch_norm_settings.py holds each model's
    #: with its source.
    batch_norm_config = convnet_builder.DEFAULT_BATCH_NORM
    #: True when add_inference already produces [batch, num_classes] logits (no final
    #: classifier is added after it).
    skips_final_affine_layer = False
    #: The name the original benchmark's model gave itself where it is not the registry's
    #: (the header's `Model:` line shows it, as the original's did); None: the registry's.
    original_name = None

    def __init__(self, name, *, image_size, batch_size, learning_rate, fixed_image_size=False,
                 min_image_size=32, dataset='imagenet'):
        self.name = name
        self.image_size = image_size
        self.default_batch_size = batch_size
        self.default_learning_rate = learning_rate
        self.fixed_image_size = fixed_image_size
        self.min_image_size = min_image_size
        self.dataset = dataset

    def add_inference(self, cnn: convnet_builder.ConvNetBuilder) -> None:
        """Adds every layer up to (not including) the final classifier."""
        raise NotImplementedError('%s must implement add_inference' % type(self).__name__)

    def default_num_classes(self) -> int:
        """Classifier width on the model's own dataset: 1001 for ImageNet (label 0 is the
        background class of TF's ImageNet TFRecords), 10 for CIFAR-10."""
        return 10 if self.dataset == 'cifar10' else 1001

    def default_schedule(self, batch_size, base_lr=None,
                         examples_per_epoch=None) -> DefaultSchedule:
        """The model's own learning-rate schedule at a global batch of `batch_size` images
        (all devices and workers): by default the constant `default_learning_rate`, whatever
        the batch, as the original benchmark's base model (models/model.py there) returns its
        rate unscaled. `base_lr` is the ImageNet ResNets' --resnet_base_lr (others ignore it).
        `examples_per_epoch` is the epoch of the schedules that change with the epochs: the
        run's (RunPlan.examples_per_epoch: the training records found in real data, the
        published size of synthetic data), None for the model's dataset's published size
        (ImageNet's 1,281,167, CIFAR-10's 50,000: the original's constants).
        """
        del batch_size, base_lr, examples_per_epoch
        return DefaultSchedule(rates=(self.default_learning_rate,))

    def get_learning_rate(self, global_step, batch_size, base_lr=None, examples_per_epoch=None):
        """The model's own learning-rate schedule as a float32 scalar tensor
        (`default_schedule`, built by `schedule_tensor`).

        Args:
          global_step: int64 scalar tensor: updates applied so far.
          batch_size: global batch size (all devices and workers).
          base_lr: --resnet_base_lr, or None (see `default_schedule`).
          examples_per_epoch: the run's epoch, or None (see `default_schedule`).
        """
        return schedule_tensor(self.default_schedule(batch_size, base_lr, examples_per_epoch),
                               global_step)

    def build_network(self, images, *, phase_train, num_classes, data_format='NHWC',
                      dtype=tf.float32, variable_dtype=tf.float32,
                      options=None) -> BuildNetworkResult:
        """Builds the network on `images` in the current variable scope and device.

        Args:
          images: [batch, height, width, 3] (NHWC) or [batch, 3, height, width] (NCHW) in `dtype`,
            values in [-1, 1].
          phase_train: True for the training graph.
          num_classes: width of the logits (1001 for ImageNet with background, 10 for CIFAR-10).
          data_format: 'NHWC' or 'NCHW'; `images` must already be in it.
          dtype: compute dtype; variable_dtype: storage dtype of the variables.
          options: the models/fast_paths.BuildOptions of the builder (folded batch norm,
            float32 norm and pool, the graph choices' `choose`), or None for none of them.

        Returns:
          BuildNetworkResult with float32 logits [batch, num_classes].
        """
        cnn = convnet_builder.ConvNetBuilder(images, 3, phase_train, data_format, dtype,
                                             variable_dtype, options=options)
        cnn.use_batch_norm = self.uses_batch_norm
        cnn.batch_norm_config = dict(self.batch_norm_config)
        with tf1.variable_scope('cg'):
            self.add_inference(cnn)
            if not self.skips_final_affine_layer:
                cnn.affine(num_classes, activation='linear')
            logits = tf.cast(cnn.top_layer, tf.float32)
            aux_logits = None
            if cnn.aux_top_layer is not None:
                with cnn.switch_to_aux_top_layer():
                    cnn.affine(num_classes, activation='linear', stddev=0.001)
                    aux_logits = tf.cast(cnn.top_layer, tf.float32)
        return BuildNetworkResult(logits, aux_logits, list(cnn.update_ops),
                                  list(cnn.decay_tensors))

    def loss_function(self, logits, labels, aux_logits=None):
        """Mean softmax cross entropy; Inception's auxiliary head adds 0.4 x its own loss
        (Szegedy et al. 2016, section 7).

        Args:
          logits: [batch, num_classes] float32.
          labels: [batch] int32 class ids.

        Returns:
          float32 scalar.
        """
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits))
        if aux_logits is not None:
            loss += 0.4 * tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=aux_logits))
        return loss

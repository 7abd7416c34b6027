"""Residual networks: ImageNet ResNet v1, v1.5 and v2 (bottleneck) and CIFAR-10 ResNet v1 and v2.

Versions:
  v1: He, Zhang, Ren & Sun 2016, "Deep Residual Learning for Image Recognition" (CVPR). Post-
    activation units; a strided unit downsamples in its first 1x1 convolution (the authors'
    released Caffe models).
  v1.5: v1 with the stride on the 3x3 convolution instead (fb.resnet.torch; Goyal et al. 2017,
    "Accurate, Large Minibatch SGD"). Same parameters as v1, more FLOPs.
  v2: He, Zhang, Ren & Sun 2016, "Identity Mappings in Deep Residual Networks" (ECCV), full pre-
    activation units (Figure 4(e)): BN-ReLU before each convolution, nothing after the addition.
"""

import types

import tensorflow as tf

from . import convnet_builder, model

# Batch norm, the original benchmark's (He et al. give no values): after a convolution, decay
# 0.9, epsilon 1e-5 and a trainable scale (gamma); ResNet v2's pre-activation and final batch
# norms, which it adds without that configuration, take its builder's defaults (decay 0.999,
# epsilon 0.001, no scale: a positive scale before a ReLU is one the next layer's weights
# can learn).
_BATCH_NORM = types.MappingProxyType({'decay': 0.9, 'epsilon': 1e-5, 'scale': True})
_PREACTIVATION = convnet_builder.DEFAULT_BATCH_NORM

# The batch norm closing a v1 residual branch starts with scale 0, so every unit starts as the
# identity (Goyal et al. 2017, section 5.1): without it the output variance grows with depth and
# deep v1 networks start far above ln(classes).
_ZERO_GAMMA = {'/gamma': tf.compat.v1.zeros_initializer()}

IMAGENET_TRAIN_IMAGES = 1281167  # ILSVRC-2012 training images: an epoch of the default schedule
CIFAR10_TRAIN_IMAGES = 50000

_IMAGENET_STAGES = ((64, 256), (128, 512), (256, 1024), (512, 2048))  # (bottleneck, output)


def _bottleneck_v1(cnn, depth, bottleneck, stride, stride_on_3x3):
    """Post-activation bottleneck unit (v1 and v1.5): conv-BN-ReLU x2, conv-BN, add, ReLU."""
    x, c_in = cnn.top_layer, cnn.top_size
    if c_in == depth and stride == 1:
        shortcut = x
    else:  # Projection shortcut (option B of He et al. 2016, section 3.3).
        shortcut = cnn.conv(depth, 1, 1, stride, stride, activation=None, use_batch_norm=True,
                            input_layer=x, num_channels_in=c_in, bias=None)
    first_stride, second_stride = (1, stride) if stride_on_3x3 else (stride, 1)
    cnn.conv(bottleneck, 1, 1, first_stride, first_stride, input_layer=x, num_channels_in=c_in,
             use_batch_norm=True, bias=None)
    cnn.conv(bottleneck, 3, 3, second_stride, second_stride, mode='SAME_RESNET',
             use_batch_norm=True, bias=None)
    with cnn.variable_initializers(_ZERO_GAMMA):
        res = cnn.conv(depth, 1, 1, activation=None, use_batch_norm=True, bias=None)
    cnn.top_layer, cnn.top_size = cnn.residual(shortcut, res), depth


def _bottleneck_v2(cnn, depth, bottleneck, stride):
    """Full pre-activation bottleneck unit: BN-ReLU, then three convolutions; the projection
    shortcut (when the shape changes) is taken from the pre-activated input."""
    x, c_in = cnn.top_layer, cnn.top_size
    preact = cnn.activation('relu', input_layer=cnn.batch_norm(x, **_PREACTIVATION))
    if c_in == depth and stride == 1:
        shortcut = x
    else:
        shortcut = cnn.conv(depth, 1, 1, stride, stride, activation=None, use_batch_norm=False,
                            input_layer=preact, num_channels_in=c_in, bias=None)
    cnn.conv(bottleneck, 1, 1, input_layer=preact, num_channels_in=c_in, use_batch_norm=True,
             bias=None)
    cnn.conv(bottleneck, 3, 3, stride, stride, mode='SAME_RESNET', use_batch_norm=True,
             bias=None)
    res = cnn.conv(depth, 1, 1, activation=None, use_batch_norm=False, bias=None)
    cnn.top_layer, cnn.top_size = shortcut + res, depth


class ResnetModel(model.CNNModel):
    """ImageNet ResNet with bottleneck units: 'resnet50', 'resnet101', 'resnet152', each with
    '_v1.5' and '_v2' variants.

    Layers (He et al. 2016, Table 1): conv 7x7/2 64 -> maxpool 3x3/2 -> four stages of (3, 4, 6, 3)
    / (3, 4, 23, 3) / (3, 8, 36, 3) bottleneck units with (64, 256), (128, 512), (256, 1024) and
    (512, 2048) (bottleneck, output) channels, the first unit of stages 2-4 with stride 2 ->
    global average pool -> classifier. Shortcuts are identities except where the shape changes,
    where a 1x1 projection is used (option B). Convolutions have no bias; padding of strided
    convolutions is explicit and symmetric ('SAME_RESNET').

    v1 and v1.5 put batch norm after every convolution (ReLU after the first two and after the
    addition). v2 (Identity Mappings, Figure 4(e)) puts BN-ReLU before each convolution, a final
    BN-ReLU before the pool, and no batch norm on the stem convolution or the projections; the
    stride is on the 3x3 convolution as in the authors' released pre-activation code and
    TensorFlow's official ResNet v2. (The original benchmark's v2 keeps batch norm on the stem and
    strides the first 1x1 convolution; we follow the paper's released design.) In v1 and v1.5 the
    batch norm closing each residual branch starts with scale 0 (Goyal et al. 2017, section 5.1),
    so that deep networks start with a loss near ln(classes). Batch norm is the original
    benchmark's: decay 0.9, epsilon 1e-5 and a trainable scale after a convolution; v2's
    stand-alone pre-activation and final ones without scale, decay 0.999, epsilon 0.001. So v1
    and v1.5 have the original's trainable parameters (resnet50: 25,559,081), and v2 the
    original's less its stem's batch norm (resnet50_v2: 25,536,233, the original 25,536,361).

    Args:
      name: registry name.
      layer_counts: units per stage, e.g. (3, 4, 6, 3).
      version: 'v1', 'v1.5' or 'v2'.

    Input: [batch, 224, 224, 3] (NHWC) or [batch, 3, 224, 224] (NCHW) by default, any size >= 32;
    output logits [batch, num_classes].
    """

    uses_batch_norm = True
    batch_norm_config = _BATCH_NORM
    base_lr_batch_size = 256  # --resnet_base_lr is the default rate at this global batch
    base_lr = 0.128  # the original benchmark's default --resnet_base_lr

    def __init__(self, name, layer_counts, version):
        if version not in ('v1', 'v1.5', 'v2'):
            raise ValueError("version must be 'v1', 'v1.5' or 'v2'. Received: %r" % version)
        self.layer_counts = tuple(layer_counts)
        self.version = version
        batch_size = 64 if self.layer_counts == (3, 4, 6, 3) else 32
        # He et al. train with learning rate 0.1 at batch 256; the original benchmark's base rate
        # is 0.128 per 256 images, scaled linearly to the default batch.
        super().__init__(name, image_size=224, batch_size=batch_size,
                         learning_rate=self.base_lr * batch_size / self.base_lr_batch_size,
                         fixed_image_size=False,
                         min_image_size=32)

    def default_schedule(self, batch_size, base_lr=None, examples_per_epoch=None):
        """The original benchmark's ImageNet ResNet schedule (its models/resnet_model.py): the
        base rate (`base_lr`, else 0.128) per 256 images, scaled linearly to `batch_size`;
        a linear warm-up from 0 over 5 epochs, then x0.1 after epochs 30, 60, 80 and 90, an
        epoch being `examples_per_epoch` images, the run's (the original: 1,281,167,
        ImageNet's training set, whatever the data; the default here too).

        The original divided the base rate by the GPUs under --variable_update=replicated,
        whose all-reduce summed the towers' gradients; here every mode averages them
        (graph/train_op.py), which gives the same update without the division.
        """
        rate = (self.base_lr if base_lr is None else base_lr) * batch_size / (
            self.base_lr_batch_size)
        steps_per_epoch = (examples_per_epoch or IMAGENET_TRAIN_IMAGES) / batch_size
        epochs = (30, 60, 80, 90)
        return model.DefaultSchedule(
            rates=tuple(rate * 0.1 ** k for k in range(len(epochs) + 1)),
            steps=tuple(int(steps_per_epoch * e) for e in epochs), epochs=epochs,
            warmup_steps=int(steps_per_epoch * 5), warmup_epochs=5)

    def add_inference(self, cnn):
        v2 = self.version == 'v2'
        cnn.conv(64, 7, 7, 2, 2, mode='SAME_RESNET', use_batch_norm=not v2, bias=None,
                 activation=None if v2 else 'relu')                       # 112x112x64
        cnn.mpool(3, 3, 2, 2, mode='SAME')                                # 56x56x64
        for stage, (count, (bottleneck, depth)) in enumerate(
                zip(self.layer_counts, _IMAGENET_STAGES, strict=True)):
            for i in range(count):
                stride = 2 if stage > 0 and i == 0 else 1
                if v2:
                    _bottleneck_v2(cnn, depth, bottleneck, stride)
                else:
                    _bottleneck_v1(cnn, depth, bottleneck, stride,
                                   stride_on_3x3=self.version == 'v1.5')
        if v2:
            cnn.activation('relu', input_layer=cnn.batch_norm(**_PREACTIVATION))
        cnn.spatial_mean()                                                # 2048


def _basic_unit(cnn, depth, stride, pre_activation):
    """Two 3x3 convolutions with a parameter-free shortcut (option A: strided identity, channels
    zero-padded) when the shape changes."""
    x, c_in = cnn.top_layer, cnn.top_size
    shortcut = x
    if stride > 1:
        shortcut = cnn.apool(1, 1, stride, stride, input_layer=x, num_channels_in=c_in)
    if c_in != depth:
        extra = depth - c_in
        shortcut = cnn.pad_channels(shortcut, extra // 2, extra - extra // 2)
    inner = x
    if pre_activation:
        inner = cnn.activation('relu', input_layer=cnn.batch_norm(x, **_PREACTIVATION))
    cnn.conv(depth, 3, 3, stride, stride, mode='SAME_RESNET', input_layer=inner,
             num_channels_in=c_in, use_batch_norm=True, bias=None)
    with cnn.variable_initializers({} if pre_activation else _ZERO_GAMMA):
        res = cnn.conv(depth, 3, 3, activation=None, use_batch_norm=not pre_activation, bias=None)
    out = shortcut + res if pre_activation else cnn.residual(shortcut, res)
    cnn.top_layer, cnn.top_size = out, depth


class ResnetCifar10Model(model.CNNModel):
    """CIFAR-10 ResNet with basic units: 'resnet20', 32, 44, 56, 110 and their '_v2' variants.

    Layers (He et al. 2016 CVPR, section 4.2): conv 3x3 16 -> three stages of n units (depth
    6n + 2) of two 3x3 convolutions with 16, 32 and 64 channels at 32x32, 16x16 and 8x8 (the first
    unit of stages 2 and 3 with stride 2) -> global average pool -> classifier. Shortcuts are
    parameter-free (option A: subsample, zero-pad the new channels), as in the paper's CIFAR
    experiments, so the counts match its 0.27M, 0.46M, 0.66M, 0.85M and 1.7M. v1 follows Figure
    2 (conv-BN-ReLU, conv-BN, add, ReLU; the stem is conv-BN-ReLU; the closing batch norm starts
    with scale 0 as in ResnetModel). v2 follows Identity Mappings Figure 4(e): BN-ReLU before each
    convolution, the stem convolution alone, a final BN-ReLU. (The original benchmark's v1 stem
    omits the ReLU and its v2 stem adds a batch norm, 32 more parameters; we follow the papers.)
    Batch norm as ResnetModel's, the original benchmark's (v2's stand-alone ones without scale).

    Args:
      name: registry name.
      depth: 20, 32, 44, 56 or 110 (n = (depth - 2) / 6 units per stage).
      version: 'v1' or 'v2'.

    Input: [batch, 32, 32, 3] (NHWC) or [batch, 3, 32, 32] (NCHW) by default, any size >= 8;
    output logits [batch, 10].
    """

    uses_batch_norm = True
    batch_norm_config = _BATCH_NORM

    def __init__(self, name, depth, version):
        if (depth - 2) % 6 or depth < 8:
            raise ValueError('CIFAR ResNet depth must be 6n + 2. Received: depth=%r' % depth)
        if version not in ('v1', 'v2'):
            raise ValueError("version must be 'v1' or 'v2'. Received: %r" % version)
        self.units_per_stage = (depth - 2) // 6
        self.version = version
        super().__init__(name, image_size=32, batch_size=128, learning_rate=0.1,
                         fixed_image_size=False, min_image_size=8, dataset='cifar10')

    def default_schedule(self, batch_size, base_lr=None, examples_per_epoch=None):
        """The original benchmark's CIFAR-10 ResNet schedule, not scaled with the batch: 0.1,
        then 0.01, 0.001 and 0.0002 after epochs 82, 123 and 300 (He et al. 2016, section 4.2,
        cut at 32k and 48k iterations of batch 128), an epoch being int(examples / batch)
        steps, the run's examples per epoch (default, and the original's: 50,000).
        """
        del base_lr
        steps_per_epoch = (examples_per_epoch or CIFAR10_TRAIN_IMAGES) // batch_size
        epochs = (82, 123, 300)
        return model.DefaultSchedule(rates=(0.1, 0.01, 0.001, 0.0002),
                                     steps=tuple(steps_per_epoch * e for e in epochs),
                                     epochs=epochs)

    def add_inference(self, cnn):
        v2 = self.version == 'v2'
        cnn.conv(16, 3, 3, use_batch_norm=not v2, bias=None, activation=None if v2 else 'relu')
        for stage, depth in enumerate((16, 32, 64)):
            for i in range(self.units_per_stage):
                _basic_unit(cnn, depth, 2 if stage > 0 and i == 0 else 1, pre_activation=v2)
        if v2:
            cnn.activation('relu', input_layer=cnn.batch_norm(**_PREACTIVATION))
        cnn.spatial_mean()                                                # 64

"""Densely connected networks: DenseNet-121 (ImageNet, DenseNet-BC) and the CIFAR-10 DenseNets.

All layers are pre-activation composites BN -> ReLU -> convolution (Huang et al. 2017, section 3,
"composite function"); convolutions have no bias, since every convolution's output reaches a
batch norm before any nonlinearity. Batch norm is the original benchmark's for its (CIFAR-10)
DenseNets: moving averages with decay 0.9, epsilon 1e-5, a trainable scale (the paper gives no
values; the original has no DenseNet-121, which takes the same).
"""

import types

from . import model

_BATCH_NORM = types.MappingProxyType({'decay': 0.9, 'epsilon': 1e-5, 'scale': True})


def _composite(cnn, channels, kernel, config):
    """BN -> ReLU -> conv (no bias, no batch norm after) on the top layer."""
    cnn.activation('relu', input_layer=cnn.batch_norm(**config))
    return cnn.conv(channels, kernel, kernel, use_batch_norm=False, bias=None, activation=None)


def _dense_block(cnn, layers, growth_rate, bottleneck):
    """`layers` dense layers, each concatenating `growth_rate` new channels to its input.

    With `bottleneck` (DenseNet-B), each layer is BN-ReLU-conv 1x1 (4k) then BN-ReLU-conv 3x3 (k).
    """
    for _ in range(layers):
        x, c_in = cnn.top_layer, cnn.top_size
        if bottleneck:
            _composite(cnn, 4 * growth_rate, 1, cnn.batch_norm_config)
        new = _composite(cnn, growth_rate, 3, cnn.batch_norm_config)
        cnn.concat([x, new], c_in + growth_rate)


def _transition(cnn, compression):
    """BN-ReLU-conv 1x1 to floor(compression x channels), then 2x2 average pooling."""
    _composite(cnn, int(cnn.top_size * compression), 1, cnn.batch_norm_config)
    cnn.apool(2, 2, 2, 2)


def _final_activation(cnn):
    cnn.activation('relu', input_layer=cnn.batch_norm(**cnn.batch_norm_config))
    cnn.spatial_mean()


class Densenet121Model(model.CNNModel):
    """DenseNet-121 (DenseNet-BC, k = 32, compression 0.5), registry name 'densenet121'.

    Paper: Huang, Liu, van der Maaten & Weinberger 2017, "Densely Connected Convolutional
    Networks" (Table 1, DenseNet-121; section 3, DenseNet-BC). Follows Table 1: conv 7x7/2 with 2k
    = 64 channels -> BN -> ReLU -> maxpool 3x3/2, dense blocks of 6, 12, 24 and 16 bottleneck layers
    with transitions halving the channels (1x1 conv, 2x2 average pool) between them, final BN-ReLU,
    global average pool, classifier (1024 inputs).

    Input: [batch, 224, 224, 3] (NHWC) or [batch, 3, 224, 224] (NCHW) by default, any size >= 32;
    output logits [batch, num_classes].
    """

    uses_batch_norm = True
    batch_norm_config = _BATCH_NORM

    def __init__(self):
        super().__init__('densenet121', image_size=224, batch_size=32,
                         learning_rate=0.1 * 32 / 256, fixed_image_size=False, min_image_size=32)

    def add_inference(self, cnn):
        cnn.conv(64, 7, 7, 2, 2, mode='SAME_RESNET', bias=None)          # 112x112x64
        cnn.mpool(3, 3, 2, 2, mode='SAME')                                # 56x56x64
        for i, layers in enumerate((6, 12, 24, 16)):
            _dense_block(cnn, layers, 32, bottleneck=True)                # 256, 512, 1024, 1024
            if i < 3:
                _transition(cnn, 0.5)                                     # 128, 256, 512
        _final_activation(cnn)                                            # 1024


class DensenetCifar10Model(model.CNNModel):
    """CIFAR-10 DenseNet (basic layers, no compression): 'densenet40_k12', 'densenet100_k12',
    'densenet100_k24'.

    Paper: Huang et al. 2017 (section 3 "Implementation Details"; Table 2 gives 1.0M, 7.0M and
    27.2M parameters). Follows the paper: conv 3x3 with 16 channels, three dense blocks of
    (depth - 4) / 3 layers (BN-ReLU-conv 3x3 with k channels each), transitions (BN-ReLU-conv 1x1
    keeping the channel count, 2x2 average pool) between blocks, final BN-ReLU, global average
    pool, classifier. The original benchmark adds biases to the convolutions and a ReLU after the
    transition convolution; we follow the paper's composite function.

    Args:
      name: registry name.
      depth: 40 or 100 (layers per block = (depth - 4) / 3).
      growth_rate: k, channels added per layer.

    Input: [batch, 32, 32, 3] (NHWC) or [batch, 3, 32, 32] (NCHW) by default, any size >= 8;
    output logits [batch, 10].
    """

    uses_batch_norm = True
    batch_norm_config = _BATCH_NORM

    def __init__(self, name, depth, growth_rate):
        if (depth - 4) % 3:
            raise ValueError('DenseNet depth must be 3n + 4. Received: depth=%r' % depth)
        self.layers_per_block = (depth - 4) // 3
        self.growth_rate = growth_rate
        super().__init__(name, image_size=32, batch_size=64, learning_rate=0.1,
                         fixed_image_size=False, min_image_size=8, dataset='cifar10')

    def default_schedule(self, batch_size, base_lr=None, examples_per_epoch=None):
        """The original benchmark's CIFAR-10 DenseNet schedule, not scaled with the batch: 0.1,
        then 0.01, 0.001 and 0.0001 after epochs 150, 225 and 300 (Huang et al. 2017, section
        4.2, cut at 50% and 75% of 300 epochs), an epoch being examples // batch steps, the
        run's examples per epoch (default, and the original's: 50,000)."""
        del base_lr
        steps_per_epoch = (examples_per_epoch or 50000) // batch_size
        epochs = (150, 225, 300)
        return model.DefaultSchedule(rates=(0.1, 0.01, 0.001, 0.0001),
                                     steps=tuple(steps_per_epoch * e for e in epochs),
                                     epochs=epochs)

    def add_inference(self, cnn):
        cnn.conv(16, 3, 3, use_batch_norm=False, bias=None, activation=None)
        for i in range(3):
            _dense_block(cnn, self.layers_per_block, self.growth_rate, bottleneck=False)
            if i < 2:
                _transition(cnn, 1.0)
        _final_activation(cnn)

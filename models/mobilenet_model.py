"""MobileNet v2 (registry names 'mobilenet', the original's, and 'mobilenet_v2') and MobileNet
v1 ('mobilenet_v1', not in the original), width multiplier 1.0.

Every convolution is followed by batch norm (no biases) and ReLU6, except MobileNet v2's linear
projections. Depthwise kernels are named ``depthwise_weights``; weight decay covers them, as
every trainable variable outside batch norm (models/convnet_builder.py). Batch
norm is the original benchmark's MobileNet's (its TF1-only MobileNet v2 in TF-slim's training
scope): moving averages with decay 0.997, epsilon 0.001 (TF-slim's default), a trainable scale;
the papers give no values, and the original has no MobileNet v1, which takes the same.
"""

import types

from . import model

_BATCH_NORM = types.MappingProxyType({'decay': 0.997, 'epsilon': 0.001, 'scale': True})

# MobileNet v1 body, Howard et al. 2017, Table 1: (pointwise output channels, depthwise stride)
# for each depthwise separable layer. (Table 1 prints the second-to-last depthwise layer as "s2";
# its 7x7 input and output show it is stride 1, as in the authors' released model.)
_V1_LAYERS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
              (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1))

# MobileNet v2 body, Sandler et al. 2018, Table 2: (expansion t, output channels c, repeats n,
# first stride s) per sequence of inverted residual blocks.
_V2_SEQUENCES = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                 (6, 160, 3, 2), (6, 320, 1, 1))


class MobilenetV1Model(model.CNNModel):
    """MobileNet v1, registry name 'mobilenet_v1' (not in the original).

    Paper: Howard, Zhu, Chen, Kalenichenko, Wang, Weyand, Andreetto & Adam 2017, "MobileNets:
    Efficient Convolutional Neural Networks for Mobile Vision Applications" (Table 1; Figure 3;
    Table 8 gives 4.2M parameters and 569M multiply-adds for 1.0 MobileNet-224). Follows Table 1:
    conv 3x3/2 32, then 13 depthwise separable layers (3x3 depthwise -> BN -> ReLU6, 1x1 pointwise
    -> BN -> ReLU6) to 7x7x1024, global average pool, classifier. ReLU6 (clipped ReLU) is what the
    authors' released TensorFlow model uses; it has no parameters. (This project's 'mobilenet'
    was this network until it took the original's meaning, MobileNet v2: the results database
    reads a run of the old 'mobilenet' as 'mobilenet_v1', metrics/configuration.py.)

    Input: [batch, 224, 224, 3] (NHWC) or [batch, 3, 224, 224] (NCHW) by default, any size >= 32;
    output logits [batch, num_classes]. NCHW depthwise convolution on CPU needs oneDNN.
    """

    uses_batch_norm = True
    batch_norm_config = _BATCH_NORM

    def __init__(self):
        super().__init__('mobilenet_v1', image_size=224, batch_size=32, learning_rate=0.005,
                         fixed_image_size=False, min_image_size=32)

    def add_inference(self, cnn):
        cnn.conv(32, 3, 3, 2, 2, activation='relu6')                      # 112x112x32
        for channels, stride in _V1_LAYERS:
            cnn.depthwise_conv(3, 3, stride, stride, activation='relu6')
            cnn.conv(channels, 1, 1, activation='relu6')                  # ... 7x7x1024
        cnn.spatial_mean()                                                # 1024


class MobilenetModel(model.CNNModel):
    """MobileNet v2, registry names 'mobilenet' (the original's name of this network: its
    TF1-only MobileNet v2, the same defaults: 224x224 images, batch 32, learning rate 0.005)
    and 'mobilenet_v2' (this project's earlier name of it; the same network).

    Paper: Sandler, Howard, Zhu, Zhmoginov & Chen 2018, "MobileNetV2: Inverted Residuals and
    Linear Bottlenecks" (Table 1: the bottleneck block; Table 2: the body; Table 3 gives 3.4M
    parameters and 300M multiply-adds). Follows the tables: conv 3x3/2 32, 17 inverted residual
    blocks (1x1 expansion by t -> BN -> ReLU6, 3x3 depthwise -> BN -> ReLU6, linear 1x1 projection
    -> BN; a residual connection when stride is 1 and the shape is kept; the t = 1 block has no
    expansion layer, as in the authors' released model), conv 1x1 1280, global average pool,
    classifier: 3,506,153 parameters with 1001 classes. (The original's base class put a
    second linear 1001 -> 1001 layer on its TF-slim network's logits, 4,509,155 parameters:
    not built here, so --list_models marks 'mobilenet' as differing in one layer.)

    Input: [batch, 224, 224, 3] (NHWC) or [batch, 3, 224, 224] (NCHW) by default, any size >= 32;
    output logits [batch, num_classes]. NCHW depthwise convolution on CPU needs oneDNN.
    """

    uses_batch_norm = True
    batch_norm_config = _BATCH_NORM

    def __init__(self, name: str = 'mobilenet'):
        """name: the registry name it is built as, 'mobilenet' or 'mobilenet_v2' (the `Model:`
        line's)."""
        super().__init__(name, image_size=224, batch_size=32, learning_rate=0.005,
                         fixed_image_size=False, min_image_size=32)

    def add_inference(self, cnn):
        cnn.conv(32, 3, 3, 2, 2, activation='relu6')                      # 112x112x32
        for expansion, channels, repeats, first_stride in _V2_SEQUENCES:
            for i in range(repeats):
                stride = first_stride if i == 0 else 1
                x, c_in = cnn.top_layer, cnn.top_size
                if expansion != 1:
                    cnn.conv(c_in * expansion, 1, 1, activation='relu6')
                cnn.depthwise_conv(3, 3, stride, stride, activation='relu6')
                y = cnn.conv(channels, 1, 1, activation=None)
                if stride == 1 and c_in == channels:
                    cnn.top_layer = x + y
        cnn.conv(1280, 1, 1, activation='relu6')                          # 7x7x1280
        cnn.spatial_mean()                                                # 1280

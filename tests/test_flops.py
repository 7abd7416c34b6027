"""Forward FLOP counts (multiply-add = 2 FLOPs; convolutions and matrix products only) against
hand arithmetic for tiny networks and the published figures of the classic ones."""

import pytest
import tensorflow as tf

from tf_cnn_benchmarks.models import flops, model, model_config

import helpers

tf1 = tf.compat.v1


def test_lenet_by_hand():
    # Outputs x multiply-adds per output x 2, 'SAME' 5x5 convolutions on 28x28x3:
    conv1 = 2 * (28 * 28 * 32) * (5 * 5 * 3)     # 3,763,200
    conv2 = 2 * (14 * 14 * 64) * (5 * 5 * 32)    # 20,070,400 (after a 2x2 pool)
    fc1 = 2 * 512 * (7 * 7 * 64)                 # 3,211,264
    fc2 = 2 * 1001 * 512                         # 1,025,024
    assert conv1 + conv2 + fc1 + fc2 == 28_069_888
    assert flops.forward_flops_per_image(model_config.get_model('lenet')) == 28_069_888


def test_trivial_by_hand():
    # fc 154,587 -> 1, fc 1 -> 4096, fc 4096 -> 1001.
    expected = 2 * (227 * 227 * 3) + 2 * 4096 + 2 * 4096 * 1001
    assert flops.forward_flops_per_image(model_config.get_model('trivial')) == expected


class _Depthwise(model.CNNModel):
    def __init__(self):
        super().__init__('depthwise', image_size=8, batch_size=1, learning_rate=0.1)

    def add_inference(self, cnn):
        cnn.depthwise_conv(3, 3, 2, 2, depth_multiplier=2)   # 8x8x3 -> 4x4x6
        cnn.conv(5, 1, 1)                                   # 4x4x5
        cnn.spatial_mean()


@pytest.mark.parametrize('data_format', ['NHWC', 'NCHW'])
def test_depthwise_and_pointwise_by_hand(data_format):
    depthwise = 2 * (4 * 4 * 6) * (3 * 3)       # each output sees one input channel
    pointwise = 2 * (4 * 4 * 5) * 6
    classifier = 2 * 1001 * 5
    assert flops.forward_flops_per_image(_Depthwise(), data_format=data_format) == (
        depthwise + pointwise + classifier)


# Published multiply-adds per image (x 2 = FLOPs) and our tolerance. Ours count the 1001-way
# classifier; the papers' the 1000-way one (a difference of < 0.01%).
PUBLISHED_MACS = {
    # He et al. 2016 Table 1 (v1, stride in the first 1x1 convolution): 3.8, 7.6, 11.3 x 10^9.
    'resnet50': (3.8e9, 0.03),
    'resnet101': (7.6e9, 0.03),
    'resnet152': (11.3e9, 0.03),
    # Stride on the 3x3 (torchvision's ResNet-50, fvcore/ptflops): 4.1 x 10^9.
    'resnet50_v1.5': (4.1e9, 0.02),
    # He et al. 2016 section 3.3: VGG-19 has 19.6 billion multiply-adds.
    'vgg19': (19.6e9, 0.01),
    # Howard et al. 2017 Table 8: 569M; Sandler et al. 2018 Table 3: 300M ('mobilenet' is the
    # original's name of MobileNet v2).
    'mobilenet_v1': (569e6, 0.01),
    'mobilenet': (300e6, 0.01),
    'mobilenet_v2': (300e6, 0.01),
    # Szegedy et al. 2015 section 5: 1.5 billion multiply-adds.
    'googlenet': (1.5e9, 0.07),
}


@pytest.mark.parametrize('name', sorted(PUBLISHED_MACS))
def test_published_figures(name):
    macs, tolerance = PUBLISHED_MACS[name]
    counted = flops.forward_flops_per_image(model_config.get_model(name))
    assert abs(counted / (2 * macs) - 1) <= tolerance, counted


def test_nchw_counts_the_same():
    resnet = model_config.get_model('resnet20', 'cifar10')
    assert (flops.forward_flops_per_image(resnet, data_format='NCHW')
            == flops.forward_flops_per_image(resnet))


def test_flops_scale_with_image_size():
    resnet = model_config.get_model('resnet20', 'cifar10')
    small = flops.forward_flops_per_image(resnet, image_size=16)
    large = flops.forward_flops_per_image(resnet)
    classifier = 2 * 64 * 10
    assert large - classifier == 4 * (small - classifier)


def test_recorder_counts_like_real_variables():
    alexnet = model_config.get_model('alexnet', 'cifar10')
    graph, _, _ = flops.build_graph(alexnet, batch_size=1)
    recorder = flops.VariableRecorder()
    flops.build_graph(alexnet, recorder=recorder)
    assert recorder.trainable_parameters() == helpers.count_trainable_parameters(graph)
    assert len(recorder.shapes) == len(graph.get_collection(tf1.GraphKeys.GLOBAL_VARIABLES))


def test_recorder_refuses_training_graphs():
    with pytest.raises(ValueError, match='inference'):
        flops.build_graph(model_config.get_model('lenet'), phase_train=True,
                          recorder=flops.VariableRecorder())

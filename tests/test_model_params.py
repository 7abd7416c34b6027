"""Exact trainable parameter counts of every registered model, each with its source.

ImageNet classifiers have 1001 outputs (label 0 is background), CIFAR-10 ones 10. Batch norm has a
trainable offset, and a trainable scale where the original benchmark's has one (ResNets, DenseNets,
MobileNets: 2 per channel; Inception and ResNet v2's stand-alone batch norms: 1 per channel, see
test_batch_norm_settings.py); convolutions followed by batch norm have no bias. Where the
original builds the model, its count (trainable variables of its graph, TensorFlow 2.21,
2026-12-06; its CIFAR-10 models with 11 classes, one more than here) is in the comment.

This module holds the table (EXPECTED_PARAMS) and the papers' arithmetic behind it; the
registry sweep (test_model_registry.py::test_every_model_builds_exact_and_starts_sane) builds
every model once and checks its trainable variables against the table, and its logits, from
the same build; test_model_table.py checks the --list_models catalog against it.
"""

import functools
import math

import numpy as np
import pytest

from tf_cnn_benchmarks.models import model_config

IMAGENET_CLASSES = 1001
CIFAR10_CLASSES = 10


# --- Arithmetic helpers: parameters of one layer.
def conv(k, c_in, c_out, kw=None):
    """A convolution without bias: k x kw x c_in x c_out."""
    return k * (kw or k) * c_in * c_out


def bn(c):
    """Batch norm with scale and offset."""
    return 2 * c


def bn_unscaled(c):
    """Batch norm with an offset only (no scale)."""
    return c


def fc(c_in, c_out):
    """Fully connected layer with bias (also a convolution with bias: conv(...) + c_out)."""
    return c_in * c_out + c_out


def resnet_imagenet(layer_counts, version):
    """He et al. 2016 (CVPR) Table 1; v2 per Identity Mappings Figure 4(e).

    v1/v1.5: stem conv 7x7 + BN; unit = 1x1 (+BN), 3x3 (+BN), 1x1 (+BN), projection 1x1 (+BN)
    where the shape changes. v2: stem conv alone; unit = BN without scale on its input, 1x1
    (+BN), 3x3 (+BN), 1x1, projection 1x1 without BN; a final BN without scale.
    """
    v2 = version == 'v2'
    total = conv(7, 3, 64) + (0 if v2 else bn(64))
    c_in = 64
    for count, (b, d) in zip(layer_counts, ((64, 256), (128, 512), (256, 1024), (512, 2048)),
                             strict=True):
        for _ in range(count):
            total += conv(1, c_in, b) + bn(b) + conv(3, b, b) + bn(b) + conv(1, b, d)
            total += bn_unscaled(c_in) if v2 else bn(d)
            if c_in != d:
                total += conv(1, c_in, d) + (0 if v2 else bn(d))
            c_in = d
    return total + (bn_unscaled(2048) if v2 else 0) + fc(2048, IMAGENET_CLASSES)


def resnet_cifar(depth, version):
    """He et al. 2016 (CVPR) section 4.2: 3 stages of n = (depth - 2) / 6 basic units, 16/32/64
    channels, parameter-free shortcuts. v1: every conv + BN. v2: stem conv alone; unit = BN without
    scale on its input, 3x3 (+BN), 3x3; a final BN without scale."""
    v2 = version == 'v2'
    n = (depth - 2) // 6
    total = conv(3, 3, 16) + (0 if v2 else bn(16))
    c_in = 16
    for d in (16, 32, 64):
        for _ in range(n):
            total += conv(3, c_in, d) + bn(d) + conv(3, d, d) + (
                bn_unscaled(c_in) if v2 else bn(d))
            c_in = d
    return total + (bn_unscaled(64) if v2 else 0) + fc(64, CIFAR10_CLASSES)


def densenet_cifar(depth, k):
    """Huang et al. 2017 section 3: conv 3x3 16; 3 blocks of (depth - 4) / 3 layers BN + conv 3x3
    (k); transitions BN + conv 1x1 (same width); final BN."""
    n = (depth - 4) // 3
    c = 16
    total = conv(3, 3, 16)
    for block in range(3):
        for _ in range(n):
            total += bn(c) + conv(3, c, k)
            c += k
        if block < 2:
            total += bn(c) + conv(1, c, c)
    return total + bn(c) + fc(c, CIFAR10_CLASSES)


def densenet121():
    """Huang et al. 2017 Table 1: conv 7x7 64 + BN; blocks of 6/12/24/16 layers BN + conv 1x1
    (128) + BN + conv 3x3 (32); transitions BN + conv 1x1 halving the width; final BN."""
    c = 64
    total = conv(7, 3, 64) + bn(64)
    for block, layers in enumerate((6, 12, 24, 16)):
        for _ in range(layers):
            total += bn(c) + conv(1, c, 128) + bn(128) + conv(3, 128, 32)
            c += 32
        if block < 3:
            total += bn(c) + conv(1, c, c // 2)
            c //= 2
    return total + bn(c) + fc(c, IMAGENET_CLASSES)


def vgg(stage_convs):
    """Simonyan & Zisserman 2015 Table 1: 3x3 convs with bias; fc 25088-4096-4096-classes."""
    total, c_in = 0, 3
    for convs, c in zip(stage_convs, (64, 128, 256, 512, 512), strict=True):
        for _ in range(convs):
            total += conv(3, c_in, c) + c
            c_in = c
    return total + fc(7 * 7 * 512, 4096) + fc(4096, 4096) + fc(4096, IMAGENET_CLASSES)


def mobilenet_v1():
    """Howard et al. 2017 Table 1: conv 3x3 32 + BN; 13 x (depthwise 3x3 + BN, 1x1 + BN)."""
    total, c_in = conv(3, 3, 32) + bn(32), 32
    for c in (64, 128, 128, 256, 256, 512, 512, 512, 512, 512, 512, 1024, 1024):
        total += 9 * c_in + bn(c_in) + conv(1, c_in, c) + bn(c)
        c_in = c
    return total + fc(1024, IMAGENET_CLASSES)


def mobilenet_v2():
    """Sandler et al. 2018 Table 2: conv 3x3 32 + BN; inverted residual blocks (1x1 expansion +
    BN unless t = 1, depthwise 3x3 + BN, 1x1 projection + BN); conv 1x1 1280 + BN."""
    total, c_in = conv(3, 3, 32) + bn(32), 32
    for t, c, n, _ in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
        for _ in range(n):
            e = c_in * t
            total += (conv(1, c_in, e) + bn(e) if t != 1 else 0) + 9 * e + bn(e)
            total += conv(1, e, c) + bn(c)
            c_in = c
    return total + conv(1, 320, 1280) + bn(1280) + fc(1280, IMAGENET_CLASSES)


# The table. Literals are what the models must have; FORMULAS below recompute most of them from
# the papers' layer tables.
EXPECTED_PARAMS = {
    # Lead's trivial model: fc(227*227*3 -> 1) + fc(1 -> 4096) + fc(4096 -> 1001)
    #   = 154,588 + 8,192 + 4,101,097.
    ('trivial', 'imagenet'): 4_263_877,
    # The same on CIFAR-10: fc(32*32*3 -> 1) + fc(1 -> 4096) + fc(4096 -> 10)
    #   = 3,073 + 8,192 + 40,970.
    ('trivial', 'cifar10'): 52_235,
    # Original benchmark's LeNet (TF MNIST tutorial shapes, RGB 28x28, 'SAME' 5x5 convs):
    #   conv 5*5*3*32+32 = 2,432; conv 5*5*32*64+64 = 51,264; fc 7*7*64*512+512 = 1,606,144;
    #   fc 512*1001+1001 = 513,513.
    ('lenet', 'imagenet'): 2_173_353,
    # AlexNet one-tower (Krizhevsky 2014, footnote 1 p.5: 64, 192, 384, 384, 256 filters):
    #   convs 23,296 + 307,392 + 663,936 + 1,327,488 + 884,992; fc6 9216*4096+4096 = 37,752,832;
    #   fc7 16,781,312; fc8 4096*1001+1001 = 4,101,097.
    ('alexnet', 'imagenet'): 61_842_345,
    # TF CIFAR-10 tutorial net: conv 5*5*3*64+64 = 4,864; conv 5*5*64*64+64 = 102,464;
    #   fc 8*8*64*384+384 = 1,573,248; fc 384*192+192 = 73,920; fc 192*10+10 = 1,930.
    ('alexnet', 'cifar10'): 1_756_426,
    # OverFeat fast (Sermanet et al. 2014 Table 1; the paper quotes 145M): convs 11*11*3*96+96 =
    #   34,944; 5*5*96*256+256 = 614,656; 3*3*256*512+512 = 1,180,160; 3*3*512*1024+1024 =
    #   4,719,616; 3*3*1024*1024+1024 = 9,438,208; fc 36864*3072+3072 = 113,249,280;
    #   fc 3072*4096+4096 = 12,587,008; fc 4096*1001+1001 = 4,101,097.
    ('overfeat', 'imagenet'): 145_924_969,
    # GoogLeNet (Szegedy et al. 2015 Table 1, convs with bias, no auxiliary heads): stem 9,472 +
    #   4,160 + 110,784; modules 3a 163,696, 3b 388,736, 4a 376,176, 4b 449,160, 4c 510,104,
    #   4d 605,376, 4e 868,352, 5a 1,043,456, 5b 1,444,080; fc 1024*1001+1001 = 1,026,025.
    #   (Table 1's column, without biases and for 1000 classes, sums to about 6.8M.)
    ('googlenet', 'imagenet'): 6_999_577,
    # VGG A/D/E (Simonyan & Zisserman 2015 Table 2: 133M/138M/144M). Keras's VGG16/VGG19 (1000
    #   classes) have 138,357,544 / 143,667,240; + 4097 for the 1001st class.
    ('vgg11', 'imagenet'): 132_867_433,
    ('vgg16', 'imagenet'): 138_361_641,
    ('vgg19', 'imagenet'): 143_671_337,
    # Inception v3 without auxiliary head, BN without scale (the original's): Keras InceptionV3
    #   (1000 classes, BN without scale) has 23,817,352 trainable; + 2,049 for the 1001st class.
    #   The original: 23,819,401.
    ('inception3', 'imagenet'): 23_819_401,
    # Inception v4 (Szegedy et al. 2017 Figures 3-9), BN without scale: TF-slim's inception_v4
    #   with 1001 classes (as listed by OpenVINO's googlenet-v4-tf: 42.648M). The original:
    #   42,649,769.
    ('inception4', 'imagenet'): 42_649_769,
    # ResNet v1 / v1.5 (He et al. 2016 Table 1; stride placement does not change the count).
    #   resnet50: torchvision's 25,557,032 for 1000 classes + 2,049 (the anchor).
    #   resnet101 44,549,160 + 2,049; resnet152 60,192,808 + 2,049 (torchvision). The original's
    #   resnet50, resnet50_v1.5, resnet101 and resnet152: the same counts.
    ('resnet50', 'imagenet'): 25_559_081,
    ('resnet50_v1.5', 'imagenet'): 25_559_081,
    ('resnet101', 'imagenet'): 44_551_209,
    ('resnet101_v1.5', 'imagenet'): 44_551_209,
    ('resnet152', 'imagenet'): 60_194_857,
    ('resnet152_v1.5', 'imagenet'): 60_194_857,
    # ResNet v2: v1 - stem BN (128) - per stage first unit [2 * (out - in) + projection BN 2 * out]
    #   (896 + 1,536 + 3,072 + 6,144 = 11,648) + final BN (4,096): v1 - 7,680; then the scales of
    #   the units' input BNs and of the final BN (the original's have none): resnet50_v2 - 15,168.
    #   The original (its stem has a BN with scale, 128 more): 25,536,361, 44,511,081, 60,139,369.
    ('resnet50_v2', 'imagenet'): 25_536_233,
    ('resnet101_v2', 'imagenet'): 44_510_953,
    ('resnet152_v2', 'imagenet'): 60_139_241,
    # MobileNet v1 (Howard et al. 2017 Table 8: 4.2M): Keras MobileNet 4,231,976 + 1,025.
    ('mobilenet_v1', 'imagenet'): 4_233_001,
    # MobileNet v2 (Sandler et al. 2018 Table 3: 3.4M): Keras MobileNetV2 3,504,872 + 1,281.
    # 'mobilenet' is the original's name of it (its TF1-only MobileNet v2); 'mobilenet_v2' too.
    ('mobilenet', 'imagenet'): 3_506_153,
    ('mobilenet_v2', 'imagenet'): 3_506_153,
    # DenseNet-121 (Huang et al. 2017 Table 1; 8.0M): Keras DenseNet121 7,978,856 + 1,025.
    ('densenet121', 'imagenet'): 7_979_881,
    # CIFAR ResNets (He et al. 2016 section 4.2: 0.27M, 0.46M, 0.66M, 0.85M, 1.7M). For example
    #   resnet20: 432 + 32 + 3 x 4,672 + (13,952 + 2 x 18,560) + (55,552 + 2 x 73,984) + 650.
    #   v2 moves BNs (-32 stem, -32 and -64 at the widening units, +128 final), and its units'
    #   input BNs and final BN have no scale (the original's): resnet20_v2 - 352 (48 + 80 + 160
    #   + 64). The original, with 11 classes (+65): 269,787, 464,219, 658,651, 853,083,
    #   1,728,027 (v1, the same); v2, whose stem has a BN with scale (+32): 269,467, 463,675,
    #   657,883, 852,091, 1,726,027.
    ('resnet20', 'cifar10'): 269_722,
    ('resnet20_v2', 'cifar10'): 269_370,
    ('resnet32', 'cifar10'): 464_154,
    ('resnet32_v2', 'cifar10'): 463_578,
    ('resnet44', 'cifar10'): 658_586,
    ('resnet44_v2', 'cifar10'): 657_786,
    ('resnet56', 'cifar10'): 853_018,
    ('resnet56_v2', 'cifar10'): 851_994,
    ('resnet110', 'cifar10'): 1_727_962,
    ('resnet110_v2', 'cifar10'): 1_725_930,
    # CIFAR DenseNets (Huang et al. 2017 Table 2: 1.0M, 7.0M, 27.2M). densenet40_k12: stem 432;
    #   block 1 convs 108 x 984 + BN 2 x 984; transitions 320 + 25,600 and 608 + 92,416; ...
    #   The original (11 classes): 357,491, 2,217,411, 8,659,995: its transitions keep 2k
    #   channels, not all (its dense layer counts the channels as the new layer's k plus k).
    ('densenet40_k12', 'cifar10'): 1_019_722,
    ('densenet100_k12', 'cifar10'): 6_979_642,
    ('densenet100_k24', 'cifar10'): 27_249_082,
}

FORMULAS = {
    ('vgg11', 'imagenet'): lambda: vgg((1, 1, 2, 2, 2)),
    ('vgg16', 'imagenet'): lambda: vgg((2, 2, 3, 3, 3)),
    ('vgg19', 'imagenet'): lambda: vgg((2, 2, 4, 4, 4)),
    ('mobilenet', 'imagenet'): mobilenet_v2,
    ('mobilenet_v1', 'imagenet'): mobilenet_v1,
    ('mobilenet_v2', 'imagenet'): mobilenet_v2,
    ('densenet121', 'imagenet'): densenet121,
}
for _depth, _counts in ((50, (3, 4, 6, 3)), (101, (3, 4, 23, 3)), (152, (3, 8, 36, 3))):
    for _suffix, _version in (('', 'v1'), ('_v1.5', 'v1.5'), ('_v2', 'v2')):
        FORMULAS[('resnet%d%s' % (_depth, _suffix), 'imagenet')] = functools.partial(
            resnet_imagenet, _counts, _version)
for _depth in (20, 32, 44, 56, 110):
    FORMULAS[('resnet%d' % _depth, 'cifar10')] = functools.partial(resnet_cifar, _depth, 'v1')
    FORMULAS[('resnet%d_v2' % _depth, 'cifar10')] = functools.partial(resnet_cifar, _depth, 'v2')
for _name, _depth, _k in (('densenet40_k12', 40, 12), ('densenet100_k12', 100, 12),
                          ('densenet100_k24', 100, 24)):
    FORMULAS[(_name, 'cifar10')] = functools.partial(densenet_cifar, _depth, _k)

def smallest_size(model):
    return model.image_size if model.fixed_image_size else model.min_image_size


def sweep_size(model):
    """The image size of the sweep: the smallest one, except for the trivial model, whose
    parameter count depends on the image size it is built for (it flattens the image but does
    not declare a fixed size)."""
    return model.image_size if model.name == 'trivial' else smallest_size(model)


#: What a model registered without its count is told (docs/CONTRIBUTING.md, "A model").
MISSING = ('%s (%s) has no expected parameter count: add it, with its arithmetic in a comment, '
           'to EXPECTED_PARAMS in tests/test_model_params.py (docs/CONTRIBUTING.md, "A model")')


def expected_params(name: str, dataset: str) -> int:
    """EXPECTED_PARAMS[(name, dataset)]; a model not in it fails the test with MISSING (which
    file and table to add it to), not a bare KeyError."""
    assert (name, dataset) in EXPECTED_PARAMS, MISSING % (name, dataset)
    return EXPECTED_PARAMS[(name, dataset)]


def test_every_registered_model_has_an_expected_count():
    registered = set(model_config.list_models())
    missing = sorted(registered - set(EXPECTED_PARAMS))
    assert missing == [], '; '.join(MISSING % key for key in missing)
    extra = sorted(set(EXPECTED_PARAMS) - registered)
    assert extra == [], ('EXPECTED_PARAMS in tests/test_model_params.py has models '
                         'models/model_config.py does not register: %s' % extra)


def test_a_model_without_a_count_is_told_where_to_add_it():
    with pytest.raises(AssertionError) as info:
        expected_params('tinynet', 'cifar10')
    assert str(info.value).startswith(
        'tinynet (cifar10) has no expected parameter count: add it, with its arithmetic in a '
        'comment, to EXPECTED_PARAMS in tests/test_model_params.py (docs/CONTRIBUTING.md, '
        '"A model")')
    assert expected_params('resnet50', 'imagenet') == 25_559_081


@pytest.mark.parametrize('key', sorted(FORMULAS))
def test_table_matches_the_papers_arithmetic(key):
    assert FORMULAS[key]() == EXPECTED_PARAMS[key]


def test_resnet50_anchor():
    assert EXPECTED_PARAMS[('resnet50', 'imagenet')] == 25_559_081


def test_expected_classes():
    assert math.isclose(np.log(IMAGENET_CLASSES), 6.9088, abs_tol=1e-4)
    for name, dataset in model_config.list_models():
        classes = model_config.get_model(name, dataset).default_num_classes()
        assert classes == (CIFAR10_CLASSES if dataset == 'cifar10' else IMAGENET_CLASSES)

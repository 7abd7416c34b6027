"""Every model's batch norms are the original tf_cnn_benchmarks': moving-average decay, epsilon
and whether gamma (the scale) is trainable, per batch norm (models/*_model.py batch_norm_config,
models/convnet_builder.DEFAULT_BATCH_NORM).

The expected values are data, each with the line of the original that sets it (tensorflow/
benchmarks, scripts/tf_cnn_benchmarks/, the copy run on TensorFlow 2.21 on 2026-12-06; its
graphs, built with TF_USE_LEGACY_KERAS=1, had these settings and the trainable counts of
test_model_params.py). Each model is built once (inference, the smallest image) while every
batch norm's arguments are recorded (the deeper variants of a model with -m slow, as the
registry sweep's); the folded form of inference batch norm and the moving
averages' update are checked on one convolution.
"""

import collections

import numpy as np
import pytest
import tensorflow as tf

from tf_cnn_benchmarks.models import convnet_builder, fast_paths, model_config

try:  # The registry sweep's deeper variants (built with -m slow there, and here).
    from test_model_registry import DEPTH_VARIANTS
except ImportError:  # pytest --import-mode=importlib
    from tests.test_model_registry import DEPTH_VARIANTS

tf1 = tf.compat.v1

Settings = collections.namedtuple('Settings', ['decay', 'epsilon', 'scale'])

# The original's ConvNetBuilder sets no batch-norm configuration (convnet_builder.py:55,
# `self.batch_norm_config = {}`), a convolution with batch norm passes it (:225), so a model that
# sets none, and a bare `cnn.batch_norm()`, get batch_norm's defaults (:451-452: decay=0.999,
# scale=False, epsilon=0.001).
BUILDER_DEFAULTS = Settings(decay=0.999, epsilon=0.001, scale=False)
# models/resnet_model.py:303 (ImageNet) and :408 (CIFAR-10): {'decay': 0.9, 'epsilon': 1e-5,
# 'scale': True} for the convolutions' batch norms; v2's pre-activation batch norms
# (:158 ImageNet, :246 CIFAR-10) and final ones (:318, :426) are bare `cnn.batch_norm()` calls.
RESNET = Settings(decay=0.9, epsilon=1e-5, scale=True)
# models/densenet_model.py:34, passed by every batch norm there (:38, :48, :71). The original
# has no DenseNet-121; ours takes its DenseNets' values.
DENSENET = Settings(decay=0.9, epsilon=1e-5, scale=True)
# The original's 'mobilenet' is MobileNet v2 (TF1-only, TF-slim; it cannot be built on TF 2):
# models/tf1_only/mobilenet.py:415 (training_scope's bn_decay=0.997) and :443 ('decay':
# bn_decay), models/tf1_only/mobilenet_v2.py:42 ('scale': True), epsilon TF-slim's batch_norm
# default 0.001. The original has no MobileNet v1; ours takes the same.
MOBILENET = Settings(decay=0.997, epsilon=0.001, scale=True)

# {(model, dataset): {settings: number of batch norms with them}}. Where the original builds the
# model with other batch norms, the comment says which (architecture, not settings).
EXPECTED = {
    ('inception3', 'imagenet'): {BUILDER_DEFAULTS: 94},  # inception_model.py:100
    ('inception4', 'imagenet'): {BUILDER_DEFAULTS: 149},  # inception_model.py:192
    ('resnet50', 'imagenet'): {RESNET: 53},
    ('resnet50_v1.5', 'imagenet'): {RESNET: 53},
    ('resnet101', 'imagenet'): {RESNET: 104},
    ('resnet101_v1.5', 'imagenet'): {RESNET: 104},
    ('resnet152', 'imagenet'): {RESNET: 155},
    ('resnet152_v1.5', 'imagenet'): {RESNET: 155},
    # v2: the original also normalises its stem convolution (one more RESNET batch norm).
    ('resnet50_v2', 'imagenet'): {RESNET: 32, BUILDER_DEFAULTS: 17},
    ('resnet101_v2', 'imagenet'): {RESNET: 66, BUILDER_DEFAULTS: 34},
    ('resnet152_v2', 'imagenet'): {RESNET: 100, BUILDER_DEFAULTS: 51},
    ('resnet20', 'cifar10'): {RESNET: 19},
    ('resnet32', 'cifar10'): {RESNET: 31},
    ('resnet44', 'cifar10'): {RESNET: 43},
    ('resnet56', 'cifar10'): {RESNET: 55},
    ('resnet110', 'cifar10'): {RESNET: 109},
    ('resnet20_v2', 'cifar10'): {RESNET: 9, BUILDER_DEFAULTS: 10},
    ('resnet32_v2', 'cifar10'): {RESNET: 15, BUILDER_DEFAULTS: 16},
    ('resnet44_v2', 'cifar10'): {RESNET: 21, BUILDER_DEFAULTS: 22},
    ('resnet56_v2', 'cifar10'): {RESNET: 27, BUILDER_DEFAULTS: 28},
    ('resnet110_v2', 'cifar10'): {RESNET: 54, BUILDER_DEFAULTS: 55},
    ('densenet40_k12', 'cifar10'): {DENSENET: 39},
    ('densenet100_k12', 'cifar10'): {DENSENET: 99},
    ('densenet100_k24', 'cifar10'): {DENSENET: 99},
    ('densenet121', 'imagenet'): {DENSENET: 121},
    ('mobilenet', 'imagenet'): {MOBILENET: 52},  # MobileNet v2, the original's 'mobilenet'
    ('mobilenet_v1', 'imagenet'): {MOBILENET: 27},
    ('mobilenet_v2', 'imagenet'): {MOBILENET: 52},
}
# No batch norm, here or in the original (its googlenet, overfeat, vgg, alexnet, lenet and
# trivial models call none); a model of this project's own without batch norm goes here too.
WITHOUT = {('googlenet', 'imagenet'), ('overfeat', 'imagenet'), ('vgg11', 'imagenet'),
           ('vgg16', 'imagenet'), ('vgg19', 'imagenet'), ('alexnet', 'imagenet'),
           ('alexnet', 'cifar10'), ('lenet', 'imagenet'), ('trivial', 'imagenet'),
           ('trivial', 'cifar10')}


def test_every_model_is_listed():
    missing = sorted(set(model_config.list_models()) - set(EXPECTED) - WITHOUT)
    assert missing == [], (
        'models in neither EXPECTED (their batch norms, by settings) nor WITHOUT (no batch '
        'norm) of tests/test_batch_norm_settings.py: %s; add each to one (docs/CONTRIBUTING.md, '
        '"A model")' % missing)
    assert set(EXPECTED) | WITHOUT == set(model_config.list_models())
    assert not set(EXPECTED) & WITHOUT


def test_the_builder_defaults_are_the_originals():
    assert Settings(**convnet_builder.DEFAULT_BATCH_NORM) == BUILDER_DEFAULTS


@pytest.mark.parametrize('key', [
    pytest.param(k, marks=pytest.mark.slow, id='-'.join(k)) if k[0] in DEPTH_VARIANTS else
    pytest.param(k, id='-'.join(k)) for k in sorted(EXPECTED) + sorted(WITHOUT)])
def test_each_batch_norm_has_the_originals_settings(key, monkeypatch):
    calls = collections.Counter()
    record = convnet_builder.ConvNetBuilder._batch_norm

    def recording(self, x, decay, scale, epsilon):
        calls[Settings(decay=decay, epsilon=epsilon, scale=scale)] += 1
        return record(self, x, decay, scale, epsilon)

    monkeypatch.setattr(convnet_builder.ConvNetBuilder, '_batch_norm', recording)
    model = model_config.get_model(*key)
    size = model.image_size if model.fixed_image_size else model.min_image_size
    with tf.Graph().as_default():
        model.build_network(tf.zeros([1, size, size, 3]), phase_train=False,
                            num_classes=model.default_num_classes())
        names = [v.op.name for v in tf1.trainable_variables()]
    assert dict(calls) == EXPECTED.get(key, {})
    # A trainable gamma exactly where the settings say so, a beta for every batch norm.
    assert sum(n.endswith('/beta') for n in names) == sum(calls.values())
    assert sum(n.endswith('/gamma') for n in names) == sum(
        count for settings, count in calls.items() if settings.scale)


def _conv_bn(config, fold, phase_train=False, stats=None):
    """conv(4, 3x3) + batch norm of `config` + ReLU on a fixed [2, 6, 6, 3] batch: (float32
    output, {variable name: value after one run}, the moving averages' values before the run)."""
    graph = tf.Graph()
    with graph.as_default():
        images = tf.constant(np.random.RandomState(0).uniform(-1, 1, (2, 6, 6, 3)), tf.float32)
        cnn = convnet_builder.ConvNetBuilder(images, 3, phase_train=phase_train,
                                             options=fast_paths.BuildOptions(fold_batch_norm=fold))
        cnn.use_batch_norm = True
        cnn.batch_norm_config = dict(config)
        with tf1.variable_scope('cg'):
            out = cnn.conv(4, 3, 3)
        variables = {v.op.name.split('/')[-1]: v for v in tf1.global_variables()}
        assigns = [variables[n].assign(v) for n, v in (stats or {}).items() if n in variables]
        updates = tf.group(cnn.update_ops)
        with tf1.Session(graph=graph) as sess:
            sess.run(tf1.global_variables_initializer())
            sess.run(assigns)
            value, _ = sess.run([out, updates])
            return value, sess.run(variables)


@pytest.mark.parametrize('settings', [BUILDER_DEFAULTS, RESNET, MOBILENET])
def test_folded_inference_uses_the_models_epsilon_and_scale(settings):
    rng = np.random.RandomState(1)
    # A small moving variance: epsilon 0.001 and 1e-5 give outputs 10% apart.
    stats = {'gamma': rng.uniform(0.5, 2, 4), 'beta': rng.uniform(-1, 1, 4),
             'moving_mean': rng.uniform(-0.5, 0.5, 4), 'moving_variance': np.full(4, 0.004)}
    plain, variables = _conv_bn(settings._asdict(), False, stats=stats)
    folded, _ = _conv_bn(settings._asdict(), True, stats=stats)
    assert ('gamma' in variables) == settings.scale
    assert (plain > 0).mean() > 0.2
    np.testing.assert_allclose(folded, plain, rtol=1e-4, atol=1e-4)
    other = dict(settings._asdict(), epsilon=1e-5 if settings.epsilon == 0.001 else 0.001)
    assert np.abs(_conv_bn(other, False, stats=stats)[0] - plain).max() > 0.05


@pytest.mark.parametrize('settings', [BUILDER_DEFAULTS, RESNET, MOBILENET])
def test_a_training_step_moves_the_averages_by_one_minus_decay(settings):
    _, variables = _conv_bn(settings._asdict(), False, phase_train=True)
    # Initial moving mean 0 and variance 1: after one step they are (1 - decay) of the way to
    # the batch's statistics, which are far from 0 and 1 for at least one channel.
    mean, var = variables['moving_mean'], variables['moving_variance']
    assert np.abs(mean).max() > 1e-5
    batch_mean = mean / (1.0 - settings.decay)
    batch_var = 1.0 + (var - 1.0) / (1.0 - settings.decay)
    assert np.abs(batch_mean).max() < 10 and 0 < batch_var.min() and batch_var.max() < 100
    assert np.abs(batch_var - 1.0).max() > 0.05
    # The same batch under another decay moves them by another fraction.
    other = dict(settings._asdict(), decay=0.5)
    _, moved = _conv_bn(other, False, phase_train=True)
    np.testing.assert_allclose(moved['moving_mean'], batch_mean * 0.5, rtol=1e-4, atol=1e-7)


def test_every_model_says_whether_it_uses_batch_norm_as_a_bool():
    # ResNets said it with a method, so the builder's use_batch_norm was a bound method (truthy
    # whatever it returned).
    for name, dataset in [(n, d) for d in ('imagenet', 'cifar10')
                          for n, _ in model_config.list_models(d)]:
        flag = model_config.get_model(name, dataset).uses_batch_norm
        assert flag is True or flag is False, (name, flag)

"""The real-data pipelines: batches (shapes, dtypes, ranges, labels), staging, eval, distortions."""

import numpy as np
import pytest
import tensorflow as tf

from tests import input_helpers as h
from tf_cnn_benchmarks import cnn_util, preprocessing
from tf_cnn_benchmarks.input_data import dataset_info

import helpers

tf1 = tf.compat.v1


@pytest.fixture(scope='module')
def solid_dir(tmp_path_factory):
    """Train and validation shards of solid class-coloured JPEGs, labels 1..3."""
    folder = tmp_path_factory.mktemp('solid')
    h.solid_shards(folder, 'train', num_shards=2, per_shard=6)
    h.solid_shards(folder, 'validation', num_shards=1, per_shard=6)
    return str(folder)


def _check_batches(outputs, *, batch_size, image_size, data_format, dtype=np.float32):
    for step in outputs:
        for images, labels in step:
            if data_format == 'NCHW':
                assert images.shape == (batch_size, 3, image_size, image_size)
                images = images.transpose(0, 2, 3, 1)
            else:
                assert images.shape == (batch_size, image_size, image_size, 3)
            assert labels.dtype == np.int32 and labels.shape == (batch_size,)
            assert images.min() >= -1.0 and images.max() <= 1.0
            # Labels travel with their images: each solid colour is its class.
            assert [h.class_of(im) for im in images] == labels.tolist()


@pytest.mark.parametrize('use_datasets', [False, True], ids=['record_input', 'tf_data'])
@pytest.mark.parametrize('data_format', ['NHWC', 'NCHW'])
def test_batches_shapes_ranges_labels(solid_dir, use_datasets, data_format):
    p = h.make_params(data_dir=solid_dir, use_datasets=use_datasets)
    pipeline, outputs, sizes = h.run_pipeline(p, steps=3, batch_size=4, image_size=24,
                                              data_format=data_format)
    _check_batches(outputs, batch_size=4, image_size=24, data_format=data_format)
    assert ('RecordInput' in pipeline.description) != use_datasets
    assert '12 examples counted' in pipeline.description
    assert sizes == [0]  # every staged batch was consumed


@pytest.mark.parametrize('dtype', [tf.float16, tf.bfloat16])
def test_reduced_precision_images(solid_dir, dtype):
    p = h.make_params(data_dir=solid_dir)
    dataset = dataset_info.get_dataset(p)
    with tf.Graph().as_default():
        pipeline = preprocessing.make_input_pipeline(
            p, dataset, batch_size=2, image_size=16, num_classes=1001, data_format='NCHW',
            dtype=dtype, train=True)
        ((images, labels),) = pipeline.build(['/cpu:0'])
        assert images.dtype == dtype and images.shape.as_list() == [2, 3, 16, 16]
        assert labels.dtype == tf.int32


def test_two_devices_get_different_batches(solid_dir):
    p = h.make_params(data_dir=solid_dir, distortions=False)
    _, outputs, sizes = h.run_pipeline(p, steps=2, devices=('/cpu:0', '/cpu:1'), batch_size=3,
                                       image_size=16)
    _check_batches(outputs, batch_size=3, image_size=16, data_format='NHWC')
    assert sizes == [0, 0]


@pytest.mark.parametrize('use_datasets', [False, True], ids=['record_input', 'tf_data'])
def test_staging_counts_balanced(solid_dir, use_datasets):
    """Warm-up stages batch_group_size batches per device; steps keep the level; the last
    steps drain it, so every put has its get."""
    depth, steps = 2, 5
    p = h.make_params(data_dir=solid_dir, batch_group_size=depth, use_datasets=use_datasets)
    dataset = dataset_info.get_dataset(p)
    with tf.Graph().as_default():
        pipeline = preprocessing.make_input_pipeline(
            p, dataset, batch_size=2, image_size=16, num_classes=1001, data_format='NHWC',
            dtype=tf.float32, train=True)
        batches = pipeline.build(['/cpu:0', '/cpu:1'])
        assert len(pipeline.warmup_ops) == 2 * depth and len(pipeline.step_ops) == 2
        config = tf1.ConfigProto(device_count={'CPU': 2})
        with tf1.Session(config=config) as sess:
            sess.run(pipeline.warmup_ops)
            assert sess.run(pipeline.size_ops) == [depth, depth]
            puts = depth
            for step in range(steps):
                ops = pipeline.step_ops_for(step, steps)
                puts += len(ops) // 2
                sess.run([batches, ops])
                expected = depth if step < steps - depth else steps - 1 - step
                assert sess.run(pipeline.size_ops) == [expected, expected]
            assert puts == steps  # one put per get, per device
            assert sess.run(pipeline.size_ops) == [0, 0]


def test_eval_pipeline_reads_validation(solid_dir):
    p = h.make_params(data_dir=solid_dir)
    pipeline, outputs, _ = h.run_pipeline(p, steps=2, batch_size=3, image_size=16, train=False)
    assert pipeline.subset == 'validation' and 'validation: 6 examples' in pipeline.description
    assert 'central crop' in pipeline.description
    _check_batches(outputs, batch_size=3, image_size=16, data_format='NHWC')


def test_label_out_of_range_is_a_data_error(solid_dir):
    p = h.make_params(data_dir=solid_dir)
    with pytest.raises(cnn_util.DataError) as info:
        h.run_pipeline(p, steps=1, batch_size=4, image_size=16, num_classes=2)
    message = str(info.value)
    assert message.startswith('label out of range') and '[0, 2)' in message
    assert 'holds: [' in message
    assert solid_dir in message and '\n' not in message


def test_undecodable_image_is_a_data_error(tmp_path):
    h.write_shards(tmp_path, 'train', [[h.example(b'not an image', 1)] * 4])
    with pytest.raises(cnn_util.DataError, match='could not be processed') as info:
        h.run_pipeline(h.make_params(data_dir=str(tmp_path)), steps=1, batch_size=2,
                       image_size=16)
    assert 'Unknown image file format' in str(info.value) and str(tmp_path) in str(info.value)
    assert '\n' not in str(info.value)


def test_real_shards_record_input_and_tf_data(imagenet_dir):
    for use_datasets in (False, True):
        p = h.make_params(data_dir=imagenet_dir, use_datasets=use_datasets, distort_color=True)
        _, outputs, _ = h.run_pipeline(p, steps=2, batch_size=4, image_size=32)
        for images, labels in outputs[-1]:
            assert images.shape == (4, 32, 32, 3) and np.isfinite(images).all()
            assert images.min() >= -1 and images.max() <= 1
            assert ((labels >= 0) & (labels < 10)).all()  # the shards' labels are 0..9


def test_cifar10_pipeline(tmp_path):
    h.write_cifar(tmp_path, label_fn=lambda i: i % 10)
    p = h.make_params(data_dir=str(tmp_path))
    for train in (True, False):
        pipeline, outputs, _ = h.run_pipeline(p, steps=2, batch_size=4, image_size=32,
                                              num_classes=10, train=train,
                                              data_format='NCHW')
        assert 'cifar10' in pipeline.description
        for images, labels in outputs[-1]:
            assert images.shape == (4, 3, 32, 32)
            if not train:  # grey level 20 * label, exactly, at every pixel
                expected = (20.0 * labels / 127.5 - 1.0)[:, None, None, None]
                np.testing.assert_allclose(images, np.broadcast_to(expected, images.shape),
                                           atol=1e-6)
    with pytest.raises(cnn_util.DataError, match='model has 5 classes'):
        h.run_pipeline(p, steps=1, num_classes=5)


def test_synthetic_when_no_data_dir():
    pipeline = preprocessing.make_input_pipeline(
        h.make_params(), dataset_info.get_dataset(h.make_params()), batch_size=2,
        image_size=8, num_classes=10, data_format='NHWC', dtype=tf.float32, train=True)
    assert isinstance(pipeline, preprocessing.SyntheticInput)


# --- Per-image processing.

def _run_on(serialized: bytes, runs: int, **kwargs):
    with tf.Graph().as_default():
        tf1.set_random_seed(7)
        image, _ = helpers.preprocess_imagenet(tf.constant(serialized), **kwargs)
        with tf1.Session() as sess:
            return [sess.run(image) for _ in range(runs)]


def _ramp(size):
    y, x = np.mgrid[0:size, 0:size]
    return np.stack([x * 3 % 256, y * 3 % 256, (x + y) * 2 % 256], axis=-1).astype(np.uint8)


def _blocks(size=64):
    """Grey 8x8 blocks of distinct levels: a quality-100 JPEG of it decodes exactly."""
    levels = (np.arange((size // 8) ** 2).reshape(size // 8, size // 8) * 4).astype(np.uint8)
    return np.kron(levels, np.ones((8, 8), np.uint8))


@pytest.mark.parametrize('fuse', [True, False])
def test_eval_central_crop_is_exact_and_deterministic(fuse):
    grey = _blocks(64)  # 87.5% of 64 is 56: rows and columns 4..59
    record = h.example(h.image_bytes(64, 64, mode='L', pixels=np.stack([grey] * 3, -1),
                                     quality=100), 1)
    first, second = _run_on(record, 2, image_size=56, train=False,
                            fuse_decode_and_crop=fuse)
    np.testing.assert_array_equal(first, second)
    expected = grey[4:60, 4:60, None].astype(np.float32) / 127.5 - 1.0
    np.testing.assert_allclose(first, np.broadcast_to(expected, first.shape), atol=1e-6)


def test_eval_central_crop_of_odd_sizes_and_png():
    pixels = _ramp(64)[:40, :24]  # crop round(0.875 * 40) = 35 rows from 2, 21 columns from 1
    record = h.example(h.image_bytes(24, 40, fmt='PNG', pixels=pixels), 1)
    out = _run_on(record, 1, image_size=16, train=False)[0]
    with tf.Graph().as_default(), tf1.Session() as sess:
        crop = pixels[2:37, 1:22].astype(np.float32)
        expected = sess.run(tf.image.resize(crop, [16, 16])) / 127.5 - 1.0
    # PNGs are re-encoded as quality-100 JPEG before the fused decoder: within a few levels.
    assert np.abs(out - expected).mean() < 2 / 127.5


@pytest.mark.parametrize('color', [False, True])
def test_distortions_vary_between_steps_and_stay_in_range(color):
    record = h.example(h.image_bytes(64, 48, fmt='PNG', pixels=_ramp(64)[:48]), 1,
                       [(0.2, 0.2, 0.8, 0.9)])
    outs = _run_on(record, 6, image_size=32, train=True, distortions=True, color=color)
    for out in outs:
        assert out.shape == (32, 32, 3) and out.min() >= -1 and out.max() <= 1
    distinct = {out.tobytes() for out in outs}
    assert len(distinct) >= 5


@pytest.mark.parametrize('method', ['bilinear', 'nearest', 'bicubic', 'area', 'round_robin'])
def test_resize_methods(method, solid_dir):
    p = h.make_params(data_dir=solid_dir, resize_method=method, use_datasets=True)
    _, outputs, _ = h.run_pipeline(p, steps=1, batch_size=4, image_size=20)
    _check_batches(outputs, batch_size=4, image_size=20, data_format='NHWC')


@pytest.mark.parametrize('use_datasets, phrase', [
    (False, 'RecordInput (1 file in parallel, '), (True, ', 1 file interleaved')])
def test_one_shard_is_one_file_in_the_description(solid_dir, use_datasets, phrase):
    """The validation subset here is one shard: it said '1 files'."""
    p = h.make_params(data_dir=solid_dir, use_datasets=use_datasets)
    dataset = dataset_info.get_dataset(p)
    with tf.Graph().as_default():
        pipeline = preprocessing.make_input_pipeline(
            p, dataset, batch_size=2, image_size=16, num_classes=4, data_format='NHWC',
            dtype=tf.float32, train=True, subset='validation')
    assert phrase in pipeline.description, pipeline.description
    assert cnn_util.counted(2, 'shard') == '2 shards'
    assert cnn_util.counted(1, 'class', 'classes') == '1 class'

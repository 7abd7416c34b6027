"""Real-world image quirks: each trains and evaluates without error into 3-channel images of the
requested size, in range. Images are made with Pillow."""

import io

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

from tests import input_helpers as h

import helpers

tf1 = tf.compat.v1
SIZE = 24
FULL = [(0.0, 0.0, 1.0, 1.0)]


def _png16(width, height):
    image = Image.fromarray((np.arange(width * height).reshape(height, width) * 37 % 65535)
                            .astype(np.uint16))
    out = io.BytesIO()
    image.save(out, 'PNG')
    return out.getvalue()


def _noise(width, height, seed=0):
    return np.random.RandomState(seed).randint(0, 256, (height, width, 3))


# name -> (encoded bytes, boxes or None for no bbox keys)
QUIRKS = {
    'png_rgb_in_jpeg_field': (h.image_bytes(30, 20, fmt='PNG', pixels=_noise(30, 20)), FULL),
    'png_rgba': (h.image_bytes(30, 20, fmt='PNG', mode='RGBA'), FULL),
    'png_palette': (h.image_bytes(30, 20, fmt='PNG', mode='P'), FULL),
    'png_grey_16bit': (_png16(30, 20), FULL),
    'gif_in_jpeg_field': (h.image_bytes(30, 20, fmt='GIF', mode='P'), FULL),
    'bmp_in_jpeg_field': (h.image_bytes(30, 20, fmt='BMP'), FULL),
    'cmyk_jpeg': (h.image_bytes(30, 20, mode='CMYK', pixels=_noise(30, 20)), FULL),
    'grayscale_jpeg': (h.image_bytes(30, 20, mode='L', pixels=_noise(30, 20)), FULL),
    'progressive_jpeg': (h.image_bytes(40, 30, pixels=_noise(40, 30), progressive=True), FULL),
    'tiny_1x1': (h.image_bytes(1, 1), FULL),
    'tiny_3x2': (h.image_bytes(3, 2), FULL),
    'tall_2x300': (h.image_bytes(2, 300), FULL),
    'wide_400x1': (h.image_bytes(400, 1), FULL),
    'no_bbox_keys': (h.image_bytes(30, 20), None),
    'empty_bbox_lists': (h.image_bytes(30, 20), []),
    'boxes_outside_unit_square': (h.image_bytes(30, 20), [(-0.5, -0.2, 1.7, 2.0),
                                                          (1.2, 1.3, 1.5, 1.9)]),
    'zero_area_boxes': (h.image_bytes(30, 20), [(0.5, 0.5, 0.5, 0.5), (0.2, 0.3, 0.2, 0.9)]),
    'inverted_box': (h.image_bytes(30, 20), [(0.9, 0.8, 0.1, 0.2)]),
    'nan_box': (h.image_bytes(30, 20), [(float('nan'), 0.1, 0.5, 0.5), (0.1, 0.1, 0.6, 0.7)]),
    'many_boxes': (h.image_bytes(30, 20), [(0.1 * i, 0.05, 0.1 * i + 0.1, 0.5)
                                           for i in range(9)]),
}


@pytest.fixture(scope='module')
def quirk_graph():
    """One graph, for every quirk: train (distortions + colour) and eval preprocessing of a
    single record fed through a placeholder, in both fused and plain decoding."""
    graph = tf.Graph()
    with graph.as_default():
        tf1.set_random_seed(3)
        record = tf1.placeholder(tf.string, [])
        outputs = {}
        for fuse in (True, False):
            outputs[('train', fuse)] = helpers.preprocess_imagenet(
                record, image_size=SIZE, train=True, distortions=True, color=True,
                fuse_decode_and_crop=fuse)[0]
            outputs[('eval', fuse)] = helpers.preprocess_imagenet(
                record, image_size=SIZE, train=False, fuse_decode_and_crop=fuse)[0]
    with tf1.Session(graph=graph) as sess:
        yield sess, record, outputs


@pytest.mark.parametrize('name', sorted(QUIRKS))
def test_quirk_gives_rgb_image_of_the_right_size(quirk_graph, name):
    sess, record, outputs = quirk_graph
    encoded, boxes = QUIRKS[name]
    serialized = h.example(encoded, 7, boxes)
    for _ in range(3):  # several random crops
        results = sess.run(outputs, {record: serialized})
        for key, image in results.items():
            assert image.shape == (SIZE, SIZE, 3), key
            assert np.isfinite(image).all() and image.min() >= -1 and image.max() <= 1, key


def test_quirk_colours_survive():
    """A solid red image stays red in every format that holds colour."""
    red = (230, 20, 20)
    expected = np.array(red, np.float32) / 127.5 - 1.0
    with tf.Graph().as_default():
        record = tf1.placeholder(tf.string, [])
        image, _ = helpers.preprocess_imagenet(record, image_size=8, train=False)
        with tf1.Session() as sess:
            for fmt, mode in (('PNG', 'RGB'), ('PNG', 'RGBA'), ('JPEG', 'CMYK'), ('GIF', 'P'),
                              ('BMP', 'RGB'), ('JPEG', 'RGB')):
                out = sess.run(image, {record: h.example(
                    h.image_bytes(16, 16, fmt=fmt, mode=mode, colour=red), 1)})
                assert np.abs(out.reshape(-1, 3).mean(0) - expected).max() < 12 / 127.5, (fmt,
                                                                                         mode)


def test_all_quirks_in_one_training_batch(tmp_path):
    """Every quirk in one shard, read by RecordInput and tf.data into training batches."""
    records = [h.example(encoded, i % 5 + 1, boxes)
               for i, (encoded, boxes) in enumerate(QUIRKS.values())]
    h.write_shards(tmp_path, 'train', [records])
    n = len(records)
    for use_datasets in (False, True):
        p = h.make_params(data_dir=str(tmp_path), use_datasets=use_datasets, distort_color=True,
                          resize_method='round_robin')
        _, outputs, _ = h.run_pipeline(p, steps=2, batch_size=n, image_size=SIZE,
                                       data_format='NCHW')
        for step in outputs:
            images, labels = step[0]
            assert images.shape == (n, 3, SIZE, SIZE) and np.isfinite(images).all()
            assert images.min() >= -1 and images.max() <= 1
            assert sorted(labels.tolist()) == sorted(i % 5 + 1 for i in range(n))

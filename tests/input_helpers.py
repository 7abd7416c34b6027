"""Shared helpers of the input-pipeline tests: images made with Pillow, records, shards, runs."""

from __future__ import annotations

import io
import os
import pickle
import struct
import subprocess
import sys

import numpy as np
import tensorflow as tf
from PIL import Image

from tf_cnn_benchmarks import params, preprocessing
from tf_cnn_benchmarks.input_data import data_errors, dataset_info

tf1 = tf.compat.v1

# Solid class colours, far apart, so a preprocessed image tells its class (labels 1..3).
CLASS_COLOURS = {1: (220, 20, 20), 2: (20, 220, 20), 3: (20, 20, 220)}


def image_bytes(width, height, *, mode='RGB', fmt='JPEG', colour=(200, 30, 90), pixels=None,
                **save_kwargs) -> bytes:
    """An encoded image: solid `colour`, or `pixels` (uint8 [h, w, 3]), converted to `mode`."""
    if pixels is not None:
        image = Image.fromarray(np.asarray(pixels, np.uint8), 'RGB')
    else:
        image = Image.new('RGB', (width, height), colour)
    if mode != 'RGB':
        image = image.convert(mode)
    out = io.BytesIO()
    image.save(out, fmt, **save_kwargs)
    return out.getvalue()


def example(encoded: bytes, label: int, boxes=None, *, height=None, width=None,
            filename=None) -> bytes:
    """A serialized ImageNet-format Example. boxes: list of (ymin, xmin, ymax, xmax), or None
    to leave the bbox keys out."""
    def b(v):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=[v]))

    def i(v):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[v]))

    feature = {'image/encoded': b(encoded), 'image/class/label': i(label),
               'image/format': b(b'JPEG')}
    if filename is not None:
        feature['image/filename'] = b(filename.encode())
    if height is not None:
        feature['image/height'] = i(height)
        feature['image/width'] = i(width)
    if boxes is not None:
        for k, key in enumerate(('ymin', 'xmin', 'ymax', 'xmax')):
            feature['image/object/bbox/' + key] = tf.train.Feature(
                float_list=tf.train.FloatList(value=[box[k] for box in boxes]))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def example_with_label(label, *, filename='odd.jpg', size=(16, 16), colour=(200, 30, 90)
                       ) -> bytes:
    """An ImageNet-format Example whose `image/class/label` is of another schema: 'float' (a
    FloatList of 3.0), 'two' (two int64 values, 3 and 4), 'none' (left out), or an int stored
    as it is (-1, 2000, ...)."""
    parsed = tf.train.Example.FromString(
        example(image_bytes(*size, colour=colour), 3, filename=filename))
    feature = parsed.features.feature['image/class/label']
    if label == 'float':
        feature.ClearField('int64_list')
        feature.float_list.value.append(3.0)
    elif label == 'two':
        feature.int64_list.value.append(4)
    elif label == 'none':
        del parsed.features.feature['image/class/label']
    else:
        feature.int64_list.value[0] = label
    return parsed.SerializeToString()


def write_shards(folder, subset, shards) -> list[str]:
    """Writes `subset-0000i-of-0000N` files, one per list of serialized records in `shards`."""
    os.makedirs(folder, exist_ok=True)
    paths = []
    for index, records in enumerate(shards):
        path = os.path.join(folder, '%s-%05d-of-%05d' % (subset, index, len(shards)))
        with tf.io.TFRecordWriter(path) as writer:
            for record in records:
                writer.write(record)
        paths.append(path)
    return paths


def copy_shards(source_dir, folder, kinds):
    """Writes the train shards of `source_dir` into `folder` again, shard i compressed with
    kinds[i] ('', 'GZIP' or 'ZLIB') by TensorFlow's writer; returns the paths."""
    names = sorted(n for n in os.listdir(source_dir) if n.startswith('train-'))
    os.makedirs(folder, exist_ok=True)
    paths = []
    for name, kind in zip(names, kinds, strict=True):
        path = os.path.join(folder, name)
        options = tf.io.TFRecordOptions(compression_type=kind)
        with tf.io.TFRecordWriter(path, options=options) as writer:
            for record in tf.compat.v1.io.tf_record_iterator(os.path.join(source_dir, name)):
                writer.write(record)
        paths.append(path)
    return paths


def damage_record(path, index, *, where='data'):
    """Flips a byte of record `index`'s data (its data CRC then fails) or of its length field
    (its length CRC fails); returns the record's start byte."""
    raw = bytearray(open(path, 'rb').read())
    start = 0
    for _ in range(index):
        (length,) = struct.unpack('<Q', raw[start:start + 8])
        start += 16 + length
    raw[start + (12 + 5 if where == 'data' else 1)] ^= 0xFF
    open(path, 'wb').write(bytes(raw))
    return start


def solid_shards(folder, subset='train', num_shards=2, per_shard=6, size=(24, 20)):
    """Shards of solid-colour JPEGs whose colour is CLASS_COLOURS[label]; labels cycle 1..3."""
    shards, n = [], 0
    for _ in range(num_shards):
        records = []
        for _ in range(per_shard):
            label = n % 3 + 1
            records.append(example(image_bytes(*size, colour=CLASS_COLOURS[label]), label,
                                   [(0.1, 0.1, 0.9, 0.9)]))
            n += 1
        shards.append(records)
    return write_shards(folder, subset, shards)


def class_of(image_hwc: np.ndarray) -> int:
    """The CLASS_COLOURS label nearest to an image's mean colour (image in [-1, 1])."""
    mean = (image_hwc.reshape(-1, 3).mean(0) + 1.0) * 127.5
    return min(CLASS_COLOURS, key=lambda k: np.abs(mean - CLASS_COLOURS[k]).sum())


def write_cifar(folder, counts=(4, 4, 4, 4, 4), test_count=3, label_fn=None):
    """Writes CIFAR-10 pickle batches; image i of a batch is solid grey (label * 20), label
    label_fn(i) (default i % 10). Returns the folder."""
    os.makedirs(folder, exist_ok=True)
    label_fn = label_fn or (lambda i: i % 10)
    names = ['data_batch_%d' % (k + 1) for k in range(len(counts))] + ['test_batch']
    for name, n in zip(names, list(counts) + [test_count], strict=True):
        labels = [label_fn(i) for i in range(n)]
        data = np.stack([np.full(3072, min(255, max(0, 20 * lab)), np.uint8) for lab in labels]) \
            if n else np.zeros([0, 3072], np.uint8)
        with open(os.path.join(folder, name), 'wb') as f:
            pickle.dump({b'data': data, b'labels': labels, b'batch_label': name.encode()}, f)
    return folder


def make_params(**kwargs):
    defaults = dict(shuffle_buffer_size=64)
    defaults.update(kwargs)
    return params.make_params(**defaults)


def run_pipeline(p, *, steps=2, devices=('/cpu:0',), batch_size=4, image_size=32,
                 num_classes=1001, data_format='NHWC', dtype=tf.float32, train=True,
                 subset=None):
    """Builds the pipeline of `p` in a new graph, warms up and fetches `steps` batches.

    Returns:
      (pipeline, [[(images, labels) per device] per step] as numpy arrays, final staging sizes).
    """
    dataset = dataset_info.get_dataset(p)
    graph = tf.Graph()
    with graph.as_default():
        tf1.set_random_seed(p.tf_random_seed)
        pipeline = preprocessing.make_input_pipeline(
            p, dataset, batch_size=batch_size, image_size=image_size, num_classes=num_classes,
            data_format=data_format, dtype=dtype, train=train, subset=subset)
        batches = pipeline.build(list(devices))
        config = tf1.ConfigProto(device_count={'CPU': len(devices)})
        outputs = []
        with tf1.Session(config=config) as sess, data_errors.data_errors(
                p.data_dir or "", files=pipeline.record_files):
            sess.run(tf1.local_variables_initializer())
            sess.run(pipeline.warmup_ops)
            for step in range(steps):
                out = sess.run([batches, pipeline.step_ops_for(step, steps)])[0]
                outputs.append([(np.asarray(i, np.float32), np.asarray(lab)) for i, lab in out])
            sizes = sess.run(pipeline.size_ops)
    return pipeline, outputs, sizes


def build_sample_imagenet(folder: str, *, classes: int = 8, per_class: int = 80,
                          seed: int = 0) -> str:
    """A small ImageNet-format set shaped like ../shared/data/imagenet_tfrecords, made with the
    project's converter over generated JPEGs: train-0000[0-7]-of-00008 (512 records, 64 a shard)
    and validation-0000[01]-of-00002 (128), images of 32 to 96 pixels a side with noise, labels
    1..`classes`, and no labels.txt (so the model keeps ImageNet's 1001 classes, as on the
    shared set). Files and folder read-only, as the shared folder is. Returns the shards' folder.

    8 classes x 80 images with --validation_fraction=0.2 put round(0.2 x 80) = 16 images of each
    class into validation: 128 validation, 512 train records.
    """
    from tf_cnn_benchmarks.tools import build_imagenet_tfrecords
    rng = np.random.default_rng(seed)
    photos = os.path.join(folder, 'photos')
    for c in range(classes):
        os.makedirs(os.path.join(photos, 'n%08d' % c))
        for i in range(per_class):
            h, w = (int(x) for x in rng.integers(32, 97, size=2))
            pixels = rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(os.path.join(photos, 'n%08d' % c, '%03d.jpg' % i),
                                         quality=90)
    out = os.path.join(folder, 'imagenet_tfrecords')
    build_imagenet_tfrecords.convert(photos, out, num_train_shards=8, num_validation_shards=2,
                                     validation_fraction=0.2, seed=seed, progress=False,
                                     warn=lambda line: None)
    for extra in ('labels.txt', 'class_counts.txt'):
        os.remove(os.path.join(out, extra))
    for name in os.listdir(out):
        os.chmod(os.path.join(out, name), 0o444)
    os.chmod(out, 0o555)
    return out


def converter_cli(*args: str) -> subprocess.CompletedProcess:
    """`tf_cnn_build_tfrecords` with `args` in a process of its own (run from the checkout as
    `python -m tools.build_imagenet_tfrecords`): its exit status, stdout and stderr as text."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return subprocess.run([sys.executable, '-m', 'tools.build_imagenet_tfrecords', *args],
                          cwd=repo, capture_output=True, text=True, timeout=120)


def converter_main(capfd, *args: str) -> subprocess.CompletedProcess:
    """`tf_cnn_build_tfrecords` with `args` (its main) in this process, as converter_cli runs
    it in a process of its own: its exit status, and what reached file descriptors 1 and 2
    meanwhile (`capfd`: the test's pytest fixture; the C libraries' lines too).

    For the tests of its output lines and exit status: it saves a Python and TensorFlow
    start-up (3 CPU seconds) per run; converter_cli where another process is the point."""
    from tf_cnn_benchmarks.tools import build_imagenet_tfrecords as convert_tool
    capfd.readouterr()  # what the test printed before
    status = convert_tool.main(['tf_cnn_build_tfrecords', *args])
    out, err = capfd.readouterr()
    return subprocess.CompletedProcess(list(args), status, out, err)

"""It learns: real images, the project's converter, real preprocessing, training, then --eval.

The data is scikit-learn's bundled handwritten digits (1,797 8x8 grey images of 0-9 by 43
writers, shipped inside the wheel: no download). Each image is upscaled to a 32x32 PNG in a class
folder, the folders become ImageNet-format shards with tools/build_imagenet_tfrecords.py (20% of
each class held out for validation), LeNet trains on the train shards through the RecordInput
pipeline on the CPU, and --eval on the held-out shard must reach >= 90% top-1, in float32 and
in bfloat16 (--use_bf16 for training and evaluation).
"""

import os
import time

import numpy as np
import pytest

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.params import make_params

TARGET_TOP_1 = 0.90


def write_digit_folders(root: str) -> dict:
    """Writes root/digit_<d>/<i>.png (32x32 RGB) for every bundled digit; returns counts."""
    datasets = pytest.importorskip('sklearn.datasets', reason='needs scikit-learn (the test '
                                   'extra) for its bundled digits')
    image_lib = pytest.importorskip('PIL.Image')
    digits = datasets.load_digits()
    counts = {}
    for index, (pixels, label) in enumerate(zip(digits.images, digits.target)):
        folder = os.path.join(root, 'digit_%d' % label)
        os.makedirs(folder, exist_ok=True)
        grey = (pixels * (255.0 / 16.0)).round().astype(np.uint8)  # values 0..16 -> 0..255
        image = image_lib.fromarray(grey, 'L').resize((32, 32), image_lib.BILINEAR)
        image.convert('RGB').save(os.path.join(folder, '%04d.png' % index))
        counts[int(label)] = counts.get(int(label), 0) + 1
    return counts


@pytest.fixture(scope='module')
def digit_shards(tmp_path_factory):
    """(data_dir, class counts, the converter's result): the digits as PNG folders, converted
    to ImageNet-format shards once for both precisions (they only read them)."""
    from tf_cnn_benchmarks.tools import build_imagenet_tfrecords
    root = tmp_path_factory.mktemp('digits')
    counts = write_digit_folders(str(root / 'images'))
    data_dir = str(root / 'tfrecords')
    converted = build_imagenet_tfrecords.convert(
        str(root / 'images'), data_dir, num_train_shards=2, num_validation_shards=1,
        validation_fraction=0.2, seed=1, num_threads=2, progress=False)
    return data_dir, counts, converted


@pytest.mark.timeout(300)
@pytest.mark.parametrize('precision', [{}, {'use_bf16': True}], ids=['fp32', 'bf16'])
def test_lenet_learns_digits_to_90_percent(tmp_path, digit_shards, precision):
    start = time.perf_counter()
    data_dir, counts, converted = digit_shards
    assert sum(counts.values()) == 1797 and len(counts) == 10
    assert converted['num_validation'] == 359
    common = dict(model='lenet', data_dir=data_dir, batch_size=32, distortions=False,
                  train_dir=str(tmp_path / 'train'), display_every=50, **precision)
    # 200 steps of 32 = 4.5 epochs of the 1,438 training images; the rate drops 10x after 3.
    trained = benchmark_cnn.BenchmarkCNN(make_params(
        num_batches=200, num_warmup_batches=0, optimizer='momentum',
        piecewise_learning_rate_schedule='0.02;3;0.002', **common), gpus=0).run()
    assert trained['global_step'] == 200
    assert trained['plan']['num_classes'] == 11  # labels.txt: digits 1..10 + background 0
    assert np.mean(trained['losses'][-20:]) < 0.5
    evaluated = benchmark_cnn.BenchmarkCNN(make_params(eval=True, **common), gpus=0).run()
    top_1 = evaluated['eval']['top_1']
    elapsed = time.perf_counter() - start
    print('digits: eval top-1 %.4f top-5 %.4f on %d held-out images; %.1f s in all' % (
        top_1, evaluated['eval']['top_5'], evaluated['eval']['num_examples'], elapsed))
    assert evaluated['eval']['subset'] == 'validation'
    # Every held-out image once: 11 full batches of 32 and a last one of 7 (+ 25 padding).
    assert (evaluated['eval']['num_examples'], evaluated['eval']['num_batches']) == (359, 12)
    assert top_1 >= TARGET_TOP_1

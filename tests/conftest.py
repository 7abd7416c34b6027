"""Test set-up: the checkout on sys.path, TensorFlow quiet and in graph mode, shared data paths."""

import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)
os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
import runtime_env  # noqa: E402

runtime_env.apply()  # oneDNN kernels, BFC allocator: before TensorFlow loads

import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()

SHARED_DATA = os.path.join(os.path.dirname(REPO), 'shared', 'data')
IMAGENET_TFRECORDS = os.path.join(SHARED_DATA, 'imagenet_tfrecords')


@pytest.fixture
def imagenet_dir():
    """The real ImageNet-format shards in ../shared/data; skips where ../shared is absent."""
    if not os.path.isdir(IMAGENET_TFRECORDS):
        pytest.skip('../shared/data/imagenet_tfrecords is absent (needs the shared folder beside '
                    'the checkout)')
    return IMAGENET_TFRECORDS

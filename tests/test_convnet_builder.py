"""ConvNetBuilder's dense layer: its custom input gradient equals TensorFlow's."""

import numpy as np
import tensorflow as tf

from tf_cnn_benchmarks.models import convnet_builder

tf1 = tf.compat.v1


def test_dense_matmul_gradients_match_matmul():
    rng = np.random.default_rng(0)
    with tf.Graph().as_default():
        x = tf.constant(rng.standard_normal((5, 7)), tf.float32)
        w = tf.constant(rng.standard_normal((7, 3)), tf.float32)
        up = tf.constant(rng.standard_normal((5, 3)), tf.float32)
        ours = tf1.gradients(tf.reduce_sum(convnet_builder.dense_matmul(x, w) * up), [x, w])
        reference = tf1.gradients(tf.reduce_sum(tf.matmul(x, w) * up), [x, w])
        with tf1.Session() as sess:
            ours, reference = sess.run([ours, reference])
    for a, b in zip(ours, reference):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)

"""ConvNetBuilder: its dense layer's custom input gradient equals TensorFlow's; batch norm
folded into the convolutions (inference) is the same function with the same variables."""

import numpy as np
import tensorflow as tf

from tf_cnn_benchmarks.models import convnet_builder, fast_paths

tf1 = tf.compat.v1
# A batch norm with a trainable scale (the ResNets'; the builder's default has none).
SCALED = {'decay': 0.9, 'epsilon': 1e-5, 'scale': True}


def test_dense_matmul_gradients_match_matmul():
    rng = np.random.default_rng(0)
    with tf.Graph().as_default():
        x = tf.constant(rng.standard_normal((5, 7)), tf.float32)
        w = tf.constant(rng.standard_normal((7, 3)), tf.float32)
        up = tf.constant(rng.standard_normal((5, 3)), tf.float32)
        ours = tf1.gradients(tf.reduce_sum(fast_paths.dense_matmul(x, w) * up), [x, w])
        reference = tf1.gradients(tf.reduce_sum(tf.matmul(x, w) * up), [x, w])
        with tf1.Session() as sess:
            ours, reference = sess.run([ours, reference])
    for a, b in zip(ours, reference):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def _conv_bn_relu(dtype, fold, stats):
    """[2, 6, 6, 8] float32 output of conv(5, 3x3) + inference batch norm (SCALED) + ReLU, and the
    variable names, with gamma/beta/moving statistics set to `stats`."""
    graph = tf.Graph()
    with graph.as_default():
        images = tf.constant(np.random.RandomState(0).uniform(-1, 1, (2, 6, 6, 3)), tf.float32)
        cnn = convnet_builder.ConvNetBuilder(tf.cast(images, dtype), 3, phase_train=False,
                                             dtype=dtype,
                                             options=fast_paths.BuildOptions(fold_batch_norm=fold))
        cnn.use_batch_norm = True
        cnn.batch_norm_config = dict(SCALED)
        with tf1.variable_scope('cg'):
            out = tf.cast(cnn.conv(5, 3, 3), tf.float32)
        names = sorted(v.op.name for v in tf1.global_variables())
        assigns = [v.assign(stats[v.op.name.split('/')[-1]]) for v in tf1.global_variables()
                   if v.op.name.split('/')[-1] in stats]
        types = {op.type for op in graph.get_operations()}
        with tf1.Session(graph=graph) as sess:
            sess.run(tf1.global_variables_initializer())
            sess.run(assigns)
            return sess.run(out), names, types


def test_folded_batch_norm_is_the_same_function_with_the_same_variables():
    rng = np.random.RandomState(1)
    stats = {'gamma': rng.uniform(0.5, 2, 5), 'beta': rng.uniform(-1, 1, 5),
             'moving_mean': rng.uniform(-0.5, 0.5, 5), 'moving_variance': rng.uniform(0.2, 3, 5)}
    plain, names, plain_types = _conv_bn_relu(tf.float32, False, stats)
    folded, folded_names, folded_types = _conv_bn_relu(tf.float32, True, stats)
    assert folded_names == names  # checkpoints do not change
    assert 'FusedBatchNormV3' in plain_types and 'FusedBatchNormV3' not in folded_types
    assert (plain > 0).mean() > 0.2  # ReLU leaves enough of the output to compare
    np.testing.assert_allclose(folded, plain, rtol=1e-5, atol=1e-5)
    # bfloat16: kernel and bias rounded once after folding, activations in bfloat16; 8 bits
    # of significand: a few ulps (2**-8 each) of the output's scale.
    bf16, _, _ = _conv_bn_relu(tf.bfloat16, True, stats)
    np.testing.assert_allclose(bf16, plain, atol=4 * 2.0 ** -8 * np.abs(plain).max())


def test_training_never_folds():
    with tf.Graph().as_default():
        cnn = convnet_builder.ConvNetBuilder(tf.zeros([1, 4, 4, 3]), 3, phase_train=True,
                                             options=fast_paths.BuildOptions(fold_batch_norm=True))
        assert not cnn.fold_batch_norm


def _float16_block(float32_norm_and_pool):
    """conv + training batch norm + ReLU, max pool, stand-alone batch norm, in float16: the
    float32 output, the input gradient, the variable names and {op type: dtypes}."""
    graph = tf.Graph()
    with graph.as_default():
        images = tf.constant(np.random.RandomState(2).uniform(-1, 1, (2, 8, 8, 3)), tf.float32)
        x = tf.cast(images, tf.float16)
        cnn = convnet_builder.ConvNetBuilder(x, 3, phase_train=True, dtype=tf.float16,
                                             options=fast_paths.BuildOptions(
                                                 float32_norm_and_pool=float32_norm_and_pool))
        cnn.use_batch_norm = True
        with tf1.variable_scope('cg'):
            cnn.conv(6, 3, 3)
            cnn.mpool(2, 2)
            top = cnn.batch_norm()
        assert top.dtype == tf.float16 and cnn.top_layer is top
        out = tf.cast(top, tf.float32)
        # A fixed random projection: sum(out ** 2) of a normalised output is constant.
        weights = tf.constant(np.random.RandomState(3).uniform(-1, 1, (2, 4, 4, 6)), tf.float32)
        grad = tf1.gradients(tf.reduce_sum(out * weights), x)[0]
        names = sorted(v.op.name for v in tf1.global_variables())
        dtypes = {}
        for op in graph.get_operations():
            if op.type in ('FusedBatchNormV3', 'FusedBatchNormGradV3', 'MaxPool', 'MaxPoolGrad',
                           'Conv2D'):
                dtypes.setdefault(op.type, set()).add(op.get_attr('T'))
        with tf1.Session(graph=graph) as sess:
            sess.run(tf1.global_variables_initializer())
            return sess.run([out, grad]) + [names, dtypes]


def test_float32_norm_and_pool_keeps_the_function_and_the_variables():
    out16, grad16, names16, dtypes16 = _float16_block(False)
    out32, grad32, names32, dtypes32 = _float16_block(True)
    assert names32 == names16  # checkpoints do not change
    assert dtypes16 == {k: {tf.float16} for k in dtypes16}
    assert dtypes32['Conv2D'] == {tf.float16}  # the convolution keeps the compute dtype
    for kind in ('FusedBatchNormV3', 'FusedBatchNormGradV3', 'MaxPool', 'MaxPoolGrad'):
        assert dtypes32[kind] == {tf.float32}, kind
    # The same function: float16 keeps 11 bits, 2**-11 relative per rounding; the outputs
    # (normalised: |y| up to about 3) and input gradients agree to a few roundings.
    np.testing.assert_allclose(out32, out16, atol=8 * 2.0 ** -11 * np.abs(out16).max())
    np.testing.assert_allclose(grad32, grad16, atol=8 * 2.0 ** -11 * np.abs(grad16).max())
    assert np.abs(grad16).max() > 0.1


def test_float32_norm_and_pool_leaves_float32_builders_alone():
    on = fast_paths.BuildOptions(float32_norm_and_pool=True)
    with tf.Graph().as_default():
        assert not convnet_builder.ConvNetBuilder(tf.zeros([1, 4, 4, 3]), 3, phase_train=True,
                                                  options=on).float32_norm_and_pool
        assert convnet_builder.ConvNetBuilder(tf.zeros([1, 4, 4, 3], tf.float16), 3,
                                              phase_train=True, dtype=tf.float16,
                                              options=on).float32_norm_and_pool


def test_folded_kernels_once_per_session_are_computed_by_the_first_step_only():
    rng = np.random.RandomState(4)
    graph = tf.Graph()
    with graph.as_default():
        images = tf.constant(rng.uniform(-1, 1, (2, 6, 6, 3)), tf.bfloat16)
        cnn = convnet_builder.ConvNetBuilder(images, 3, phase_train=False, dtype=tf.bfloat16,
                                             options=fast_paths.BuildOptions(True, True))
        per_step = convnet_builder.ConvNetBuilder(images, 3, phase_train=False,
                                                  dtype=tf.bfloat16,
                                                  options=fast_paths.BuildOptions(True, False))
        cnn.use_batch_norm = per_step.use_batch_norm = True
        cnn.batch_norm_config = dict(SCALED)
        per_step.batch_norm_config = dict(SCALED)
        with tf1.variable_scope('cg'):
            cached = tf.cast(cnn.conv(5, 3, 3), tf.float32)
        with tf1.variable_scope('cg', reuse=True):
            computed = tf.cast(per_step.conv(5, 3, 3), tf.float32)
        # The cache is two local variables per kernel: checkpoints hold what they held.
        assert sorted(v.op.name for v in tf1.global_variables()) == [
            'cg/conv0/batchnorm0/beta', 'cg/conv0/batchnorm0/gamma',
            'cg/conv0/batchnorm0/moving_mean', 'cg/conv0/batchnorm0/moving_variance',
            'cg/conv0/weights']
        assert len(tf1.local_variables()) == 2
        gamma = [v for v in tf1.global_variables() if v.op.name.endswith('gamma')][0]
        set_gamma = gamma.assign(tf.constant(rng.uniform(0.5, 2, 5), tf.float32))
        init = [tf1.global_variables_initializer(), tf1.local_variables_initializer()]
    with tf1.Session(graph=graph) as sess:
        sess.run(init)
        first, reference = sess.run([cached, computed])
        np.testing.assert_array_equal(first, reference)
        assert (first > 0).mean() > 0.2
        sess.run(set_gamma)  # within a session the stored kernel is kept
        second, changed = sess.run([cached, computed])
        np.testing.assert_array_equal(second, first)
        assert np.abs(changed - first).max() > 0.05
        sess.run(init[1])  # a new session's initialisation: the next step folds again
        third, changed = sess.run([cached, computed])
        np.testing.assert_array_equal(third, changed)

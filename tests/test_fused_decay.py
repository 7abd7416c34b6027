"""--fused_weight_decay: weight decay added inside each decayed variable's update gives the
original's losses (decay through the loss) under every variable manager and optimizer, and the graph
really has the decay in the update clusters instead of the loss's gradient."""

import functools

import pytest

from tf_cnn_benchmarks.graph import fused_decay

import helpers

# A decay large enough to move the losses: 0.5 * |w|^2 of the trivial model's kernels is ~1000.
# ImageNet's 1001 classes (not helpers.TINY_CLASSES): only a kernel of FUSE_MIN_ELEMENTS, the
# 4096 x 1001 classifier, gets the XLA-fused update.
DECAY = dict(weight_decay=0.5, init_learning_rate=0.002, num_batches=4, tf_random_seed=3,
             num_classes=None)


_losses = functools.partial(helpers.tiny_losses, **DECAY)


@pytest.mark.parametrize('variable_update,optimizer', [
    ('parameter_server', 'sgd'), ('replicated', 'sgd'), ('independent', 'sgd'),
    ('parameter_server', 'momentum'), ('replicated', 'rmsprop'), ('independent', 'momentum')])
def test_fused_and_through_the_loss_give_the_same_losses(variable_update, optimizer):
    flags = dict(variable_update=variable_update, optimizer=optimizer, num_gpus=2)
    fused = _losses(fused_weight_decay=True, **flags)
    plain = _losses(fused_weight_decay=False, **flags)
    assert fused == pytest.approx(plain, rel=2e-6)
    # The decay matters at this size: without it the losses differ.
    assert _losses(fused_weight_decay=True, **{**flags, 'weight_decay': 0.0}) != pytest.approx(
        plain, rel=1e-3)


def test_fused_with_a_compiled_tower_gives_the_same_losses():
    fused = _losses(fused_weight_decay=True, xla_compile=True)
    assert fused == pytest.approx(_losses(fused_weight_decay=False), rel=1e-5)


def _graph_facts(**kwargs):
    info = helpers.tiny_bench(**{**DECAY, **kwargs}).build_graph()
    ops = info.graph.get_operations()
    l2_grads = [op for op in ops if 'L2Loss' in op.name and '_grad' in op.name]
    fused_ops = {op.type for op in ops
                 if '_XlaCompile' in op.node_def.attr and op.get_attr('_XlaCompile')}
    return len(l2_grads), fused_ops


def test_the_decay_moves_from_the_gradients_into_the_update_clusters():
    l2_grads, fused_ops = _graph_facts(fused_weight_decay=True)
    assert l2_grads == 0
    assert {'ReadVariableOp', 'Mul', 'AddV2', 'ResourceApplyGradientDescent'} <= fused_ops
    l2_grads, fused_ops = _graph_facts(fused_weight_decay=False)
    assert l2_grads > 0 and not fused_ops


@pytest.mark.parametrize('flags', [
    dict(gradient_clip=1.0), dict(staged_vars=True), dict(fp16_vars=True, use_fp16=True),
    dict(weight_decay=0.0), dict(fused_weight_decay=False), dict(forward_only=True),
    dict(optimizer='adam')])
def test_where_the_fold_is_not_the_original_update_it_stays_off(flags):
    cpu = ('/cpu:0', '/cpu:1')
    assert fused_decay.applies(helpers.tiny_params(**DECAY), cpu)
    assert not fused_decay.applies(helpers.tiny_params(**{**DECAY, **flags}), cpu)
    assert not fused_decay.applies(helpers.tiny_params(**DECAY), ('/gpu:0',))


def test_the_kernels_are_what_the_tower_decays():
    """What the updates decay (is_decayed) is every trainable model variable outside batch
    norm, kernels and biases, as the original's filter_l2_loss_vars."""
    info = helpers.tiny_bench(**DECAY, num_gpus=2, variable_update='replicated').build_graph()
    for tower in range(2):
        with info.graph.as_default():
            names = [v.op.name for v in info.mgr.trainable_variables(tower)
                     if fused_decay.is_decayed(v)]
        # The trivial model's three kernels and three biases, each tower its own copies.
        assert sorted(n.split('/', 1)[1] for n in names) == [
            'cg/affine0/biases', 'cg/affine0/weights', 'cg/affine1/biases',
            'cg/affine1/weights', 'cg/affine2/biases', 'cg/affine2/weights']


def _decay_term_and_values(**flags):
    """The decay term of the first tower's loss (GraphInfo.loss_parts[1]) after every trainable
    variable was set to random values (biases and batch norm's beta start at 0, which would
    hide them; these few get values 10x the kernels' so that their share of the term is
    percents, not a rounding), and those values by name without the tower prefix."""
    import numpy as np
    import tensorflow as tf

    bench = helpers.tiny_bench(**flags)
    info = bench.build_graph()
    rng = np.random.default_rng(5)
    with info.graph.as_default(), bench.create_session(info) as sess:
        bench.initialize(sess, info)
        values = {}
        for var in info.mgr.trainable_variables(0):
            bound = 1.0 if var.op.name.endswith('/weights') else 10.0
            value = rng.uniform(-bound, bound, var.shape.as_list()).astype(np.float32)
            var.load(value, sess)
            values[var.op.name.split('/', 1)[1]] = value.astype(np.float64)
        term = float(sess.run(info.loss_parts)[1])
    assert all(isinstance(v, tf.Variable) for v in info.mgr.trainable_variables(0))
    return term, values


def _l2(values, names):
    return sum(0.5 * float((values[n] ** 2).sum()) for n in names)


def test_the_decay_term_covers_kernels_and_biases():
    term, values = _decay_term_and_values(**{**DECAY, 'model': 'lenet', 'image_size': 28})
    kernels = [n for n in values if n.endswith('/weights')]
    biases = [n for n in values if n.endswith('/biases')]
    assert len(kernels) == len(biases) == 4 and len(values) == 8  # lenet: 2 conv + 2 affine
    assert term == pytest.approx(DECAY['weight_decay'] * _l2(values, values), rel=1e-5)
    # Kernels alone (the rule before) would be measurably less.
    assert DECAY['weight_decay'] * _l2(values, biases) > 0.01 * term


def test_the_decay_term_leaves_out_batch_norm():
    term, values = _decay_term_and_values(
        model='resnet20', data_name='cifar10', image_size=8, num_classes=10, batch_size=2,
        weight_decay=0.5, init_learning_rate=0.002)
    norm = [n for n in values if 'batchnorm' in n]
    rest = [n for n in values if 'batchnorm' not in n]
    assert norm and all(n.rsplit('/', 1)[1] in ('beta', 'gamma') for n in norm)
    assert any(n.endswith('/biases') for n in rest)  # the classifier's
    assert term == pytest.approx(0.5 * _l2(values, rest), rel=1e-5)
    assert 0.5 * _l2(values, norm) > 0.01 * term  # batch norm's, if counted, would show


def test_the_header_says_where_the_decay_goes():
    assert 'Optimizer:   sgd, weight decay 0.5 inside the updates (fused)' in helpers.tiny_bench(
        **DECAY).info_lines()
    assert 'Optimizer:   sgd, weight decay 0.5 in the loss' in helpers.tiny_bench(
        **DECAY, fused_weight_decay=False).info_lines()

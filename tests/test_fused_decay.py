"""--fused_weight_decay: weight decay added inside each kernel's update gives the original's
losses (decay through the loss) under every variable manager and optimizer, and the graph
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
    info = helpers.tiny_bench(**DECAY, num_gpus=2, variable_update='replicated').build_graph()
    for tower in range(2):
        with info.graph.as_default():
            names = [v.op.name for v in info.mgr.trainable_variables(tower)
                     if fused_decay.is_decayed(v)]
        # The trivial model's three kernels, each tower its own copies.
        assert [n.split('/', 1)[1] for n in names] == [
            'cg/affine0/weights', 'cg/affine1/weights', 'cg/affine2/weights']


def test_the_header_says_where_the_decay_goes():
    assert 'Optimizer:   sgd, weight decay 0.5 inside the updates (fused)' in helpers.tiny_bench(
        **DECAY).info_lines()
    assert 'Optimizer:   sgd, weight decay 0.5 in the loss' in helpers.tiny_bench(
        **DECAY, fused_weight_decay=False).info_lines()

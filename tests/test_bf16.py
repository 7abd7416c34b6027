"""Reduced precision keeps the numbers right: bfloat16 and float16 losses follow float32's over a
few dozen steps, checkpoints move between precisions (train in one, evaluate or continue in
another), and the CPU's graph choices (folded batch norm, float32 batch norm and pooling for
emulated float16) compute the same function."""

import functools

import numpy as np
import pytest
import tensorflow as tf

from tf_cnn_benchmarks.graph import precision

import helpers

# resnet20 (convolutions, batch norm, residual adds, ReLUs: every op kind of the big models) on
# one fixed synthetic CIFAR-10 batch of 8; 30 steps lower the loss by about 0.33 (2.43 -> 2.11).
FOLLOW = dict(model='resnet20', data_name='cifar10', image_size=32, batch_size=8,
              num_batches=30, init_learning_rate=0.01, tf_random_seed=7)
# bfloat16 keeps 8 significant bits: one rounding is off by at most 2**-9 relative, one unit in
# the last place is 2**-8 = 0.39%. The loss (float32, from bfloat16 logits) of a step differs
# from float32's by the roundings of its forward pass plus the drift of 30 updates computed from
# rounded gradients; measured here: at most 0.13%. The tolerance is one bfloat16 ulp of the
# loss, 3x the measured worst, and under 1/30 of what the 30 steps lower the loss: a bfloat16 graph
# that trained differently (or not at all) falls outside it.
LOSS_RTOL = 2.0 ** -8


@functools.lru_cache(maxsize=None)
def _losses(**flags):
    return helpers.tiny_losses(**FOLLOW, **flags)


def test_bf16_losses_follow_float32_within_bf16_rounding():
    fp32, bf16 = _losses(), _losses(use_bf16=True)
    assert len(fp32) == len(bf16) == 30
    assert fp32[0] - fp32[-1] > 30 * LOSS_RTOL * fp32[0]  # it learns, well outside the band
    np.testing.assert_allclose(bf16, fp32, rtol=LOSS_RTOL)
    assert np.any(bf16 != fp32)  # the bfloat16 graph is not float32's


# float16 keeps 11 significant bits (one ulp 2**-11 = 0.049%); with its static loss scale of
# 128 and, on a CPU without float16 arithmetic, gradients, batch norm and pooling in float32,
# its losses differed from float32's by at most 0.010% here: the tolerance is one float16 ulp,
# 5x that, and 1/140 of what the 30 steps lower the loss.
FP16_LOSS_RTOL = 2.0 ** -11


def test_fp16_losses_follow_float32_within_fp16_rounding():
    fp32, fp16 = _losses(), _losses(use_fp16=True)
    assert len(fp16) == 30
    np.testing.assert_allclose(fp16, fp32, rtol=FP16_LOSS_RTOL)
    assert np.any(fp16 != fp32)


RESNET20 = dict(model='resnet20', data_name='cifar10', image_size=32)
# The trivial model with 100 classes: its last layer (4096 x classes) in float16 or emulated
# bfloat16 is most of a step's time on a CPU at ImageNet's 1001.
TRIVIAL = dict(num_classes=100)


@pytest.mark.parametrize('train_flags, eval_flags, model', [
    (dict(), dict(use_bf16=True), RESNET20),
    (dict(use_bf16=True), dict(use_fp16=True), TRIVIAL),
    (dict(use_fp16=True), dict(use_bf16=True), TRIVIAL),
], ids=['fp32->bf16', 'bf16->fp16', 'fp16->bf16'])
def test_checkpoints_evaluate_and_continue_across_precisions(tmp_path, train_flags, eval_flags,
                                                             model):
    # resnet20 has batch norm, which bfloat16 inference folds into the convolutions (the same
    # variables: a float32 checkpoint restores into the folded graph); trivial elsewhere.
    run = functools.partial(helpers.tiny_run, train_dir=str(tmp_path), batch_size=2, **model)
    trained = run(num_batches=2, **train_flags)
    saved = helpers.read_checkpoint_values(trained['checkpoint_path'])
    assert {v.dtype for k, v in saved.items() if k.startswith('cg/')} == {np.dtype('float32')}
    evaluated = run(eval=True, num_eval_batches=1, **eval_flags)
    assert evaluated['eval']['global_step'] == 2
    assert 0.0 <= evaluated['eval']['top_1'] <= 1.0
    continued = run(num_batches=2, **eval_flags)  # resumes from step 2 in the other precision
    assert continued['global_step'] == 4


@pytest.mark.parametrize('flags, folded', [
    (dict(use_bf16=True, forward_only=True), True),
    (dict(use_fp16=True, forward_only=True), True),
    (dict(forward_only=True), False),  # float32: Grappler fuses conv + batch norm already
    (dict(use_bf16=True), False),  # training normalises with the batch's statistics
])
def test_reduced_precision_inference_folds_batch_norm_on_the_cpu(flags, folded):
    graph = helpers.tiny_bench(model='resnet20', data_name='cifar10', image_size=32,
                               batch_size=2, **flags).build_graph().graph
    types = {op.type for op in graph.get_operations()}
    assert ('FusedBatchNormV3' not in types) == folded


@pytest.mark.skipif(precision.has_cpu_units(tf.float16),
                    reason='this CPU has float16 arithmetic: float16 batch norm stays float16')
@pytest.mark.parametrize('flags, norm_dtype', [
    (dict(use_fp16=True), 'float32'),  # no float16 arithmetic: batch norm and pools in float32
    (dict(use_bf16=True), 'bfloat16'),  # oneDNN's bfloat16 batch norm is kept
    (dict(), 'float32'),
])
def test_training_batch_norm_dtype_on_the_cpu(flags, norm_dtype):
    graph = helpers.tiny_bench(model='resnet20', data_name='cifar10', image_size=32,
                               batch_size=2, **flags).build_graph().graph
    norms = {op.get_attr('T').name for op in graph.get_operations()
             if op.type in ('FusedBatchNormV3', 'FusedBatchNormGradV3')}
    assert norms == {norm_dtype}
    convs = {op.get_attr('T').name for op in graph.get_operations() if op.type == 'Conv2D'}
    assert convs == {dict(use_fp16='float16', use_bf16='bfloat16').get(next(iter(flags), ''),
                                                                      'float32')}


def _forward_only_losses(**flags):
    """The loss of the forward-only bfloat16 resnet20 graph, three runs of one session."""
    bench = helpers.tiny_bench(model='resnet20', data_name='cifar10', image_size=32,
                               batch_size=4, forward_only=True, use_bf16=True, tf_random_seed=5,
                               **flags)
    info = bench.build_graph()
    with info.graph.as_default(), bench.create_session(info) as sess:
        bench.initialize(sess, info)
        return np.array([sess.run(info.loss) for _ in range(3)]), info.graph


def test_forward_only_folds_kernels_once_per_session_with_the_same_losses():
    # --freeze_when_forward_only builds the per-step fold (its kernels become constants when
    # frozen); the default stores each folded kernel at a session's first step: the same
    # numbers, computed once. Synthetic data repeats one batch: every run has the same loss.
    cached, graph = _forward_only_losses()
    per_step, per_step_graph = _forward_only_losses(freeze_when_forward_only=True)
    np.testing.assert_array_equal(cached, cached[0])
    np.testing.assert_array_equal(cached, per_step)
    assert np.isfinite(cached).all() and cached[0] > 1.0  # ln(10) for random weights, not 0
    locals_of = lambda g: len(g.get_collection('local_variables'))  # noqa: E731
    # resnet20: 19 convolutions with batch norm (the first, 3 stages x 3 units x 2)
    assert locals_of(graph) - locals_of(per_step_graph) == 2 * 19

"""Checkpoints of the original tf_cnn_benchmarks: restored by their names there, or refused with
an error that says whose they are (lifecycle/original_checkpoints.py).

The original is not run here. The names below were observed in checkpoints the real original
wrote (tensorflow/benchmarks' tf_cnn_benchmarks on TensorFlow 2.21, 2026-12-06, e.g.
`tf_cnn_benchmarks.py --device=cpu --data_format=NHWC --model=lenet --batch_size=2
--num_batches=2 --train_dir=...`), read with tf.compat.v1.train.NewCheckpointReader (every
variable of its inception3 checkpoint: tests/data/original_inception3_checkpoint.txt); the tests
write checkpoints under those names with a tf.compat.v1 Saver.
"""

import functools
import os
import re
import types

import numpy as np
import pytest
import tensorflow as tf

from tf_cnn_benchmarks import benchmark_cnn, run_header
from tf_cnn_benchmarks.lifecycle import checkpoints, original_checkpoints, run_hooks
from tf_cnn_benchmarks.models import model_config

import helpers

tf1 = tf.compat.v1

# --model=lenet, --variable_update=parameter_server (the default), --optimizer=sgd: every name.
ORIGINAL_LENET = [
    'global_step', 'v/cg/affine0/biases', 'v/cg/affine0/weights', 'v/cg/affine1/biases',
    'v/cg/affine1/weights', 'v/cg/conv0/biases', 'v/cg/conv0/conv2d/kernel', 'v/cg/conv1/biases',
    'v/cg/conv1/conv2d/kernel']
# --model=resnet50 --optimizer=momentum: a block's scope, batch norm, slots (a few of 429).
ORIGINAL_RESNET50 = [
    'v/cg/conv0/conv2d/kernel', 'v/cg/conv0/conv2d/kernel/Momentum', 'v/cg/conv0/batchnorm0/gamma',
    'v/cg/conv0/batchnorm0/moving_variance', 'v/cg/resnet_v10/conv1/conv2d/kernel',
    'v/cg/resnet_v10/conv1/batchnorm1/beta/Momentum', 'v/cg/resnet_v11/conv5/conv2d/kernel',
    'v/cg/affine0/weights/Momentum']
# --model=inception3: batch norm without gamma (as here); this project's block scopes are other
# ones.
ORIGINAL_INCEPTION3 = [
    'v/cg/conv0/batchnorm0/beta', 'v/cg/conv0/batchnorm0/moving_mean',
    'v/cg/incept_v3_a0/conv10/batchnorm10/beta', 'v/cg/incept_v3_a0/conv10/conv2d/kernel']
# --optimizer=adam; --use_fp16 --fp16_enable_auto_loss_scale --variable_update=replicated.
ORIGINAL_ADAM = ['append_apply_gradient_ops/beta1_power', 'append_apply_gradient_ops/beta2_power',
                 'v/cg/conv0/conv2d/kernel/Adam', 'v/cg/conv0/conv2d/kernel/Adam_1']
ORIGINAL_REPLICATED_FP16 = ['loss_scale', 'loss_scale_normal_steps', 'v0/cg/conv0/conv2d/kernel']


def test_the_original_names_read_as_this_projects():
    keys = [original_checkpoints.original_key(n) for n in
            ORIGINAL_LENET + ORIGINAL_RESNET50 + ORIGINAL_ADAM + ORIGINAL_REPLICATED_FP16]
    assert keys == [
        'global_step', 'cg/affine0/biases', 'cg/affine0/weights', 'cg/affine1/biases',
        'cg/affine1/weights', 'cg/conv0/biases', 'cg/conv0/weights', 'cg/conv1/biases',
        'cg/conv1/weights',
        'cg/conv0/weights', 'cg/conv0/weights/Momentum', 'cg/conv0/batchnorm0/gamma',
        'cg/conv0/batchnorm0/moving_variance', 'cg/conv1/weights',
        'cg/conv1/batchnorm1/beta/Momentum', 'cg/conv5/weights', 'cg/affine0/weights/Momentum',
        'beta1_power', 'beta2_power', 'cg/conv0/weights/Adam', 'cg/conv0/weights/Adam_1',
        'loss_scale/scale', 'loss_scale/good_steps', 'cg/conv0/weights']
    assert original_checkpoints.original_key('v1/cg/conv0/conv2d/kernel') is None  # tower 1
    assert original_checkpoints.is_original(ORIGINAL_LENET)
    assert not original_checkpoints.is_original(['global_step', 'cg/conv0/weights',
                                                 'cg/conv0/weights/Momentum', 'images_seen'])


def test_layers_are_found_by_their_number_whatever_block_holds_them():
    ours = ['cg/mixed_35x35_0/conv10/weights', 'cg/mixed_35x35_0/conv10/batchnorm10/beta',
            'cg/conv0/batchnorm0/beta', 'cg/conv0/batchnorm0/moving_mean', 'cg/conv0/weights']
    shapes = {n: [1] for n in ORIGINAL_INCEPTION3}
    dtypes = {n: tf.float32 for n in ORIGINAL_INCEPTION3}
    found = original_checkpoints.translate(shapes, dtypes, ours)
    assert found.names == {
        'cg/mixed_35x35_0/conv10/weights': 'v/cg/incept_v3_a0/conv10/conv2d/kernel',
        'cg/mixed_35x35_0/conv10/batchnorm10/beta': 'v/cg/incept_v3_a0/conv10/batchnorm10/beta',
        'cg/conv0/batchnorm0/beta': 'v/cg/conv0/batchnorm0/beta',
        'cg/conv0/batchnorm0/moving_mean': 'v/cg/conv0/batchnorm0/moving_mean'}
    assert 'cg/conv0/weights' not in found.names  # no conv0 kernel in this excerpt


def _original_inception3():
    """{name: (shape, dtype name)} of every variable of the original's inception3 checkpoint."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data',
                        'original_inception3_checkpoint.txt')
    with open(path) as f:
        rows = [line.split() for line in f if not line.startswith('#')]
    return {name: ([int(d) for d in re.findall(r'\d+', shape)], dtype)
            for name, shape, dtype in rows}


def test_the_originals_inception3_checkpoint_holds_exactly_this_projects_variables():
    """Every one of the 569 variables of the original's inception3 checkpoint (momentum) is one
    of this project's inception3 variables, with its shape, and every variable here is one of
    them: batch norms without gamma on both sides (tests/test_batch_norm_settings.py)."""
    stored = _original_inception3()
    assert len(stored) == 569
    model = model_config.get_model('inception3', 'imagenet')
    with tf.Graph().as_default():
        model.build_network(tf.zeros([1, 75, 75, 3]), phase_train=False, num_classes=1001)
        ours = {v.op.name: v.shape.as_list() for v in tf1.global_variables()}
        ours.update({v.op.name + '/Momentum': v.shape.as_list()
                     for v in tf1.trainable_variables()})
    ours['global_step'] = []
    found = original_checkpoints.translate(
        {n: shape for n, (shape, _) in stored.items()},
        {n: tf.as_dtype(dtype) for n, (_, dtype) in stored.items()}, ours)
    assert sorted(found.names) == sorted(ours)
    assert sorted(found.names.values()) == sorted(stored)
    assert found.shapes == ours
    assert not [n for n in ours if n.endswith('/gamma')]


def test_nchw_rows_reordered_compute_the_same_dense_layer():
    rng = np.random.default_rng(0)
    c, h, w, out = 3, 4, 5, 2
    x_nchw = rng.normal(size=(2, c, h, w))
    kernel_nchw = rng.normal(size=(c * h * w, out))   # the original's rows, flattened NCHW
    kernel = original_checkpoints.nchw_rows_to_nhwc(kernel_nchw, (h, w, c))
    x_nhwc = x_nchw.transpose(0, 2, 3, 1)
    np.testing.assert_allclose(x_nhwc.reshape(2, -1) @ kernel, x_nchw.reshape(2, -1) @ kernel_nchw)
    assert not np.allclose(x_nhwc.reshape(2, -1) @ kernel_nchw,
                           x_nchw.reshape(2, -1) @ kernel_nchw)


def test_the_layout_is_read_from_the_original_graph_beside_the_checkpoint(tmp_path):
    prefix = str(tmp_path / 'model.ckpt-3')
    assert original_checkpoints.written_layout(prefix) is None
    graph = tf.Graph()
    with graph.as_default():
        x = tf1.placeholder(tf.float32, [1, 3, 8, 8])
        tf.nn.max_pool2d(x, 2, 2, 'VALID', data_format='NCHW')
    tf.io.write_graph(graph.as_graph_def(), str(tmp_path), 'graph.pbtxt')
    assert original_checkpoints.written_layout(prefix) == 'NCHW'
    with graph.as_default():
        tf1.train.export_meta_graph(prefix + '.meta')  # the .meta is read first
    assert original_checkpoints.written_layout(prefix) == 'NCHW'


# --- Restores through a run: tiny trivial model, momentum, a checkpoint rewritten under the
# original's names must continue exactly as this project's own checkpoint does.

H, W, C = 16, 16, 3  # helpers.TINY's image: the trivial model flattens it into affine0's rows
# ImageNet's 1001 classes (not helpers.TINY_CLASSES): the command's --eval of these checkpoints
# builds the trivial model of the synthetic default.
_run = functools.partial(helpers.tiny_run, num_classes=None)


def _original_name(name):
    """This project's name of a trivial-model variable as the original names it (the trivial
    model has no convolution: only the tower scope differs)."""
    return name if name == 'global_step' else 'v/' + name


class _ValuesAtBegin(run_hooks.RunHook):
    """Records the value of every variable a checkpoint holds (by its name here), once
    restored."""

    def __init__(self):
        self.values = {}

    def begin(self, ctx):
        required, optional = checkpoints.savable_state(ctx.info.mgr)
        self.values = ctx.sess.run({**required, **optional})


def _resume(train_dir, **kwargs):
    """(result, values restored) of 2 more steps in train_dir (momentum)."""
    recorder = _ValuesAtBegin()
    result = benchmark_cnn.BenchmarkCNN(helpers.tiny_params(
        train_dir=str(train_dir), num_batches=2, optimizer='momentum', num_classes=None,
        **kwargs), gpus=0,
        hooks=[recorder]).run()
    return result, recorder.values


def _assert_same_values(restored, values):
    assert sorted(restored) == sorted(values)
    for name, value in values.items():
        np.testing.assert_array_equal(restored[name], value, err_msg=name)


def _write_original(prefix, values, nchw=None):
    """Writes `values` ({name here: value}) as the original would: its names, no images_seen;
    with nchw True or False, a graph of the original's layout beside it (its tower's transpose
    of the images to NCHW, as the original's trivial model has no other layout op)."""
    graph = tf.Graph()
    with graph.as_default():
        variables = [tf1.Variable(value, name=_original_name(name))
                     for name, value in values.items() if name != 'images_seen']
        images = tf1.placeholder(tf.float32, [1, H, W, C], name='tower_0/v/images')
        if nchw:
            tf.transpose(images, [0, 3, 1, 2], name='tower_0/v/transpose')
        saver = tf1.train.Saver(variables)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            saver.save(sess, prefix, write_meta_graph=nchw is not None)
    with open(os.path.join(os.path.dirname(prefix), 'checkpoint'), 'w') as f:
        f.write('model_checkpoint_path: "%s"\n' % os.path.basename(prefix))


@pytest.fixture(scope='module')
def own_checkpoint(tmp_path_factory):
    """A checkpoint of this project (after 2 steps) and the losses of 2 more steps from it."""
    train_dir = str(tmp_path_factory.mktemp('own'))
    first = _run(train_dir=train_dir, num_batches=2, optimizer='momentum')
    values = helpers.read_checkpoint_values(first['checkpoint_path'])
    assert 'cg/affine0/weights/Momentum' in values
    resumed = _run(train_dir=train_dir, num_batches=2, optimizer='momentum')
    fresh = _run(num_batches=2, optimizer='momentum')
    assert abs(resumed['losses'][0] - fresh['losses'][0]) > 1e-3  # the restore matters
    return values, resumed['losses']


def test_an_original_checkpoint_resumes_as_this_projects_own(tmp_path, own_checkpoint, capsys):
    values, losses = own_checkpoint
    _write_original(str(tmp_path / 'model.ckpt-2'), values)
    result, restored = _resume(tmp_path)
    _assert_same_values(restored, values)  # images_seen: global step 2 x 4 images, as here
    assert result['restored_step'] == 2
    np.testing.assert_allclose(result['losses'], losses, rtol=1e-6)
    out = capsys.readouterr().out
    # 3 layers' weights and biases, their momentum slots and the global step.
    assert ('Checkpoint %s was written by the original tf_cnn_benchmarks.py: 13 variables restored '
            'by their names there (e.g. v/cg/affine0/biases as cg/affine0/biases)'
            % (tmp_path / 'model.ckpt-2')) in out
    assert 'does not count the images it saw (written by the original tf_cnn_benchmarks.py)' in out


def test_its_eval_scores_as_this_projects_own(tmp_path, own_checkpoint):
    values, _ = own_checkpoint
    _write_original(str(tmp_path / 'model.ckpt-2'), values)
    evaluated = _run(train_dir=str(tmp_path), eval=True, num_batches=2)['eval']
    own = tmp_path / 'own'
    own.mkdir()
    saver_graph = tf.Graph()
    with saver_graph.as_default():
        variables = [tf1.Variable(v, name=n) for n, v in values.items()]
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            tf1.train.Saver(variables).save(sess, str(own / 'model.ckpt'), global_step=2,
                                            write_meta_graph=False)
    expected = _run(train_dir=str(own), eval=True, num_batches=2)['eval']
    assert evaluated['global_step'] == 2 == expected['global_step']
    assert (evaluated['top_1'], evaluated['top_5']) == (expected['top_1'], expected['top_5'])


def test_nchw_rows_are_reordered_from_the_original_graph(tmp_path, own_checkpoint, capsys):
    values, losses = own_checkpoint
    nchw = dict(values)
    # Rows (h, w, c) -> (c, h, w), as the original's NCHW flatten has them.
    for name in ('cg/affine0/weights', 'cg/affine0/weights/Momentum'):
        nchw[name] = values[name].reshape(H, W, C, -1).transpose(2, 0, 1, 3).reshape(H * W * C, -1)
    assert not np.array_equal(nchw['cg/affine0/weights'], values['cg/affine0/weights'])
    _write_original(str(tmp_path / 'model.ckpt-2'), nchw, nchw=True)
    result, restored = _resume(tmp_path)
    _assert_same_values(restored, values)
    np.testing.assert_allclose(result['losses'], losses, rtol=1e-6)
    assert ('was written in NCHW: the rows of cg/affine0/weights (and its optimizer slots) '
            'reordered' in capsys.readouterr().out)
    # The same rows written by an NHWC original are taken as they are.
    other = tmp_path / 'nhwc'
    other.mkdir()
    _write_original(str(other / 'model.ckpt-2'), nchw, nchw=False)
    _, restored = _resume(other)
    np.testing.assert_array_equal(restored['cg/affine0/weights'], nchw['cg/affine0/weights'])


def test_without_its_graph_the_rows_are_taken_as_nhwc_with_a_warning(tmp_path, own_checkpoint,
                                                                    capsys):
    values, _ = own_checkpoint
    _write_original(str(tmp_path / 'model.ckpt-2'), values)  # no .meta, no graph.pbtxt
    _, restored = _resume(tmp_path)
    _assert_same_values(restored, values)
    err = capsys.readouterr().err
    assert ('warning: checkpoint %s was written by the original tf_cnn_benchmarks.py, and its '
            'graph (model.ckpt-2.meta or graph.pbtxt) is not beside it: the rows of '
            'cg/affine0/weights are taken in NHWC order' % (tmp_path / 'model.ckpt-2')) in err


def test_the_header_says_whose_checkpoint_resumes():
    plan = types.SimpleNamespace(examples_per_epoch=1000, images_per_global_step=4)
    point = checkpoints.ResumePoint('d/model.ckpt-3', 3, None, original=True)
    assert run_header.resume_lines(plan, point) == [
        'Resume:      global step 3 of model.ckpt-3, which does not count its images (the '
        'original tf_cnn_benchmarks.py): epochs count as 3 steps x 4 images']


# --- What does not map: one error line that says whose checkpoint it is.

def test_an_original_checkpoint_of_another_model_names_its_writer(tmp_path, own_checkpoint):
    values, _ = own_checkpoint
    _write_original(str(tmp_path / 'model.ckpt-2'), values)
    out = helpers.run_command('--model=lenet', '--device=cpu', '--batch_size=2',
                              '--num_batches=1', '--train_dir=%s' % tmp_path, '--eval')
    assert out.returncode == 1
    errors = [line for line in out.stderr.splitlines() if line.startswith('error:')]
    assert errors == [
        'error: checkpoint %s was written by the original tf_cnn_benchmarks.py (names such as '
        'v/cg/conv0/conv2d/kernel), and 4 of --model=lenet\'s 9 variables have no counterpart '
        'in it (e.g. cg/conv0/biases): the original\'s checkpoints load for the --model they '
        'were written with among %s (CIFAR-10 ones with --num_classes=11): give that --model, '
        'or train afresh with another --train_dir'
        % (tmp_path / 'model.ckpt-2', original_checkpoints.MAPPED_MODELS)]
    assert 'Traceback' not in out.stderr


def test_resnet_v2_and_cifar_classes_say_what_differs():
    text = original_checkpoints.unmapped_message('d/model.ckpt-3', 'resnet20_v2',
                                                 ['cg/batchnorm0/beta'], 98)
    assert text.endswith('(e.g. cg/batchnorm0/beta): the original\'s ResNet v2 layers differ '
                         'from this project\'s (it normalises the first convolution\'s output '
                         'and numbers its batch norms otherwise), so its ResNet v2 checkpoints '
                         'do not load here: train afresh with another --train_dir')
    assert 'give --num_classes=11' in original_checkpoints.shape_hint()
    assert 'no ReLU after its first convolution' in original_checkpoints.difference('resnet20')
    assert original_checkpoints.difference('resnet50') is None


def test_a_checkpoint_of_a_run_that_diverged_is_refused(tmp_path, own_checkpoint):
    """The original saved the weights of a run whose loss became NaN (its lenet at its default
    rate on synthetic data did: every value NaN after 5 steps)."""
    values, _ = own_checkpoint
    diverged = dict(values)
    diverged['cg/affine1/weights'] = values['cg/affine1/weights'].copy()
    diverged['cg/affine1/weights'][0, :3] = [np.nan, np.inf, np.nan]
    _write_original(str(tmp_path / 'model.ckpt-2'), diverged)
    out = helpers.run_command('--model=trivial', '--device=cpu', '--batch_size=4',
                              '--image_size=16', '--num_batches=1',
                              '--train_dir=%s' % tmp_path, '--eval')
    assert out.returncode == 1
    assert [line for line in out.stderr.splitlines() if line.startswith('error:')] == [
        'error: checkpoint %s holds NaN or infinite values (3 of the 4096 values of '
        'cg/affine1/weights): the run that wrote it diverged, so its weights cannot be '
        'evaluated or trained on: give an earlier one, --checkpoint_path=%s/model.ckpt-N (with '
        'another --train_dir to train from it), or train afresh with another --train_dir'
        % (tmp_path / 'model.ckpt-2', tmp_path)]

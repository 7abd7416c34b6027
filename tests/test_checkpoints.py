"""Checkpoints in process: resume, cadence, names across modes, restore errors, forward-only."""


import os

import numpy as np
import pytest
import tensorflow as tf

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.graph import frozen
from tf_cnn_benchmarks.lifecycle import checkpoint_fit, checkpoints, run_hooks

import helpers

tf1 = tf.compat.v1

# Momentum (slots must be restored) and a schedule that changes at global step 3 (the step
# counter must continue): int(1e-5 epochs x 1,281,167 images / 4 per step) = 3.
SCHEDULE = dict(optimizer='momentum', piecewise_learning_rate_schedule='0.0005;1e-5;0.0002')


_params = helpers.tiny_params
_run = helpers.tiny_run


def test_resume_continues_step_schedule_and_weights(tmp_path):
    whole = _run(num_batches=6, **SCHEDULE)['losses']
    train_dir = str(tmp_path / 'run')
    first = _run(train_dir=train_dir, **SCHEDULE)
    assert first['restored_step'] is None and first['global_step'] == 3
    assert first['checkpoint_path'].endswith('model.ckpt-3')
    second = _run(train_dir=train_dir, **SCHEDULE)
    assert second['restored_step'] == 3 and second['global_step'] == 6
    # The same losses as one uninterrupted run: weights, momentum slots and the step-dependent
    # learning rate all continued; a fresh start would repeat whole[:3].
    np.testing.assert_allclose(first['losses'] + second['losses'], whole, rtol=1e-5)
    assert abs(second['losses'][0] - whole[0]) > 1e-3


def test_warmup_steps_count_in_the_global_step(tmp_path):
    result = _run(train_dir=str(tmp_path), num_warmup_batches=2, num_batches=3)
    assert result['global_step'] == 5
    assert checkpoints.latest_checkpoint(str(tmp_path)).endswith('model.ckpt-5')


def test_saves_every_n_steps_and_keeps_the_newest(tmp_path):
    result = _run(train_dir=str(tmp_path), num_batches=6, save_model_steps=2, max_ckpts_to_keep=2)
    assert [os.path.basename(p) for p in result['checkpoints']] == [
        'model.ckpt-2', 'model.ckpt-4', 'model.ckpt-6']
    kept = sorted(n for n in os.listdir(tmp_path) if n.endswith('.index'))
    assert kept == ['model.ckpt-4.index', 'model.ckpt-6.index']
    # A second run counts the first run's checkpoints against --max_ckpts_to_keep.
    _run(train_dir=str(tmp_path), num_batches=2, max_ckpts_to_keep=2)
    kept = sorted(n for n in os.listdir(tmp_path) if n.endswith('.index'))
    assert kept == ['model.ckpt-6.index', 'model.ckpt-8.index']


def test_checkpoints_due_in_the_warm_up_are_saved_at_its_end(tmp_path, capsys):
    # 5 warm-up steps pass global steps 2 and 4: one checkpoint at their end (global step 5),
    # before the first timed step, stands for both, and one warning line says so; then the
    # timed steps save on schedule (6) and at the end (8).
    result = _run(train_dir=str(tmp_path), num_warmup_batches=5, num_batches=3,
                  save_model_steps=2)
    assert [os.path.basename(p) for p in result['checkpoints']] == [
        'model.ckpt-5', 'model.ckpt-6', 'model.ckpt-8']
    warnings = [line for line in capsys.readouterr().err.splitlines()
                if line.startswith('warning: ') and 'checkpoint' in line]
    assert warnings == [
        'warning: the 5 warm-up steps (--num_warmup_batches=5) pass 2 checkpoints '
        '--save_model_steps=2 schedules (global steps 2, 4): one at the warm-up\'s end, global '
        'step 5, stands for them; give --num_warmup_batches=2 or fewer to save on schedule']


def test_one_checkpoint_due_in_the_warm_up_moves_to_its_end_without_a_warning(tmp_path, capsys):
    result = _run(train_dir=str(tmp_path), num_warmup_batches=3, num_batches=2,
                  save_model_steps=2)
    assert [os.path.basename(p) for p in result['checkpoints']] == [
        'model.ckpt-3', 'model.ckpt-4', 'model.ckpt-5']
    assert 'checkpoint' not in ''.join(
        line for line in capsys.readouterr().err.splitlines() if line.startswith('warning: '))


def test_the_warm_up_warning_counts_from_the_restored_step():
    plan = benchmark_cnn.BenchmarkCNN(_params(train_dir='/unused', save_model_steps=4,
                                              num_warmup_batches=10), gpus=0).plan
    hook = checkpoints.CheckpointHook(plan)
    # Resumed at 7: 8, 12 and 16 fall inside the warm-up (global steps 8 to 17).
    assert hook.warmup_warning(7) == (
        'the 10 warm-up steps (--num_warmup_batches=10) pass 3 checkpoints --save_model_steps=4 '
        'schedules (global steps 8, 12, 16): one at the warm-up\'s end, global step 17, stands '
        'for them; give --num_warmup_batches=1 or fewer to save on schedule')
    # Resumed at 8: 12 and 16; four warm-up steps or fewer keep 12 on schedule.
    assert hook.warmup_warning(8).startswith(
        'the 10 warm-up steps (--num_warmup_batches=10) pass 2 checkpoints')
    assert hook.warmup_warning(8).endswith('global step 18, stands for them; give '
                                           '--num_warmup_batches=4 or fewer to save on schedule')


def test_save_model_secs_uses_the_clock():
    plan = benchmark_cnn.BenchmarkCNN(_params(train_dir='/unused', save_model_secs=10),
                                      gpus=0).plan
    hook = checkpoints.CheckpointHook(plan, clock=lambda: now[0])
    saved = []

    def save():
        saved.append(now[0])
        hook._last_time = now[0]
    hook.save = save
    now = [0.0]
    hook._last_time = 0.0
    for t in (3.0, 9.9, 10.0, 15.0, 20.5):
        now[0] = t
        hook.after_step(1, 1.0)
    assert saved == [10.0, 20.5]  # 15.0 is only 5 s after the save at 10.0


def test_checkpoint_names_do_not_depend_on_mode_or_towers(tmp_path):
    names = []
    for mode, towers in (('parameter_server', 1), ('replicated', 2), ('independent', 2)):
        train_dir = str(tmp_path / mode)
        _run(train_dir=train_dir, num_batches=1, device='cpu', num_gpus=towers,
             variable_update=mode, optimizer='momentum', init_learning_rate=1e-4)
        values = helpers.read_checkpoint_values(checkpoints.latest_checkpoint(train_dir))
        names.append(sorted(values))
    # independent adds tower 1's own copies (its towers train apart): tower 0's keep the names.
    assert names[0] == names[1] == [n for n in names[2] if not n.startswith('tower_1/')]
    assert 'global_step' in names[0] and 'cg/affine0/weights' in names[0]
    assert 'cg/affine0/weights/Momentum' in names[0]
    assert not any(n.startswith(('v', 'tower_')) for n in names[0])
    own = {'global_step', 'images_seen'}
    assert [n for n in names[2] if n.startswith('tower_1/')] == sorted(
        'tower_1/' + n for n in names[0] if n not in own)


def test_replicated_resume_restores_every_tower(tmp_path):
    kwargs = dict(device='cpu', num_gpus=2, variable_update='replicated', **SCHEDULE)
    whole = _run(num_batches=4, **kwargs)['losses']
    train_dir = str(tmp_path)
    first = _run(train_dir=train_dir, num_batches=2, **kwargs)
    second = _run(train_dir=train_dir, num_batches=2, **kwargs)
    # Tower 1's weights and momentum slots come from tower 0's saved copy.
    np.testing.assert_allclose(first['losses'] + second['losses'], whole, rtol=1e-5)


def test_replicated_checkpoint_restores_into_parameter_server_and_eval(tmp_path):
    train_dir = str(tmp_path)
    replicated = _run(train_dir=train_dir, num_batches=3, device='cpu', num_gpus=2,
                      variable_update='replicated', init_learning_rate=0.002)
    saved = helpers.read_checkpoint_values(replicated['checkpoint_path'])
    ps = _run(train_dir=train_dir, num_batches=2, variable_update='parameter_server',
              init_learning_rate=0.002)
    assert ps['restored_step'] == 3 and ps['global_step'] == 5
    fresh = _run(num_batches=1, init_learning_rate=0.002)
    assert ps['losses'][0] < fresh['losses'][0] - 0.1
    evaluated = _run(train_dir=train_dir, eval=True, checkpoint_path=replicated['checkpoint_path'],
                     num_eval_batches=2)
    assert evaluated['eval']['global_step'] == 3 == int(saved['global_step'])


def test_checkpoint_of_another_shape_is_a_clear_error(tmp_path):
    _run(train_dir=str(tmp_path), num_batches=1)
    with pytest.raises(checkpoints.CheckpointError, match=r'cg/affine0/weights has shape '
                       r'\[768, 1\] there and \[1728, 1\] here'):
        _run(train_dir=str(tmp_path), num_batches=1, image_size=24)


_NORM = 'cg/conv0/batchnorm0/'


def _conv_norm_checkpoint(prefix, gamma=None):
    """Writes a checkpoint of one convolution and its batch norm under this project's names,
    with a gamma of value `gamma` (None: none, a batch norm without scale); returns its
    variables as a model without scale has them ({name: tf variable}, another graph)."""
    values = {'global_step': np.int64(3), 'cg/conv0/weights': np.ones([3, 3, 3, 4], np.float32),
              _NORM + 'beta': np.zeros(4, np.float32),
              _NORM + 'moving_mean': np.zeros(4, np.float32),
              _NORM + 'moving_variance': np.ones(4, np.float32)}
    with tf.Graph().as_default():
        stored = dict(values, **({} if gamma is None else {_NORM + 'gamma': gamma}))
        saver = tf1.train.Saver([tf1.Variable(v, name=n) for n, v in stored.items()])
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            saver.save(sess, prefix, write_meta_graph=False)
    with tf.Graph().as_default():
        return {n: tf1.Variable(v, name=n) for n, v in values.items()}


def test_trained_batch_norm_scales_the_model_has_not_are_refused(tmp_path):
    """An earlier version's inception3 or ResNet v2 checkpoint: its batch norms had a gamma,
    this version's (the original's settings) have none; dropping trained ones is refused."""
    prefix = str(tmp_path / 'model.ckpt-3')
    required = _conv_norm_checkpoint(prefix, np.array([1.0, 1.5, 1.0, 0.5], np.float32))
    with pytest.raises(checkpoint_fit.CheckpointError) as raised:
        checkpoint_fit.check_fits(prefix, required, {}, 'inception3')
    assert str(raised.value) == (
        'checkpoint %s does not fit --model=inception3: its batch norms have a trained scale '
        '(1 gamma, e.g. cg/conv0/batchnorm0/gamma) where this version\'s have none, as the '
        'original tf_cnn_benchmarks\' (it was written by an earlier version of this project, '
        'whose batch norms all had one): restoring it would drop them; evaluate it with the '
        'version that wrote it, or train afresh with another --train_dir' % prefix)
    # Gammas still at their initial 1 drop nothing; a checkpoint without them is this model's.
    for gamma in (np.ones(4, np.float32), None):
        other = str(tmp_path / ('ones' if gamma is not None else 'none') / 'model.ckpt-3')
        required = _conv_norm_checkpoint(other, gamma)
        var_list, _, _ = checkpoint_fit.check_fits(other, required, {}, 'inception3')
        assert sorted(var_list) == sorted(required)


def test_checkpoint_path_must_be_a_checkpoint(tmp_path):
    with pytest.raises(checkpoints.CheckpointError, match='is not a checkpoint'):
        _run(forward_only=True, checkpoint_path=str(tmp_path / 'nothing'))
    with pytest.raises(checkpoints.CheckpointError, match='directory without a checkpoint'):
        _run(forward_only=True, checkpoint_path=str(tmp_path))


@pytest.mark.parametrize('state', ['garbage !!! {', 'model_checkpoint_path: "model.ckpt-7"', '',
                                   b'\xb6\x00\xff binary'])
def test_unreadable_checkpoint_state_is_an_error_not_a_fresh_start(tmp_path, state):
    # TensorFlow's latest_checkpoint ignores such a file; a resume would silently start over.
    if isinstance(state, bytes):
        (tmp_path / 'checkpoint').write_bytes(state)
    else:
        (tmp_path / 'checkpoint').write_text(state)
    with pytest.raises(checkpoints.CheckpointError) as info:
        _run(train_dir=str(tmp_path), num_batches=1)
    assert str(info.value) == ('%s is corrupt or names checkpoint files that are gone and no '
                               'intact checkpoint is there; delete it to start from scratch, or '
                               'give --checkpoint_path a checkpoint elsewhere'
                               % (tmp_path / 'checkpoint'))


def test_truncated_checkpoint_data_names_the_problem(tmp_path):
    _run(train_dir=str(tmp_path), num_batches=1)
    data = [f for f in os.listdir(tmp_path) if '.data-' in f]
    os.truncate(tmp_path / data[0], 100)
    with pytest.raises(checkpoints.CheckpointError) as info:
        _run(train_dir=str(tmp_path), num_batches=1)
    message = str(info.value)
    assert message.startswith('cannot restore checkpoint %s: ' % (tmp_path / 'model.ckpt-1'))
    assert 'Graph execution error' not in message and len(message.splitlines()) == 1
    assert message.endswith('(a truncated or damaged file? no intact older checkpoint is in %s: '
                            'delete this one\'s files (%s.*) and the state file %s to start '
                            'from scratch)' % (tmp_path, tmp_path / 'model.ckpt-1',
                                               tmp_path / 'checkpoint'))


def test_a_damaged_checkpoint_index_says_what_to_do(tmp_path):
    _run(train_dir=str(tmp_path), num_batches=1)
    (tmp_path / 'model.ckpt-1.index').write_bytes(b'\x00not an index at all' * 8)
    with pytest.raises(checkpoints.CheckpointError) as info:
        _run(train_dir=str(tmp_path), num_batches=1)
    message = str(info.value)
    assert message.startswith('cannot restore checkpoint %s: ' % (tmp_path / 'model.ckpt-1'))
    assert len(message.splitlines()) == 1
    assert message.endswith('(a truncated or damaged file? no intact older checkpoint is in %s: '
                            'delete this one\'s files (%s.*) and the state file %s to start '
                            'from scratch)' % (tmp_path, tmp_path / 'model.ckpt-1',
                                               tmp_path / 'checkpoint'))


def test_warm_start_from_checkpoint_path_and_optimizer_change(tmp_path, capsys):
    source = _run(train_dir=str(tmp_path / 'a'), num_batches=2, init_learning_rate=0.002)
    result = _run(train_dir=str(tmp_path / 'b'), checkpoint_path=str(tmp_path / 'a'),
                  num_batches=1, optimizer='momentum', init_learning_rate=0.002)
    assert result['restored_step'] == 2 == source['global_step']
    err = capsys.readouterr().err
    assert 'has no optimizer state for 6 variable(s)' in err
    # Training resumes from its own train_dir first, not from --checkpoint_path again.
    again = _run(train_dir=str(tmp_path / 'b'), checkpoint_path=str(tmp_path / 'a'),
                 num_batches=1, optimizer='momentum', init_learning_rate=0.002)
    assert again['restored_step'] == 3


def test_forward_only_restores_when_a_checkpoint_exists(tmp_path, capsys):
    train_dir = str(tmp_path)
    fresh = _run(forward_only=True, train_dir=train_dir, num_batches=2)
    assert fresh['restored_step'] is None and fresh['checkpoint_path'] is None
    assert 'no checkpoint in --train_dir' in capsys.readouterr().out
    assert not os.listdir(train_dir)  # forward-only never saves
    _run(train_dir=train_dir, num_batches=2, init_learning_rate=0.002)
    restored = _run(forward_only=True, train_dir=train_dir, num_batches=2,
                    print_training_accuracy=True)
    assert restored['restored_step'] == 2 and restored['global_step'] == 2
    assert 'Restored from step 2: weights for forward-only' in capsys.readouterr().out
    assert len(restored['losses']) == 2 and None not in restored['losses']  # forward passes'


def test_freeze_when_forward_only(tmp_path, capsys):
    train_dir = str(tmp_path)
    _run(train_dir=train_dir, num_batches=2, init_learning_rate=0.002)
    result = _run(forward_only=True, freeze_when_forward_only=True, train_dir=train_dir,
                  num_batches=3, num_warmup_batches=1)
    out = capsys.readouterr().out
    assert result['frozen'] and result['num_steps'] == 3 and result['restored_step'] == 2
    assert 'Froze the variables into constants' in out and 'total images/sec' in out


def test_a_frozen_graph_keeps_the_synthetic_input_a_variable():
    """Weights become constants, the synthetic images do not: as constants, Grappler folded the
    whole forward pass of the trivial model, and the step timed no model at all."""
    bench = helpers.tiny_bench(model='trivial', batch_size=2, image_size=8, forward_only=True,
                               freeze_when_forward_only=True, use_bf16=True)
    info = bench.build_graph()
    with info.graph.as_default(), bench.create_session(info) as sess:
        checkpoints.restore_or_initialize(sess, info, bench.params)
        frozen_info, _ = frozen.freeze(sess, info, 0)
    graph_def = frozen_info.graph.as_graph_def()
    variables = sorted(n.name for n in graph_def.node if n.op in ('VarHandleOp', 'VariableV2'))
    assert variables == ['synthetic_input_0/images', 'synthetic_input_0/labels']
    with frozen_info.graph.as_default(), bench.create_session(frozen_info) as sess:
        sess.run(frozen_info.init_ops)
        metadata = tf1.RunMetadata()
        sess.run(benchmark_cnn._step_fetches(frozen_info),
                 options=tf1.RunOptions(trace_level=3), run_metadata=metadata)
    ran = {node.node_name.split('/')[-1] for dev in metadata.step_stats.dev_stats
           for node in dev.node_stats}
    assert any('MatMul' in name for name in ran), sorted(ran)  # the layer ran, not a constant


class _ValuesAtBegin(run_hooks.RunHook):
    """Records every savable variable's value (by checkpoint name) once restored."""

    def __init__(self):
        self.values = {}

    def begin(self, ctx):
        self.values = ctx.sess.run(ctx.info.mgr.savable_variables())


@pytest.mark.parametrize('first, second', [(True, False), (False, True)])
def test_restores_across_fp16_vars(tmp_path, capsys, first, second):
    """A checkpoint written with --fp16_vars restores into float32 variables and back: the
    values are cast, and one line says so."""
    # 100 classes: the trivial model's last layer in float16 at 1001 is most of a step's time.
    kwargs = dict(train_dir=str(tmp_path), use_fp16=True, optimizer='momentum',
                  fp16_loss_scale=1.0, num_classes=100)
    saved = _run(fp16_vars=first, **kwargs)['checkpoint_path']
    stored = helpers.read_checkpoint_values(saved)
    capsys.readouterr()
    recorder = _ValuesAtBegin()
    result = benchmark_cnn.BenchmarkCNN(_params(fp16_vars=second, **kwargs), gpus=0,
                                        hooks=[recorder]).run()
    assert result['restored_step'] == 3
    weights = recorder.values['cg/affine0/weights']
    assert weights.dtype == (np.float16 if second else np.float32)
    np.testing.assert_array_equal(weights, stored['cg/affine0/weights'].astype(weights.dtype))
    # 6 weights and biases and their 6 momentum slots.
    out = capsys.readouterr().out
    kind = 'float16 to float32 (written with' if first else 'float32 to float16 (written without'
    assert 'Cast 12 variable(s) of %s from %s --fp16_vars)' % (saved, kind) in out


def test_a_save_killed_midway_leaves_no_temporaries_behind(tmp_path, capsys):
    # What TensorFlow 2.21 leaves when a save is killed (SIGKILL) before its renames: the
    # files of the checkpoint being written, a sharded save's directory, the state file's copy.
    train_dir = tmp_path / 'run'
    first = _run(train_dir=str(train_dir))
    assert first['global_step'] == 3
    stale = ['checkpoint.tmp' + 'ab' * 16, 'model.ckpt-6.data-00000-of-00001.tempstate6362',
             'model.ckpt-6.index.tempstate1499', 'model.ckpt-6_temp']
    for name in stale[:3]:
        (train_dir / name).write_bytes(b'partial')
    (train_dir / stale[3]).mkdir()
    (train_dir / stale[3] / 'part-00000-of-00001.index').write_bytes(b'partial')
    (train_dir / 'notes_temp').write_text('mine')  # not TensorFlow's: kept
    kept = sorted(os.listdir(train_dir))
    capsys.readouterr()
    second = _run(train_dir=str(train_dir))
    assert second['restored_step'] == 3 and second['global_step'] == 6
    assert ('Removed 4 temporary file(s) of an interrupted checkpoint save from %s: %s\n'
            % (train_dir, ', '.join(stale))) in capsys.readouterr().out
    assert sorted(os.listdir(train_dir)) == sorted(
        set(kept) - set(stale) | {'model.ckpt-6.index', 'model.ckpt-6.data-00000-of-00001'})
    assert checkpoints.clean_stale_temporaries(str(train_dir)) == []
    assert checkpoints.clean_stale_temporaries(str(tmp_path / 'missing')) == []

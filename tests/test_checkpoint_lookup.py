"""Which checkpoint a run takes when the folder's newest is damaged, gone or not named, and what
it says: the eval loop beside a trainer that rotates checkpoints away, a truncated data file on
resume, the advice that names the intact older checkpoint (and works when followed),
--checkpoint_path beside --train_dir's own checkpoint, a lower --max_ckpts_to_keep on resume."""

from __future__ import annotations

import os
import shutil

import pytest
import tensorflow as tf

from tf_cnn_benchmarks import params
from tf_cnn_benchmarks.lifecycle import (
    checkpoint_fit,
    checkpoint_lookup,
    checkpoint_source,
    checkpoints,
    eval_runner,
)

import helpers

tf1 = tf.compat.v1
_run = helpers.tiny_run


def _two_checkpoints(train_dir) -> tuple[str, str]:
    """A --train_dir holding model.ckpt-1 and model.ckpt-2 (the state file names both)."""
    _run(train_dir=str(train_dir), num_batches=2, save_model_steps=1)
    return str(train_dir / 'model.ckpt-1'), str(train_dir / 'model.ckpt-2')


def _rotate(train_dir, old: str, step: int) -> str:
    """What a trainer's save does with --max_ckpts_to_keep: a newer checkpoint (here a copy of
    `old`'s files under the new step), the state file naming it, `old` removed."""
    new = str(train_dir / ('model.ckpt-%d' % step))
    for name in os.listdir(train_dir):
        if name.startswith(os.path.basename(old) + '.'):
            shutil.copy(os.path.join(train_dir, name),
                        os.path.join(train_dir, name.replace(os.path.basename(old),
                                                             os.path.basename(new))))
    tf1.train.update_checkpoint_state(str(train_dir), new, [new])
    tf1.train.remove_checkpoint(old)
    return new


def _eval(train_dir, monkeypatch=None, before_restore=None) -> dict:
    """An --eval run's result (eval_runner.run_eval) on `train_dir`; `before_restore(path)` runs
    just before each checkpoint's restore (the seam between the lookup and the restore)."""
    if before_restore is not None:
        restore = checkpoints.restore

        def seam(sess, graph, mgr, path, *args, **kwargs):
            before_restore(path)
            return restore(sess, graph, mgr, path, *args, **kwargs)
        monkeypatch.setattr(checkpoints, 'restore', seam)
    bench = helpers.tiny_bench(eval=True, train_dir=str(train_dir), num_batches=1)
    return eval_runner.run_eval(bench.plan, bench.model, bench.dataset, bench.session_config)


def test_eval_takes_the_newest_when_the_trainer_rotated_its_pick_away(tmp_path, monkeypatch,
                                                                       capsys):
    _, second = _two_checkpoints(tmp_path)
    rotated = []

    def trainer_saves(path):
        if not rotated:  # the first pick, ckpt-2, rotated away by a save of ckpt-3
            rotated.append(_rotate(tmp_path, path, 3))
    result = _eval(tmp_path, monkeypatch, trainer_saves)
    assert result['checkpoint_path'] == str(tmp_path / 'model.ckpt-3')
    out = capsys.readouterr().out
    assert ('%s was removed before it could be read (rotated away by the training run\'s '
            '--max_ckpts_to_keep): evaluating the newest, model.ckpt-3' % second) in out
    assert 'Successfully loaded model from %s.' % rotated[0] in out


def test_a_checkpoint_removed_between_reading_its_index_and_restoring_is_rotated(
        tmp_path, monkeypatch, capsys):
    # The Saver's own check of the files (a ValueError, not an OpError): it was a traceback.
    _, second = _two_checkpoints(tmp_path)
    fit = checkpoint_fit.check_fits
    rotated = []

    def removed_after_the_check(path, *args, **kwargs):
        fits = fit(path, *args, **kwargs)
        if not rotated:
            rotated.append(_rotate(tmp_path, path, 3))
        return fits
    monkeypatch.setattr(checkpoint_fit, 'check_fits', removed_after_the_check)
    result = _eval(tmp_path)
    assert result['checkpoint_path'] == rotated[0]
    assert '%s was removed before it could be read' % second in capsys.readouterr().out


def test_an_eval_that_never_catches_a_checkpoint_gives_up_with_the_fix(tmp_path, monkeypatch,
                                                                        capsys):
    _, second = _two_checkpoints(tmp_path)
    steps = iter(range(3, 100))

    def trainer_saves(path):
        _rotate(tmp_path, path, next(steps))
    with pytest.raises(checkpoints.CheckpointError) as raised:
        _eval(tmp_path, monkeypatch, trainer_saves)
    limit = checkpoint_source.MAX_ROTATIONS
    assert str(raised.value) == (
        'the training run saving into %s removed %d checkpoints in a row before they could be '
        'read (the last model.ckpt-%d): it saves too often for its --max_ckpts_to_keep; give '
        'it a larger --max_ckpts_to_keep or save less often (--save_model_steps, '
        '--save_model_secs)' % (tmp_path, limit + 1, limit + 2))
    assert capsys.readouterr().out.count('was removed before it could be read') == limit


def test_eval_of_a_damaged_checkpoint_whose_files_are_there_is_the_error(tmp_path):
    first, second = _two_checkpoints(tmp_path)
    os.truncate(second + '.data-00000-of-00001', 100)
    with pytest.raises(checkpoints.CheckpointError) as raised:
        _eval(tmp_path)
    message = str(raised.value)
    assert message.startswith('cannot restore checkpoint %s: ' % second)
    assert message.endswith('(a truncated or damaged file? the older %s there is intact: to use '
                            'it, give --checkpoint_path=%s)' % (first, first))


def test_the_state_file_is_read_again_when_a_save_replaced_it_meanwhile(tmp_path, monkeypatch):
    _, second = _two_checkpoints(tmp_path)
    read = checkpoint_lookup._read_latest
    calls = []

    def raced(directory):
        calls.append(directory)
        if len(calls) == 1:  # read the state naming ckpt-2; ckpt-3's save removed it meanwhile
            _rotate(tmp_path, second, 3)
            return None
        return read(directory)
    monkeypatch.setattr(checkpoint_lookup, '_read_latest', raced)
    assert checkpoints.latest_checkpoint(str(tmp_path)) == str(tmp_path / 'model.ckpt-3')
    assert len(calls) == 2


def test_resuming_from_a_truncated_data_file_is_one_error_line(tmp_path):
    first, second = _two_checkpoints(tmp_path)
    os.truncate(second + '.data-00000-of-00001', 1000)
    flags = ['--model=trivial', '--batch_size=4', '--image_size=16', '--num_classes=10',
             '--num_batches=1', '--num_warmup_batches=0', '--noresults_db']
    expected = ('error: cannot restore checkpoint %s: Read less bytes than requested (a truncated '
                'or damaged file? the older %s there is intact: to resume from it, delete this '
                'one\'s files (%s.*) and give --checkpoint_path=%s)' % (second, first, second,
                                                                          first))
    for where in (['--train_dir=%s' % tmp_path],  # a resume, and a warm start
                  ['--train_dir=%s' % (tmp_path / 'other'), '--checkpoint_path=%s' % second]):
        got = helpers.run_command(*flags, *where)
        assert got.returncode == 1, got.stderr
        assert 'Traceback' not in got.stderr
        assert [x for x in got.stderr.splitlines() if x.startswith('error:')] == [expected]
    # Following the advice resumes from the older checkpoint.
    for name in os.listdir(tmp_path):
        if name.startswith('model.ckpt-2.'):
            os.remove(tmp_path / name)
    got = helpers.run_command(*flags, '--train_dir=%s' % tmp_path, '--checkpoint_path=%s' % first)
    assert got.returncode == 0, got.stderr
    assert 'Restored from step 1: training state from %s' % first in got.stdout


def test_a_broken_state_file_names_the_intact_checkpoint_and_its_advice_works(tmp_path, capsys):
    first, second = _two_checkpoints(tmp_path)
    os.remove(second + '.index')
    state = tmp_path / 'checkpoint'
    with pytest.raises(checkpoints.CheckpointError) as raised:
        _run(train_dir=str(tmp_path), num_batches=1)
    assert str(raised.value) == (
        '%s is corrupt or names checkpoint files that are gone; the newest intact checkpoint '
        'there is %s: resume from it with --checkpoint_path=%s (the next save rewrites the state '
        'file), or delete the state file to start from scratch' % (state, first, first))
    with pytest.raises(checkpoints.CheckpointError) as raised:  # an evaluation's advice
        _eval(tmp_path)
    assert str(raised.value) == (
        '%s is corrupt or names checkpoint files that are gone; the newest intact checkpoint '
        'there is %s: give --checkpoint_path=%s' % (state, first, first))
    capsys.readouterr()
    result = _run(train_dir=str(tmp_path), num_batches=1, checkpoint_path=first)
    assert result['restored_step'] == 1 and result['global_step'] == 2
    assert capsys.readouterr().err.count('warning: the state file %s is corrupt' % state) == 1
    assert checkpoints.latest_checkpoint(str(tmp_path)) == str(tmp_path / 'model.ckpt-2')


def test_a_fresh_start_beside_unnamed_checkpoints_says_so(tmp_path, capsys):
    _, second = _two_checkpoints(tmp_path)
    os.remove(tmp_path / 'checkpoint')
    capsys.readouterr()
    result = _run(train_dir=str(tmp_path), num_batches=1)
    assert result['restored_step'] is None
    warnings = [x for x in capsys.readouterr().err.splitlines() if 'state file' in x]
    assert warnings == [
        'warning: --train_dir=%s holds 2 checkpoints that no state file names (the newest: '
        'model.ckpt-2): this run starts from step 0 without them (its saves replace those of '
        'the same step); to resume from it, give --checkpoint_path=%s' % (tmp_path, second)]


def test_checkpoint_path_beside_the_train_dirs_own_checkpoint_warns(tmp_path, capsys):
    source = str(tmp_path / 'a' / 'model.ckpt-1')
    _run(train_dir=str(tmp_path / 'a'), num_batches=1)
    _run(train_dir=str(tmp_path / 'b'), num_batches=2)
    capsys.readouterr()
    result = _run(train_dir=str(tmp_path / 'b'), num_batches=1, checkpoint_path=source)
    assert result['restored_step'] == 2
    warnings = [x for x in capsys.readouterr().err.splitlines() if 'checkpoint_path' in x]
    assert warnings == [
        'warning: --checkpoint_path=%s has no effect: --train_dir=%s holds checkpoint '
        'model.ckpt-2, which this run resumes from (--checkpoint_path warm-starts only a '
        '--train_dir without checkpoints; give another --train_dir to start from it)'
        % (source, tmp_path / 'b')]
    help_text = params.SPEC_BY_NAME['checkpoint_path'].help
    assert 'only when --train_dir holds no checkpoint yet' in help_text
    assert 'default: the latest' not in help_text


@pytest.mark.parametrize('suffix', ['.index', '.data-00000-of-00001', '.meta'])
def test_checkpoint_path_accepts_a_checkpoint_file_name(tmp_path, suffix):
    first, _ = _two_checkpoints(tmp_path)
    assert checkpoints.resolve_checkpoint_path(first + suffix) == first
    with pytest.raises(checkpoints.CheckpointError) as raised:
        checkpoints.resolve_checkpoint_path(str(tmp_path / 'model.ckpt-9') + suffix)
    assert '(no %s.index)' % (tmp_path / 'model.ckpt-9') in str(raised.value)


def test_forward_only_restores_a_checkpoint_given_by_its_index_file(tmp_path):
    first, _ = _two_checkpoints(tmp_path)
    result = _run(forward_only=True, checkpoint_path=first + '.index', num_batches=1)
    assert result['restored_step'] == 1


def test_a_lower_max_ckpts_to_keep_on_resume_keeps_the_newest_n(tmp_path):
    _run(train_dir=str(tmp_path), num_batches=3, save_model_steps=1)
    assert len([n for n in os.listdir(tmp_path) if n.endswith('.index')]) == 3
    _run(train_dir=str(tmp_path), num_batches=1, max_ckpts_to_keep=1)
    assert sorted(n for n in os.listdir(tmp_path) if n.endswith('.index')) == [
        'model.ckpt-4.index']
    state = tf1.train.get_checkpoint_state(str(tmp_path))
    assert list(state.all_model_checkpoint_paths) == [str(tmp_path / 'model.ckpt-4')]


def test_a_truncated_index_is_said_before_the_graph_is_built(tmp_path):
    """A truncated .index was found only by the restore, after the model's graph was built
    (minutes for a large model); its error is now the resume's, before the graph."""
    first, second = _two_checkpoints(tmp_path)
    with open(second + '.index', 'r+b') as f:
        f.truncate(30)
    got = helpers.run_command('--model=trivial', '--batch_size=4', '--image_size=16',
                              '--num_classes=10', '--num_batches=1', '--num_warmup_batches=0',
                              '--noresults_db', '--train_dir=%s' % tmp_path)
    assert got.returncode == 1, got.stderr
    assert [x for x in got.stderr.splitlines() if x.startswith('error:')] == [
        'error: cannot restore checkpoint %s: file is too short to be an sstable (a truncated or '
        'damaged file? the older %s there is intact: to resume from it, delete this one\'s '
        'files (%s.*) and give --checkpoint_path=%s)' % (second, first, second, first)]
    assert 'Generating training model' not in got.stdout


@pytest.mark.parametrize('mode', [['--eval', '--eval_interval_secs=0'],
                                  ['--eval', '--eval_interval_secs=60'], ['--forward_only']])
def test_an_evals_truncated_index_is_said_before_the_graph_is_built(tmp_path, mode):
    """--eval (and --forward_only) found a truncated .index only by the restore, after the
    header and 'Generating evaluation model'; it is now read before, as a resume's is, with an
    evaluation's advice (an --eval_interval_secs loop's first checkpoint too)."""
    first, second = _two_checkpoints(tmp_path)
    with open(second + '.index', 'r+b') as f:
        f.truncate(30)
    got = helpers.run_command('--model=trivial', '--batch_size=4', '--image_size=16',
                              '--num_classes=10', '--num_batches=1', *mode, '--noresults_db',
                              '--train_dir=%s' % tmp_path)
    assert got.returncode == 1, got.stderr
    assert [x for x in got.stderr.splitlines() if x.startswith('error:')] == [
        'error: cannot restore checkpoint %s: file is too short to be an sstable (a truncated or '
        'damaged file? the older %s there is intact: to use it, give --checkpoint_path=%s)'
        % (second, first, first)]
    assert 'Generating evaluation model' not in got.stdout
    assert 'Generating forward-only model' not in got.stdout

"""Where a run restores from, and what it says about the checkpoints it does not use.

`find_checkpoint`:
  - training: the latest checkpoint in --train_dir (resume); when --train_dir has none (or
    its `checkpoint` state file is broken), --checkpoint_path (a warm start); otherwise the
    variables are initialised. --checkpoint_path beside a --train_dir checkpoint has no effect,
    and a run from step 0 beside checkpoint files no state file names is told so
    (`start_warnings`);
  - eval and forward-only: --checkpoint_path when given, else the latest in --train_dir.
--checkpoint_path is a checkpoint prefix ('dir/model.ckpt-300'; a file name of one,
'model.ckpt-300.index', stands for it) or a directory (its latest).

A training run's header reads its checkpoint's counts before any graph (`resume_point`), an
--eval run the checkpoint it evaluates first (`check_eval_checkpoint`); an
--eval loop beside a training run evaluates the newest checkpoint, and one the run rotated
away meanwhile is not damage (`evaluate_newest`).
"""

from __future__ import annotations

import os
from typing import NamedTuple

import tensorflow as tf

from .. import cnn_util
from ..graph import images_seen
from ..runtime import file_systems
from . import checkpoint_fit, checkpoint_lookup, original_checkpoints
from .checkpoint_fit import CheckpointError


def latest_checkpoint(directory: str | None, training: bool = True) -> str | None:
    """The newest complete checkpoint recorded in `directory`, or None when it records none
    (checkpoint_lookup.latest_checkpoint: read again when a save beside this process rotated
    the named checkpoint away meanwhile).

    Args:
      directory: the folder (None: None).
      training: for the error's advice: a training run's (resume from the intact checkpoint
        with --checkpoint_path, or start from scratch), else an evaluation's.

    Raises:
      CheckpointError: `directory` has a `checkpoint` state file that is unreadable or names
        checkpoint files that are gone (TensorFlow would ignore it and the run would silently
        start from scratch); the error names the newest intact checkpoint there.
    """
    try:
        return checkpoint_lookup.latest_checkpoint(directory)
    except checkpoint_lookup.StateFileError as e:
        raise CheckpointError(checkpoint_lookup.state_file_message(e.directory, training)) \
            from None


#: The checkpoint name of the automatic loss scale (graph/precision.LossScaler's variable).
LOSS_SCALE = 'loss_scale/scale'


class ResumePoint(NamedTuple):
    """Where a training run resumes (read from the checkpoint's files, before any graph).

    Attributes:
      path: the checkpoint prefix.
      global_step: its global step.
      images_seen: its count of training images (graph/images_seen.py), or None when it was
        written before the images were counted (or by the original tf_cnn_benchmarks).
      original: written by the original tf_cnn_benchmarks (lifecycle/original_checkpoints.py).
      loss_scale: its automatic loss scale (float16 with --fp16_enable_auto_loss_scale), which
        a run with automatic scaling continues from; None when it holds none.
    """

    path: str
    global_step: int
    images_seen: int | None
    original: bool = False
    loss_scale: float | None = None


def resume_point(p) -> ResumePoint | None:
    """The checkpoint a training run resumes from (`find_checkpoint`) and its counts, or None
    (no checkpoint, or one without a global step).

    Raises:
      CheckpointError: --checkpoint_path is not a checkpoint, the state file is corrupt, or
        the checkpoint's files are truncated or damaged (checkpoint_fit.damaged_error).
    """
    path = find_checkpoint(p)
    return None if path is None else _read_point(path, training=True)


def check_eval_checkpoint(p) -> None:
    """--eval (and --forward_only, whose weights come from a checkpoint too): reads the checkpoint
    it evaluates first (`find_checkpoint`) before the graph is built, as a training run's resume
    does (`resume_point`), so that a truncated or damaged one is said at once, with an
    evaluation's advice, not after the model's graph (minutes for a large model). Nothing found:
    nothing to check (run_eval says so, or an --eval_interval_secs loop waits for one; the loop
    reads the later ones as it restores them). A checkpoint a training run beside rotated away
    meanwhile is not damage: left to `evaluate_newest`.

    Raises:
      CheckpointError: --checkpoint_path is not a checkpoint, the state file is corrupt, or
        the checkpoint's files are truncated or damaged (checkpoint_fit.damaged_error).
    """
    path = find_checkpoint(p)
    if path is None:
        return
    try:
        _read_point(path, training=False)
    except CheckpointError:
        if not checkpoint_lookup.gone(path):
            raise


def _read_point(path: str, training: bool) -> ResumePoint | None:
    """`path`'s ResumePoint, read from its files (None: no global step in it, or a problem
    the restore names). `training`: the damaged error's advice (checkpoint_fit.damaged_error).

    Raises:
      CheckpointError: the checkpoint's files are truncated or damaged.
    """
    try:
        reader = checkpoint_fit.open_reader(path)
        names = reader.get_variable_to_shape_map()
        if 'global_step' not in names:
            return None
        seen = (int(reader.get_tensor(images_seen.CHECKPOINT_NAME))
                if images_seen.CHECKPOINT_NAME in names else None)
        original = original_checkpoints.is_original(names)
        scale_name = original_checkpoints.LOSS_SCALE if original else LOSS_SCALE
        scale = float(reader.get_tensor(scale_name)) if scale_name in names else None
        return ResumePoint(path, int(reader.get_tensor('global_step')), seen, original, scale)
    except (IndexError, tf.errors.OpError) as e:
        # IndexError: a truncated data file ('Read less bytes than requested'); OpError: a
        # truncated or damaged index ('file is too short to be an sstable'): said now, before
        # the graph is built, as the restore would say it after.
        raise checkpoint_fit.damaged_error(path, e, training=training) from None
    except ValueError:
        return None  # the restore names what is wrong with it


def resolve_checkpoint_path(path: str, training: bool = True) -> str:
    """--checkpoint_path as a checkpoint prefix: itself (a file name of one, 'model.ckpt-300
    .index', '.meta' or '.data-00000-of-00001', as its prefix), or the latest in a directory.

    Raises:
      CheckpointError: nothing there is a checkpoint.
    """
    path = checkpoint_lookup.strip_suffix(path)
    if file_systems.exists(path + '.index'):
        return path
    if file_systems.isdir(path):
        found = latest_checkpoint(path, training)
        if found is None:
            raise CheckpointError('--checkpoint_path %s is a directory without a checkpoint; give '
                                  'a train_dir that holds one or a prefix such as '
                                  '%s/model.ckpt-100' % (path, path))
        return found
    raise CheckpointError('--checkpoint_path %s is not a checkpoint (no %s.index); give '
                          'a prefix such as train_dir/model.ckpt-100 or a directory'
                          % (path, checkpoint_lookup.prefix_of(path)))


def find_checkpoint(p) -> str | None:
    """The checkpoint a run restores from (see the module docstring), or None. A training run
    whose --train_dir has a broken state file restores --checkpoint_path when given
    (`start_warnings` says so).

    Raises:
      CheckpointError: --checkpoint_path is given but is not a checkpoint; the state file of
        --train_dir is broken (and, in training, no --checkpoint_path is given).
    """
    if p.eval or p.forward_only:
        if p.checkpoint_path:
            return resolve_checkpoint_path(p.checkpoint_path, training=False)
        return latest_checkpoint(p.train_dir, training=False)
    try:
        found = checkpoint_lookup.latest_checkpoint(p.train_dir)
    except checkpoint_lookup.StateFileError as e:
        if not p.checkpoint_path:
            raise CheckpointError(checkpoint_lookup.state_file_message(e.directory, True)) \
                from None
        found = None
    if found is None and p.checkpoint_path:
        found = resolve_checkpoint_path(p.checkpoint_path)
    return found


def rotated_away(p, path: str) -> str | None:
    """The checkpoint an evaluation takes instead of `path` when `path` could not be restored
    because its files are gone (a training run's save rotated it away after the lookup) and
    `find_checkpoint` now names another; None when its files are there (damage: the error
    stands) or nothing newer is named.

    Raises:
      CheckpointError: the new lookup's (a broken state file).
    """
    if not checkpoint_lookup.gone(path):
        return None
    newest = find_checkpoint(p)
    return newest if newest is not None and newest != path else None


def start_warnings(p, path: str | None) -> list[str]:
    """The warning lines of a training run about where it starts (`path`: find_checkpoint's):
    --checkpoint_path given where --train_dir's own checkpoint wins (it has no effect);
    --checkpoint_path standing in for a broken state file; a run from step 0 beside
    checkpoint files that no state file names (they would otherwise be ignored silently).
    [] for an eval or forward-only run."""
    if p.eval or p.forward_only or not p.train_dir:
        return []
    try:
        own = checkpoint_lookup.latest_checkpoint(p.train_dir)
    except checkpoint_lookup.StateFileError:
        return ['the state file %s is corrupt or names checkpoint files that are gone: this run '
                'resumes from --checkpoint_path=%s instead, and its first save rewrites the '
                'state file' % (os.path.join(p.train_dir, checkpoint_lookup.STATE_FILE),
                                p.checkpoint_path)]
    if own is not None and p.checkpoint_path:
        given = os.path.normpath(checkpoint_lookup.strip_suffix(p.checkpoint_path))
        if given not in (os.path.normpath(own), os.path.normpath(p.train_dir)):
            return ['--checkpoint_path=%s has no effect: --train_dir=%s holds checkpoint %s, '
                    'which this run resumes from (--checkpoint_path warm-starts only a '
                    '--train_dir without checkpoints; give another --train_dir to start from it)'
                    % (p.checkpoint_path, p.train_dir, os.path.basename(own))]
    if path is None:
        unnamed = checkpoint_lookup.intact_checkpoints(p.train_dir)
        if unnamed:
            count = cnn_util.counted(len(unnamed), 'checkpoint')
            return ['--train_dir=%s holds %s that no state file names (the newest: %s): this run '
                    'starts from step 0 without them (its saves replace those of the same '
                    'step); to resume from it, give --checkpoint_path=%s'
                    % (p.train_dir, count, os.path.basename(unnamed[0]), unnamed[0])]
    return []


# Checkpoints in a row an evaluation may find rotated away before it gives up (a training run
# that saves faster than a checkpoint can be restored, with a small --max_ckpts_to_keep).
MAX_ROTATIONS = 5


def evaluate_newest(p, last: str | None, evaluate) -> dict | None:
    """Evaluates the newest checkpoint (`find_checkpoint`) unless it is `last`, the one
    evaluated before (then None). A checkpoint that a training run beside this one rotated
    away (--max_ckpts_to_keep) between its lookup and its restore is not damage: one line says
    so, and the newest is evaluated instead (`rotated_away`).

    Args:
      p: the run's Params.
      last: the checkpoint prefix evaluated before, or None.
      evaluate: prefix -> the evaluation's dict (eval_runner.Evaluator.evaluate), raising
        CheckpointError when the checkpoint cannot be restored.

    Returns:
      `evaluate`'s dict, or None when there is no new checkpoint.

    Raises:
      CheckpointError: a checkpoint whose files are there cannot be restored, or does not fit;
        more than MAX_ROTATIONS checkpoints in a row were rotated away before they were read.
    """
    path, rotations = find_checkpoint(p), 0
    while path is not None and path != last:
        try:
            return evaluate(path)
        except CheckpointError:
            newest = rotated_away(p, path)
            if newest is None:
                raise
            rotations += 1
            if rotations > MAX_ROTATIONS:
                raise CheckpointError(
                    'the training run saving into %s removed %d checkpoints in a row before they '
                    'could be read (the last %s): it saves too often for its '
                    '--max_ckpts_to_keep; give it a larger --max_ckpts_to_keep or save less often '
                    '(--save_model_steps, --save_model_secs)'
                    % (os.path.dirname(path) or '.', rotations, os.path.basename(path))) from None
            cnn_util.log_fn('%s was removed before it could be read (rotated away by the '
                            'training run\'s --max_ckpts_to_keep): evaluating the newest, %s'
                            % (path, os.path.basename(newest)))
            path = newest
    return None

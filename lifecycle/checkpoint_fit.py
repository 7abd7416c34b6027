"""Whether a checkpoint fits this run's variables, and the values restored by hand.

lifecycle/checkpoints.py restores through it: `check_fits` compares the checkpoint's names,
shapes and dtypes with the run's variables (a checkpoint the original tf_cnn_benchmarks wrote
seen through lifecycle/original_checkpoints.py) and says what to restore, refusing a
checkpoint whose trained batch-norm scales the model has no variable for (`lost_scales`);
`restore_fed` restores the variables a Saver cannot: another floating-point dtype (cast), the
original's NCHW rows (reordered); `non_finite_problem` refuses the weights of a run that
diverged.
"""

from __future__ import annotations

import os
import weakref

import tensorflow as tf

from .. import cnn_util
from ..graph import images_seen
from . import checkpoint_lookup, original_checkpoints

tf1 = tf.compat.v1


class CheckpointError(cnn_util.BenchmarkError):
    """No checkpoint where one is needed, or a checkpoint that does not fit the model."""


def open_reader(path: str):
    """A CheckpointReader of the checkpoint prefix `path`. (tf.train.load_checkpoint first
    asks whether `path` is a folder, which TensorFlow's ram:// file system answers yes for
    any prefix of a file name: 'ram://run/model.ckpt-2' of 'model.ckpt-2.index'.)"""
    return tf1.train.NewCheckpointReader(path)


def damaged_error(path: str, error: BaseException, training: bool) -> CheckpointError:
    """The error of a checkpoint whose files are there but cannot be read (a truncated or
    damaged file): 'cannot restore checkpoint P: <what TensorFlow said> (a truncated or damaged
    file? <what to do: checkpoint_lookup.damaged_advice>)'. `training`: the advice of a
    training run (else an evaluation's)."""
    return CheckpointError('cannot restore checkpoint %s: %s (a truncated or damaged file? %s)'
                           % (path, cnn_util.error_summary(error),
                              checkpoint_lookup.damaged_advice(path, training)))


def check_fits(path: str, required: dict, optional: dict, model_name: str,
               training: bool = False, copies: dict | None = None):
    """Checks names, shapes and dtypes; returns what to restore from `path`.

    Returns:
      (var_list, cast, translation): every variable to restore, {checkpoint name here:
      variable}; those stored with another floating-point dtype, {name: its dtype there}
      (float16 <-> float32: a checkpoint written with or without --fp16_vars), restored by
      casting; and, for a checkpoint the original tf_cnn_benchmarks wrote, its names
      (original_checkpoints.Translation), else None.

    `training`: for the advice of a damaged checkpoint's error (`damaged_error`). `copies`:
    the towers' own copies (VariableMgr.tower_copies), restored where the checkpoint holds
    them with the same shape, silently skipped where not (lifecycle/tower_copies.py says so);
    an original checkpoint's are never read.

    Raises:
      CheckpointError: the checkpoint cannot be read (`damaged_error`); a model variable is
        missing, has another shape, or another dtype that is not a floating-point one; or the
        checkpoint holds trained batch-norm scales the model has no variable for
        (`lost_scales`).
    """
    try:
        reader = open_reader(path)
        shapes = reader.get_variable_to_shape_map()
        dtypes = reader.get_variable_to_dtype_map()
    except (tf.errors.OpError, ValueError, IndexError) as e:
        raise damaged_error(path, e, training) from None
    original = None
    if original_checkpoints.is_original(shapes):
        original = original_checkpoints.translate(shapes, dtypes, {**required, **optional})
        shapes, dtypes = original.shapes, original.dtypes
    missing = sorted(n for n in required if n not in shapes)
    if missing and original:
        raise CheckpointError(original_checkpoints.unmapped_message(
            path, model_name, missing, len(required)))
    if missing:
        raise CheckpointError(
            'checkpoint %s does not fit --model=%s: it lacks %d of the model\'s %d variables '
            '(e.g. %s); use the --model it was written with or another --train_dir'
            % (path, model_name, len(missing), len(required), missing[0]))
    for name, var in sorted(required.items()):
        want = var.shape.as_list()
        if list(shapes[name]) != want:
            raise CheckpointError(
                'checkpoint %s does not fit this run: %s has shape %s there and %s here %s; '
                'use another --train_dir'
                % (path, name, list(shapes[name]), want,
                   original_checkpoints.shape_hint() if original else
                   '(another --model, --image_size, dataset or --num_classes?)'))
    try:
        lost = [] if original else lost_scales(reader, shapes, required)
    except (tf.errors.OpError, ValueError, IndexError) as e:
        raise damaged_error(path, e, training) from None
    if lost:
        raise CheckpointError(
            'checkpoint %s does not fit --model=%s: its batch norms have a trained scale (%s, '
            'e.g. %s) where this version\'s have none, as the original tf_cnn_benchmarks\' (it '
            'was written by an earlier version of this project, whose batch norms all had '
            'one): restoring it would drop them; evaluate it with the version that wrote it, '
            'or train afresh with another --train_dir'
            % (path, model_name, cnn_util.counted(len(lost), 'gamma'), lost[0]))
    present = {n: v for n, v in optional.items()
               if n in shapes and list(shapes[n]) == v.shape.as_list()}
    # A checkpoint from before the images were counted: restore() fills the count in.
    absent = sorted(set(optional) - set(present) - {images_seen.CHECKPOINT_NAME})
    if absent:
        cnn_util.warn('checkpoint %s has no optimizer state for %d variable(s) (e.g. %s; '
                      'written with another --optimizer?): they start from their initial values'
                      % (path, len(absent), absent[0]))
    if copies and not original:
        present.update({n: v for n, v in copies.items()
                        if n in shapes and list(shapes[n]) == v.shape.as_list()})
    var_list = {**required, **present}
    cast = {}
    for name, var in sorted(var_list.items()):
        have, want = dtypes[name], var.dtype.base_dtype
        if have == want:
            continue
        if not (have.is_floating and want.is_floating):
            raise CheckpointError(
                'checkpoint %s does not fit this run: %s is %s there and %s here; use another '
                '--train_dir' % (path, name, have.name, want.name))
        cast[name] = have.name
    return var_list, cast, original


def lost_scales(reader, shapes: dict, restored) -> list:
    """The checkpoint's batch-norm scales ('.../gamma', float32 [channels]) that `restored`
    (the names this model restores) lacks beside the same batch norm's beta, and whose values
    are not all 1: a trained scale that restoring into this model would drop. (This project's
    batch norms all had a scale until they took the original's settings, 2026-12-06: inception3
    and inception4, and ResNet v2's pre-activation and final batch norms, have none since.)
    Sorted names; [] when the checkpoint has none."""
    return sorted(n for n in shapes if n.endswith('/gamma') and n not in restored
                  and n[:-len('gamma')] + 'beta' in restored
                  and not (reader.get_tensor(n) == 1).all())


def restore_fed(sess, path: str, fed: dict, stored: dict, reorder: dict) -> None:
    """Restores the variables of `fed` ({checkpoint name: variable}) from `path`, each value
    cast to its variable's dtype and, for the names in `reorder`, its rows reordered
    (original_checkpoints.nchw_rows_to_nhwc); each value is fed to the variable's initializer:
    no new graph ops. `stored` maps a name here to the checkpoint's where they differ."""
    reader = open_reader(path)
    for name, var in sorted(fed.items()):
        value = reader.get_tensor(stored.get(name, name))
        if name in reorder:
            value = original_checkpoints.nchw_rows_to_nhwc(value, reorder[name])
        value = value.astype(var.dtype.base_dtype.as_numpy_dtype)
        sess.run(var.initializer, {var.initializer.inputs[1]: value})


def cast_line(path: str, cast: dict, var_list: dict) -> str:
    """The line saying which variables of `path` were cast ({name: its dtype there})."""
    kinds = sorted({(have, var_list[n].dtype.base_dtype.name) for n, have in cast.items()})
    written = ('with --fp16_vars' if kinds[0][0] == 'float16' else
               'without --fp16_vars' if kinds[0][1] == 'float16' else 'in another precision')
    return 'Cast %d variable(s) of %s from %s (written %s)' % (
        len(cast), path, ', '.join('%s to %s' % k for k in kinds), written)


_FINITE_COUNTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def non_finite_problem(sess, graph, path: str, var_list: dict) -> str | None:
    """The CheckpointError text when a restored floating-point variable of `var_list`
    ({checkpoint name: variable}) holds a NaN or an infinity (the run that wrote the checkpoint
    diverged: the original saved such weights), else None. The counting ops are built once per
    graph and name set (an eval loop restores many checkpoints into one graph)."""
    names = sorted(n for n, v in var_list.items() if v.dtype.base_dtype.is_floating)
    cache = _FINITE_COUNTS.setdefault(graph, {})
    if tuple(names) not in cache:
        with graph.as_default(), tf1.name_scope('checkpoint_non_finite'):
            cache[tuple(names)] = [tf.reduce_sum(tf.cast(tf.logical_not(tf.math.is_finite(
                var_list[n])), tf.int64)) for n in names]
    bad = [(n, int(c)) for n, c in zip(names, sess.run(cache[tuple(names)])) if c]
    if not bad:
        return None
    name, count = bad[0]
    more = ', and %d more variables' % (len(bad) - 1) if len(bad) > 1 else ''
    return ('checkpoint %s holds NaN or infinite values (%d of the %d values of %s%s): the run '
            'that wrote it diverged, so its weights cannot be evaluated or trained on: give an '
            'earlier one, --checkpoint_path=%s/model.ckpt-N (with another --train_dir to train '
            'from it), or train afresh with another --train_dir'
            % (path, count, var_list[name].shape.num_elements(), name, more,
               os.path.dirname(path) or '.'))

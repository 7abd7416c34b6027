"""The temporary files of checkpoint saves: those a killed save left behind, removed when a
run starts, and those of a save of this run that failed (a full disk), removed at once.

TensorFlow writes a checkpoint's files under temporary names and renames them when complete
(lifecycle/checkpoints.py): `model.ckpt-<step>.index.tempstate<digits>` and
`model.ckpt-<step>.data-<i>-of-<n>.tempstate<digits>`, the directory `model.ckpt-<step>_temp`
of a sharded save, and `checkpoint.tmp<32 hex digits>` of the state file being replaced. A
save that fails midway (ENOSPC) can leave the written part of a data file behind: on a full
disk, the very space the next save needs.
"""

from __future__ import annotations

import os
import re

import tensorflow as tf

from .. import cnn_util
from ..runtime import file_systems

CHECKPOINT_BASENAME = 'model.ckpt'
_STALE = re.compile(r'^(%s-\d+(_temp|\.(index|data-\d+-of-\d+)\.tempstate\d+)'
                    r'|checkpoint\.tmp[0-9a-f]{32})$' % re.escape(CHECKPOINT_BASENAME))


class CheckpointSaveError(cnn_util.BenchmarkError):
    """A checkpoint save failed (a full disk, ...); its temporary files were removed.
    `global_step`: the step of the checkpoint that was not saved."""

    def __init__(self, message: str, global_step: int | None = None):
        super().__init__(message)
        self.global_step = global_step


def clean_stale_temporaries(train_dir: str) -> list[str]:
    """Removes what a save killed midway (SIGKILL, power loss) left in `train_dir`.

    Those are TensorFlow's temporaries, renamed into place only when complete: files
    `model.ckpt-<step>.index.tempstate<digits>` and `model.ckpt-<step>.data-<i>-of-<n>.tempstate
    <digits>` (a checkpoint being written), directories `model.ckpt-<step>_temp` (the same for a
    sharded save) and files `checkpoint.tmp<32 hex digits>` (the state file being replaced).
    No complete checkpoint and nothing else is touched. Logs one line naming what was
    removed, if anything.

    Returns:
      The names removed, sorted (empty when there were none or `train_dir` does not exist).
    """
    names = remove_temporaries(train_dir)
    if names:
        cnn_util.log_fn('Removed %d temporary file(s) of an interrupted checkpoint save from %s: '
                        '%s' % (len(names), train_dir, ', '.join(names)))
    return names


def remove_temporaries(train_dir: str) -> list[str]:
    """Removes the temporaries of checkpoint saves from `train_dir` (those
    `clean_stale_temporaries` names), quietly: also after a save of this run that failed (a
    full disk), whose TensorFlow may leave its `.tempstate` files behind.

    Returns:
      The names removed, sorted (empty when there were none, `train_dir` does not exist or
      cannot be listed); a file that cannot be removed is left out.
    """
    try:
        names = sorted(n for n in file_systems.listdir(train_dir) if _STALE.match(n))
    except (OSError, tf.errors.OpError):
        return []
    removed = []
    for name in names:
        path = os.path.join(train_dir, name)
        try:
            if file_systems.isdir(path):
                file_systems.rmtree(path)
            else:
                file_systems.remove(path)
        except (FileNotFoundError, tf.errors.NotFoundError):
            pass  # gone already
        except (OSError, tf.errors.OpError):
            continue  # cannot be removed: not named as removed
        removed.append(name)
    return removed


def _is_folder(path: str) -> bool:
    try:
        return bool(file_systems.isdir(path))
    except (OSError, tf.errors.OpError):
        return False


def _exists(path: str) -> bool:
    try:
        return bool(file_systems.exists(path))
    except (OSError, tf.errors.OpError):
        return False


def save_failure(error: BaseException, train_dir: str,
                 global_step: int) -> CheckpointSaveError:
    """The error of a checkpoint save that failed (TensorFlow's OpError or an OSError), after
    its temporary files were removed (`remove_temporaries`): 'the checkpoint of global step 10
    could not be saved in /td: No space left on device (writing model.ckpt-10.data-00000-of-
    00001.tempstate123); its temporary files were removed'."""
    text = cnn_util.error_summary(error)
    if isinstance(error, OSError) and error.strerror:
        text = error.strerror
    if not _is_folder(train_dir):
        # The Saver's ValueError "Parent directory of ... doesn't exist": say what happened.
        text = ('--train_dir is no longer a folder (%s during the run)' % (
            'replaced by a file' if _exists(train_dir) else 'removed'))
    writing = ''
    if '; ' in text:  # TensorFlow's '<file>; <reason>'
        where, text = text.rsplit('; ', 1)
        writing = ' (writing %s)' % os.path.basename(where.strip())
    removed = remove_temporaries(train_dir)
    return CheckpointSaveError(
        'the checkpoint of global step %d could not be saved in %s: %s%s%s'
        % (global_step, train_dir, text, writing,
           '; its temporary files were removed' if removed else ''), global_step)

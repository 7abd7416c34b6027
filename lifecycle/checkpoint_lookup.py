"""Finding checkpoints in a folder, and what to say when the one a run wanted is damaged or gone.

lifecycle/checkpoints.py decides which checkpoint a run restores from; this module owns the
folder-level facts it needs:
  - `latest_checkpoint`: the newest complete checkpoint the `checkpoint` state file names,
    read again when a training run beside this process replaced the state file between its
    reading and the check of its files (a save that rotated the named checkpoint away);
  - `intact_checkpoints`: the `model.ckpt-N` prefixes in a folder whose index reads and whose
    data files are all there, newest first, whether or not a state file names them;
  - `gone`: whether a checkpoint's files no longer exist (a training run's --max_ckpts_to_keep
    rotated it away), which is not damage;
  - the advice of the errors about a damaged checkpoint or state file (`damaged_advice`,
    `state_file_message`): the intact older checkpoint there, and the flag that uses it;
  - `strip_suffix`: a file name given for a checkpoint prefix ('model.ckpt-300.index').
"""

from __future__ import annotations

import os
import re

import tensorflow as tf

from ..runtime import file_systems
from .checkpoint_temporaries import CHECKPOINT_BASENAME

tf1 = tf.compat.v1

STATE_FILE = 'checkpoint'
_PREFIX = re.compile(r'^%s-(\d+)\.index$' % re.escape(CHECKPOINT_BASENAME))
_SHARD = re.compile(r'\.data-\d+-of-(\d+)$')
_SUFFIX = re.compile(r'\.(index|meta|data-\d{5}-of-\d{5})$')
# Reads of a state file that a save beside this process keeps replacing (each replacement is
# atomic): more than this many changes in a row is not a race but a broken folder.
_RETRIES = 5


class StateFileError(Exception):
    """The `checkpoint` state file of `directory` is unreadable or names files that are gone.

    Attributes:
      directory: the folder.
    """

    def __init__(self, directory: str):
        super().__init__(directory)
        self.directory = directory


def _state_text(path: str) -> bytes | None:
    try:
        with file_systems.open_file(path, 'rb') as f:
            return f.read()
    except (OSError, tf.errors.OpError):
        return None


def _read_latest(directory: str) -> str | None:
    logger = tf.get_logger()
    level = logger.level
    logger.setLevel('FATAL')  # TensorFlow logs its own take on a bad state file; ours follows
    try:
        return tf1.train.latest_checkpoint(directory)
    except (ValueError, UnicodeDecodeError, tf.errors.OpError):  # empty or binary state file
        return None
    finally:
        logger.setLevel(level)


def latest_checkpoint(directory: str | None) -> str | None:
    """The newest complete checkpoint recorded in `directory`, or None when it records none.

    A training run saving into `directory` replaces the state file and then removes the
    checkpoint --max_ckpts_to_keep rotates out: a state file read just before that names files
    gone by the time they are looked for. When the state file changed meanwhile it is read
    again (up to a few times).

    Raises:
      StateFileError: `directory` has a `checkpoint` state file that is unreadable or names
        checkpoint files that are gone (TensorFlow would ignore it and a training run would
        silently start from scratch).
    """
    if not directory or not file_systems.isdir(directory):
        return None
    state_file = os.path.join(directory, STATE_FILE)
    for _ in range(_RETRIES):
        before = _state_text(state_file)
        found = _read_latest(directory)
        if found is not None:
            return found
        if before is None and not file_systems.exists(state_file):
            return None
        if _state_text(state_file) == before:
            break
    if file_systems.exists(state_file):
        raise StateFileError(directory)
    return None


def _all_data_files(prefix: str) -> bool:
    """Whether every data file 'prefix.data-<i>-of-<n>' of the checkpoint is there."""
    try:
        shards = [s for s in file_systems.glob(prefix + '.data-*-of-*') if _SHARD.search(s)]
    except (OSError, tf.errors.OpError):
        return False
    return bool(shards) and len(shards) >= int(_SHARD.search(shards[0]).group(1))


def gone(prefix: str) -> bool:
    """Whether the files of checkpoint `prefix` are (partly) gone: no index, or a data file
    missing (what a save's rotation of old checkpoints, or a user, removed)."""
    return not (file_systems.exists(prefix + '.index') and _all_data_files(prefix))


def _readable(prefix: str) -> bool:
    if not _all_data_files(prefix):
        return False
    try:
        tf1.train.NewCheckpointReader(prefix)
    except (tf.errors.OpError, ValueError, IndexError):
        return False
    return True


def intact_checkpoints(directory: str | None, exclude: str | None = None) -> list[str]:
    """The `model.ckpt-N` prefixes in `directory` whose index reads and whose data files are
    there, newest (highest N) first; `exclude` (a prefix) left out. [] when there are none or
    the folder cannot be listed. (Their values are not read: damage inside a data file shows
    only when it is restored.)"""
    if not directory:
        return []
    try:
        names = file_systems.listdir(directory)
    except (OSError, tf.errors.OpError):
        return []
    steps = sorted((int(m.group(1)) for m in map(_PREFIX.match, names) if m), reverse=True)
    found = []
    for step in steps:
        prefix = os.path.join(directory, '%s-%d' % (CHECKPOINT_BASENAME, step))
        if prefix != exclude and _readable(prefix):
            found.append(prefix)
    return found


def damaged_advice(path: str, training: bool) -> str:
    """What to do about the damaged checkpoint `path` (a prefix): use the newest intact older
    one in its folder, e.g. 'the older /d/model.ckpt-10 there is intact: to resume from it,
    delete this one's files (/d/model.ckpt-12.*) and give --checkpoint_path=/d/model.ckpt-10'
    (training: the folder's newest wins over --checkpoint_path while its files are there);
    'to evaluate it, give --checkpoint_path=...' otherwise."""
    directory = os.path.dirname(path)
    older = [c for c in intact_checkpoints(directory, exclude=path)
             if _step(c) < _step(path)]
    files = '%s.*' % path
    if not older:
        if training:
            return ('no intact older checkpoint is in %s: delete this one\'s files (%s) and the '
                    'state file %s to start from scratch' % (
                        directory or '.', files, os.path.join(directory, STATE_FILE)))
        return 'no intact older checkpoint is in %s' % (directory or '.')
    if training:
        return ('the older %s there is intact: to resume from it, delete this one\'s files (%s) '
                'and give --checkpoint_path=%s' % (older[0], files, older[0]))
    return 'the older %s there is intact: to use it, give --checkpoint_path=%s' % (
        older[0], older[0])


def state_file_message(directory: str, training: bool) -> str:
    """The error text of a `checkpoint` state file in `directory` that is unreadable or names
    checkpoint files that are gone, naming the newest intact checkpoint there and the flag that
    uses it (a training run with --checkpoint_path resumes from it and its next save rewrites
    the state file)."""
    state_file = os.path.join(directory, STATE_FILE)
    intact = intact_checkpoints(directory)
    head = '%s is corrupt or names checkpoint files that are gone' % state_file
    if training and intact:
        return ('%s; the newest intact checkpoint there is %s: resume from it with '
                '--checkpoint_path=%s (the next save rewrites the state file), or delete the '
                'state file to start from scratch' % (head, intact[0], intact[0]))
    if training:
        return ('%s and no intact checkpoint is there; delete it to start from scratch, or give '
                '--checkpoint_path a checkpoint elsewhere' % head)
    if intact:
        return '%s; the newest intact checkpoint there is %s: give --checkpoint_path=%s' % (
            head, intact[0], intact[0])
    return ('%s and no intact checkpoint is there; give --checkpoint_path a checkpoint '
            'elsewhere' % head)


def _step(prefix: str) -> int:
    found = re.search(r'-(\d+)$', prefix)
    return int(found.group(1)) if found else -1


def prefix_of(path: str) -> str:
    """`path` without a checkpoint file's suffix ('.index', '.meta', '.data-00000-of-00001')."""
    return _SUFFIX.sub('', path)


def strip_suffix(path: str) -> str:
    """A checkpoint prefix from a checkpoint's file name: 'd/model.ckpt-300' from
    'd/model.ckpt-300.index', '.meta' or '.data-00000-of-00001' when that prefix has an
    index; else `path` as given."""
    prefix = _SUFFIX.sub('', path)
    if prefix != path and file_systems.exists(prefix + '.index'):
        return prefix
    return path

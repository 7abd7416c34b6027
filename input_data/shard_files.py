"""A subset's files in --data_dir: whether each listed one can be opened before any is read.

A shard can be listed and yet not be readable: a dangling symbolic link into a share that is
not mounted, a file this user may not read (copied as root with mode 600), a folder named like
a shard. Each is found here at start-up, for every subset a run reads, and stops the run with
one line naming the file and the fix; --skip_corrupt_records does not skip them (the data is
not damaged, it cannot be reached: a run that read around them would quietly train on less).
Before this check opened each file (it only stat'ed them), the first two reached a reader:
a traceback from the start-up walk, or a TensorFlow error during the run (and with
--skip_corrupt_records a reader that retried the file without end).
"""

from __future__ import annotations

import concurrent.futures

from .. import cnn_util
from ..runtime import file_systems

#: Files opened at once (a remote file system answers each open over the network).
MAX_THREADS = 16


def _fix(path: str, error: OSError, noun: str, what: str) -> str:
    """The remedy for a file that cannot be opened, after its reason."""
    if isinstance(error, IsADirectoryError):
        return ('move it out of --data_dir or rename it (its name makes it one of the %s %ss)'
                % (what, noun))
    if isinstance(error, PermissionError):
        return ('give this user read permission (chmod a+r %s) or run as a user who can '
                'read it' % path)
    if file_systems.is_remote(path):
        return "check the network access, the credentials and the bucket's name"
    return 'restore it from a copy, or check the disk or share it is on'


def _reason(path: str, error: OSError, noun: str) -> str:
    """'cannot open shard PATH: Permission denied', 'shard PATH is a folder, not a file'."""
    if isinstance(error, IsADirectoryError):
        return '%s %s is a folder, not a file' % (noun, path)
    return 'cannot open %s %s: %s' % (noun, path, error.strerror or
                                      cnn_util.error_summary(error))


def check_files_readable(files: list[str], what: str, noun: str = 'shard') -> None:
    """Opens every file of a subset, and reads its first byte, before any is read.

    Args:
      files: the subset's files (`dataset_info.Dataset.subset_files`).
      what: the subset for the message, e.g. 'imagenet train'.
      noun: what one file is called: 'shard', or 'file' (a CIFAR-10 batch).

    Raises:
      cnn_util.DataError: naming the first file that cannot be opened (a dangling link with
        its missing target, a folder, a file this user may not read, ...), how many of the
        subset's files cannot, and the fix.
    """
    def problem(path):
        try:
            file_systems.check_readable(path)
            return None
        except OSError as e:
            return e

    threads = max(1, min(MAX_THREADS, len(files)))
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        bad = [(path, e) for path, e in zip(files, pool.map(problem, files), strict=True) if e]
    if not bad:
        return
    path, e = bad[0]
    more = ' (%d of the %d %s files cannot be opened)' % (len(bad), len(files), what) \
        if len(bad) > 1 else ''
    link = file_systems.missing_link_target(path)
    if link:
        fix = ('point the link at the %s' % noun if link.startswith('a loop') else
               'mount or restore the target (an unmounted share?)')
        # Without the link a shard's -of-N misses an index, refused without the flag.
        remove = ('remove the link and pass --allow_shard_subset (the other shards are then '
                  'a subset)' if noun == 'shard' else 'remove the link')
        raise cnn_util.DataError('%s %s is %s%s: %s, or %s' % (
            noun, path, link, more, fix, remove))
    raise cnn_util.DataError('%s%s: %s' % (_reason(path, e, noun), more,
                                           _fix(path, e, noun, what)))


def open_failure(message: str, files: tuple[str, ...] | list[str],
                 noun: str = 'shard') -> cnn_util.DataError | None:
    """The one-line error of a reader that could not open a shard during the run (it could at
    start-up: a file removed, or its permission taken away, since), else None.

    Args:
      message: the session error's message: tf.data's NotFoundError or PermissionDeniedError
        ('PATH; No such file or directory'), RecordInput's InvalidArgumentError ("Can't open
        PATH").
      files: the shards read; the one named in `message` is opened again for its reason.
      noun: what one file is called.
    """
    named = [f for f in files if f in message]
    if not named:
        return None
    path = max(named, key=len)  # .../train-1 is inside .../train-10's name
    try:
        file_systems.check_readable(path)
    except OSError as e:
        return cnn_util.DataError('%s (during the run; it could be opened at start-up): %s'
                                  % (_reason(path, e, noun), _fix(path, e, noun, 'read')))
    return cnn_util.DataError(
        'cannot open %s %s during the run (%s), though it can be opened now: was it replaced '
        'or remounted during the run? Run again' % (noun, path, message.strip().splitlines()[-1]
                                                     if message.strip() else 'no reason given'))

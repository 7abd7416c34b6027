"""Files that are listed but cannot be opened: dangling symbolic links (a shard folder of links
into a share that is not mounted), loops of links, and a subset's files checked before any is
read (input_data/dataset_info.py calls them; the words name the link and its missing target).
"""

from __future__ import annotations

import errno
import os

from .. import cnn_util
from ..runtime import file_systems


def link_loop(path: str) -> str | None:
    """For a symbolic link that leads back to itself (os.stat fails with ELOOP): 'a loop of
    symbolic links (/x/a -> /x/b -> /x/a)'; None otherwise."""
    if not os.path.islink(path):
        return None
    try:
        os.stat(path)
        return None
    except OSError as e:
        if e.errno != errno.ELOOP:
            return None
    chain = [os.path.abspath(path)]
    while os.path.islink(chain[-1]) and len(chain) <= 8:
        chain.append(os.path.normpath(os.path.join(os.path.dirname(chain[-1]),
                                                   os.readlink(chain[-1]))))
        if chain[-1] in chain[:-1]:
            break
    else:
        chain.append('...')
    return 'a loop of symbolic links (%s)' % ' -> '.join(chain)


def missing_link_target(path: str) -> str | None:
    """For a dangling symbolic link, 'a symbolic link to T, which does not exist' (or
    '..., whose target F does not exist' through a chain of links; `link_loop`'s words for a
    loop); None otherwise."""
    if not os.path.islink(path) or os.path.exists(path):
        return None
    loop = link_loop(path)
    if loop:
        return loop
    target = os.path.normpath(os.path.join(os.path.dirname(path), os.readlink(path)))
    final = os.path.realpath(path)
    if final == target:
        return 'a symbolic link to %s, which does not exist' % target
    return 'a symbolic link to %s, whose target %s does not exist' % (target, final)


def dangling_link_on(path: str) -> str | None:
    """For a local path that does not exist because it, or a folder on its way, is a dangling
    symbolic link: '<path> is a symbolic link to T, which does not exist' (the path itself), or
    '<path> does not exist: <folder> is a symbolic link to T, ...' (a folder on the way);
    None otherwise (missing_link_target words the link)."""
    parts = os.path.abspath(path).split(os.sep)
    for end in range(2, len(parts) + 1):
        prefix = os.sep.join(parts[:end])
        link = missing_link_target(prefix)
        if link:
            if end == len(parts):
                return '%s is %s' % (path, link)
            return '%s does not exist: %s is %s' % (path, prefix, link)
        if not os.path.exists(prefix):
            return None  # a plain missing folder
    return None


def check_files_readable(files: list[str], what: str, noun: str = 'shard') -> None:
    """Stats every file of a subset before any is read.

    A shard folder of links into a share that is not mounted lists its shards but cannot open
    them; without this check the shard scan ended with a FileNotFoundError traceback. Not
    skipped by --skip_corrupt_records: the data is not damaged, it is not there.

    Args:
      files: the subset's files (`Dataset.subset_files`).
      what: the subset for the message, e.g. 'imagenet train'.
      noun: what one file is called: 'shard', or 'file' (a CIFAR-10 batch).

    Raises:
      DataError: naming the first file that cannot be opened (a dangling link with its missing
        target) and how many of the subset's files cannot.
    """
    bad = []
    for path in files:
        try:
            file_systems.stat(path)  # a remote shard through TensorFlow's file system
        except OSError as e:
            bad.append((path, e))
    if not bad:
        return
    path, e = bad[0]
    link = missing_link_target(path)
    more = ' (%d of the %d %s files cannot be opened)' % (len(bad), len(files), what) \
        if len(bad) > 1 else ''
    if link:
        fix = ('point the link at the %s' % noun if link.startswith('a loop') else
               'mount or restore the target (an unmounted share?)')
        raise cnn_util.DataError('%s %s is %s%s: %s, or remove the link' % (
            noun, path, link, more, fix))
    raise cnn_util.DataError('cannot open %s %s: %s%s' % (noun, path, e.strerror or e, more))

"""TensorFlow's file systems for paths with a scheme (`gs://bucket/run1`, `ram://data`).

A path flag (params.PATH_FLAGS) names a local path, or a URI whose scheme one of TensorFlow's
file systems serves; such a path is read and written through `tf.io.gfile` (and TensorFlow's
own ops: checkpoints, summaries, RecordInput and tf.data readers open it by name), as the
original tf_cnn_benchmarks did. Local paths keep the project's own code (flock, pread,
atomic renames).

Which schemes are served is known in two steps, so that `--help` and usage errors stay fast:

  - before TensorFlow loads (`scheme_problem`): the schemes TensorFlow 2.21 registers itself
    (`BUILTIN_SCHEMES`: gs:// Google Cloud Storage, ram:// its in-memory file system,
    file://) pass; any other passes only when a package that registers file systems is
    installed (`PLUGIN_PACKAGES`), else it is refused with what provides it (s3://, hdfs://
    and the rest of `TFIO_SCHEMES` left TensorFlow's wheel for tensorflow-io in TF 2.6, whose
    last release is built for TensorFlow 2.16: `TFIO_LAST`);
  - once TensorFlow has loaded (`unregistered_problem`): `tf.io.gfile.get_registered_schemes()`
    after importing such a package, which registers its file systems when imported.

The scheme is what TensorFlow's own URI parser takes (tsl/platform/path.cc ParseURI): a
letter, then letters, digits and dots, then `://`.

The helpers below take either kind of path: local ones go to os and open(), the others to
tf.io.gfile (TensorFlow is imported on first use). Errors are OSError for both (TensorFlow's
NotFoundError and the like are turned into OSError with TensorFlow's message). The last
section words a local path's symbolic links that lead nowhere (a dangling link, a loop of
links), for the errors of folders and shards that are listed but cannot be opened.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import glob as _glob
import importlib.util
import os
import re
import stat as stat_lib
import tempfile
import warnings
from typing import NamedTuple

# tf.io.gfile.get_registered_schemes() of the TensorFlow 2.21 wheel: ['ram', 'file', '', 'gs'].
BUILTIN_SCHEMES = ('file', 'gs', 'ram')

# Importing one of these registers more file systems with TensorFlow.
PLUGIN_PACKAGES = ('tensorflow_io',)

# The schemes that left TensorFlow's wheel in 2.6 for tensorflow-io's file systems.
TFIO_SCHEMES = ('s3', 'hdfs', 'viewfs', 'har', 'az', 'http', 'https')

# tensorflow-io's releases are each built for one TensorFlow minor version; the last one,
# 0.37.1 (July 2024), requires tensorflow>=2.16,<2.17 (its PyPI metadata and
# the `require` string of its version_ops module). Imported by TensorFlow 2.21 it warns that its
# libraries do not load (undefined symbols) and registers no scheme (measured).
TFIO_LAST = ('0.37.1', (2, 16))

_URI = re.compile(r'^([A-Za-z][A-Za-z0-9.]*)://')


def scheme(path: str | None) -> str:
    """The scheme of `path` ('gs' for 'gs://bucket/x'), '' for a local path."""
    match = _URI.match(path or '')
    return match.group(1) if match else ''


def is_remote(path: str | None) -> bool:
    """True when `path` goes through TensorFlow's file systems (it has a scheme)."""
    return bool(scheme(path))


def _provider(name: str, tf_version: str) -> str:
    """What provides scheme `name` for TensorFlow `tf_version` ('2.21.0'), as advice."""
    if name.lower() not in TFIO_SCHEMES:
        return ('install the package that registers a TensorFlow file system for it, or give '
                'a local path')
    release, built_for = TFIO_LAST
    if _minor(tf_version) == built_for:
        return ('pip install tensorflow-io==%s (its file systems register %s:// when '
                'tensorflow_io is imported, which this program does)' % (release, name))
    return ('tensorflow-io provides it, but its last release (%s) is built for TensorFlow '
            '%d.%d and its file systems do not load in %s: give a local path or a gs:// one '
            '(copy the data there with your storage\'s own tools)'
            % (release, built_for[0], built_for[1], tf_version))


def _minor(version: str) -> tuple[int, ...]:
    """(2, 21) of '2.21.0'; () when `version` does not start with two numbers."""
    match = re.match(r'(\d+)\.(\d+)', version)
    return (int(match.group(1)), int(match.group(2))) if match else ()


def scheme_problem(path: str) -> str | None:
    """Before TensorFlow loads: why no file system can serve `path`, or None (a local path,
    a built-in scheme, or any scheme while a plugin package is installed: then
    `unregistered_problem` decides once TensorFlow has loaded)."""
    name = scheme(path)
    if not name or name in BUILTIN_SCHEMES:
        return None
    if any(importlib.util.find_spec(p) is not None for p in PLUGIN_PACKAGES):
        return None
    return _unregistered_message(name)


def _unregistered_message(name: str) -> str:
    version = _tf_version()
    return ('TensorFlow %s has no file system for %s:// (registered: %s); %s' % (
        version, name, ', '.join('%s://' % s for s in BUILTIN_SCHEMES),
        _installed_plugin_problem(name, version) or _provider(name, version)))


def _installed_plugin_problem(name: str, tf_version: str) -> str | None:
    """Why tensorflow-io, installed, registered no `name`:// (None where it is not installed,
    or does not serve `name`)."""
    from importlib import metadata
    if name.lower() not in TFIO_SCHEMES:
        return None
    try:
        release = metadata.version('tensorflow-io')
    except metadata.PackageNotFoundError:
        return None
    built_for = [r.split(';')[0].strip() for r in metadata.requires('tensorflow-io') or ()
                 if re.match(r'tensorflow\s*[<>=!~]', r)]
    return ('tensorflow-io %s is installed but its file systems did not load in TensorFlow %s'
            '%s: give a local path or a gs:// one (copy the data there with your storage\'s '
            'own tools)' % (release, tf_version,
                            ' (it is built for %s)' % built_for[0] if built_for else ''))


def _tf_version() -> str:
    from importlib import metadata
    for dist in ('tensorflow', 'tensorflow-cpu', 'tf-nightly'):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return '(not installed)'


def registered_schemes() -> list[str]:
    """The schemes TensorFlow serves now, after importing the installed plugin packages."""
    import tensorflow as tf
    schemes = tf.io.gfile.get_registered_schemes()
    if any(s not in schemes for s in TFIO_SCHEMES):
        for package in PLUGIN_PACKAGES:
            if importlib.util.find_spec(package) is not None:
                # A plugin built for another TensorFlow warns of its libraries in several
                # lines; the error line says it instead (_installed_plugin_problem).
                with warnings.catch_warnings():
                    warnings.simplefilter('ignore')
                    try:
                        importlib.import_module(package)
                    except Exception:  # noqa: BLE001 (a broken plugin: its schemes stay missing)
                        continue
        schemes = tf.io.gfile.get_registered_schemes()
    return [s for s in schemes if s]


def unregistered_problem(path: str) -> str | None:
    """Once TensorFlow has loaded: why no file system serves `path`, or None."""
    name = scheme(path)
    if not name or name in registered_schemes():
        return None
    return _unregistered_message(name)


# --- Operations on either kind of path.

def _gfile():
    import tensorflow as tf
    return tf.io.gfile


@contextlib.contextmanager
def _as_os_error(path: str):
    """TensorFlow's errors.OpError (NotFoundError, PermissionDeniedError, ...) as OSError,
    whose text names `path` and TensorFlow's reason."""
    import tensorflow as tf
    try:
        yield
    except tf.errors.NotFoundError as e:
        raise FileNotFoundError('%s: %s' % (path, e.message or 'no such file')) from None
    except tf.errors.OpError as e:
        raise OSError('%s: %s' % (path, e.message or type(e).__name__)) from None


class FileStat(NamedTuple):
    """st_size (bytes) and st_mtime_ns of a file, local or remote."""
    st_size: int
    st_mtime_ns: int


def stat(path: str):
    """os.stat of a local path; a FileStat of a remote one.

    Raises:
      OSError: no such file, or it cannot be read.
    """
    if not is_remote(path):
        return os.stat(path)
    with _as_os_error(path):
        found = _gfile().stat(path)
    return FileStat(found.length, found.mtime_nsec)


def getsize(path: str) -> int:
    """The size of a file in bytes (OSError when it cannot be read)."""
    return stat(path).st_size


def exists(path: str) -> bool:
    if not is_remote(path):
        return os.path.exists(path)
    with _as_os_error(path):
        return _gfile().exists(path)


def isdir(path: str) -> bool:
    if not is_remote(path):
        return os.path.isdir(path)
    with _as_os_error(path):
        return _gfile().isdir(path)


def listdir(path: str) -> list[str]:
    """The names in a folder (a remote folder's sub-folders without gfile's trailing '/')."""
    if not is_remote(path):
        return os.listdir(path)
    with _as_os_error(path):
        return [n.rstrip('/') for n in _gfile().listdir(path)]


def glob(pattern: str) -> list[str]:
    if not is_remote(pattern):
        return _glob.glob(pattern)
    with _as_os_error(pattern):
        return _gfile().glob(pattern)


def makedirs(path: str) -> None:
    """Makes `path` and its missing parents (nothing when it exists)."""
    if not is_remote(path):
        os.makedirs(path, exist_ok=True)
        return
    with _as_os_error(path):
        _gfile().makedirs(path)


def remove(path: str) -> None:
    if not is_remote(path):
        os.remove(path)
        return
    with _as_os_error(path):
        _gfile().remove(path)


def rmtree(path: str) -> None:
    """Removes a folder and what it holds; problems are ignored (as shutil's ignore_errors)."""
    if not is_remote(path):
        import shutil
        shutil.rmtree(path, ignore_errors=True)
        return
    try:
        with _as_os_error(path):
            _gfile().rmtree(path)
    except OSError:
        pass


def replace(source: str, target: str) -> None:
    """Renames `source` to `target`, replacing it (atomic on a local disk)."""
    if not (is_remote(source) or is_remote(target)):
        os.replace(source, target)
        return
    with _as_os_error(source):
        _gfile().rename(source, target, overwrite=True)


def check_readable(path: str) -> None:
    """Opens a file for reading and reads its first byte, as a record reader will.

    A `stat` alone passes a file this user cannot read (a shard copied as root with mode 600)
    and a folder named like a file; both failed later, inside a reader.

    Raises:
      IsADirectoryError: `path` is a folder.
      OSError: it cannot be opened or read (PermissionError, FileNotFoundError, an I/O error;
        a remote file system's error with its message), or it is not a regular file (a
        named pipe, a device).
    """
    if is_remote(path):
        with _as_os_error(path):
            if _gfile().isdir(path):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        with open_file(path, 'rb') as f:
            f.read(1)
        return
    mode = os.stat(path).st_mode
    if stat_lib.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if not stat_lib.S_ISREG(mode):  # opening a named pipe would wait for its writer
        raise OSError(errno.EINVAL, 'not a regular file', path)
    with builtins.open(path, 'rb') as f:
        f.read(1)


def open_file(path: str, mode: str = 'r', encoding: str | None = None):
    """open() for a local path, tf.io.gfile.GFile for a remote one (text or binary as `mode`
    says; a remote file is text in UTF-8)."""
    if not is_remote(path):
        if 'b' in mode:
            return builtins.open(path, mode)
        return builtins.open(path, mode, encoding=encoding or 'utf-8')
    return _RemoteFile(_gfile().GFile(path, mode), path)


class _RemoteFile:
    """A GFile whose TensorFlow errors come out as OSError (and a context manager)."""

    def __init__(self, handle, path: str):
        self._handle, self._path = handle, path

    def __getattr__(self, name):
        attr = getattr(self._handle, name)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            with _as_os_error(self._path):
                return attr(*args, **kwargs)
        return call

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        with _as_os_error(self._path):
            self._handle.close()
        return False

    def __iter__(self):
        with _as_os_error(self._path):
            yield from self._handle


def write_remote(path: str, data: bytes | str) -> None:
    """Writes a remote file in one piece (an object store makes it visible when complete).

    Raises:
      OSError: it cannot be written.
    """
    with open_file(path, 'wb' if isinstance(data, bytes) else 'w') as f:
        f.write(data)


def write_target(path: str) -> str:
    """The file an atomic write to the local `path` must replace: `path` itself, or, where
    `path` (or a folder on its way) is a symbolic link, the file it leads to
    (os.path.realpath), so that the rename replaces the link's target, in the target's folder,
    and the link stays (a dangling link's target is made). A loop of links stays as given (the
    write then fails with ELOOP; the usage check refuses it first: `link_loop`)."""
    return os.path.realpath(path)


def write_local(path: str, text: str, prefix: str = '.results_') -> None:
    """Writes `text` to the local `path` atomically: through a temporary file beside it
    (`<prefix>XXXX.tmp`, mode 0666 less the umask, as open() gives), renamed over `path`;
    a symbolic link's target, beside the target (`write_target`).

    Raises:
      OSError: it cannot be written (a full disk, ...): the temporary file is removed.
    """
    tmp = None
    path = write_target(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=prefix, suffix='.tmp')
        with os.fdopen(fd, 'w', encoding='utf-8') as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 -> what open() gives, like other outputs
        os.replace(tmp, path)
    except OSError:
        if tmp and os.path.exists(tmp):
            os.remove(tmp)
        raise


def make_file(path: str) -> None:
    """Makes `path` an empty file with mode 0666 less the umask, as open() gives, where there
    is none (an existing file is left as it is, not truncated). SQLite makes a new database
    file 0644 whatever the umask, and its -wal and -shm files take the database file's mode:
    a database made through this first follows the umask as the other outputs do, and a group
    whose umask is 002 can share it.

    Raises:
      OSError: the file cannot be opened or made (its folder is missing or cannot be
        written, ...).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | getattr(os, 'O_CLOEXEC', 0)
    os.close(os.open(path, flags, 0o666))


def folder_name_problem(path: str, example: str) -> str | None:
    """For a path given as a file's that ends in a path separator ('/tmp/x/db/'): 'it names
    a folder (it ends in /); give a file name in it, e.g. /tmp/x/db/results.sqlite' (with
    `example`, a file name); None for any other path. Such a name is not a file's: the
    trailing separator was dropped (a file 'db' written) or the write failed at the end.
    """
    ends = tuple({os.sep, os.altsep or os.sep, '/'})
    if not path or not path.endswith(ends):
        return None
    return 'it names a folder (it ends in %s); give a file name in it, e.g. %s%s' % (
        path[-1], path, example)


# --- Symbolic links of local paths that lead nowhere (a listed shard that cannot be opened).

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

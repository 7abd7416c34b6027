"""CIFAR-10 reading: the python-pickle batches `data_batch_1..5` and `test_batch`.

Each batch file is a pickled dict with `data`, a uint8 array [n, 3072] (per image the 1024 red,
then 1024 green, then 1024 blue values, rows top to bottom), and `labels`, n ints in [0, 10).
The files are read once in Python (a whole subset is 150 MB at most), checked, and written to a
temporary file of fixed-length records (1 label byte + 3072 image bytes, the layout of the
CIFAR-10 binary release) that a `tf.data.FixedLengthRecordDataset` streams; this keeps the
images out of the graph.

Unpickling runs code named by the file; the loader accepts only what numpy arrays and bytes
need under pickle protocols 2 to 5 (the original batches are Python 2 pickles; re-pickled by
Python 3 they use `_codecs.encode(text, 'latin1')` for bytes at protocol 2 and numpy's
`_frombuffer` for arrays at protocol 5) and rejects anything else.
"""

from __future__ import annotations

import atexit
import os
import pickle
import shutil
import tempfile

import numpy as np

from .. import cnn_util
from ..runtime import file_systems

IMAGE_BYTES = 32 * 32 * 3
RECORD_BYTES = 1 + IMAGE_BYTES
NUM_CLASSES = 10

_ALLOWED = {('numpy.core.multiarray', '_reconstruct'), ('numpy._core.multiarray', '_reconstruct'),
            ('numpy', 'ndarray'), ('numpy', 'dtype'), ('numpy.core.multiarray', 'scalar'),
            ('numpy._core.multiarray', 'scalar'), ('copyreg', '_reconstructor'),
            ('builtins', 'object'),
            # Protocol 5 (Python 3.8+): an array is numpy's _frombuffer(buffer, dtype, shape,
            # order), which only wraps bytes as an array.
            ('numpy.core.numeric', '_frombuffer'), ('numpy._core.numeric', '_frombuffer')}


def _latin1_encode(text, encoding):
    """Stands in for `_codecs.encode`, which protocol 2 uses to store bytes under Python 3
    (`_codecs.encode(text, 'latin1')`); any other codec is refused."""
    if encoding not in ('latin1', 'latin-1') or not isinstance(text, str):
        raise pickle.UnpicklingError('refusing _codecs.encode with encoding %r' % (encoding,))
    return text.encode('latin1')


class _SafeUnpickler(pickle.Unpickler):
    """Allows exactly the globals that numpy arrays and bytes of pickle protocols 2-5 need."""

    def find_class(self, module, name):
        if (module, name) == ('_codecs', 'encode'):
            return _latin1_encode
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError('refusing to unpickle %s.%s' % (module, name))
        return super().find_class(module, name)


def _read_batch(path: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        with file_systems.open_file(path, 'rb') as f:
            batch = _SafeUnpickler(f, encoding='bytes').load()
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError,
            IndexError, KeyError) as e:
        raise cnn_util.DataError('cannot read CIFAR-10 batch %s: %s (a damaged download? '
                                 'replace it with the file from cifar-10-python.tar.gz)' % (
                                     path, str(e) or type(e).__name__)) from None
    if not isinstance(batch, dict):
        raise cnn_util.DataError('CIFAR-10 batch %s is not a pickled dict' % path)
    batch = {k.decode() if isinstance(k, bytes) else k: v for k, v in batch.items()}
    if 'data' not in batch or 'labels' not in batch:
        raise cnn_util.DataError('CIFAR-10 batch %s lacks the data or labels entry' % path)
    data = np.asarray(batch['data'])
    labels = np.asarray(batch['labels'])
    if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != IMAGE_BYTES:
        raise cnn_util.DataError('CIFAR-10 batch %s: data must be uint8 [n, 3072]. Received: '
                                 '%s %s' % (path, data.dtype, list(data.shape)))
    if labels.ndim != 1 or len(labels) != len(data):
        raise cnn_util.DataError('CIFAR-10 batch %s: %d labels for %d images'
                                 % (path, labels.size, len(data)))
    bad = np.flatnonzero((labels < 0) | (labels >= NUM_CLASSES))
    if bad.size:
        raise cnn_util.DataError('CIFAR-10 batch %s: label %d of image %d is outside [0, %d)'
                                 % (path, labels[bad[0]], bad[0], NUM_CLASSES))
    return data, labels.astype(np.int32)


def load_batches(paths: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Reads and checks CIFAR-10 pickle batches.

    Args:
      paths: batch files, read in this order.

    Returns:
      (images, labels): images uint8 [n, 3, 32, 32] (channel-major, as stored), labels int32 [n]
      in [0, 10).

    Raises:
      DataError: a file is unreadable, not a CIFAR-10 batch, or holds a label outside [0, 10).
    """
    parts = [_read_batch(p) for p in paths]
    data = np.concatenate([d for d, _ in parts]) if parts else np.zeros([0, IMAGE_BYTES], np.uint8)
    labels = np.concatenate([lab for _, lab in parts]) if parts else np.zeros([0], np.int32)
    return data.reshape([-1, 3, 32, 32]), labels


def write_record_file(paths: list[str]) -> tuple[str, int]:
    """Writes the batches as fixed-length records into a temporary file.

    The file lives in a fresh temporary directory that is removed when the process exits.

    Args:
      paths: batch files.

    Returns:
      (record_file, num_records): each record is RECORD_BYTES long: the label byte, then the
      3072 image bytes in the stored channel-major order.

    Raises:
      DataError: as `load_batches`.
    """
    images, labels = load_batches(paths)
    folder = tempfile.mkdtemp(prefix='tf_cnn_cifar10_')
    atexit.register(shutil.rmtree, folder, True)
    path = os.path.join(folder, 'records.bin')
    records = np.concatenate([labels.astype(np.uint8)[:, None],
                              images.reshape([-1, IMAGE_BYTES])], axis=1)
    records.tofile(path)
    return path, len(labels)

"""CIFAR-10 batches pickled by Python 3 with any protocol load; the restricted unpickler still
refuses everything but what those protocols need."""

import pickle

import numpy as np
import pytest

from tf_cnn_benchmarks import cnn_util
from tf_cnn_benchmarks.input_data import cifar10_data


def _batch(path, protocol, n=3):
    data = np.arange(n * 3072, dtype=np.int64).astype(np.uint8).reshape(n, 3072)
    with open(path, 'wb') as f:
        pickle.dump({'data': data, 'labels': [7, 0, 9][:n], 'batch_label': 'b'}, f,
                    protocol=protocol)
    return data


@pytest.mark.parametrize('protocol', [2, 3, 4, 5])
def test_python3_pickles_of_every_protocol_load(tmp_path, protocol):
    # Protocol 2 stores bytes as _codecs.encode(text, 'latin1'); protocol 5 stores arrays as
    # numpy's _frombuffer(buffer, dtype, shape, order).
    data = _batch(tmp_path / 'data_batch_1', protocol)
    images, labels = cifar10_data.load_batches([str(tmp_path / 'data_batch_1')])
    assert labels.tolist() == [7, 0, 9]
    np.testing.assert_array_equal(images.reshape(3, 3072), data)


class _OtherCodec:
    def __reduce__(self):
        import _codecs
        return (_codecs.encode, ('x', 'hex'))  # a codec other than latin1: refused


class _Frombuffer:
    def __reduce__(self):
        from numpy._core import numeric
        return (numeric._frombuffer, (b'\0' * 3072, np.dtype(np.uint8), (1, 3072), 'C'))


def test_only_the_globals_those_protocols_need_are_allowed(tmp_path):
    path = tmp_path / 'data_batch_1'
    with open(path, 'wb') as f:
        pickle.dump({'data': _OtherCodec(), 'labels': []}, f, protocol=2)
    with pytest.raises(cnn_util.DataError, match="refusing _codecs.encode with encoding 'hex'"):
        cifar10_data.load_batches([str(path)])
    with open(path, 'wb') as f:
        pickle.dump({'data': _Frombuffer(), 'labels': [3]}, f, protocol=5)
    assert cifar10_data.load_batches([str(path)])[1].tolist() == [3]
    with open(path, 'wb') as f:
        pickle.dump({'data': np.zeros([1, 3072], np.uint8), 'labels': [1], 'x': print}, f)
    with pytest.raises(cnn_util.DataError, match='refusing to unpickle builtins.print'):
        cifar10_data.load_batches([str(path)])

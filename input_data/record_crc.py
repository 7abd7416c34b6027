"""The masked CRC-32C (Castagnoli) of TFRecord framing: of any bytes (`masked_crc32c`), and of
many length fields at once, vectorized with numpy (`masked_crc32c_of_lengths`).

TFRecord stores after each record's 8-byte little-endian length the CRC-32C of those 8 bytes,
masked as ((crc >> 15) | (crc << 17)) + 0xa282ead8 (TensorFlow's core/lib/hash/crc32c.h);
checking a whole shard's lengths at once costs microseconds, not a Python loop a record.
"""

from __future__ import annotations

import numpy as np


def _crc32c_table() -> np.ndarray:
    table = np.zeros(256, np.uint32)
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table[n] = c
    return table


_CRC_TABLE = _crc32c_table()
_CRC_LIST = [int(c) for c in _CRC_TABLE]  # Python ints: the byte loop of masked_crc32c


def masked_crc32c(data: bytes) -> int:
    """The masked CRC-32C (Castagnoli) that TFRecord stores after the length and the data."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC_LIST[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def masked_crc32c_of_lengths(lengths: np.ndarray) -> np.ndarray:
    """The masked CRC-32C of each 8-byte little-endian length, vectorized.

    Args:
      lengths: uint64 [n], the records' length fields.

    Returns:
      uint32 [n], the CRC TFRecord stores after each length.
    """
    data = lengths.astype('<u8').view(np.uint8).reshape(-1, 8)
    crc = np.full(len(data), 0xFFFFFFFF, np.uint32)
    for k in range(8):
        crc = _CRC_TABLE[(crc ^ data[:, k]) & 0xFF] ^ (crc >> np.uint32(8))
    crc ^= np.uint32(0xFFFFFFFF)
    return ((crc >> np.uint32(15)) | (crc << np.uint32(17))) + np.uint32(0xA282EAD8)

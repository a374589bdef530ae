"""Lucene's one-byte document-length norms (SmallFloat.intToByte4 / byte4ToInt), vectorised.

Lucene's BM25Similarity stores a document's length (its number of indexed terms) in one byte:
lengths below 24 exactly, larger ones as a float-like code with 4 significant bits, rounded down.
At search time the length is the decoded value, ``LENGTH_TABLE[code]``. Facts carried over:

* ``longToInt4(i)``: for i < 8 the value itself; else with ``shift = bitlength(i) - 4``:
  ``((i >> shift) & 0b111) | ((shift + 1) << 3)``; ``int4ToLong`` reverses it
  (``(bits | 0b1000) << shift`` for a non-zero exponent);
* ``NUM_FREE_VALUES = 255 - longToInt4(2**31 - 1) = 24``;
* ``intToByte4(i) = i if i < 24 else 24 + longToInt4(i - 24)``, ``byte4ToInt`` the inverse.

E.g. lengths 24..31 are exact, 40 and 41 both decode to 40, 100 to 96 (tests/retrievers/test_lucene_norms.py).
"""

from __future__ import annotations

import numpy as np


def long_to_int4(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=np.int64)
    if np.any(values < 0):
        raise ValueError("lengths must be >= 0")
    bits = np.zeros(values.shape, dtype=np.int64)
    nz = values > 0
    bits[nz] = np.floor(np.log2(values[nz])).astype(np.int64) + 1  # bit length (exact below 2**52)
    shift = np.maximum(bits - 4, 0)
    normal = bits >= 4
    encoded = ((values >> shift) & 0x07) | ((shift + 1) << 3)
    return np.where(normal, encoded, values)


def int4_to_long(codes: np.ndarray) -> np.ndarray:
    codes = np.asarray(codes, dtype=np.int64)
    bits = codes & 0x07
    shift = (codes >> 3) - 1
    return np.where(shift == -1, bits, (bits | 0x08) << np.maximum(shift, 0))


NUM_FREE_VALUES = 255 - int(long_to_int4(np.array([2**31 - 1]))[0])


def int_to_byte4(lengths: np.ndarray) -> np.ndarray:
    """Encode lengths (int >= 0) to Lucene's norm bytes (as uint8). More lengths than the longest
    (a corpus's documents) are looked up in the codes of 0 .. the longest: the code is a function of
    the value alone, and the vectorised formula's temporaries cost 28 ms at 1M documents (a cold
    build's serial step), the table 1.4 ms."""
    lengths = np.asarray(lengths)
    if lengths.dtype.kind in "iu" and lengths.size > 1024 and 0 <= lengths.min() and lengths.max() < lengths.size:
        return _int_to_byte4(np.arange(int(lengths.max()) + 1))[lengths]
    return _int_to_byte4(lengths)


def _int_to_byte4(lengths: np.ndarray) -> np.ndarray:
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.where(lengths < NUM_FREE_VALUES, lengths, NUM_FREE_VALUES + long_to_int4(np.maximum(lengths - NUM_FREE_VALUES, 0)))
    return out.astype(np.uint8)


def byte4_to_int(codes: np.ndarray) -> np.ndarray:
    codes = np.asarray(codes, dtype=np.int64)
    return np.where(codes < NUM_FREE_VALUES, codes, NUM_FREE_VALUES + int4_to_long(np.maximum(codes - NUM_FREE_VALUES, 0)))


# The decoded length of every norm byte, as BM25Similarity's LENGTH_TABLE (float32).
LENGTH_TABLE = byte4_to_int(np.arange(256)).astype(np.float32)


def quantize_lengths(lengths: np.ndarray) -> np.ndarray:
    """The length Lucene scores a document with: byte4ToInt(intToByte4(length))."""
    return byte4_to_int(int_to_byte4(lengths))

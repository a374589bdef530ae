"""Lucene's one-byte length norms. Expected values worked by hand from SmallFloat's definition
(see retrievers/bm25/lucene_norms.py): below 24 exact; else 24 + (length - 24) rounded down to 4
significant bits."""

import numpy as np

from retrievers.bm25.lucene_norms import LENGTH_TABLE, NUM_FREE_VALUES, byte4_to_int, int_to_byte4, quantize_lengths


def test_worked_examples():
    # 40 -> 16 = 0b10000 keeps 0b1000 << 1 = 16 -> 40; 41 -> 17 -> 16 -> 40; 100 -> 76 = 0b1001100 -> 0b1001 << 3 = 72 -> 96
    lengths = np.array([0, 1, 23, 24, 31, 32, 39, 40, 41, 100, 1000])
    assert quantize_lengths(lengths).tolist() == [0, 1, 23, 24, 31, 32, 39, 40, 40, 96, 984]
    assert NUM_FREE_VALUES == 24


def test_table_is_monotone_and_round_trips():
    assert LENGTH_TABLE.dtype == np.float32 and len(LENGTH_TABLE) == 256
    assert np.all(np.diff(LENGTH_TABLE) > 0)
    codes = np.arange(256)
    assert np.array_equal(int_to_byte4(byte4_to_int(codes)), codes.astype(np.uint8))
    # every length maps to the largest table entry not above it
    lengths = np.arange(0, 5000)
    decoded = quantize_lengths(lengths)
    assert np.all(decoded <= lengths)
    assert np.array_equal(decoded, LENGTH_TABLE[np.searchsorted(LENGTH_TABLE, lengths, side="right") - 1])


def test_many_lengths_are_encoded_as_one_at_a_time():
    """int_to_byte4 looks many lengths up in a table of the codes of 0 .. the longest: the same codes
    as each length encoded alone (worked examples above), whatever the integer dtype and shape."""
    rng = np.random.default_rng(7)
    lengths = np.concatenate([rng.integers(0, 3000, 5000), [0, 23, 24, 40, 41, 100, 1000, 4999]])
    alone = np.array([int_to_byte4(np.array([n]))[0] for n in lengths.tolist()], dtype=np.uint8)
    for dtype in (np.int32, np.int64, np.uint16):
        got = int_to_byte4(lengths.astype(dtype))
        assert got.dtype == np.uint8 and np.array_equal(got, alone)
    assert np.array_equal(int_to_byte4(lengths.reshape(2, -1)), alone.reshape(2, -1))
    assert int_to_byte4(np.array([10**9] * 2000))[0] == int_to_byte4(np.array([10**9]))[0]  # (the longest > count)
    assert quantize_lengths(np.array([41] * 2000)).tolist() == [40] * 2000

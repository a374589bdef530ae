"""The BM25 index cache's files, written in 256 KiB pieces, hold np.save's bytes (retrievers/bm25/cache.py,
harness.atomic.write_pieces): the same .npy header and data, whatever the array's size, dtype or shape."""

from __future__ import annotations

import io

import numpy as np
import pytest

from harness import atomic
from retrievers.bm25 import cache as index_cache


@pytest.mark.parametrize("array", [
    np.arange(0, dtype=np.int32),
    np.arange(7, dtype=np.int64),
    np.arange(3 * atomic.WRITE_PIECE // 4 + 5, dtype=np.int32),  # several pieces and a short last one
    np.linspace(0, 1, 100_003, dtype=np.float32),
    np.arange(24, dtype=np.uint16).reshape(4, 6),
    np.arange(40, dtype=np.int64).reshape(8, 5)[:, 1],  # not contiguous: np.save itself
    np.zeros((0, 5), dtype=np.int32),  # (no memoryview of a zero-size axis: np.save itself)
    np.array(["2026-11-29", "2026-11-30"], dtype="datetime64[D]"),  # (no buffer of datetimes: np.save itself)
    np.array([1.5, -2.0], dtype=">f8"),
])
def test_written_as_np_save_writes_it(tmp_path, array):
    want = io.BytesIO()
    np.save(want, array, allow_pickle=False)
    name, record = index_cache._write_file(tmp_path / "a.npy", array)
    assert (tmp_path / "a.npy").read_bytes() == want.getvalue()
    assert record["bytes"] == len(want.getvalue())
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), array)


def test_bytes_in_pieces(tmp_path):
    data = bytes(range(256)) * (atomic.WRITE_PIECE // 64 + 3)
    calls = []

    class Handle(io.BytesIO):
        def write(self, chunk):
            calls.append(len(chunk))
            return super().write(chunk)

    handle = Handle()
    atomic.write_pieces(handle, data)
    assert handle.getvalue() == data
    assert max(calls) == atomic.WRITE_PIECE and sum(calls) == len(data) and len(calls) == 5


def test_an_object_array_is_refused_as_np_save_refuses_it(tmp_path):
    """(its buffer holds pointers: written as bytes, they would have been an unreadable file)"""
    with pytest.raises(ValueError, match="allow_pickle=False"):
        index_cache._write_file(tmp_path / "a.npy", np.array([1, "x"], dtype=object))

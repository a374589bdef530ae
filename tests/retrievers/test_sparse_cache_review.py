"""Review tests of the sparse document weight cache (retrievers/sparse/cache.py), no model needed."""

from __future__ import annotations

import numpy as np
import pytest

from retrievers.sparse.cache import SparseRows, SparseWeightCache, _save


def rows_of(start: int, stop: int) -> SparseRows:
    """Document r holds one term, r, with weight r + 1 (so a row in the wrong place shows)."""
    n = stop - start
    return SparseRows(np.ones(n, np.int64), np.arange(start, stop, dtype=np.int32),
                      np.arange(start + 1, stop + 1, dtype=np.float32))


def test_parts_of_a_concurrent_builder_with_another_chunk_size_are_not_taken_for_its_own(tmp_path):
    """A fills the entry with chunks of 4 (documents 0-3, 4-5), B with chunks of 2 (0-1, 2-3, 4-5).
    A is interrupted after its part 0; B restarts the entry (meta.json named chunk size 4) and, while
    B encodes documents 0-1, A writes its part 1 (documents 4-5: 2 rows). Expected: B's rows are
    documents 0..5 in order (term r, weight r + 1). Parts were named by chunk number only and checked
    by row count, so B took A's part 1 (documents 4, 5) for its documents 2, 3 and wrote that into
    the complete entry (weights.npz + complete.json, then served as a cache hit)."""
    n = 6
    a = SparseWeightCache(tmp_path / "entry", n, 4, {})
    b = SparseWeightCache(tmp_path / "entry", n, 2, {})

    def encode_a(start, stop):
        if start:
            raise KeyboardInterrupt  # A stops after its part 0 (it goes on below)
        return rows_of(start, stop)

    with pytest.raises(KeyboardInterrupt):
        a.build(encode_a)

    def encode_b(start, stop):
        if start == 0:
            _save(a.part_path(1), rows_of(4, 6))  # A finishes its chunk 1 meanwhile
        return rows_of(start, stop)

    rows, _ = b.build(encode_b)
    assert rows.term_ids.tolist() == [0, 1, 2, 3, 4, 5] and rows.weights.tolist() == [1, 2, 3, 4, 5, 6]
    complete = b.load_complete()
    assert complete.term_ids.tolist() == [0, 1, 2, 3, 4, 5]

"""Second interruption review of the sparse document weight cache (retrievers/sparse/cache.py):
what a build interrupted after its entry was complete leaves behind, with the longest-first order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from retrievers.sparse.cache import SparseRows, SparseWeightCache

N = 10
ORDER = np.array([3, 9, 0, 1, 7, 2, 8, 4, 6, 5])  # an encoding order (e.g. longest text first)


def rows_at(start: int, stop: int) -> SparseRows:
    """Positions start..stop of ORDER: document r holds one term, r, with weight r + 1."""
    docs = ORDER[start:stop]
    return SparseRows(np.ones(len(docs), np.int64), docs.astype(np.int32), (docs + 1).astype(np.float32))


def test_parts_left_beside_a_complete_entry_are_removed_when_it_is_loaded(tmp_path, monkeypatch):
    """Ctrl-C (or SIGKILL) after complete.json was written but before the parts were removed left
    the three parts (as large, together, as the complete entry) beside it for good: every later
    load was a hit and nothing removed them (the embedding cache removes its own since the first
    review). Expected (worked example): the next load returns document r = term r, weight r + 1,
    in corpus order, and the folder holds complete.json, meta.json and weights.npz only."""
    cache = SparseWeightCache(tmp_path / "entry", N, 4, {}, ORDER)
    real_unlink = Path.unlink

    def interrupted(self, *args, **kwargs):
        if self.name.startswith("part-"):
            raise KeyboardInterrupt
        return real_unlink(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(Path, "unlink", interrupted)
        with pytest.raises(KeyboardInterrupt):
            cache.build(rows_at)
    assert len(list(cache.folder.glob("part-*.npz"))) == 3
    rows = SparseWeightCache(tmp_path / "entry", N, 4, {}, ORDER).load_complete()
    np.testing.assert_array_equal(rows.lengths, np.ones(N))
    np.testing.assert_array_equal(rows.term_ids, np.arange(N))
    np.testing.assert_array_equal(rows.weights, np.arange(1, N + 1))
    assert sorted(p.name for p in cache.folder.iterdir()) == ["complete.json", "meta.json", "weights.npz"]


def test_a_complete_entry_on_a_read_only_cache_is_served_with_parts_beside_it(tmp_path, monkeypatch):
    """The parts that cannot be removed (read-only cache) do not cost the hit."""
    cache = SparseWeightCache(tmp_path / "entry", N, 4, {}, ORDER)
    cache.build(rows_at)
    for i in range(3):
        (cache.folder / f"part-4-{i:06d}.npz").write_bytes(b"left over")

    def read_only(self, *args, **kwargs):
        raise PermissionError(13, "Read-only file system", str(self))

    monkeypatch.setattr(Path, "unlink", read_only)
    rows = cache.load_complete()
    np.testing.assert_array_equal(rows.term_ids, np.arange(N))


@pytest.mark.parametrize("field, value", [(10, 99), (8, 1)])  # compression method 99; the encryption flag bit
def test_a_part_whose_zip_header_is_damaged_is_encoded_again(tmp_path, field, value):
    """One damaged byte in a part's zip central directory (found by a random bit-flip fuzz: 3 of
    1,500 flipped parts) made zipfile raise NotImplementedError ("That compression method is not
    supported") or RuntimeError ("... is encrypted, password required"), which escaped the part
    loader: the resumed build crashed instead of encoding that part again, as the docs promise of
    a part that cannot be read. Expected: the build returns document r = term r, weight r + 1."""
    cache = SparseWeightCache(tmp_path / "entry", N, 4, {}, ORDER)

    def interrupted(start, stop):
        if start >= 8:
            raise KeyboardInterrupt
        return rows_at(start, stop)

    with pytest.raises(KeyboardInterrupt):
        cache.build(interrupted)
    part = cache.folder / "part-4-000001.npz"
    data = bytearray(part.read_bytes())
    data[data.find(b"PK\x01\x02") + field] = value
    part.write_bytes(bytes(data))
    rows, reused = SparseWeightCache(tmp_path / "entry", N, 4, {}, ORDER).build(rows_at)
    assert reused == 4  # part 0 only
    np.testing.assert_array_equal(rows.term_ids, np.arange(N))
    np.testing.assert_array_equal(rows.weights, np.arange(1, N + 1))

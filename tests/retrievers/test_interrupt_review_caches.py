"""Interruption / concurrency review of the chunked embedding and sparse weight caches
(retrievers/dense/cache.py, retrievers/sparse/cache.py): two processes starting one cold entry at
once, and the temporary files a killed process leaves behind."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import retrievers.dense.cache as dense_cache
import retrievers.sparse.cache as sparse_cache
from harness.atomic import atomic_open
from retrievers.dense.cache import EmbeddingCache
from retrievers.sparse.cache import SparseRows, SparseWeightCache

N = 10


def dense_rows(rows: np.ndarray) -> np.ndarray:
    """Embedding of row i = [i, 2i]."""
    return np.outer(rows, [1.0, 2.0]).astype(np.float32)


def sparse_rows(start: int, stop: int) -> SparseRows:
    """Document r holds one term, r, with weight r + 1."""
    n = stop - start
    return SparseRows(np.ones(n, np.int64), np.arange(start, stop, dtype=np.int32),
                      np.arange(start + 1, stop + 1, dtype=np.float32))


def dead_pid() -> int:
    """The id of a process that has ended (a writer killed before it could remove its temporary file)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _meta_write_interleaved_with(module, monkeypatch, other_build) -> list:
    """Make the first meta.json write of ``module``'s cache run ``other_build()`` (a second process
    starting the same cold entry) while its temporary file exists, as two processes interleave."""
    real, fired = module.write_json, []

    def write_json(path, obj):
        if path.name == "meta.json" and not fired:
            fired.append(True)
            with atomic_open(path) as handle:  # the temporary .meta.json.<pid>.<random>.tmp exists now
                other_build()
                handle.write(json.dumps(obj))
            return
        real(path, obj)

    monkeypatch.setattr(module, "write_json", write_json)
    return fired


def test_dense_two_builders_of_one_cold_entry_both_finish(tmp_path, monkeypatch):
    """Two `harness run -r dense` on one cold HARNESS_CACHE_DIR: the second read no meta.json and
    cleared the folder (rmtree) while the first was writing its meta.json, whose temporary file
    vanished: the first run died with 'error: .../.meta.json.<pid>.<random>.tmp: No such file or
    directory' (seen 1 in 4 concurrent pairs, 8,000 documents). Expected (worked example): both
    builds return rows [i, 2i] for i = 0..9."""
    order = np.arange(N)[::-1].copy()
    a = EmbeddingCache(tmp_path / "entry", N, order, 4, {"kind": "t"})
    b = EmbeddingCache(tmp_path / "entry", N, order, 4, {"kind": "t"})
    results = []
    fired = _meta_write_interleaved_with(dense_cache, monkeypatch, lambda: results.append(b.build(dense_rows)[0]))
    results.append(a.build(dense_rows)[0])
    assert fired and len(results) == 2
    for out in results:
        np.testing.assert_array_equal(out, dense_rows(np.arange(N)))


def test_sparse_two_builders_of_one_cold_entry_both_finish(tmp_path, monkeypatch):
    """The sparse counterpart: the second builder's discard() removed the first one's temporary
    meta.json. Expected: both return documents 0..9 (term r, weight r + 1), and the entry loads."""
    a = SparseWeightCache(tmp_path / "entry", N, 4, {})
    b = SparseWeightCache(tmp_path / "entry", N, 4, {})
    results = []
    fired = _meta_write_interleaved_with(sparse_cache, monkeypatch, lambda: results.append(b.build(sparse_rows)[0]))
    results.append(a.build(sparse_rows)[0])
    assert fired and len(results) == 2
    want = sparse_rows(0, N)
    for rows in [*results, a.load_complete()]:
        np.testing.assert_array_equal(rows.lengths, want.lengths)
        np.testing.assert_array_equal(rows.term_ids, want.term_ids)
        np.testing.assert_array_equal(rows.weights, want.weights)


def test_dense_build_removes_a_killed_joins_temporary_matrix(tmp_path):
    """A process killed (SIGKILL) while joining the parts leaves .embeddings.npy.<pid>.<random>.tmp,
    as large as the whole matrix (8.8M x 384 float32: 13 GB); nothing removed it, so every such kill
    added one. Expected: the next build removes it (its process is gone) and keeps only its files."""
    order = np.arange(N)
    cache = EmbeddingCache(tmp_path / "entry", N, order, 4, {"kind": "t"})
    cache.prepare()
    stale = cache.folder / f".embeddings.npy.{dead_pid()}.abcd1234.tmp"
    stale.write_bytes(b"\0" * 4096)
    out, _ = cache.build(dense_rows)
    np.testing.assert_array_equal(out, dense_rows(order))
    assert sorted(p.name for p in cache.folder.iterdir()) == ["embeddings.npy", "meta.json"]


def test_sparse_build_removes_a_killed_writers_temporary_files(tmp_path):
    """Likewise a killed process's temporary weights.npz (all documents' weights) in a sparse entry
    that a rerun resumes (its meta.json and part 0 kept)."""
    cache = SparseWeightCache(tmp_path / "entry", N, 4, {})

    def interrupted(start, stop):
        if start:
            raise KeyboardInterrupt
        return sparse_rows(start, stop)

    with pytest.raises(KeyboardInterrupt):
        cache.build(interrupted)
    stale = cache.folder / f".weights.npz.{dead_pid()}.abcd1234.tmp"
    stale.write_bytes(b"\0" * 4096)
    rows, reused = cache.build(sparse_rows)
    assert reused == 4
    np.testing.assert_array_equal(rows.term_ids, np.arange(N))
    assert sorted(p.name for p in cache.folder.iterdir()) == ["complete.json", "meta.json", "weights.npz"]


def _flip(path, position) -> None:
    with open(path, "r+b") as handle:
        handle.seek(position)
        byte = handle.read(1)
        handle.seek(position)
        handle.write(bytes([byte[0] ^ 0x55]))


def test_dense_complete_matrix_with_a_flipped_byte_is_encoded_again(tmp_path):
    """One byte of embeddings.npy changed in place (same size, same shape): load_complete() served
    it, and `harness run -r dense` gave other rankings than a clean run (seen: run.trec and nDCG
    differ, a byte flipped in the middle or at the very end of either entry). Expected (README:
    "a damaged entry is rebuilt, never trusted"): no complete entry, and a rebuild returns the
    rows [i, 2i] again."""
    order = np.arange(N)
    cache = EmbeddingCache(tmp_path / "entry", N, order, 4, {"kind": "t"})
    cache.build(dense_rows)
    assert cache.load_complete() is not None
    for position in (cache.final_path.stat().st_size // 2, cache.final_path.stat().st_size - 1):
        _flip(cache.final_path, position)
        assert cache.load_complete() is None
        out, reused = cache.build(dense_rows)
        assert reused == 0
        np.testing.assert_array_equal(out, dense_rows(order))
        np.testing.assert_array_equal(cache.load_complete(), dense_rows(order))


def test_faiss_index_with_a_flipped_byte_is_rebuilt(tmp_path):
    """A cached faiss index (Flat: the vectors themselves) with one byte changed was read back and
    searched (seen: other rankings than a clean run). Expected: cache "miss" (rebuilt), and the
    index holds the document vectors exactly again."""
    import pytest

    pytest.importorskip("faiss")
    from retrievers.dense.faiss_index import FaissIndex

    rng = np.random.default_rng(0)
    docs = rng.standard_normal((50, 8)).astype(np.float32)
    path = tmp_path / "faiss-x.index"
    assert FaissIndex(docs, cosine=False, cache_path=path).cache == "miss"
    assert FaissIndex(docs, cosine=False, cache_path=path).cache == "hit"
    _flip(path, path.stat().st_size - 9)  # inside the last vector
    index = FaissIndex(docs, cosine=False, cache_path=path)
    assert index.cache == "miss"
    np.testing.assert_array_equal(index.index.reconstruct_n(0, 50), docs)  # Flat, dot: the vectors as given
    assert FaissIndex(docs, cosine=False, cache_path=path).cache == "hit"

"""Exact dense top-k: the tie rule, block-size independence, cosine, and the faiss path.

The oracle throughout is a plain sort by (score desc, document id desc in string order), the
evaluator's ranking, written here independently of retrievers.topk's int64 keys.
"""

from __future__ import annotations

import numpy as np
import pytest

from retrievers.dense.exact import exact_search, l2_normalize, rerank_candidates, sort_keys
from retrievers.topk import string_ranks


def plain_top_k(row: np.ndarray, k: int, rank: np.ndarray) -> list[int]:
    """The evaluator's ranking by a plain sort: float32 score descending, then id rank descending."""
    return sorted(range(len(row)), key=lambda i: (-float(np.float32(row[i])), -int(rank[i])))[:k]


def test_sort_keys_order_scores_then_ids_descending():
    scores = np.array([[0.5, -1.0, -0.0, 0.0, 0.5, -2.5, 3.0, np.float32(1e-30)]], dtype=np.float32)
    ids = np.array(["b", "a", "z", "c", "d", "e", "f", "g"], dtype=object)
    keys = sort_keys(scores, string_ranks(ids))[0]
    got = [ids[i] for i in np.argsort(keys)[::-1]]
    # By hand: 3.0 (f); 0.5 tie -> d before b; 1e-30 (g); 0.0 and -0.0 tie -> z before c; -1.0 (a); -2.5 (e).
    assert got == ["f", "d", "b", "g", "z", "c", "a", "e"]


def test_sort_keys_nan_counts_as_minus_one():
    keys = sort_keys(np.array([[np.nan, -1.0, -0.5]], dtype=np.float32), np.array([0, 1, 2]))[0]
    assert keys[0] < keys[1] < keys[2]  # NaN == -1 with the lower id rank, below -1 (rank 1) and -0.5


def _oracle(q, d, k, rank):
    scores = q @ d.T
    chosen = [plain_top_k(row, k, rank) for row in scores]
    return np.array(chosen), np.take_along_axis(scores, np.array(chosen), 1)


@pytest.mark.parametrize("query_block,doc_block", [(1, 1), (2, 3), (7, 5), (256, 16384)])
def test_exact_search_matches_topk_oracle_with_many_ties(query_block, doc_block):
    rng = np.random.default_rng(0)
    # Small integer vectors: dot products are exact small integers, so ties are many and certain.
    docs = rng.integers(-2, 3, size=(40, 4)).astype(np.float32)
    queries = rng.integers(-2, 3, size=(9, 4)).astype(np.float32)
    ids = np.array([f"d{i}" for i in rng.permutation(40)], dtype=object)
    rank = string_ranks(ids)
    for k in (1, 5, 17, 40, 100):
        idx, scores = exact_search(queries, docs, k, rank, cosine=False, query_block=query_block, doc_block=doc_block)
        want_idx, want_scores = _oracle(queries, docs, k, rank)
        assert idx.shape == (9, min(k, 40))
        np.testing.assert_array_equal(idx, want_idx)
        np.testing.assert_array_equal(scores, want_scores)


def test_exact_search_reads_a_memory_map(tmp_path):
    rng = np.random.default_rng(1)
    docs = rng.normal(size=(50, 8)).astype(np.float32)
    np.save(tmp_path / "d.npy", docs)
    mapped = np.load(tmp_path / "d.npy", mmap_mode="r")
    q = rng.normal(size=(3, 8)).astype(np.float32)
    rank = np.arange(50)
    a = exact_search(q, mapped, 10, rank, cosine=True, doc_block=7)
    b = exact_search(q, docs, 10, rank, cosine=True)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


@pytest.mark.parametrize("query_block,doc_block", [(1, 1), (3, 8), (16, 33), (64, 1000)])
def test_memory_mapped_block_search_matches_the_oracle_with_ties(tmp_path, query_block, doc_block):
    rng = np.random.default_rng(5)
    # Integer vectors with duplicated rows: exact float32 scores, ties within and across blocks.
    docs = rng.integers(-3, 4, size=(300, 6)).astype(np.float32)
    docs[150:] = docs[:150][rng.permutation(150)]
    np.save(tmp_path / "d.npy", docs)
    mapped = np.load(tmp_path / "d.npy", mmap_mode="r")
    queries = rng.integers(-3, 4, size=(20, 6)).astype(np.float32)
    rank = string_ranks(np.array([f"doc{i}" for i in rng.permutation(300)], dtype=object))
    for k in (1, 10, 151):
        idx, scores = exact_search(queries, mapped, k, rank, cosine=False, query_block=query_block,
                                   doc_block=doc_block)
        want_idx, want_scores = _oracle(queries, docs, k, rank)
        np.testing.assert_array_equal(idx, want_idx)
        np.testing.assert_array_equal(scores, want_scores)
    np.testing.assert_array_equal(mapped, docs)  # released pages read back unchanged


class _Reads:
    """A (n, dim) matrix that records every row range read from it."""

    def __init__(self, data):
        self.data, self.shape, self.ndim, self.reads = data, data.shape, data.ndim, []

    def __getitem__(self, item):
        self.reads.append((item.start, min(item.stop, len(self.data))))
        return self.data[item]


def test_documents_are_read_once_one_block_at_a_time():
    rng = np.random.default_rng(6)
    docs = _Reads(rng.normal(size=(103, 5)).astype(np.float32))
    queries = rng.normal(size=(9, 5)).astype(np.float32)
    idx, _ = exact_search(queries, docs, 4, np.arange(103), query_block=2, doc_block=25)
    # Whatever the number of query blocks, each document row is read exactly once, in blocks of 25.
    assert docs.reads == [(0, 25), (25, 50), (50, 75), (75, 100), (100, 103)]
    np.testing.assert_array_equal(idx, exact_search(queries, docs.data, 4, np.arange(103), query_block=2)[0])


def test_no_queries_or_no_documents_give_empty_results():
    idx, scores = exact_search(np.empty((0, 3), np.float32), np.ones((4, 3), np.float32), 2, np.arange(4))
    assert idx.shape == scores.shape == (0, 2)
    idx, scores = exact_search(np.ones((2, 3), np.float32), np.empty((0, 3), np.float32), 2, np.arange(0))
    assert idx.shape == scores.shape == (2, 0)


def test_cosine_scores_are_normalized_dot_products_and_zero_vectors_score_zero():
    docs = np.array([[3.0, 4.0], [0.0, 0.0], [-1.0, 0.0]], dtype=np.float32)
    q = np.array([[10.0, 0.0]], dtype=np.float32)
    idx, scores = exact_search(q, docs, 3, np.arange(3), cosine=True)
    # cos([1,0],[3,4]) = 3/5; the zero vector stays zero (norm clamped at 1e-12); cos with [-1,0] = -1.
    assert idx.tolist() == [[0, 1, 2]]
    np.testing.assert_allclose(scores, [[0.6, 0.0, -1.0]], rtol=1e-6)
    idx, scores = exact_search(q, docs, 3, np.arange(3), cosine=False)
    np.testing.assert_allclose(scores, [[30.0, 0.0, -10.0]])


def test_l2_normalize_matches_definition():
    x = np.array([[1.0, 2.0, 2.0], [0.0, 0.0, 0.0]], dtype=np.float32)
    np.testing.assert_allclose(l2_normalize(x), [[1 / 3, 2 / 3, 2 / 3], [0, 0, 0]], rtol=1e-6)


def test_rerank_candidates_orders_ties_and_drops_missing():
    ids = np.array(["a", "b", "c", "d"], dtype=object)
    cand = np.array([[0, 2, -1, 1]])
    scores = np.array([[1.0, 1.0, -np.inf, 2.0]], dtype=np.float32)
    idx, s = rerank_candidates(cand, scores, 3, string_ranks(ids))
    assert idx.tolist() == [[1, 2, 0]]  # b (2.0), then the 1.0 tie: c before a
    assert s.tolist() == [[2.0, 1.0, 1.0]]


def test_faiss_flat_matches_exact_search():
    pytest.importorskip("faiss", reason="faiss-cpu not installed")
    from retrievers.dense.faiss_index import FaissIndex

    rng = np.random.default_rng(2)
    docs = rng.integers(-2, 3, size=(60, 4)).astype(np.float32)
    queries = rng.integers(-2, 3, size=(5, 4)).astype(np.float32)
    rank = string_ranks(np.array([f"x{i}" for i in range(60)], dtype=object))
    index = FaissIndex(docs, cosine=False, factory="Flat", tie_margin=60)
    got = index.search(queries, 10, rank)
    want = exact_search(queries, docs, 10, rank, cosine=False)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_exact_search_validates_inputs():
    with pytest.raises(ValueError, match="k must be"):
        exact_search(np.zeros((1, 2)), np.zeros((3, 2)), 0, np.arange(3))
    with pytest.raises(ValueError, match="disagree"):
        exact_search(np.zeros((1, 2)), np.zeros((3, 4)), 1, np.arange(3))


def test_faiss_index_from_a_memory_map_is_cached_and_a_broken_cache_is_rebuilt(tmp_path):
    pytest.importorskip("faiss", reason="faiss-cpu not installed")
    from harness.errors import HarnessError
    from retrievers.dense.faiss_index import FaissIndex

    rng = np.random.default_rng(7)
    docs = rng.normal(size=(600, 8)).astype(np.float32)
    np.save(tmp_path / "d.npy", docs)
    mapped = np.load(tmp_path / "d.npy", mmap_mode="r")
    q = rng.normal(size=(5, 8)).astype(np.float32)
    path = tmp_path / "idx" / "faiss.index"
    built = FaissIndex(mapped, True, "IVF4,Flat", nprobe=4, cache_path=path)
    assert built.stats()["cache"] == "miss" and built.stats()["nlist"] == 4 and path.is_file()
    exact = exact_search(q, docs, 10, np.arange(600))[0]
    np.testing.assert_array_equal(built.search(q, 10, np.arange(600))[0], exact)  # nprobe = nlist: exhaustive
    cached = FaissIndex(mapped, True, "IVF4,Flat", nprobe=4, cache_path=path)
    assert cached.stats()["cache"] == "hit"
    np.testing.assert_array_equal(cached.search(q, 10, np.arange(600))[0], exact)
    path.write_bytes(b"not an index")
    rebuilt = FaissIndex(mapped, True, "IVF4,Flat", nprobe=4, cache_path=path)
    assert rebuilt.stats()["cache"] == "miss"
    assert FaissIndex(mapped, True, "IVF4,Flat", cache_path=path).stats()["cache"] == "hit"
    with pytest.raises(HarnessError, match="efSearch"):
        FaissIndex(mapped, True, "IVF4,Flat", ef_search=8)

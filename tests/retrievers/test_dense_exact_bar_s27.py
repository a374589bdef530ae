"""Exact dense search keys only the scores of a block that reach each query's bar (the score of the smallest
of the k keys kept so far; NaN ranks as -1): the same top k as keying every score, on the cases where a bar
could cut wrongly (ties at the bar across blocks, -0.0 against 0.0, NaN scores with a bar at -1), with far
fewer keys made (2M x 384, 1,000 queries, top 10: 53.9 -> 16.6 s)."""

from __future__ import annotations

import numpy as np
import pytest

from retrievers.dense import exact
from retrievers.dense.exact import exact_search


def _scores(queries, docs, query_block, doc_block):
    """Every score as exact_search computes it: the same products, one (query block x padded document block)
    at a time. BLAS picks its kernel by the product's shape, and one product of the whole matrices can differ
    from the blocks' in the last float32 bit (it did on an AMD EPYC's OpenBLAS kernels, 111 of 200 scores of
    the random case below): what is tested here is which scores are keyed, not BLAS's arithmetic."""
    width = -(-min(doc_block, len(docs)) // exact.PAD) * exact.PAD
    out = np.empty((len(queries), len(docs)), dtype=np.float32)
    for d0 in range(0, len(docs), doc_block):
        d1 = min(d0 + doc_block, len(docs))
        block = np.zeros((width, docs.shape[1]), dtype=np.float32)
        block[:d1 - d0] = docs[d0:d1]
        for q0 in range(0, len(queries), query_block):
            q1 = min(q0 + query_block, len(queries))
            out[q0:q1, d0:d1] = (queries[q0:q1] @ block.T)[:, :d1 - d0]
    return out


def _reference(queries, docs, k, rank, query_block, doc_block):
    """Top k by a plain sort of every score: float32 descending (NaN as -1, -0.0 as 0.0), then id rank descending."""
    scores = _scores(queries, docs, query_block, doc_block)
    ranked = np.where(np.isnan(scores), np.float32(-1.0), scores) + np.float32(0.0)
    out = [sorted(range(len(row)), key=lambda i: (-float(row[i]), -int(rank[i])))[:k] for row in ranked]
    idx = np.array(out)
    return idx, np.take_along_axis(scores, idx, 1)


def _check(queries, docs, k, rank, **blocks):
    idx, scores = exact_search(queries, docs, k, rank, cosine=False, **blocks)
    want_idx, want_scores = _reference(queries, docs, k, rank, **blocks)
    np.testing.assert_array_equal(idx, want_idx)
    want_scores = np.where(np.isnan(want_scores), np.float32(-1.0), want_scores)  # (the run's -1 for NaN)
    np.testing.assert_array_equal(scores.view(np.int32), want_scores.astype(np.float32).view(np.int32))


@pytest.mark.parametrize("doc_block", [3, 8, 64])
def test_ties_at_the_bar_across_blocks_keep_the_id_order(doc_block):
    """Small integer vectors: exact integer scores, many equal; a document equal to one kept earlier, in a
    later block, enters on its id (a larger rank) and displaces it."""
    rng = np.random.default_rng(5)
    docs = rng.integers(-2, 3, size=(300, 4)).astype(np.float32)
    docs[200:] = docs[:100]  # the same embeddings again, in later blocks
    queries = rng.integers(-2, 3, size=(11, 4)).astype(np.float32)
    rank = rng.permutation(300)
    for k in (1, 4, 10, 37):
        _check(queries, docs, k, rank, query_block=4, doc_block=doc_block)


def test_minus_zero_and_zero_tie_at_the_bar():
    queries = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    docs = np.array([[0.0, 1.0], [-0.0, -1.0], [0.0, 0.0], [-1e-45, 0.0], [0.0, -0.0], [0.0, 2.0]] * 5, dtype=np.float32)
    for rank in (np.arange(len(docs)), np.arange(len(docs))[::-1].copy()):  # later documents win ties, then lose them
        for k in (1, 3, 7):
            _check(queries, docs, k, rank, query_block=1, doc_block=2)


def test_nan_scores_rank_as_minus_one_below_and_at_a_bar_of_minus_one():
    """A NaN embedding scores NaN, ranked as -1: it enters where the bar is -1 (every better score already
    kept) on its id, and never where the bar is above -1."""
    queries = np.array([[1.0, 0.0, 0.0]], dtype=np.float32)
    docs = np.array([[0.5, 0.0, 0.0]] * 2 + [[-1.0, 0.0, 0.0]] * 6 + [[np.nan, 0.0, 0.0]] * 6, dtype=np.float32)
    for seed in range(4):
        rank = np.random.default_rng(seed).permutation(len(docs))
        for k in (1, 2, 3, 5, 9, 14):
            _check(queries, docs, k, rank, query_block=1, doc_block=4)
    _check(queries, docs, 9, np.arange(len(docs)), query_block=1, doc_block=4)  # the last NaNs win the ties at -1


def test_only_scores_at_or_above_the_bars_are_keyed(monkeypatch):
    rng = np.random.default_rng(11)
    docs = rng.standard_normal((4000, 16)).astype(np.float32)
    queries = rng.standard_normal((20, 16)).astype(np.float32)
    rank = rng.permutation(4000)
    keyed = []
    real = exact.sort_keys
    monkeypatch.setattr(exact, "sort_keys", lambda scores, ids: keyed.append(np.size(scores)) or real(scores, ids))
    _check(queries, docs, 10, rank, query_block=8, doc_block=200)
    assert sum(keyed) < 0.1 * 20 * 4000  # (every score was keyed: 80,000)
    assert keyed[0] == 8 * 200  # the first block of a query block has no bar yet

"""Dense search numbers (second review): equal embeddings score equal whatever the block sizes, and a
faiss index that cannot be trained is one error line.

BLAS computes a product's trailing columns (``n mod unroll``) and a short product (the last document
block of one row: a matrix-vector kernel) with other code than the rest, so the float32 score of the
same embedding pair differed in the last bits with its place in the corpus: duplicated documents in
different blocks were ordered by that bit instead of by id (the evaluator's tie rule), e.g. 1,001
documents with ``doc_block=1000``: d1000, a copy of d0000, scored 7.123368 against d0000's 7.1233683
and ranked below it (953 of 2,400 randomized block-size runs broke a duplicate tie; 0 now).
"""

from __future__ import annotations

import numpy as np
import pytest

from harness.errors import HarnessError
from retrievers.dense.exact import exact_search, l2_normalize
from retrievers.topk import string_ranks

N_DOCS, DIM = 1001, 64


def _corpus():
    rng = np.random.default_rng(0)
    docs = rng.standard_normal((N_DOCS, DIM)).astype(np.float32)
    copies = {1000: 0, 999: 3, 500: 17, 64: 63, 7: 998}  # copy -> original, across blocks and columns
    for copy, original in copies.items():
        docs[copy] = docs[original]
    queries = rng.standard_normal((3, DIM)).astype(np.float32)
    ids = np.array([f"d{i:04d}" for i in range(N_DOCS)], dtype=object)
    return queries, docs, ids, copies


@pytest.mark.parametrize("cosine", [True, False])
def test_equal_embeddings_score_equal_and_tie_by_id_whatever_the_block_sizes(cosine):
    queries, docs, ids, copies = _corpus()
    rank = string_ranks(ids)
    # oracle: float64 products of the (normalized) float32 vectors, rounded to float32 once
    q = l2_normalize(queries) if cosine else queries
    d = l2_normalize(docs) if cosine else docs
    exact = (q.astype(np.float64) @ d.astype(np.float64).T).astype(np.float32)
    tolerance = 1e-6 if cosine else 1e-5 * float(np.abs(exact).max())
    for query_block in (256, 2, 1):
        for doc_block in (16384, 1000, 500, 7, 1):
            idx, scores = exact_search(queries, docs, N_DOCS + 5, rank, cosine=cosine, query_block=query_block,
                                       doc_block=doc_block)
            for row in range(len(queries)):
                assert sorted(idx[row].tolist()) == list(range(N_DOCS))  # every document once
                got = dict(zip(idx[row].tolist(), scores[row].tolist()))
                assert max(abs(got[j] - float(exact[row, j])) for j in got) <= tolerance
                for copy, original in copies.items():  # a copy scores exactly as its original ...
                    assert got[copy] == got[original], (query_block, doc_block, copy)
                    # ... so the higher id ranks first (ties by document id descending)
                    position = idx[row].tolist()
                    assert position.index(max(copy, original)) == position.index(min(copy, original)) - 1
                # the whole list in canonical order: score descending, then id descending
                keys = list(zip(scores[row].tolist(), ids[idx[row]].tolist()))
                assert keys == sorted(keys, reverse=True)


def test_the_last_single_document_block_scores_as_the_others():
    """The reproducer: 1,001 documents, ``doc_block=1000``; d1000 is a copy of d0000."""
    queries, docs, ids, _ = _corpus()
    rank = string_ranks(ids)
    one_block = exact_search(queries, docs, N_DOCS, rank, cosine=False)
    two_blocks = exact_search(queries, docs, N_DOCS, rank, cosine=False, doc_block=1000)
    assert np.array_equal(one_block[0], two_blocks[0])
    assert np.array_equal(one_block[1].view(np.int32), two_blocks[1].view(np.int32))  # bitwise
    idx, scores = two_blocks
    position = idx[2].tolist().index(1000)
    assert idx[2, position + 1] == 0 and scores[2, position] == scores[2, position + 1]


def test_a_faiss_index_that_cannot_be_trained_is_one_error_line():
    pytest.importorskip("faiss")
    from retrievers.dense.faiss_index import FaissIndex

    docs = np.random.default_rng(0).standard_normal((40, 8)).astype(np.float32)
    # faiss: "Number of training points (40) should be at least as large as number of clusters (64)",
    # a bare RuntimeError traceback from `harness run ... -p faiss_factory=IVF64,Flat` before
    with pytest.raises(HarnessError, match=r"'IVF64,Flat' cannot be trained on 40 documents: .*clusters \(64\)"):
        FaissIndex(docs, True, "IVF64,Flat")


def test_the_bi_encoder_reranker_scores_equal_documents_equal():
    # candidate_scores multiplied each query block by its candidates' union at any width: BLAS computes
    # the trailing columns with other code, so a document and its copy scored unequally in the last bit
    # (1,449 of 3,000 random cases; e.g. -0.045160454 vs -0.04516045) and were ordered by it, not by id
    # (found by the late-commits review). Expected: equal embeddings, equal scores, in every case.
    import types

    from retrievers.rerank.bi_encoder import candidate_scores

    rng = np.random.default_rng(0)
    for _ in range(200):
        nd, dim, nq = int(rng.integers(2, 200)), int(rng.choice([32, 64, 384])), int(rng.integers(1, 8))
        docs = rng.standard_normal((nd, dim)).astype(np.float32)
        docs[nd - 1] = docs[0]
        queries = rng.standard_normal((nq, dim)).astype(np.float32)
        candidates = types.SimpleNamespace(entry_query_rows=np.repeat(np.arange(nq), nd))
        for cosine in (True, False):
            scores = candidate_scores(queries, docs, candidates, np.tile(np.arange(nd), nq), cosine, 256)
            scores = scores.reshape(nq, nd)
            assert (scores[:, 0] == scores[:, nd - 1]).all()
            assert np.allclose(scores, (queries / np.linalg.norm(queries, axis=1, keepdims=True)) @
                               (docs / np.linalg.norm(docs, axis=1, keepdims=True)).T if cosine else queries @ docs.T,
                               rtol=1e-4, atol=1e-3)  # (float32 sums of 384 products near 50)

"""The compiled search (native/search.c, native/topk.c) against search.score_query + top_k_positive."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from harness.columns import inverse_permutation
from retrievers.bm25 import loader
from retrievers.bm25.analyzer import Analyzer
from retrievers.bm25.build import build_python
from retrievers.bm25.encode import TermEncoder
from retrievers.bm25.scoring import ScoringParams
from retrievers.bm25.search import score_query
from retrievers.bm25.sparse_index import InvalidIndex, SparseIndex, check_postings
from retrievers.topk import string_ranks, top_k_positive
from tests.retrievers.bm25_c import compiled, compiled_on, needs_extension, scifact  # noqa: F401


# ------------------------------------------------------------------------- search edge cases
SMALL = [
    "apple banana apple", "banana cherry", "cherry", "apple cherry date", "date date date elder",
    "fig", "", "apple apple apple apple banana", "elder fig grape", "grape apple",
]


@pytest.fixture
def small_index(compiled_on):
    encoder = TermEncoder(Analyzer(stemmer=None))
    index = build_python([encoder.encode(SMALL[:4]), encoder.encode(SMALL[4:])], encoder.terms, ScoringParams())
    ids = np.array([f"d{i:02d}" for i in range(len(SMALL))])[::-1].copy()  # id order differs from doc order
    rank = string_ranks(ids)
    doc_of_rank = np.empty_like(rank)
    doc_of_rank[rank] = np.arange(len(rank))
    return index, {t: i for i, t in enumerate(index.terms)}, rank, doc_of_rank


def _search(index, rank, doc_of_rank, queries: list[list[int]], k: int, **kw):
    offsets = np.concatenate([[0], np.cumsum([len(q) for q in queries])]).astype(np.int64)
    term_ids = np.array([t for q in queries for t in q], dtype=np.int32)
    arrays = {name: kw.pop(name) for name in ("indptr", "indices", "data", "n_docs") if name in kw}
    fields = {f.name: getattr(index, f.name) for f in dataclasses.fields(index)}
    damaged = SparseIndex(**{**fields, **arrays})  # not validated: the searcher checks what it reads
    offsets, term_ids = kw.pop("offsets", offsets), kw.pop("term_ids", term_ids)
    return compiled.Searcher(damaged, rank, doc_of_rank)(offsets, term_ids, k, **kw)


def _searcher_over(index, ids):
    """(compiled.Searcher of ``index`` with the string order of ``ids``, their ranks)."""
    rank = string_ranks(ids)
    return compiled.Searcher(index, rank, inverse_permutation(rank)), rank


def _python_search(index, rank, term_ids, k):
    docs, scores = score_query(index, term_ids)
    keep = scores > 0
    docs, scores = docs[keep], scores[keep]
    chosen = top_k_positive(scores, k, rank[docs])
    return docs[chosen], scores[chosen]


@needs_extension
def test_search_matches_score_query(small_index):
    index, tid, rank, doc_of_rank = small_index
    a, c, d = tid["apple"], tid["cherry"], tid["date"]
    queries = [[], [a], [a, a], [a, a, a, c], [c, a, c, d, a, c], [tid["fig"], tid["grape"], tid["fig"]], [d, d, d, d, d]]
    for k in (1, 2, 3, 100):
        hits, docs, scores = _search(index, rank, doc_of_rank, queries, k)
        assert hits.dtype == docs.dtype == np.int64 and scores.dtype == np.float64
        assert (scores == scores.astype(np.float32)).all()  # float32 values
        assert hits[0] == 0 and hits.sum() == len(docs) == len(scores)
        pos = 0
        for q, h in zip(queries, hits.tolist()):
            exp_docs, exp_scores = _python_search(index, rank, q, k) if q else (np.zeros(0), np.zeros(0, np.float32))
            assert docs[pos:pos + h].tolist() == exp_docs.tolist()
            np.testing.assert_array_equal(scores[pos:pos + h], exp_scores)
            pos += h
    # a term repeated q times weighs q times (in float32) when it is the query's only term
    _, d1, s1 = _search(index, rank, doc_of_rank, [[a]], 100)
    _, d3, s3 = _search(index, rank, doc_of_rank, [[a, a, a]], 100)
    assert d1.tolist() == d3.tolist() == [7, 0, 9, 3]  # the documents holding "apple"
    np.testing.assert_array_equal(s3, s1.astype(np.float32) * np.float32(3))  # multiplied in float32
    # equal scores go by document id descending: "fig" alone in doc 5 (id d04), with 2 others in doc 8 (id d01)
    hits, docs, scores = _search(index, rank, doc_of_rank, [[tid["fig"]]], 100)
    assert hits.tolist() == [2] and docs.tolist() == [5, 8] and scores[0] > scores[1]


@needs_extension
def test_search_top_k_with_many_documents_and_ties(compiled_on):
    """The compiled top k (a histogram of the keys' top bits, then a radix sort) against
    score_query + top_k_positive, on 3,000 documents over 6 words: scores tie in large groups, so
    the k-th score's group is cut by document id; k below, at and above the number of hits; the
    queries split among threads (results of queries with fewer than k hits closed up); documents
    scored in blocks of 1 to 2,999 (bounded scratch: the best k kept between blocks, later keys below
    the k-th best dropped)."""
    rng = random.Random(5)
    words = ["ant", "bee", "cat", "dog", "eel", "fox"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 6))) for _ in range(3000)]
    encoder = TermEncoder(Analyzer(stemmer=None))
    index = build_python([encoder.encode(texts)], encoder.terms, ScoringParams())
    ids = np.array([f"doc{rng.randrange(10**6)}-{i}" for i in range(len(texts))])
    rank = string_ranks(ids)
    doc_of_rank = np.empty_like(rank)
    doc_of_rank[rank] = np.arange(len(rank))
    tid = {t: i for i, t in enumerate(index.terms)}
    queries = [[tid[w] for w in rng.sample(words, rng.randint(1, 4))] for _ in range(20)]
    checked_cut = 0
    cases = [(1, 1, None), (7, 3, None), (300, 1, None), (1000, 2, None), (2999, 25, None), (5000, 4, None),
             (1, 1, 1), (7, 2, 3), (300, 3, 64), (1000, 1, 999), (2999, 2, 1000), (5000, 1, 2999)]  # 25 threads > 20 queries
    for k, n_threads, doc_block in cases:  # documents scored doc_block at a time (default: all 3,000 at once)
        options = {} if doc_block is None else {"doc_block": doc_block}
        hits, docs, scores = _search(index, rank, doc_of_rank, queries, k, n_threads=n_threads, **options)
        pos = 0
        for q, h in zip(queries, hits.tolist()):
            exp_docs, exp_scores = _python_search(index, rank, q, k)
            assert docs[pos:pos + h].tolist() == exp_docs.tolist()
            np.testing.assert_array_equal(scores[pos:pos + h], exp_scores)
            checked_cut += 256 < h < int((score_query(index, q)[1] > 0).sum())
            pos += h
    assert checked_cut > 40  # the histogram cut ran, with more hits than k


@needs_extension
def test_search_with_constants_adds_them(small_index):
    index, tid, rank, doc_of_rank = small_index
    q = [tid["apple"], tid["cherry"]]
    _, docs, scores = _search(index, rank, doc_of_rank, [q], 100)
    _, docs2, scores2 = _search(index, rank, doc_of_rank, [q], 100, constants=np.array([0.25], np.float32))
    assert sorted(docs.tolist()) == sorted(docs2.tolist())
    by_doc = dict(zip(docs.tolist(), scores.tolist()))
    expected = {d: np.float32(by_doc[d]) + np.float32(0.25) for d in docs2.tolist()}
    assert expected == dict(zip(docs2.tolist(), scores2.tolist()))
    # a negative constant larger than every score leaves no hit (scores > 0 only)
    hits, _, _ = _search(index, rank, doc_of_rank, [q], 100, constants=np.array([-100], np.float32))
    assert hits.tolist() == [0]


@needs_extension
def test_search_rejects_bad_arguments(small_index):
    index, tid, rank, doc_of_rank = small_index
    ok = [[tid["apple"]]]
    _search(index, rank, doc_of_rank, ok, 5)
    with pytest.raises(ValueError):
        _search(index, rank, doc_of_rank, ok, 0)  # k < 1
    with pytest.raises(ValueError):
        _search(index, rank, doc_of_rank, ok, 5, n_docs=index.n_docs + 1)  # id_rank has n_docs entries
    with pytest.raises(ValueError):
        _search(index, rank[:-1], doc_of_rank, ok, 5)
    with pytest.raises(ValueError):
        _search(index, rank, doc_of_rank, ok, 5, data=index.data[:-1])
    with pytest.raises(ValueError):
        _search(index, rank, doc_of_rank, ok, 5, indptr=index.indptr[:-1])  # indptr[-1] != postings
    with pytest.raises(ValueError):
        _search(index, rank, doc_of_rank, ok, 5, offsets=np.array([0, 2], np.int64))  # past the term ids
    with pytest.raises(ValueError):
        _search(index, rank, doc_of_rank, ok, 5, offsets=np.array([1, 0], np.int64))  # decreasing
    with pytest.raises(ValueError):
        _search(index, rank, doc_of_rank, ok, 5, offsets=np.zeros(0, np.int64))  # not even [0]
    with pytest.raises(ValueError):
        _search(index, rank, doc_of_rank, ok, 5, constants=np.zeros(2, np.float32))  # one per query
    for bad in (index.n_terms, index.n_terms + 1000, -1):
        with pytest.raises(ValueError, match="out of range"):
            _search(index, rank, doc_of_rank, [[tid["apple"], bad]], 5)
    with pytest.raises(ValueError, match="whole number"):
        loader.built_module().Index(index.indptr.tobytes()[:-1], index.indices, index.data, index.n_docs, rank,
                                    doc_of_rank)
    with pytest.raises(ValueError, match="doc_block"):
        _search(index, rank, doc_of_rank, ok, 5, doc_block=0)




def test_search_rejects_damaged_index_arrays(small_index):
    """A damaged index raises instead of reading out of bounds."""
    index, tid, rank, doc_of_rank = small_index
    ok = [[tid["apple"]]]
    bad_indptr = index.indptr.copy()
    bad_indptr[1], bad_indptr[2] = bad_indptr[2] + 1, bad_indptr[1]
    with pytest.raises(ValueError, match="ascending"):
        _search(index, rank, doc_of_rank, ok, 5, indptr=bad_indptr)
    shifted = index.indptr + 1
    shifted[-1] = index.indptr[-1]
    with pytest.raises(ValueError):
        _search(index, rank, doc_of_rank, ok, 5, indptr=shifted)
    bad_indices = index.indices.copy()
    bad_indices[0] = index.n_docs
    with pytest.raises(ValueError, match="out of range"):
        _search(index, rank, doc_of_rank, ok, 5, indices=bad_indices)
    bad_rank = rank.copy()
    bad_rank[0] = index.n_docs + 7
    with pytest.raises(ValueError, match="id_rank"):
        _search(index, bad_rank, doc_of_rank, ok, 5)




def test_a_term_out_of_order_is_refused_though_every_document_is_in_range(compiled_on):
    """A term's documents 1, 4000, 2, 3 (all < n_docs): a block of 16 documents finds all four by
    binary search, and the search wrote document 4000's score 3,984 places past its 16-entry scratch
    (heap damage, and 4000 in the results) before the order was checked. Now Index, check_postings
    (C, any thread count) and the numpy check all refuse it; the same documents in order pass."""
    n_docs = 4096
    rank = np.arange(n_docs, dtype=np.int64)
    indptr = np.array([0, 4], dtype=np.int64)
    data = np.ones(4, dtype=np.float32)
    unordered = np.array([1, 4000, 2, 3], dtype=np.int32)
    with pytest.raises(ValueError, match="out of order"):
        loader.built_module().Index(indptr, unordered, data, n_docs, rank, rank)
    for n_threads in (1, 2, 4):
        with pytest.raises(InvalidIndex, match="out of order"):
            compiled.check_postings(indptr, unordered, n_docs, n_threads)
    with pytest.raises(InvalidIndex, match="out of order"):
        check_postings(indptr, unordered, n_docs)
    ordered = np.sort(unordered)
    index = loader.built_module().Index(indptr, ordered, data, n_docs, rank, rank)
    hits, docs, _ = index.search(np.array([0, 1], np.int64), np.array([0], np.int32), 10, None, 1, doc_block=16)
    assert np.frombuffer(hits, np.int64).tolist() == [4]
    assert np.frombuffer(docs, np.int64).tolist() == [4000, 3, 2, 1]  # equal scores: id rank descending
    compiled.check_postings(indptr, ordered, n_docs, 2)
    check_postings(indptr, ordered, n_docs)


def _ordered_postings(rng: np.random.Generator, n_terms: int, n_post: int):
    """indptr and each term's documents strictly ascending (gaps of 1-3 from a random first), over
    n_post postings of random term lengths (empty terms included); n_docs one past the largest."""
    cuts = np.sort(rng.integers(0, n_post + 1, n_terms - 1))
    indptr = np.concatenate([[0], cuts, [n_post]]).astype(np.int64)
    gaps = rng.integers(1, 4, n_post).astype(np.int64)
    lengths = np.diff(indptr)
    starts = indptr[:-1][lengths > 0]
    gaps[starts] = rng.integers(0, 50, len(starts))  # each term's first document
    total = np.cumsum(gaps)
    before = np.repeat(total[starts] - gaps[starts], lengths[lengths > 0])
    indices = (total - before).astype(np.int32)
    return indptr, indices, int(indices.max()) + 1


@pytest.mark.parametrize("defect", ["first posting", "last posting", "a repeat", "a descent", "negative",
                                    "past n_docs", "at a thread's first posting"])
def test_postings_check_finds_one_defect_wherever_it_is(compiled_on, defect):
    """Over 1,000 terms and 1.5M postings (enough for the C check's threads: 1, 2, 3 and 4 of them,
    each taking a share of the postings that ends on a term's end), one bad posting is found by the
    C check on any number of threads and by the numpy check (blocks of 2^20 postings); the postings
    without it pass both. The terms' boundaries, where documents fall back, are not defects."""
    rng = np.random.default_rng(15)
    indptr, indices, n_docs = _ordered_postings(rng, 1_000, 1_500_000)
    for n_threads in (1, 2, 3, 4):
        compiled.check_postings(indptr, indices, n_docs, n_threads)
    check_postings(indptr, indices, n_docs)
    long_terms = np.flatnonzero(np.diff(indptr) >= 3)
    bad = indices.copy()
    if defect == "first posting":
        bad[0] = -1 if indptr[1] > 0 else bad[0]
        bad[int(indptr[long_terms[0]])] = -1
    elif defect == "last posting":
        bad[-1] = n_docs
    elif defect in ("a repeat", "a descent", "at a thread's first posting"):
        if defect == "at a thread's first posting":  # the term holding the middle posting (2 threads' split)
            t = int(np.searchsorted(indptr, len(indices) // 2, side="right")) - 1
            t = long_terms[np.searchsorted(long_terms, t)]
        else:
            t = long_terms[len(long_terms) // 3]
        p = int(indptr[t]) + 1
        bad[p] = bad[p - 1] if defect == "a repeat" else bad[p - 1] - 1
    elif defect == "negative":
        bad[len(bad) // 2] = -5
    else:
        bad[len(bad) // 3] = n_docs + 3
    assert not np.array_equal(bad, indices)
    for n_threads in (1, 2, 3, 4):
        with pytest.raises(InvalidIndex, match="out of range or out of order"):
            compiled.check_postings(indptr, bad, n_docs, n_threads)
    with pytest.raises(InvalidIndex, match="out of range or out of order"):
        check_postings(indptr, bad, n_docs)


def test_a_validated_index_is_not_checked_again_by_the_searcher(compiled_on):
    """validate() remembers the arrays it passed; postings_checked() holds only while the index has
    those very arrays (another indices array, or n_docs, and the searcher checks again)."""
    rng = np.random.default_rng(3)
    indptr, indices, n_docs = _ordered_postings(rng, 50, 5_000)
    index = SparseIndex(terms=[f"t{i}" for i in range(50)], indptr=indptr, indices=indices,
                        data=np.ones(len(indices), np.float32), doc_lengths=np.ones(n_docs, np.int32),
                        nonoccurrence=None, n_docs=n_docs)
    assert not index.postings_checked()
    assert index.validate() is index and index.postings_checked()
    index.indices = indices.copy()
    assert not index.postings_checked()
    index.validate()
    index.n_docs += 1
    assert not index.postings_checked()


# ------------------------------------------------------------------------- pruning (MaxScore) == exhaustive
def _random_index(rng: np.random.Generator, n_docs: int, n_terms: int, levels: int | None):
    """A random index: Zipf-skewed document frequencies (a few terms in most documents, most in a
    few), posting scores drawn from ``levels`` distinct values (many ties) or continuous."""
    df = np.minimum(n_docs, (n_docs / (1 + np.arange(n_terms)) ** rng.uniform(0.6, 1.4)).astype(np.int64) + 1)
    rng.shuffle(df)
    df[rng.random(n_terms) < 0.05] = 0  # terms without postings
    indptr = np.concatenate([[0], np.cumsum(df)]).astype(np.int64)
    indices = np.concatenate([np.sort(rng.choice(n_docs, size=int(d), replace=False)) for d in df] or [[]])
    if levels is None:
        data = rng.gamma(2.0, 1.0, size=len(indices)) * rng.uniform(0.2, 3.0, size=n_terms).repeat(df)
    else:
        data = rng.integers(1, levels + 1, size=len(indices)) * 0.25 * rng.integers(1, 4, size=n_terms).repeat(df)
    index = SparseIndex(terms=[f"t{i}" for i in range(n_terms)], indptr=indptr, indices=indices.astype(np.int32),
                        data=data.astype(np.float32), doc_lengths=np.ones(n_docs, np.int32), nonoccurrence=None,
                        n_docs=n_docs).validate()
    ids = np.array([f"d{rng.integers(10**6)}-{i}" for i in range(n_docs)])
    rank = string_ranks(ids)
    doc_of_rank = np.empty_like(rank)
    doc_of_rank[rank] = np.arange(n_docs)
    return index, rank, doc_of_rank


@needs_extension
def test_pruned_search_equals_exhaustive_on_random_indexes(compiled_on):
    """search(prune=True) (MaxScore: documents holding only low-bound terms skipped once the best k
    are known) gives exactly the documents, float32 scores and order of prune=False (every posting
    scored) and of score_query + top_k_positive, on 40 random indexes: skewed document frequencies,
    tied scores (a few distinct posting values, so the k-th score ties and document ids decide),
    k = 1 up to more than the matches, empty queries, repeated terms, a 40-term query, BM25L-style
    constants, blocks from 7 documents to all, 1-3 threads."""
    rng = np.random.default_rng(15)
    pruned_fewer = 0
    for case in range(40):
        n_docs, n_terms = int(rng.integers(50, 3000)), int(rng.integers(5, 60))
        index, rank, doc_of_rank = _random_index(rng, n_docs, n_terms, None if case % 3 == 0 else int(rng.integers(1, 5)))
        queries = [[] if rng.random() < 0.05 else rng.integers(0, n_terms, size=int(rng.integers(1, 9))).tolist()
                   for _ in range(25)]
        queries[2] = rng.integers(0, n_terms, size=40).tolist()  # a long query (repeats likely)
        queries[0] = [queries[1][0]] * 3 if queries[1] else []  # a repeated term
        searcher = compiled.Searcher(index, rank, doc_of_rank)
        constants = rng.uniform(-0.5, 1.0, size=len(queries)).astype(np.float32) if case % 4 == 1 else None
        offsets = np.concatenate([[0], np.cumsum([len(q) for q in queries])]).astype(np.int64)
        term_ids = np.array([t for q in queries for t in q], dtype=np.int32)
        for k in (1, int(rng.integers(2, 50)), int(rng.integers(50, 400)), n_docs + 5):
            kw = {"doc_block": int(rng.choice([7, 64, 500, 65536]))}
            exhaustive = searcher(offsets, term_ids, k, constants, int(rng.integers(1, 4)), prune=False, **kw)
            pruned = searcher(offsets, term_ids, k, constants, int(rng.integers(1, 4)), **kw)
            for a, b in zip(exhaustive, pruned):
                np.testing.assert_array_equal(a, b)
            if constants is None:  # the Python reference (no constants there)
                hits, docs, scores = pruned
                pos = 0
                for q, h in zip(queries, hits.tolist()):
                    exp_docs, exp_scores = _python_search(index, rank, q, k) if q else ([], [])
                    assert docs[pos:pos + h].tolist() == list(exp_docs)
                    np.testing.assert_array_equal(scores[pos:pos + h], np.asarray(exp_scores, np.float32))
                    pos += h
    # the bounds pruning uses: each term's largest posting score (0 without postings)
    bounds = np.frombuffer(searcher._index.bounds(), np.float32)
    expected = [index.data[s:e].max() if e > s else 0.0 for s, e in zip(index.indptr[:-1], index.indptr[1:])]
    np.testing.assert_array_equal(bounds, np.array(expected, np.float32))



@needs_extension
def test_pruned_candidates_on_indexes_where_rare_terms_decide(compiled_on):
    """MaxScore's candidate path (a block whose essential terms hold under 1/PRUNE_RATIO of its
    postings: their documents are the candidates, and each non-essential term's postings are read
    whole for them or looked up candidate by candidate, search.c) gives exactly prune=False's
    documents, scores and order: 6 random indexes of 6,000-20,000 documents where a few terms are
    in about half the documents with low scores, a few in a tenth with middling ones and the rest
    rare with high ones, so that once the best k are known only the rare terms are essential
    (scores on a coarse grid: ties at the k-th score). Queries of 1-2 rare terms and 1-4 others,
    repeats included; k 1 to 200; blocks of 256 to all documents; 1-2 threads."""
    rng = np.random.default_rng(22)
    for case in range(6):
        n_docs = int(rng.integers(6_000, 20_000))
        kinds = [(0.5, 0.02, 0.1)] * 3 + [(0.1, 0.3, 1.0)] * 3 + [(0.01, 4.0, 6.0)] * 8  # (df share, low, high)
        postings = [np.sort(rng.choice(n_docs, size=max(1, int(n_docs * share)), replace=False))
                    for share, _, _ in kinds]
        data = [np.round(rng.uniform(low, high, len(p)) * 8) / 8 for p, (_, low, high) in zip(postings, kinds)]
        indptr = np.concatenate([[0], np.cumsum([len(p) for p in postings])]).astype(np.int64)
        index = SparseIndex(terms=[f"t{i}" for i in range(len(kinds))], indptr=indptr,
                            indices=np.concatenate(postings).astype(np.int32),
                            data=np.concatenate(data).astype(np.float32), doc_lengths=np.ones(n_docs, np.int32),
                            nonoccurrence=None, n_docs=n_docs).validate()
        searcher, rank = _searcher_over(index, np.array([f"d{rng.integers(10**6)}-{i}" for i in range(n_docs)]))
        queries = [rng.choice(np.arange(6, 14), size=int(rng.integers(1, 3))).tolist()
                   + rng.choice(6, size=int(rng.integers(1, 5))).tolist() for _ in range(30)]
        offsets = np.concatenate([[0], np.cumsum([len(q) for q in queries])]).astype(np.int64)
        term_ids = np.array([t for q in queries for t in q], dtype=np.int32)
        for k in (1, 10, 200):
            block = int(rng.choice([256, 1024, 4096, 65536]))
            threads = int(rng.integers(1, 3))
            exhaustive = searcher(offsets, term_ids, k, None, threads, prune=False, doc_block=block)
            pruned = searcher(offsets, term_ids, k, None, threads, doc_block=block)
            for a, b in zip(exhaustive, pruned):
                np.testing.assert_array_equal(a, b)
            hits, docs, scores = pruned
            assert hits.min() > 0  # every query matches documents
            for q, h, start in zip(queries[:3], hits.tolist(), np.concatenate([[0], np.cumsum(hits)]).tolist()):
                exp_docs, exp_scores = _python_search(index, rank, q, k)
                assert docs[start:start + h].tolist() == list(exp_docs)
                np.testing.assert_array_equal(scores[start:start + h], np.asarray(exp_scores, np.float32))

@needs_extension
def test_search_with_signed_posting_scores_keeps_positive_sums_only(compiled_on):
    """Posting scores of both signs and zeros (idf that can go negative, as BM25's Robertson idf):
    sums that cancel to exactly 0, negative sums and -0.0 are never results, positive ones are, in
    the order of score_query + top_k_positive; on 1 to 3 threads, blocks from 5 documents to all,
    k from 1 to more than the matches (the exhaustive pass, pruning being off for such terms)."""
    rng = np.random.default_rng(21)
    cancelled = negative = 0
    for _ in range(12):
        n_docs, n_terms = int(rng.integers(20, 2000)), int(rng.integers(3, 12))
        index, rank, doc_of_rank = _random_index(rng, n_docs, n_terms, 3)
        signs = rng.choice(np.array([-1.0, 0.0, 1.0], np.float32), size=len(index.data), p=[0.3, 0.1, 0.6])
        index.data = (index.data * signs).astype(np.float32)  # levels of 0.25: sums cancel exactly
        searcher = compiled.Searcher(index, rank, doc_of_rank)
        queries = [rng.integers(0, n_terms, size=int(rng.integers(1, 6))).tolist() for _ in range(15)]
        offsets = np.concatenate([[0], np.cumsum([len(q) for q in queries])]).astype(np.int64)
        term_ids = np.array([t for q in queries for t in q], dtype=np.int32)
        for k in (1, int(rng.integers(2, 40)), n_docs + 1):
            hits, docs, scores = searcher(offsets, term_ids, k, None, int(rng.integers(1, 4)),
                                          doc_block=int(rng.choice([5, 64, 65536])))
            pos = 0
            for q, h in zip(queries, hits.tolist()):
                exp_docs, exp_scores = _python_search(index, rank, q, k)
                assert docs[pos:pos + h].tolist() == list(exp_docs)
                np.testing.assert_array_equal(scores[pos:pos + h], np.asarray(exp_scores, np.float32))
                assert (scores[pos:pos + h] > 0).all()
                pos += h
                matched = score_query(index, q)[1]  # every document holding a query term
                cancelled, negative = cancelled + int((matched == 0).sum()), negative + int((matched < 0).sum())
    assert cancelled > 100 and negative > 100  # both kinds of sum were there to be left out


@needs_extension
def test_a_speculative_bar_too_high_is_dropped_and_the_query_searched_again(compiled_on):
    """search.c takes the first block's best scores as a speculative bar for the later blocks
    (speculative_rank) and keeps its results only when at least k documents reached the bar. Here
    the first block holds every high score: its 75th best (k = 300, 8 blocks of 500) bars all but 75
    documents, so the bar must be dropped and the query searched again; kept, it would give 75
    results. Also a shuffled copy (the bar holds) and ties at the bar: the results of prune=False
    and of score_query + top_k_positive every time."""
    rng = np.random.default_rng(8)
    n_docs, block, k = 4000, 500, 300
    high = np.round(rng.uniform(5.0, 6.0, block), 1)  # ties: 11 distinct values
    low = np.round(rng.uniform(1.0, 2.0, n_docs - block), 2)
    for data in (np.concatenate([high, low]), rng.permutation(np.concatenate([high, low]))):
        index = SparseIndex(terms=["a"], indptr=np.array([0, n_docs], np.int64),
                            indices=np.arange(n_docs, dtype=np.int32), data=data.astype(np.float32),
                            doc_lengths=np.ones(n_docs, np.int32), nonoccurrence=None, n_docs=n_docs).validate()
        searcher, rank = _searcher_over(index, np.array([f"d{rng.integers(10**6)}-{i}" for i in range(n_docs)]))
        args = (np.array([0, 1], np.int64), np.array([0], np.int32), k, None, 1)
        hits, docs, scores = searcher(*args, doc_block=block)
        exhaustive = searcher(*args, doc_block=block, prune=False)
        for a, b in zip((hits, docs, scores), exhaustive):
            np.testing.assert_array_equal(a, b)
        exp_docs, exp_scores = _python_search(index, rank, [0], k)
        assert hits.tolist() == [k] and docs.tolist() == exp_docs.tolist()
        np.testing.assert_array_equal(scores, exp_scores)


@needs_extension
def test_speculation_stops_on_an_index_whose_bars_keep_failing(compiled_on):
    """An index whose first block holds every query's best documents drops most speculative bars:
    after 32 tries with more than a quarter dropped, its searches stop trying (Index.speculation()
    counts them over calls and threads); a shuffled index keeps trying with none dropped. Results
    equal prune=False's throughout."""
    rng = np.random.default_rng(9)
    n_docs, block, k, n_terms = 4000, 500, 300, 6
    for first_heavy in (True, False):
        rows = []
        for t in range(n_terms):  # every term in every document; the first block scores high
            scores = np.round(rng.uniform(1.0, 2.0, n_docs), 2)
            scores[:block] += 4.0
            rows.append(scores if first_heavy else rng.permutation(scores))
        data = np.concatenate(rows).astype(np.float32)
        index = SparseIndex(terms=[f"t{t}" for t in range(n_terms)],
                            indptr=np.arange(0, n_terms * n_docs + 1, n_docs, dtype=np.int64),
                            indices=np.tile(np.arange(n_docs, dtype=np.int32), n_terms), data=data,
                            doc_lengths=np.ones(n_docs, np.int32), nonoccurrence=None, n_docs=n_docs).validate()
        searcher, _ = _searcher_over(index, np.array([f"d{i:05d}" for i in range(n_docs)]))
        queries = [rng.choice(n_terms, size=int(rng.integers(1, 3)), replace=False).tolist() for _ in range(60)]
        offsets = np.concatenate([[0], np.cumsum([len(q) for q in queries])]).astype(np.int64)
        term_ids = np.array([t for q in queries for t in q], dtype=np.int32)
        for n_threads in (1, 2):
            got = searcher(offsets, term_ids, k, None, n_threads, doc_block=block)
            want = searcher(offsets, term_ids, k, None, n_threads, doc_block=block, prune=False)
            for a, b in zip(got, want):
                np.testing.assert_array_equal(a, b)
        tried, dropped = searcher._index.speculation()
        if first_heavy:
            assert 32 <= tried < 60 and dropped * 4 > tried  # stopped: not all 120 queries tried one
        else:
            assert tried == 120 and dropped == 0


@needs_extension
def test_bounds_are_taken_back_checked_and_infinite_for_negative_scores(small_index):
    index, tid, rank, doc_of_rank = small_index
    Index = loader.built_module().Index
    args = (index.indptr, index.indices, index.data, index.n_docs, rank, doc_of_rank)
    bounds = Index(*args).bounds()
    assert Index(*args, bounds=bounds).bounds() == bounds
    for bad in (bounds[:-4], np.full(index.n_terms, -1, np.float32), np.full(index.n_terms, np.nan, np.float32)):
        with pytest.raises(ValueError, match="bounds"):
            Index(*args, bounds=bad)
    data = index.data.copy()
    data[index.indptr[tid["apple"]]] = -1.0  # a negative score: that term is never pruned on
    b = np.frombuffer(Index(index.indptr, index.indices, data, index.n_docs, rank, doc_of_rank).bounds(), np.float32)
    assert b[tid["apple"]] == np.inf and np.isfinite(np.delete(b, tid["apple"])).all()


@needs_extension
def test_pruning_applies_on_a_skewed_index(compiled_on):
    """Pruning does apply (not only falls back to scoring everything): on 20,000 documents where
    one term is in every document with a low score and another in 200 with a high one, k = 10
    gives the exhaustive results; with bounds that lie (0 for both terms), every block after the
    first is skipped once 10 documents are kept, so the results come from the first block only."""
    n = 20_000
    rng = np.random.default_rng(3)
    rare = np.sort(rng.choice(n, 200, replace=False)).astype(np.int32)
    indices = np.concatenate([np.arange(n, dtype=np.int32), rare])
    data = np.concatenate([rng.uniform(0.01, 0.1, n), rng.uniform(5, 6, 200)]).astype(np.float32)
    index = SparseIndex(terms=["common", "rare"], indptr=np.array([0, n, n + 200], np.int64), indices=indices,
                        data=data, doc_lengths=np.ones(n, np.int32), nonoccurrence=None, n_docs=n).validate()
    rank = np.arange(n, dtype=np.int64)
    offsets, terms = np.array([0, 2], np.int64), np.array([0, 1], np.int32)
    searcher = compiled.Searcher(index, rank, rank)
    exhaustive = searcher(offsets, terms, 10, None, 1, prune=False, doc_block=512)
    pruned = searcher(offsets, terms, 10, None, 1, doc_block=512)
    for a, b in zip(exhaustive, pruned):
        np.testing.assert_array_equal(a, b)
    best = np.argsort(-(data[n:] + data[rare]).astype(np.float64), kind="stable")[:10]
    assert pruned[1].tolist() == rare[best].tolist()
    index.bounds = np.zeros(2, np.float32)  # lies: nothing can reach a positive threshold
    lied = compiled.Searcher(index, rank, rank)(offsets, terms, 10, None, 1, doc_block=512)
    assert lied[0].tolist() == [10] and lied[1].max() < 512 != pruned[1].max()  # the first block's best only


def test_edges_found_by_review_repeats_past_2_24_and_n_docs_past_int32(compiled_on):
    """A term repeated 2^24 + 3 times in one query counts float32(16777219) = 16777220 times, as
    score_query does (a float32 sum of ones stopped at 16777216); an index of 2^31 documents or more
    is refused by Index and check_postings (block positions are int32: a block past 2^31 wrapped,
    and its postings were written before the scratch)."""
    fb = loader.built_module()
    indptr, indices, data = np.array([0, 1], np.int64), np.array([0], np.int32), np.array([1.0], np.float32)
    rank = np.zeros(1, np.int64)
    reps = 2**24 + 3
    terms = np.zeros(reps, np.int32)
    _, _, scores = fb.Index(indptr, indices, data, 1, rank, rank).search(np.array([0, reps], np.int64), terms, 1)
    single = SparseIndex(terms=["a"], indptr=indptr, indices=indices, data=data, doc_lengths=np.ones(1, np.int32),
                         nonoccurrence=None, n_docs=1)
    assert np.frombuffer(scores, np.float64).tolist() == score_query(single, terms)[1].tolist() == [16777220.0]
    with pytest.raises(ValueError, match="below 2\\^31"):
        fb.Index(indptr, indices, data, 2**31, rank, rank)
    with pytest.raises(InvalidIndex, match="below 2\\^31"):
        compiled.check_postings(indptr, indices, 2**31)
    compiled.check_postings(indptr, indices, 2**31 - 1)


@needs_extension
def test_only_the_first_block_under_a_speculative_bar_cuts_its_keys_at_spec_m(compiled_on):
    """The first block under a speculative bar keeps only keys at or above its spec_m-th best
    (search.c: the bar set at the next block drops the rest); a later block keeps up to k. Here
    block 3 of 8 (500 documents each, k = 300: spec_m = 57) holds 200 of the top 300, on a grid of
    scores (ties at the k-th): a later block cut at spec_m would lose 143 of them while the
    speculative check still passes. Results equal prune=False's and score_query + top_k_positive."""
    rng = np.random.default_rng(31)
    n_docs, block, k = 4000, 500, 300
    data = np.round(rng.uniform(1.0, 3.0, n_docs), 1)
    data[3 * block:3 * block + 200] = np.round(rng.uniform(5.0, 6.0, 200), 1)
    index = SparseIndex(terms=["a"], indptr=np.array([0, n_docs], np.int64), indices=np.arange(n_docs, dtype=np.int32),
                        data=data.astype(np.float32), doc_lengths=np.ones(n_docs, np.int32), nonoccurrence=None,
                        n_docs=n_docs).validate()
    searcher, rank = _searcher_over(index, np.array([f"d{rng.integers(10**6)}-{i}" for i in range(n_docs)]))
    args = (np.array([0, 1], np.int64), np.array([0], np.int32), k, None, 1)
    tried = searcher._index.speculation()[0]
    hits, docs, scores = searcher(*args, doc_block=block)
    assert searcher._index.speculation()[0] == tried + 1  # a speculative bar was tried
    for a, b in zip((hits, docs, scores), searcher(*args, doc_block=block, prune=False)):
        np.testing.assert_array_equal(a, b)
    exp_docs, exp_scores = _python_search(index, rank, [0], k)
    assert hits.tolist() == [k] and docs.tolist() == exp_docs.tolist()
    assert int((docs >= 3 * block).sum() - (docs >= 3 * block + 200).sum()) == 200  # block 3's 200 are all in
    np.testing.assert_array_equal(scores, exp_scores)

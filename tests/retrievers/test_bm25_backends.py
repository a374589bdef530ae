"""BM25 scoring on tiny corpora, worked by hand from the formulas in retrievers/bm25/sparse_index.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrievers
from harness.datasets.corpus import Corpus, Queries
from harness.run import Run
from retrievers.bm25 import BM25Retriever

# title + " " + text; analysed: d1 = [appl, banana, appl], d2 = [banana, cherri], d3 = [cherri]
CORPUS = Corpus(["d1", "d2", "d3"], ["Apple", "", ""], ["banana apples", "banana cherries", "cherry"])


def lucene_score(tf, dl, df, n=3, avgdl=2.0, k1=0.9, b=0.4):
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))


def search(retriever, texts, k=10):
    retriever.index(CORPUS)
    run = retriever.search(Queries([f"q{i}" for i in range(len(texts))], texts), k)
    return [list(zip(run.doc_ids(i), run.scores[run.offsets[i]:run.offsets[i + 1]].tolist())) for i in range(len(texts))]


def test_lucene_scores_worked_example(tmp_path):
    (apple, cherry, both) = search(BM25Retriever(cache_dir=tmp_path), ["apple", "cherry", "apple cherry"])
    # apple: only d1 (tf 2, length 3, df 1); non-matching documents are left out, as in Lucene
    assert [d for d, _ in apple] == ["d1"]
    assert apple[0][1] == pytest.approx(lucene_score(2, 3, 1), rel=1e-6)
    # cherry: d3 (tf 1, length 1) above d2 (tf 1, length 2), df 2
    assert [d for d, _ in cherry] == ["d3", "d2"]
    assert cherry[0][1] == pytest.approx(lucene_score(1, 1, 2), rel=1e-6)
    assert cherry[1][1] == pytest.approx(lucene_score(1, 2, 2), rel=1e-6)
    # scores are float32 values (Lucene's precision)
    assert all(np.float32(s) == s for _, s in apple + cherry)
    assert dict(both)["d1"] == apple[0][1]


def test_repeated_query_term_counts_twice(tmp_path):
    single, double = search(BM25Retriever(cache=False), ["cherry", "cherry cherry"])
    assert [s * 2 for _, s in single] == [s for _, s in double]  # exact: x2 is exact in float32


def test_ties_broken_by_doc_id_descending_and_k():
    corpus = Corpus(["a", "c", "b", "z"], ["", "", "", ""], ["same words", "same words", "same words", "other"])
    r = BM25Retriever(cache=False)
    r.index(corpus)
    run = r.search(Queries(["q"], ["same"]), 2)
    assert run.doc_ids(0) == ["c", "b"]
    assert run.is_canonical()
    assert run.scores[0] == run.scores[1]
    assert r.search(Queries(["q"], ["nothing matches"]), 5).doc_ids(0) == []


def test_lossy_lengths_follow_lucene_norms():
    # one document of 100 distinct terms (scored by Lucene as length 96) and one of 2
    long_doc = " ".join(f"w{i}" for i in range(100))
    corpus = Corpus(["long", "short"], ["", ""], [long_doc, "w0 x"])
    lossy, exact = BM25Retriever(cache=False), BM25Retriever(cache=False, lossy_lengths=False)
    avgdl = 51.0
    for retriever, dl in ((lossy, 96), (exact, 100)):
        retriever.index(corpus)
        run = retriever.search(Queries(["q"], ["w0"]), 10)
        scores = dict(zip(run.doc_ids(0), run.scores.tolist()))
        assert scores["long"] == pytest.approx(lucene_score(1, dl, 2, n=2, avgdl=avgdl), rel=1e-6)
    assert lossy.params()["lossy_lengths"] is True and exact.params()["lossy_lengths"] is False


@pytest.mark.parametrize("method", ["robertson", "atire", "bm25l", "bm25+"])
def test_other_variants_match_bm25s(method):
    """The same corpus through raw bm25s with the same tokens gives the same scores (bm25s is the oracle)."""
    import bm25s

    r = BM25Retriever(cache=False, method=method, k1=1.2, b=0.75)
    r.index(CORPUS)
    run = r.search(Queries(["q"], ["banana cherry"]), 10)
    ours = dict(zip(run.doc_ids(0), run.scores.tolist()))
    model = bm25s.BM25(k1=1.2, b=0.75, method=method)
    model.index([r.analyzer(c) for c in CORPUS.contents()], show_progress=False)
    theirs = model.get_scores(r.analyzer("banana cherry"))
    for i, doc in enumerate(CORPUS.ids):
        if doc in ours:
            assert ours[doc] == pytest.approx(float(theirs[i]), rel=1e-5)
    assert r.params()["method"] == method


def test_params_and_registry():
    r = retrievers.create("bm25")
    p = r.params()
    assert p["backend"] == "lucene" and p["k1"] == 0.9 and p["b"] == 0.4 and p["method"] == "lucene"
    assert p["tokenizer"] == "standard" and p["stemmer"] == "porter" and p["stopwords"] == "lucene"
    with pytest.raises(ValueError, match="backend"):
        BM25Retriever(backend="nope")
    with pytest.raises(ValueError, match="method"):
        BM25Retriever(method="tfidf")
    with pytest.raises(ValueError, match="k1"):
        BM25Retriever(k1=-1)
    with pytest.raises(ValueError, match="lucene backend only"):
        BM25Retriever(backend="rank-bm25", method="atire")


def test_bm25s_is_a_deprecated_name_of_the_lucene_backend():
    """metrics.json files and configs from before the rename (backend "bm25s") still run, as lucene."""
    with pytest.warns(DeprecationWarning, match="'lucene'"):
        r = BM25Retriever(backend="bm25s", cache=False)
    assert r.params() == BM25Retriever(cache=False).params() and r.params()["backend"] == "lucene"
    r.index(CORPUS)
    assert r.search(Queries(["q"], ["apple"]), 10).doc_ids(0) == ["d1"]


def test_rank_bm25_backend_still_works():
    r = BM25Retriever(backend="rank-bm25")
    r.index(CORPUS)
    run = r.search(Queries(["q"], ["apple"]), 10)
    assert run.doc_ids(0) == ["d1"]  # only the matching document has a positive score
    assert r.params()["backend"] == "rank-bm25"


def test_threads_give_the_same_run():
    queries = Queries([f"q{i}" for i in range(20)], ["apple", "cherry", "banana apple", "banana"] * 5)
    runs = []
    for n in (1, 2):
        r = BM25Retriever(cache=False, n_threads=n)
        r.index(CORPUS)
        runs.append(r.search(queries, 3).to_dict())
    assert runs[0] == runs[1]


def test_arrow_corpus_gives_the_same_run(tmp_path):
    import pyarrow as pa

    from harness.datasets.corpus import ArrowCorpus

    arrow = ArrowCorpus(pa.table({"_id": CORPUS.ids, "title": CORPUS.titles, "text": CORPUS.texts}))
    queries = Queries(["q1", "q2"], ["apple cherry", "banana"])
    runs = []
    for corpus in (CORPUS, arrow):
        r = BM25Retriever(cache_dir=tmp_path)
        r.index(corpus)
        runs.append((r.backend.cache_status, r.search(queries, 10).to_dict()))
    assert runs[0][1] == runs[1][1]
    assert [s for s, _ in runs] == ["built", "hit"]  # same content -> same cache key


def test_top_k_positive_equals_top_k_with_ties():
    """The int64-key selection BM25 search uses against a plain sort by (score desc, id desc)."""
    from retrievers.topk import string_ranks, top_k, top_k_positive
    from tests.retrievers.test_dense_exact import plain_top_k

    rng = np.random.default_rng(3)
    scores = rng.choice(np.array([0.5, 1.25, 2.0, 1e-30, 7.5], dtype=np.float32), size=60)  # many exact ties
    ids = np.array([f"d{i}" for i in rng.permutation(60)], dtype=object)
    rank = string_ranks(ids)
    for k in (1, 3, 12, 59, 60, 1000):
        want = plain_top_k(scores, k, rank)
        assert top_k_positive(scores, k, rank).tolist() == top_k(scores[None, :], k, rank)[0].tolist() == want
    with pytest.raises(ValueError, match="> 0"):
        top_k_positive(np.array([1.0, 0.0], dtype=np.float32), 1, np.arange(2))


def test_a_compiled_search_run_is_known_canonical_and_is(tmp_path):
    """The compiled searcher marks its run canonical (not checked again downstream); the mark is
    true: with it cleared, the run checks canonical and canonical() changes nothing. Ties: every
    text appears under several ids, given in an order unlike string order ("d10" < "d2")."""
    pytest.importorskip("retrievers.bm25._fastbm25")
    texts = ["apple banana", "banana", "apple", "cherry apple banana"] * 6
    corpus = Corpus([f"d{(7 * i) % 24}" for i in range(24)], [""] * 24, texts)
    retriever = BM25Retriever(cache_dir=tmp_path)
    retriever.index(corpus)
    run = retriever.search(Queries(["q0", "q1", "q2"], ["apple", "banana apple", "cherry"]), 10)
    assert run._canonical
    fresh = Run.from_arrays(run.query_ids, run.offsets, run.doc_codes, run.scores, run.doc_vocab)
    assert not fresh._canonical and fresh.is_canonical()
    # "apple": 18 tied pairs of 6 ids per score; the top 10 by score, then id descending (string order)
    assert run.doc_ids(0)[:6] == sorted([d for d, t in zip(corpus.ids, texts) if t == "apple"], reverse=True)

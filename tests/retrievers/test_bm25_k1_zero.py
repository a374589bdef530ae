"""BM25 with k1 = 0 (tf saturates at once: a term's score is its idf in each document holding it).

rank-bm25 backend: BM25Okapi.get_scores divides 0 by 0 for a term a document lacks when k1 = 0, so every
document lacking any query term scored NaN and dropped out of the ranking (``harness run -d scifact -p
k1=0 -p backend=rank-bm25``: NDCG@10 0.0495, where the lucene backend gives 0.6456). Lucene backend: the
scores were right (1/0 = +inf, as Java's float division gives Lucene) but numpy printed a RuntimeWarning
on stderr, even with -q (cli review)."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

from harness.datasets.corpus import Corpus, Queries
from retrievers.bm25 import BM25Retriever
from retrievers.bm25.rank_bm25_backend import _scores

# title + " " + text; analysed: d1 = [appl, banana, appl], d2 = [banana, cherri], d3 = [cherri]
CORPUS = Corpus(["d1", "d2", "d3"], ["Apple", "", ""], ["banana apples", "banana cherries", "cherry"])


def _ranking(retriever, text):
    retriever.index(CORPUS)
    run = retriever.search(Queries(["q"], [text]), 10)
    return dict(zip(run.doc_ids(0), run.scores.tolist()))


def test_rank_bm25_with_k1_zero_scores_each_term_by_its_idf():
    retriever = BM25Retriever(backend="rank-bm25", k1=0.0)
    got = _ranking(retriever, "apple cherry")
    idf = retriever.backend._model.idf  # rank-bm25's own idf (its epsilon floor included)
    # (was: {} - every document lacks one of the two terms, so every score was NaN); d2 and d3 score
    # cherri's idf, negative in BM25Okapi (df 2 of 3), and the backend keeps positive scores only
    assert idf["cherri"] < 0 < idf["appl"]
    assert got == {"d1": idf["appl"]}


def test_the_scores_are_rank_bm25s_own_where_it_gives_numbers():
    from rank_bm25 import BM25Okapi

    rng = random.Random(3)
    words = ["a", "b", "c", "d", "e", "f"]
    for case in range(60):
        docs = [[rng.choice(words) for _ in range(rng.randint(1, 8))] for _ in range(rng.randint(2, 12))]
        model = BM25Okapi(docs, k1=rng.choice([0.5, 0.9, 1.2, 2.0]), b=rng.choice([0.0, 0.4, 0.75, 1.0]))
        query = [rng.choice(words + ["zz"]) for _ in range(rng.randint(1, 4))]
        assert _scores(model, query).tobytes() == np.asarray(model.get_scores(query)).tobytes(), case


def test_lucene_with_k1_zero_scores_the_idf_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (was: RuntimeWarning: divide by zero encountered in divide)
        for lossy in (True, False):
            got = _ranking(BM25Retriever(cache=False, k1=0.0, lossy_lengths=lossy), "cherry")
            # Lucene: w - w / (1 + tf * inf) = w, the idf ln(1 + (N - df + 0.5) / (df + 0.5)) as float32
            idf = np.float32(np.log(1 + (3 - 2 + 0.5) / (2 + 0.5)))
            assert got == {"d3": pytest.approx(float(idf), rel=1e-7), "d2": pytest.approx(float(idf), rel=1e-7)}

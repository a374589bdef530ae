"""Defects found by the second review of the BM25 search and index build (2026-11-27)."""

from __future__ import annotations

import math

import pytest

from harness.cli.options import parse_params
from harness.datasets.corpus import Corpus, Queries
from retrievers.bm25 import BM25Retriever


def _lucene_score(tf, dl, df, n, avgdl, k1=0.9, b=0.4):
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))


@pytest.mark.parametrize("item", ["lossy_lengths=False", "lossy_lengths=no", "lossy_lengths=off", "possessive=False",
                                  "lowercase=no", "cache=False", "k1=true", "b=false", "delta=x"])
def test_a_parameter_of_the_wrong_kind_is_refused_not_read_as_true(item):
    """``--param lossy_lengths=False`` is not JSON, so it reached the retriever as the string "False",
    which ``bool()`` read as True: the run scored with Lucene's lossy lengths, the opposite of what
    was asked (recorded as ``lossy_lengths: true``), with no message; possessive and lowercase the
    same. ``k1=true`` (JSON true) scored with k1 = 1.0. Each is now one line naming the parameter."""
    name = item.partition("=")[0]
    with pytest.raises(ValueError, match=f"^{name} must be"):
        BM25Retriever(**parse_params([item]))


def test_lossy_lengths_false_as_json_scores_exact_lengths():
    """``--param lossy_lengths=false`` (JSON false) gives exact lengths: a 100-term document scores as
    100 terms, not as Lucene's one-byte 96 (worked example: idf and tf part from the formula)."""
    long_doc = " ".join(f"w{i}" for i in range(100))
    corpus = Corpus(["long", "short"], ["", ""], [long_doc, "w0 x"])
    retriever = BM25Retriever(cache=False, **parse_params(["lossy_lengths=false", "possessive=true", "k1=0.9"]))
    retriever.index(corpus)
    run = retriever.search(Queries(["q"], ["w0"]), 10)
    scores = dict(zip(run.doc_ids(0), run.scores.tolist()))
    assert scores["long"] == pytest.approx(_lucene_score(1, 100, 2, n=2, avgdl=51.0), rel=1e-6)
    assert retriever.params()["lossy_lengths"] is False

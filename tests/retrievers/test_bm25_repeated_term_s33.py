"""A query term repeated q times adds q times its posting score, in float32 (docs/bm25.md, "Scoring": the one known
difference from Lucene, which boosts the weight before the formula; exact for q = 2, off by one float32 bit at most
for q = 3 on the example here).

Worked example: documents d0 "x y y", d1 "x", d2 "y z" (flat BM25, k1 0.9, b 0.4, one-byte lengths). For the query
"x" d1 scores s = w - w / (1 + tf * inv) in float32; for "x x" exactly 2s; for "x x x" the float32 product 3s =
0.8197737336158752, where Lucene's IndexSearcher gave 0.81977379322052 (Anserini 1.7.1, raw float scores; probe of
2026-11-29)."""

from __future__ import annotations

import numpy as np

from harness.datasets.corpus import Corpus, Queries
from retrievers.bm25 import BM25Retriever

CORPUS = Corpus(["d0", "d1", "d2"], ["", "", ""], ["x y y", "x", "y z"])


def _scores(text: str) -> dict[str, float]:
    retriever = BM25Retriever(cache=False)
    retriever.index(CORPUS)
    return retriever.search(Queries(["q"], [text]), 10).to_dict()["q"]


def test_a_term_repeated_q_times_adds_q_times_its_float32_score():
    single = np.float32(_scores("x")["d1"])
    assert _scores("x x")["d1"] == float(np.float32(2) * single)  # (Lucene's bits too)
    tripled = _scores("x x x")["d1"]
    assert tripled == float(np.float32(3) * single) == 0.8197737336158752
    assert abs(np.float32(tripled) - np.float32(0.81977379322052)) == np.spacing(np.float32(tripled))  # Lucene: 1 ulp

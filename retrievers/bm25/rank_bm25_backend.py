"""BM25 on rank-bm25 (BM25Okapi): the slow, simple reference implementation."""

from __future__ import annotations

import numpy as np

from harness import progress
from harness.datasets.corpus import Corpus, Queries
from harness.run import Run
from retrievers.bm25.analyzer import Analyzer
from retrievers.texts import lexical_texts
from retrievers.topk import run_from_topk, top_k


class RankBM25Backend:
    def __init__(self, k1: float, b: float, analyzer: Analyzer):
        self.k1, self.b, self.analyzer = k1, b, analyzer
        self._model = None

    def index(self, corpus: Corpus) -> None:
        from rank_bm25 import BM25Okapi

        documents = progress.track(lexical_texts(corpus), "analysing documents", unit="docs")
        self._model = BM25Okapi([self.analyzer(c) for c in documents], k1=self.k1, b=self.b)
        self._corpus = corpus
        self._ids = corpus.id_array
        self._rank = corpus.id_rank

    def search(self, queries: Queries, k: int) -> Run:
        if self._model is None:
            raise RuntimeError("index() must be called before search()")
        chosen, scores = [], []
        for text in progress.track(queries.texts, "scoring queries (rank-bm25)", unit="queries"):
            s = _scores(self._model, self.analyzer(text))
            (idx,) = top_k(s[None, :], k, self._rank, min_score=0.0)
            chosen.append(idx)
            scores.append(s[idx])
        return run_from_topk(queries.ids, chosen, scores, self._ids, self._corpus.id_index)


def _scores(model, query: list[str]) -> np.ndarray:
    """``BM25Okapi.get_scores(query)``, the same operations in the same order,

        score(d) = sum over query terms t of  idf(t) * tf (k1 + 1) / (tf + k1 (1 - b + b |d| / avgdl)),

    except that a term a document lacks (tf = 0) adds 0 where rank-bm25 divides 0 by 0 (k1 = 0, or b = 1
    and an empty document) and adds NaN, which made the document's whole score NaN: it was dropped from
    the ranking, with every term it does hold."""
    score = np.zeros(model.corpus_size)
    doc_len = np.array(model.doc_len)
    norm = model.k1 * (1 - model.b + model.b * doc_len / model.avgdl)
    for q in query:
        q_freq = np.array([(doc.get(q) or 0) for doc in model.doc_freqs])
        part = np.divide(q_freq * (model.k1 + 1), q_freq + norm, out=np.zeros(len(q_freq)), where=q_freq > 0)
        score += (model.idf.get(q) or 0) * part
    return score

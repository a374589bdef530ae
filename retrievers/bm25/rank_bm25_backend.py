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
            s = np.asarray(self._model.get_scores(self.analyzer(text)), dtype=np.float64)
            (idx,) = top_k(s[None, :], k, self._rank, min_score=0.0)
            chosen.append(idx)
            scores.append(s[idx])
        return run_from_topk(queries.ids, chosen, scores, self._ids, self._corpus.id_index)

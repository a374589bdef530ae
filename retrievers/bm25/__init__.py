"""The BM25 retriever and its backends."""

from __future__ import annotations

from harness.datasets.corpus import Corpus, Queries
from harness.run import Run
from retrievers.base import Retriever
from retrievers.bm25.analyzer import Analyzer

BACKENDS = ("rank-bm25",)


class BM25Retriever(Retriever):
    """BM25 over title + " " + text. Defaults k1 = 0.9, b = 0.4 (Anserini's)."""

    name = "bm25"

    def __init__(self, backend: str = "rank-bm25", k1: float = 0.9, b: float = 0.4, stemmer: str | None = "porter"):
        if backend not in BACKENDS:
            raise ValueError(f"unknown BM25 backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"need k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        self.backend_name, self.k1, self.b = backend, float(k1), float(b)
        self.analyzer = Analyzer(stemmer=stemmer)
        from retrievers.bm25.rank_bm25_backend import RankBM25Backend

        self._backend = RankBM25Backend(self.k1, self.b, self.analyzer)

    def params(self) -> dict:
        return {"backend": self.backend_name, "k1": self.k1, "b": self.b, **self.analyzer.params()}

    def index(self, corpus: Corpus) -> None:
        self._backend.index(corpus)

    def search(self, queries: Queries, k: int) -> Run:
        return self._backend.search(queries, k)

"""An example retriever plugin: IDF-weighted query-term overlap.

score(q, d) = sum over distinct terms t of q that occur in d of idf(t),  idf(t) = ln(N / df(t))

(N documents, df(t) of them contain t; terms are lowercased runs of letters and digits). Crude, but
it shows every part of the interface:

* subclass :class:`retrievers.Retriever`, set ``name``;
* take settings as keyword arguments with defaults and type annotations (a benchmark config's
  ``params`` are checked against them: ``expected a number, got "abc"``); validate them up front;
* ``params()``: the settings that identify the system (recorded in metrics.json and part of a
  benchmark cell's fingerprint, so changing one reruns the cell);
* ``index(corpus)``: may be called again with another corpus (a benchmark reuses the instance
  across datasets);
* ``search(queries, k)``: a :class:`harness.run.Run` with each query's top ``k`` in canonical order
  (score descending, ties by document id descending): ``retrievers.topk`` does both;
* optional ``stats()``: JSON-able figures recorded as ``retriever_stats`` (``docs_encoded_per_s``
  is shown in the leaderboard's timings);
* optional progress: ``harness.progress.track`` / ``task`` draw bars only when wanted.
"""

from __future__ import annotations

import re
import time

import numpy as np

from harness import progress
from harness.datasets.corpus import Corpus, Queries
from harness.run import Run
from retrievers import Retriever
from retrievers.topk import run_from_topk, top_k

_TOKEN = re.compile(r"[a-z0-9]+")


class IdfOverlapRetriever(Retriever):
    name = "idf-overlap"

    def __init__(self, min_df: int = 1, lowercase: bool = True):
        if isinstance(min_df, bool) or not isinstance(min_df, int) or min_df < 1:
            raise ValueError(f"min_df must be an integer >= 1, got {min_df!r}")
        self.min_df, self.lowercase = min_df, bool(lowercase)
        self._postings: dict[str, np.ndarray] | None = None
        self._stats: dict = {}

    def params(self) -> dict:
        return {"min_df": self.min_df, "lowercase": self.lowercase}

    def stats(self) -> dict:
        return dict(self._stats)

    def _terms(self, text: str) -> set[str]:
        return set(_TOKEN.findall(text.lower() if self.lowercase else text))

    def index(self, corpus: Corpus) -> None:
        started = time.perf_counter()
        postings: dict[str, list[int]] = {}
        for i, text in enumerate(progress.track(corpus.contents(), "indexing (idf-overlap)", unit="docs")):
            for term in self._terms(text):
                postings.setdefault(term, []).append(i)
        n = len(corpus)
        self._postings = {t: np.array(d, dtype=np.int64) for t, d in postings.items() if len(d) >= self.min_df}
        self._idf = {t: float(np.log(n / len(d))) for t, d in self._postings.items()}
        self._n_docs, self._ids = n, corpus.id_array
        self._rank = corpus.id_rank  # each id's rank in string order (the tie rule)
        seconds = time.perf_counter() - started
        self._stats = {"terms": len(self._postings),
                       "docs_encoded_per_s": round(n / seconds, 1) if seconds > 0 else None}

    def search(self, queries: Queries, k: int) -> Run:
        if self._postings is None:
            raise RuntimeError("index() must be called before search()")
        chosen, values = [], []
        for text in progress.track(queries.texts, "searching (idf-overlap)", unit="queries"):
            scores = np.zeros(self._n_docs)
            for term in sorted(self._terms(text)):  # (a set's order is string hashing's: random per process)
                if term in self._postings:
                    scores[self._postings[term]] += self._idf[term]
            (idx,) = top_k(scores[None, :], k, self._rank, min_score=0.0)  # unmatched documents left out
            chosen.append(idx)
            values.append(scores[idx])
        return run_from_topk(list(queries.ids), chosen, values, self._ids)

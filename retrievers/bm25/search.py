"""Search a :class:`SparseIndex`: per query, sum the posting scores of its terms (float64, rounded
to float32 as Lucene sums its clause scores in double and rounds to float), keep the matched
documents with score > 0 and take the top k by score descending, ties by document id descending
(the evaluator's canonical order; retrievers/topk.py).

For a term repeated q times the posting score is multiplied by q in float32, which equals Lucene's
value exactly when q is a power of two; otherwise it may differ by a few float32 ulps (Lucene boosts
the weight first, ``w = q * idf``, then ``w - w / (1 + tf * inv)``, whose subtraction magnifies the
rounding of ``w``: at k1 0.9, b 0.4, ~3% of postings differ by 2 to 6 ulps in a random sample). BM25L / BM25+
add the query's non-occurrence constant (scoring.py) to every matched document.

Weighted queries (impact search, retrievers/sparse/): distinct ascending term ids, each with a
float32 weight; the score is float32 of the double sum, in term order, of the exact double
products weight * posting value -- a sparse dot product (:func:`score_query`, search.c).

:class:`PythonSearcher` does it with numpy on a thread pool (numpy releases the GIL in the heavy
steps); :class:`CompiledSearcher` in C, the queries split among threads without the GIL. Same runs.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from harness.columns import IdColumn, inverse_permutation
from harness.datasets.corpus import Corpus, Queries
from harness.run import Run
from retrievers.bm25.analyzer import Analyzer
from retrievers.bm25.sparse_index import SparseIndex
from retrievers.topk import run_from_topk, top_k_positive


@dataclass(frozen=True)
class DocOrder:
    """The corpus's document ids and their string order (the tie rule)."""

    ids: IdColumn            # document ids (the corpus's id_column), index order
    rank: np.ndarray         # int64: each document's rank in id string order
    doc_of_rank: np.ndarray  # int64: the inverse of ``rank``
    corpus: Corpus = field(repr=False, compare=False)

    @classmethod
    def of(cls, corpus: Corpus, rank: np.ndarray | None = None, order: np.ndarray | None = None) -> "DocOrder":
        """``rank``: the ids' string ranks when known (a cached index's ``id_rank``, checked to be a
        permutation when loaded), else computed (a sort of the ids); ``order``: its inverse when
        known (the cached ``id_order``, checked to be it when loaded), else computed with it. Known
        ranks are the corpus's own (the cache entry's key names the corpus: its source file's sha256 or
        its documents'): the corpus takes them where it has not computed its own, so that nothing sorts
        its ids again (experiment.checked_run compares a run's claimed ranks with the corpus's: on a
        warm 1M-document run that sort was 0.04-0.10 s)."""
        if rank is None:
            return cls(corpus.id_column, corpus.id_rank, corpus.id_order, corpus)
        known = corpus.__dict__  # (Corpus.id_rank and id_order are cached properties)
        if "id_rank" not in known:
            known["id_rank"] = rank
            known.setdefault("id_order", inverse_permutation(rank) if order is None else order)
        return cls(corpus.id_column, corpus.id_rank, corpus.id_order, corpus)

    @property
    def id_index(self) -> dict | None:
        """The corpus's id -> position dict when something has built it, else None: runs then
        build their own only if asked (Run.vocab_index); an evaluation never needs it, and at
        millions of documents it costs more than loading the index."""
        return self.corpus.__dict__.get("id_index")

    def run(self, query_ids, offsets: np.ndarray, docs: np.ndarray, scores: np.ndarray, canonical: bool = False) -> Run:
        return Run.from_arrays(query_ids, offsets, docs, scores, self.ids, self.id_index, vocab_rank=self.rank,
                               canonical=canonical, vocab_order=self.doc_of_rank)


def query_constants(index: SparseIndex, offsets: np.ndarray, term_ids: np.ndarray) -> np.ndarray | None:
    """BM25L / BM25+: each query's non-occurrence constant (float32), None for the other methods."""
    if index.nonoccurrence is None:
        return None
    constants = np.zeros(len(offsets) - 1, dtype=np.float32)
    for q in range(len(constants)):
        uniq, boost = np.unique(term_ids[offsets[q]:offsets[q + 1]], return_counts=True)
        constants[q] = np.float32((index.nonoccurrence[uniq].astype(np.float64) * boost).sum())
    return constants


def score_query(index: SparseIndex, term_ids: list[int] | np.ndarray, weights: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """(matched documents, their float32 scores) for one query's term ids (repeats count), or, with
    ``weights`` (float32, one per term; the terms then distinct and ascending), the sparse dot
    product: float32 of the double sum, in term order, of the double products weight * posting
    value (what search.c computes for weighted queries)."""
    if len(term_ids) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    if weights is not None:
        uniq = np.asarray(term_ids, dtype=np.int64)
        boost = np.asarray(weights, dtype=np.float32).astype(np.float64)
    else:
        uniq, boost = np.unique(np.asarray(term_ids, dtype=np.int64), return_counts=True)
    starts, ends = index.indptr[uniq], index.indptr[uniq + 1]
    total = int((ends - starts).sum())
    if total == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    ranges = list(zip(starts.tolist(), ends.tolist()))
    if weights is not None:
        scale = lambda s, e, q: index.data[s:e].astype(np.float64) * q  # noqa: E731
    else:
        scale = lambda s, e, q: index.data[s:e] if q == 1 else index.data[s:e] * np.float32(q)  # noqa: E731
    if len(uniq) == 1:
        (s, e), q = ranges[0], boost[0]
        scores = scale(s, e, q).astype(np.float32, copy=True)
        docs = index.indices[s:e].astype(np.int64)
    else:
        docs = np.concatenate([index.indices[s:e] for s, e in ranges])
        values = np.concatenate([scale(s, e, q) for (s, e), q in zip(ranges, boost.tolist())])
        if total * 8 < index.n_docs:  # few postings: sort them instead of a dense accumulator
            docs, inverse = np.unique(docs, return_inverse=True)
            sums = np.bincount(inverse, weights=values, minlength=len(docs))
        else:
            sums = np.bincount(docs, weights=values, minlength=index.n_docs)
            matched = sums != 0 if index.nonoccurrence is None else np.bincount(docs, minlength=index.n_docs) > 0
            docs = np.flatnonzero(matched)
            sums = sums[docs]
        scores = sums.astype(np.float32)
        docs = docs.astype(np.int64)
    if index.nonoccurrence is not None:
        scores = scores + np.float32((index.nonoccurrence[uniq].astype(np.float64) * boost).sum())
    return docs, scores


def term_ids_of(analyzer: Analyzer, index: dict[str, int], texts: list[str]) -> list[list[int]]:
    """Term ids (``index``: term -> id) of each text's terms that are in the vocabulary (unknown terms match
    nothing; a repeated term repeats), analysing each distinct candidate once for all the texts."""
    per_query = [analyzer.candidates(text) for text in texts]
    distinct = list(dict.fromkeys(c for found in per_query for c in found))
    counts, first, terms = analyzer.analyze_flat(distinct)
    ids_of = {cand: [index[t] for t in terms[f:f + n] if t in index]
              for cand, f, n in zip(distinct, first.tolist(), counts.tolist())}
    return [[i for cand in found for i in ids_of[cand]] for found in per_query]


def flat_term_ids(per_query: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """(offsets int64, term ids int32) of per-query term id lists: what the compiled search takes."""
    offsets = np.concatenate([[0], np.cumsum([len(t) for t in per_query])]).astype(np.int64)
    return offsets, np.fromiter((i for t in per_query for i in t), dtype=np.int32, count=int(offsets[-1]))


class PythonSearcher:
    """Queries -> Run with numpy: the analyzer's terms looked up in the index's vocabulary."""

    def __init__(self, index: SparseIndex, order: DocOrder, analyzer: Analyzer, n_threads: int):
        self.index, self.order, self.analyzer, self.n_threads = index, order, analyzer, n_threads
        self._term_index: dict[str, int] | None = None  # made when a query needs it

    def queries_term_ids(self, texts: list[str]) -> list[list[int]]:
        """Term ids of each query's terms that are in the vocabulary (:func:`term_ids_of`)."""
        if self._term_index is None:
            self._term_index = {t: i for i, t in enumerate(self.index.terms)}
        return term_ids_of(self.analyzer, self._term_index, texts)

    def __call__(self, queries: Queries, k: int) -> Run:
        term_ids = self.queries_term_ids(list(queries.texts))
        return search_python(self.index, self.order, queries.ids, [(ids, None) for ids in term_ids], k,
                             self.n_threads)


def _search_batch(index: SparseIndex, order: DocOrder, batch: list, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for ids, weights in batch:
        docs, scores = score_query(index, ids, weights)
        positive = scores > 0
        if not positive.all():
            docs, scores = docs[positive], scores[positive]
        if len(docs) > min(k, 1):  # (one match needs no ordering, unless k is 0)
            chosen = top_k_positive(scores, k, order.rank[docs])
            docs, scores = docs[chosen], scores[chosen]
        out.append((docs, scores.astype(np.float64)))
    return out


def search_python(index: SparseIndex, order: DocOrder, query_ids, queries: list, k: int, n_threads: int) -> Run:
    """The run of ``queries`` ((term ids, weights or None) per query; :func:`score_query`) with
    numpy: scores > 0, top ``k`` in the canonical order, query batches on ``n_threads`` threads."""
    size = max(1, -(-len(queries) // (n_threads * 4)))
    batches = [queries[i:i + size] for i in range(0, len(queries), size)]
    search = lambda batch: _search_batch(index, order, batch, k)  # noqa: E731
    if n_threads > 1 and len(batches) > 1:
        with ThreadPoolExecutor(max_workers=n_threads) as pool:
            done = list(pool.map(search, batches))
    else:
        done = [search(b) for b in batches]
    results = [r for batch in done for r in batch]
    return run_from_topk(query_ids, [d for d, _ in results], [s for _, s in results], order.ids, order.id_index,
                         id_rank=order.rank, id_order=order.doc_of_rank)


class CompiledSearcher:
    """Queries -> Run in C (compiled.search): the index is checked once, here; ``query_terms(texts)``
    gives (offsets, term ids) of the queries' known terms."""

    def __init__(self, index: SparseIndex, order: DocOrder, query_terms, n_threads: int):
        from retrievers.bm25 import compiled

        self.index, self.order, self.query_terms, self.n_threads = index, order, query_terms, n_threads
        self._search = compiled.Searcher(index, order.rank, order.doc_of_rank, n_threads)

    def __call__(self, queries: Queries, k: int) -> Run:
        offsets, term_ids = self.query_terms(list(queries.texts))
        constants = query_constants(self.index, offsets, term_ids)
        hits, docs, scores = self._search(offsets, term_ids, k, constants, self.n_threads)
        # search.c sorts each query's top k by (float32 score, id rank) descending: the canonical order
        return self.order.run(queries.ids, np.concatenate([[0], np.cumsum(hits)]), docs, scores, canonical=True)

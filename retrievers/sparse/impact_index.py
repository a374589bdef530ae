"""Impact indexes: a :class:`retrievers.bm25.sparse_index.SparseIndex` whose posting values are
the documents' own term weights, searched by sparse dot product with the BM25 search.

Build: rows of (term id, weight) per document -> term-major postings (documents ascending within a
term), zero weights dropped. ``doc_lengths`` holds each document's number of non-zero terms.

Quantisation (optional, ``quantize=S``): every weight, of documents and queries alike, becomes
``rint(S * w)`` (Pyserini's impact indexes store integer impacts the same way); weights that round
to 0 are dropped. Scores are then integer sums, exact in float32 up to 2**24.

Search: a query is its distinct term ids, ascending, each with a float32 weight; a document's score
is float32 of the sum in double, in ascending term id order, of the exact double products
``query weight * document weight`` -- the value ``scipy.sparse`` computes for ``D @ q`` in float64
with sorted indices, rounded to float32. Documents with score > 0 are kept; the top k by score
descending, ties by document id descending (retrievers/topk.py), with the compiled search
(threads split the queries) or the numpy one, chosen once (retrievers/bm25/loader.py).
"""

from __future__ import annotations

import numpy as np

from harness.run import Run
from retrievers.bm25 import loader
from retrievers.bm25.search import DocOrder, search_python
from retrievers.bm25.sparse_index import SparseIndex


def quantized(weights: np.ndarray, quantize: int | None) -> np.ndarray:
    """``weights`` (float32) unchanged, or ``rint(quantize * w)`` as float32 (a ValueError when one
    is beyond float32's range: it would be an infinite impact)."""
    if quantize is None:
        return np.asarray(weights, dtype=np.float32)
    with np.errstate(over="ignore"):
        out = np.rint(np.asarray(weights, dtype=np.float64) * quantize).astype(np.float32)
    if not np.isfinite(out).all():
        raise ValueError(f"quantize {quantize} makes a term weight overflow float32 (|quantize * w| > "
                         f"{float(np.finfo(np.float32).max):.4g}); use a smaller scale")
    return out


def build_impact_index(n_docs: int, doc_of_entry: np.ndarray, term_ids: np.ndarray, weights: np.ndarray,
                       terms: list[str]) -> SparseIndex:
    """The index of postings given as parallel arrays: document index, term id, weight (float32).
    A (document, term) pair must occur at most once."""
    keep = weights != 0
    doc = np.asarray(doc_of_entry, dtype=np.int64)[keep]
    term = np.asarray(term_ids, dtype=np.int64)[keep]
    data = np.asarray(weights, dtype=np.float32)[keep]
    order = np.lexsort((doc, term))  # term-major, documents ascending within a term
    term, doc, data = term[order], doc[order], data[order]
    if len(term) > 1 and np.any((np.diff(term) == 0) & (np.diff(doc) == 0)):
        raise ValueError("a document holds the same term twice")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(term, minlength=len(terms)))]).astype(np.int64)
    lengths = np.bincount(doc, minlength=n_docs).astype(np.int32)
    return SparseIndex(terms=list(terms), indptr=indptr, indices=doc.astype(np.int32), data=data,
                       doc_lengths=lengths, nonoccurrence=None, n_docs=int(n_docs)).validate()


def query_columns(offsets: np.ndarray, term_ids: np.ndarray, weights: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Queries as the search takes them: per query, distinct term ids ascending with their weights
    summed (float32); entries with term id < 0 (unknown terms) or weight 0 dropped."""
    offsets = np.asarray(offsets, dtype=np.int64)
    query = np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), np.diff(offsets))
    term = np.asarray(term_ids, dtype=np.int64)
    w = np.asarray(weights, dtype=np.float32)
    keep = (term >= 0) & (w != 0)
    query, term, w = query[keep], term[keep], w[keep]
    key, inverse = np.unique((query << 32) | term, return_inverse=True)
    if len(key) != len(term):  # a repeated term: weights summed in float32, in file order
        summed = np.zeros(len(key), dtype=np.float32)
        np.add.at(summed, inverse, w)
        w = summed
    else:
        w = w[np.argsort(inverse)]
    q = key >> 32
    new_offsets = np.concatenate([[0], np.cumsum(np.bincount(q, minlength=len(offsets) - 1))]).astype(np.int64)
    return new_offsets, (key & 0xFFFFFFFF).astype(np.int32), w.astype(np.float32)


class ImpactSearcher:
    """(query ids, offsets, term ids, weights from :func:`query_columns`) -> Run, compiled (C,
    threads) when the extension runs, else numpy."""

    def __init__(self, index: SparseIndex, order: DocOrder, n_threads: int):
        self.index, self.order, self.n_threads = index, order, int(n_threads)
        self._compiled = None
        if loader.extension() is not None:
            from retrievers.bm25 import compiled

            self._compiled = compiled.Searcher(index, order.rank, order.doc_of_rank, self.n_threads)

    def __call__(self, query_ids, offsets: np.ndarray, term_ids: np.ndarray, weights: np.ndarray, k: int) -> Run:
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k must be an integer >= 1, got {k!r}")
        if self._compiled is not None:
            hits, docs, scores = self._compiled(offsets, term_ids, k, None, self.n_threads, weights=weights)
            return self.order.run(query_ids, np.concatenate([[0], np.cumsum(hits)]), docs, scores)
        queries = [(term_ids[s:e], weights[s:e]) for s, e in zip(offsets[:-1].tolist(), offsets[1:].tolist())]
        return search_python(self.index, self.order, query_ids, queries, k, self.n_threads)


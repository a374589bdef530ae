"""Postings -> a :class:`SparseIndex`: the pure-Python build, and the scoring of finished postings.

Both paths end in :func:`index_from_postings` semantics: collection statistics (document
frequencies, lengths), then each posting's score (scoring.py). The compiled path gathers the
postings in C (compiled.py) and scores Lucene's BM25 in C; the Python path does both with numpy
(:func:`build_python`). engines.py picks one.
"""

from __future__ import annotations

from typing import Callable, Iterable, Iterator

import numpy as np

from retrievers.bm25.scoring import PostingScorer, ScoringParams
from retrievers.bm25.sparse_index import SparseIndex


def postings_from_chunks(chunks: Iterable[tuple[np.ndarray, np.ndarray]]) -> Iterator[tuple]:
    """For each chunk (terms per document, term ids): (lengths, term, document, tf) of its
    postings sorted by (term, document)."""
    doc_base = 0
    for lengths, term_ids in chunks:
        n = len(lengths)
        local_doc = np.repeat(np.arange(n, dtype=np.int64), lengths)
        keys, tf = np.unique((term_ids.astype(np.int64) << 32) | local_doc, return_counts=True)
        yield lengths, (keys >> 32).astype(np.int32), (keys & 0xFFFFFFFF).astype(np.int32) + doc_base, tf.astype(np.int32)
        doc_base += n


def build_python(chunks: Iterable[tuple[np.ndarray, np.ndarray]], terms: list[str], params: ScoringParams
                 ) -> SparseIndex:
    """The index of (terms per document, term ids) chunks; ``terms`` is filled while they stream.

    Two passes over compact per-chunk postings: the first collects them (and the document
    frequencies), the second computes each chunk's scores and scatters them straight into their
    CSC slots (a counting sort), freeing the chunk as it goes. Peak memory is about the chunk
    postings (10 bytes each) plus the final arrays (8 bytes each), with no global sort.
    """
    parts = []  # (lengths, term, doc, tf) per chunk
    df = np.zeros(0, dtype=np.int64)
    for lengths, term, doc, tf in postings_from_chunks(chunks):
        counts = np.bincount(term, minlength=len(terms))
        if len(counts) > len(df):
            counts[:len(df)] += df
            df = counts
        else:
            df[:len(counts)] += counts
        tf = tf.astype(np.uint16) if len(tf) == 0 or tf.max() < 2**16 else tf
        parts.append((lengths, term, doc, tf))
    n_terms = len(terms)
    df = np.concatenate([df, np.zeros(n_terms - len(df), dtype=np.int64)])
    doc_lengths = (np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)).astype(np.int64)
    indptr = np.concatenate([[0], np.cumsum(df)]).astype(np.int64)
    scorer = PostingScorer(params, df, doc_lengths)

    n_postings = int(indptr[-1])
    indices = np.empty(n_postings, dtype=np.int32)
    data = np.empty(n_postings, dtype=np.float32)
    filled = indptr[:-1].copy()  # next free slot of each term
    parts.reverse()
    while parts:  # chunks in document order, so documents ascend within each term
        _, term, doc, tf = parts.pop()
        chunk_counts = np.bincount(term, minlength=n_terms)
        chunk_first = np.cumsum(chunk_counts) - chunk_counts  # chunk postings are sorted by term
        dest = filled[term] + (np.arange(len(term)) - chunk_first[term])
        filled += chunk_counts
        indices[dest] = doc
        data[dest] = scorer(term, doc, tf)
        del term, doc, tf, dest
    return SparseIndex(terms=terms, indptr=indptr, indices=indices, data=data,
                       doc_lengths=doc_lengths.astype(np.int32), nonoccurrence=scorer.nonoccurrence,
                       n_docs=len(doc_lengths))


LuceneScorer = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


class FusedLuceneScores:
    """The PostingsBuilder's ``scorer`` (``finish(..., scorer)``): given the finished ``indptr`` and the
    documents' lengths (bytes), the :class:`PostingScorer` of those statistics (kept as :attr:`scorer`)
    and its ``(idf32, inv)``, with which the builder writes each posting's Lucene score as it scatters
    the postings: one pass over them less (the compiled build with method ``lucene``; at 8.8M passages
    that pass took ~3 s, its writes refaulting the mapped index pages that writeback had cleaned)."""

    def __init__(self, params: ScoringParams) -> None:
        if params.method != "lucene":
            raise ValueError("only Lucene's scores are written by the postings builder")
        self.params = params
        self.scorer: PostingScorer | None = None

    def __call__(self, indptr: bytes, doc_lengths: bytes) -> tuple[np.ndarray, np.ndarray]:
        self.scorer = PostingScorer(self.params, np.diff(np.frombuffer(indptr, dtype=np.int64)),
                                    np.frombuffer(doc_lengths, dtype=np.int32))
        return (np.ascontiguousarray(self.scorer.idf32, dtype=np.float32),
                np.ascontiguousarray(self.scorer.inv, dtype=np.float32))


def index_from_postings(indptr: np.ndarray, indices: np.ndarray, tf: np.ndarray, doc_lengths: np.ndarray,
                        terms: list[str], params: ScoringParams, score_lucene: LuceneScorer,
                        scored: PostingScorer | None = None) -> SparseIndex:
    """The index of finished term-major postings with term frequencies (what the compiled
    PostingsBuilder gives): collection statistics, then each posting's score, Lucene's through
    ``score_lucene(indptr, indices, tf, idf32, inv)`` (the compiled one), the others vectorised.
    ``scored``: the scorer of :class:`FusedLuceneScores` when the builder wrote the Lucene scores
    already, in ``tf``'s place (float32 bits)."""
    df = np.diff(indptr)
    scorer = scored if scored is not None else PostingScorer(params, df, doc_lengths)
    if scored is not None:
        data = tf.view(np.float32)
    elif params.method == "lucene":
        data = score_lucene(indptr, indices, tf, scorer.idf32, scorer.inv)
    else:
        data = scorer(np.repeat(np.arange(len(terms), dtype=np.int32), df), indices, tf)
    return SparseIndex(terms=terms, indptr=indptr, indices=indices, data=data, doc_lengths=doc_lengths,
                       nonoccurrence=scorer.nonoccurrence, n_docs=len(doc_lengths))

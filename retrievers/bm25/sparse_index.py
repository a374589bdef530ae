"""The eager sparse BM25 index (bm25s's design) with Lucene-exact scoring, and its search.

Layout, as ``bm25s.BM25.scores``: a term-major CSC matrix of precomputed per-(term, document) BM25
scores, ``indptr`` (n_terms + 1), ``indices`` (document of each posting, ascending within a term)
and ``data`` (float32 score of the posting). A query's score for a document is the sum of the
entries of its terms, each multiplied by the term's count in the query (Anserini's bag-of-words
query boosts every distinct term by its count).

Variants (``method``) are bm25s's: ``lucene`` (default), ``robertson``, ``atire``, ``bm25l``,
``bm25+``; ``idf_method`` may pick another variant's idf. With ``method="lucene"`` every posting
is computed exactly as Lucene's BM25Similarity does, in float32 operations:

    idf    = (float) ln(1 + (N - df + 0.5) / (df + 0.5))       N = documents with >= 1 term
    avgdl  = (float) (total terms / N)
    cache  = 1f / (k1 * ((1 - b) + b * LENGTH_TABLE[norm] / avgdl))      (float ops)
    score  = w - w / (1f + tf * cache)        w = boost * idf (boost 1 in the index)

with ``norm`` the document's one-byte length (lucene_norms.py) unless ``lossy_lengths=False``.
Lucene adds up the clause scores of a query in double and rounds the sum to float; so does
:meth:`SparseIndex.search_one` (float64 accumulation, float32 result). For a term repeated q times
the posting score is multiplied by q in float32, which equals Lucene's value exactly when q is a
power of two and agrees within one float32 ulp otherwise.

The other variants use bm25s's formulas (bm25s.scoring) on float64 and round to float32, with
exact lengths unless ``lossy_lengths=True``. BM25L and BM25+ give every document a constant
"non-occurrence" score per query term; bm25s stores scores minus that constant and adds the
constant back at query time, and so does this index (only matched documents are returned).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Iterator

import numpy as np

from retrievers.bm25 import compiled
from retrievers.bm25.lucene_norms import LENGTH_TABLE, int_to_byte4, quantize_lengths

METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")


@dataclass(frozen=True)
class ScoringParams:
    k1: float = 0.9
    b: float = 0.4
    method: str = "lucene"
    idf_method: str | None = None
    delta: float = 0.5
    lossy_lengths: bool | None = None  # None: True for lucene, False otherwise

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"unknown BM25 method {self.method!r}; choose one of {', '.join(METHODS)}")
        if self.idf_method is not None and self.idf_method not in METHODS:
            raise ValueError(f"unknown idf method {self.idf_method!r}; choose one of {', '.join(METHODS)}")
        if not (math.isfinite(self.k1) and self.k1 >= 0) or not (0 <= self.b <= 1):
            raise ValueError(f"need k1 >= 0 and 0 <= b <= 1, got k1={self.k1}, b={self.b}")
        if not (math.isfinite(self.delta) and self.delta >= 0):
            raise ValueError(f"need delta >= 0, got {self.delta}")

    @property
    def idf(self) -> str:
        return self.idf_method or self.method

    @property
    def lossy(self) -> bool:
        return self.method == "lucene" if self.lossy_lengths is None else bool(self.lossy_lengths)

    def as_dict(self) -> dict:
        out = {"k1": self.k1, "b": self.b, "method": self.method, "idf_method": self.idf,
               "lossy_lengths": self.lossy}
        if self.method in ("bm25l", "bm25+"):
            out["delta"] = self.delta
        return out


# ----------------------------------------------------------------------------------------- build
def postings_from_chunks(chunks: Iterable[tuple[np.ndarray, np.ndarray]]) -> Iterator[tuple]:
    """For each chunk (terms per document, term ids), its postings sorted by (term, document)."""
    doc_base = 0
    for lengths, term_ids in chunks:
        n = len(lengths)
        local_doc = np.repeat(np.arange(n, dtype=np.int64), lengths)
        keys, tf = np.unique((term_ids.astype(np.int64) << 32) | local_doc, return_counts=True)
        yield lengths, (keys >> 32).astype(np.int32), (keys & 0xFFFFFFFF).astype(np.int32) + doc_base, tf.astype(np.int32)
        doc_base += n


def _idf(method: str, df: np.ndarray, n_docs: int) -> np.ndarray:
    """idf per term (float64) with bm25s's formula for ``method``; df 0 gives 0."""
    if method == "lucene":  # vectorised; the same formula as bm25s's and Lucene's
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(df > 0, np.log(1 + (n_docs - df + 0.5) / (df + 0.5)), 0.0)
    from bm25s.scoring import _select_idf_scorer  # lazy: bm25s only when indexing

    fn = _select_idf_scorer(method)
    out = np.zeros(len(df), dtype=np.float64)
    values, inverse = np.unique(df, return_inverse=True)
    per_value = np.array([fn(int(v), N=n_docs) if v > 0 else 0.0 for v in values.tolist()], dtype=np.float64)
    out[:] = per_value[inverse]
    return out


class _PostingScorer:
    """Scores postings (term, document, tf) once the collection statistics are known."""

    def __init__(self, params: ScoringParams, idf: np.ndarray, doc_lengths: np.ndarray, total: int, n_with_terms: int):
        self.params = params
        self.nonoccurrence = None
        if params.method == "lucene":
            self.idf32 = idf.astype(np.float32)
            avgdl32 = np.float32(total / n_with_terms) if n_with_terms else np.float32(1)
            k1f, bf = np.float32(params.k1), np.float32(params.b)
            if params.lossy:  # per-document 1/(k1 (1 - b + b dl/avgdl)) through the 256-entry cache
                cache = np.float32(1) / (k1f * ((np.float32(1) - bf) + bf * LENGTH_TABLE / avgdl32))
                self.inv = cache[int_to_byte4(doc_lengths)]
            else:
                dl = doc_lengths.astype(np.float32)
                self.inv = np.float32(1) / (k1f * ((np.float32(1) - bf) + bf * dl / avgdl32))
            return
        from bm25s.scoring import _select_tfc_scorer  # lazy: bm25s's formulas for the other variants

        self.tfc = _select_tfc_scorer(params.method)
        self.idf = idf
        self.lengths = (quantize_lengths(doc_lengths) if params.lossy else doc_lengths).astype(np.float64)
        self.avgdl = total / n_with_terms if n_with_terms else 1.0
        if params.method in ("bm25l", "bm25+"):
            tfc0 = self.tfc(tf_array=0.0, l_d=self.avgdl, l_avg=self.avgdl, k1=params.k1, b=params.b, delta=params.delta)
            self.nonocc64 = idf * tfc0
            self.nonoccurrence = self.nonocc64.astype(np.float32)

    def __call__(self, term: np.ndarray, doc: np.ndarray, tf: np.ndarray) -> np.ndarray:
        p = self.params
        if p.method == "lucene":  # Lucene's float32 operations: w - w / (1 + tf * inv)
            w = self.idf32[term]
            return w - w / (np.float32(1) + tf.astype(np.float32) * self.inv[doc])
        tfc = self.tfc(tf_array=tf.astype(np.float64), l_d=self.lengths[doc], l_avg=self.avgdl, k1=p.k1, b=p.b,
                       delta=p.delta)
        scores = self.idf[term] * tfc
        if self.nonoccurrence is not None:
            scores -= self.nonocc64[term]
        return scores.astype(np.float32)


@dataclass
class SparseIndex:
    """The built index. ``terms[i]`` is term id i's string; ``doc_lengths`` are exact term counts."""

    terms: list[str]
    indptr: np.ndarray       # int64 (n_terms + 1)
    indices: np.ndarray      # int32 (n_postings)
    data: np.ndarray         # float32 (n_postings)
    doc_lengths: np.ndarray  # int32 (n_docs)
    nonoccurrence: np.ndarray | None  # float32 (n_terms), for bm25l / bm25+
    n_docs: int

    @property
    def n_terms(self) -> int:
        return len(self.terms)

    def arrays(self) -> dict[str, np.ndarray]:
        out = {"indptr": self.indptr, "indices": self.indices, "data": self.data, "doc_lengths": self.doc_lengths}
        if self.nonoccurrence is not None:
            out["nonoccurrence"] = self.nonoccurrence
        return out

    # ------------------------------------------------------------------- construction
    @classmethod
    def build(cls, chunks: Iterable[tuple[np.ndarray, np.ndarray]], terms: list[str], params: ScoringParams
              ) -> "SparseIndex":
        """Build from (terms-per-document, term ids) chunks; ``terms`` is filled while they stream.

        Two passes over compact per-chunk postings: the first collects them (and the document
        frequencies), the second computes each chunk's scores and scatters them straight into
        their CSC slots (a counting sort), freeing the chunk as it goes. Peak memory is about the
        chunk postings (10 bytes each) plus the final arrays (8 bytes each), with no global sort.
        With the compiled extension the postings are gathered in C instead (:meth:`_build_compiled`).
        """
        if compiled.available():
            return cls._build_compiled(chunks, terms, params)
        parts = []  # (first doc, lengths, term, doc, tf) per chunk
        n_docs = 0
        df = np.zeros(0, dtype=np.int64)
        for lengths, term, doc, tf in postings_from_chunks(chunks):
            counts = np.bincount(term, minlength=len(terms))
            if len(counts) > len(df):
                counts[:len(df)] += df
                df = counts
            else:
                df[:len(counts)] += counts
            tf = tf.astype(np.uint16) if len(tf) == 0 or tf.max() < 2**16 else tf
            parts.append((n_docs, lengths, term, doc, tf))
            n_docs += len(lengths)
        n_terms = len(terms)
        df = np.concatenate([df, np.zeros(n_terms - len(df), dtype=np.int64)])
        doc_lengths = (np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)).astype(np.int64)
        indptr = np.concatenate([[0], np.cumsum(df)]).astype(np.int64)
        n_with_terms = int(np.count_nonzero(doc_lengths))  # Lucene's docCount
        total = int(doc_lengths.sum())
        idf = _idf(params.idf, df, max(n_with_terms, 1))
        scorer = _PostingScorer(params, idf, doc_lengths, total, n_with_terms)

        n_postings = int(indptr[-1])
        indices = np.empty(n_postings, dtype=np.int32)
        data = np.empty(n_postings, dtype=np.float32)
        filled = indptr[:-1].copy()  # next free slot of each term
        parts.reverse()
        while parts:  # chunks in document order, so documents ascend within each term
            _, _, term, doc, tf = parts.pop()
            chunk_counts = np.bincount(term, minlength=n_terms)
            chunk_first = np.cumsum(chunk_counts) - chunk_counts  # chunk postings are sorted by term
            dest = filled[term] + (np.arange(len(term)) - chunk_first[term])
            filled += chunk_counts
            indices[dest] = doc
            data[dest] = scorer(term, doc, tf)
            del term, doc, tf, dest
        return cls(terms=terms, indptr=indptr, indices=indices, data=data, doc_lengths=doc_lengths.astype(np.int32),
                   nonoccurrence=scorer.nonoccurrence, n_docs=n_docs)

    @classmethod
    def _build_compiled(cls, chunks: Iterable[tuple[np.ndarray, np.ndarray]], terms: list[str],
                        params: ScoringParams) -> "SparseIndex":
        """:meth:`build` with the postings gathered in C (document-major, 8 bytes each, then one
        counting sort into CSC order) and scored in one pass (in C for Lucene's BM25, vectorised
        otherwise): the same arrays."""
        return cls.from_postings(*compiled.build_postings(chunks, lambda: len(terms)), terms, params)

    @classmethod
    def from_postings(cls, indptr: np.ndarray, indices: np.ndarray, tf: np.ndarray, doc_lengths: np.ndarray,
                      terms: list[str], params: ScoringParams, n_threads: int = 1) -> "SparseIndex":
        """The index of term-major postings with term frequencies (what the compiled PostingsBuilder
        finishes with): collection statistics, then each posting's score (Lucene's: in C, on
        ``n_threads`` threads)."""
        df = np.diff(indptr)
        n_with_terms = int(np.count_nonzero(doc_lengths))  # Lucene's docCount
        total = int(doc_lengths.sum(dtype=np.int64))
        idf = _idf(params.idf, df, max(n_with_terms, 1))
        scorer = _PostingScorer(params, idf, doc_lengths.astype(np.int64), total, n_with_terms)
        if params.method == "lucene" and compiled.available():  # one pass in C, the same float32 operations
            data = compiled.score_lucene(indptr, indices, tf, scorer.idf32, scorer.inv, n_threads)
        else:
            data = scorer(np.repeat(np.arange(len(terms), dtype=np.int32), df), indices, tf)
        return cls(terms=terms, indptr=indptr, indices=indices, data=data, doc_lengths=doc_lengths,
                   nonoccurrence=scorer.nonoccurrence, n_docs=len(doc_lengths))

    # ------------------------------------------------------------------- search
    def search_one(self, term_ids: list[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(matched documents, their float32 scores) for one query's term ids (repeats count)."""
        if len(term_ids) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        uniq, boost = np.unique(np.asarray(term_ids, dtype=np.int64), return_counts=True)
        starts, ends = self.indptr[uniq], self.indptr[uniq + 1]
        sizes = ends - starts
        total = int(sizes.sum())
        if total == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        if len(uniq) == 1:
            docs = self.indices[starts[0]:ends[0]]
            values = self.data[starts[0]:ends[0]]
            if boost[0] != 1:
                values = values * np.float32(boost[0])
            scores = values.astype(np.float32, copy=True)
            docs = docs.astype(np.int64)
        else:
            docs = np.concatenate([self.indices[s:e] for s, e in zip(starts.tolist(), ends.tolist())])
            values = np.concatenate([self.data[s:e] if q == 1 else self.data[s:e] * np.float32(q)
                                     for s, e, q in zip(starts.tolist(), ends.tolist(), boost.tolist())])
            if total * 8 < self.n_docs:  # few postings: sort them instead of a dense accumulator
                docs, inverse = np.unique(docs, return_inverse=True)
                sums = np.bincount(inverse, weights=values, minlength=len(docs))
            else:
                sums = np.bincount(docs, weights=values, minlength=self.n_docs)
                docs = np.flatnonzero(sums != 0) if self.nonoccurrence is None else np.flatnonzero(
                    np.bincount(self.indices_for(starts, ends), minlength=self.n_docs))
                sums = sums[docs]
            scores = sums.astype(np.float32)
            docs = docs.astype(np.int64)
        if self.nonoccurrence is not None:
            scores = scores + np.float32((self.nonoccurrence[uniq].astype(np.float64) * boost).sum())
        return docs, scores

    def indices_for(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        return np.concatenate([self.indices[s:e] for s, e in zip(starts.tolist(), ends.tolist())])

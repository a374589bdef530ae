"""BM25 scoring parameters and the score of each posting.

``method="lucene"`` (default) is Lucene's BM25Similarity, in float32 operations exactly as Lucene
computes it:

    idf    = (float) ln(1 + (N - df + 0.5) / (df + 0.5))       N = documents with >= 1 term
    avgdl  = (float) (total terms / N)
    cache  = 1f / (k1 * ((1 - b) + b * LENGTH_TABLE[norm] / avgdl))      (float ops)
    score  = w - w / (1f + tf * cache)        w = boost * idf (boost 1 in the index)

with ``norm`` the document's one-byte length (lucene_norms.py) unless ``lossy_lengths=False``.

The other variants are those of Kamphuis et al., "Which BM25 do you mean?" (ECIR 2020), named as
bm25s names them and computed in float64, then rounded to float32 (exact lengths unless
``lossy_lengths=True``); with L = l_d / l_avg:

    robertson  idf = ln(max(1, (N - df + 0.5) / (df + 0.5)))   tfc = tf / (k1 (1 - b + b L) + tf)
    atire      idf = ln(N / df)                                 tfc = tf (k1 + 1) / (tf + k1 (1 - b + b L))
    bm25l      idf = ln((N + 1) / (df + 0.5))                   tfc = (k1 + 1)(c + delta) / (k1 + c + delta),
                                                                      c = tf / (1 - b + b L)
    bm25+      idf = ln((N + 1) / df)                           tfc = (k1 + 1) tf / (k1 (1 - b + b L) + tf) + delta

``idf_method`` may pick another variant's idf. BM25L and BM25+ give every document a constant
"non-occurrence" score per query term, idf * tfc(tf=0, l_d=l_avg); as bm25s, the index stores the
scores minus that constant and search adds it back (only matched documents are returned).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

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


_IDF = {
    "lucene": lambda df, n: math.log(1 + (n - df + 0.5) / (df + 0.5)),
    "robertson": lambda df, n: math.log(max(1.0, (n - df + 0.5) / (df + 0.5))),
    "atire": lambda df, n: math.log(n / df),
    "bm25l": lambda df, n: math.log((n + 1) / (df + 0.5)),
    "bm25+": lambda df, n: math.log((n + 1) / df),
}


def idf(method: str, df: np.ndarray, n_docs: int) -> np.ndarray:
    """idf per term (float64) with ``method``'s formula; df 0 gives 0."""
    if method == "lucene":  # vectorised: the same values as the scalar formula
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(df > 0, np.log(1 + (n_docs - df + 0.5) / (df + 0.5)), 0.0)
    fn = _IDF[method]
    values, inverse = np.unique(df, return_inverse=True)
    per_value = np.array([fn(int(v), n_docs) if v > 0 else 0.0 for v in values.tolist()], dtype=np.float64)
    return per_value[inverse].reshape(len(df))


def tfc(method: str, tf, l_d, l_avg: float, k1: float, b: float, delta: float):
    """The term-frequency component of ``method`` (float64), for arrays or scalars."""
    if method in ("robertson", "lucene"):
        return tf / (k1 * ((1 - b) + b * l_d / l_avg) + tf)
    if method == "atire":
        return (tf * (k1 + 1)) / (tf + k1 * (1 - b + b * l_d / l_avg))
    if method == "bm25l":
        c = tf / (1 - b + b * l_d / l_avg)
        return ((k1 + 1) * (c + delta)) / (k1 + c + delta)
    if method == "bm25+":
        return ((k1 + 1) * tf) / (k1 * (1 - b + b * l_d / l_avg) + tf) + delta
    raise ValueError(f"unknown BM25 method {method!r}")


def nonoccurrence_tfc(method: str, k1: float, delta: float) -> float:
    """``tfc(method, tf=0, ...)`` of BM25L / BM25+, at any length: the non-occurrence component

        bm25l  (k1 + 1) delta / (k1 + delta)      (c = 0; 0 when k1 = delta = 0)
        bm25+  delta                              ((k1 + 1) 0 / (k1 (1 - b + b L) + 0) + delta)

    in closed form: the general formula divides 0 by 0 when k1 = 0 (bm25+) or k1 = delta = 0 (bm25l),
    where tf = 0 contributes no tf part, as in every other case."""
    if method == "bm25+":
        return delta
    if method == "bm25l":
        return (k1 + 1) * delta / (k1 + delta) if k1 + delta > 0 else 0.0
    raise ValueError(f"{method!r} has no non-occurrence score")


class PostingScorer:
    """Scores postings (term, document, tf) once the collection statistics are known."""

    def __init__(self, params: ScoringParams, df: np.ndarray, doc_lengths: np.ndarray):
        self.params = params
        self.nonoccurrence = None
        doc_lengths = np.asarray(doc_lengths, dtype=np.int64)
        n_with_terms = int(np.count_nonzero(doc_lengths))  # Lucene's docCount
        total = int(doc_lengths.sum(dtype=np.int64))
        self.idf = idf(params.idf, df, max(n_with_terms, 1))
        if params.method == "lucene":
            self.idf32 = self.idf.astype(np.float32)
            avgdl32 = np.float32(total / n_with_terms) if n_with_terms else np.float32(1)
            k1f, bf = np.float32(params.k1), np.float32(params.b)
            # (k1 = 0: inv is +inf, as Java's float division gives Lucene, and w - w / (1 + tf inf) = w)
            with np.errstate(divide="ignore"):
                if params.lossy:  # per-document 1/(k1 (1 - b + b dl/avgdl)) through the 256-entry cache
                    cache = np.float32(1) / (k1f * ((np.float32(1) - bf) + bf * LENGTH_TABLE / avgdl32))
                    self.inv = cache[int_to_byte4(doc_lengths)]
                else:
                    dl = doc_lengths.astype(np.float32)
                    self.inv = np.float32(1) / (k1f * ((np.float32(1) - bf) + bf * dl / avgdl32))
            return
        self.lengths = (quantize_lengths(doc_lengths) if params.lossy else doc_lengths).astype(np.float64)
        self.avgdl = total / n_with_terms if n_with_terms else 1.0
        if params.method in ("bm25l", "bm25+"):
            self.nonocc64 = self.idf * nonoccurrence_tfc(params.method, params.k1, params.delta)
            self.nonoccurrence = self.nonocc64.astype(np.float32)

    def __call__(self, term: np.ndarray, doc: np.ndarray, tf: np.ndarray) -> np.ndarray:
        p = self.params
        if p.method == "lucene":  # Lucene's float32 operations: w - w / (1 + tf * inv)
            w = self.idf32[term]
            return w - w / (np.float32(1) + tf.astype(np.float32) * self.inv[doc])
        scores = self.idf[term] * tfc(p.method, tf.astype(np.float64), self.lengths[doc], self.avgdl, p.k1, p.b,
                                      p.delta)
        if self.nonoccurrence is not None:
            scores -= self.nonocc64[term]
        return scores.astype(np.float32)

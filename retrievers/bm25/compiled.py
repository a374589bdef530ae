"""The compiled path of the bm25s backend (C source in retrievers/bm25/native/fastbm25.c).

The extension ``retrievers.bm25._fastbm25`` is built when the package is installed (``pip install
-e .`` compiles it; it is optional, so an install without a C compiler still succeeds). It replaces
the hot loops of the pure-Python path with the same results:

* :class:`CompiledTermEncoder` for :class:`retrievers.bm25.encode.TermEncoder`: ASCII text is
  tokenized (Lucene's rules on ASCII), lowercased, stopped and Porter-stemmed in C, memoized per
  distinct token; words holding non-ASCII characters are cut at separators (characters no token
  holds) and their pieces that hold other non-ASCII characters go, once per distinct piece, to the
  Python analyzer's exact Unicode path (:func:`analyze_words`). :meth:`CompiledTermEncoder.encode_into`
  hands each document's postings straight to a postings builder (:func:`index_postings`).
* :func:`build_postings` / :func:`index_postings` for the per-chunk ``np.unique`` + counting sort
  of :meth:`SparseIndex.build <retrievers.bm25.sparse_index.SparseIndex.build>`, and
  :func:`score_lucene` for its scoring (Lucene's BM25).
* :func:`search` for :meth:`SparseIndex.search_one <retrievers.bm25.sparse_index.SparseIndex.search_one>`
  + :func:`retrievers.topk.top_k_positive`, on threads, without the GIL.

It serves analyzers with the ``standard`` tokenizer, lowercasing on and the ``porter`` stemmer or
none (the defaults); others use the Python path. ``HARNESS_BM25_COMPILED=0`` turns it off.
"""

from __future__ import annotations

import gc
import os
from functools import partial

import numpy as np

from retrievers.bm25.analyzer import Analyzer
from retrievers.bm25.tokenizer import separated_candidate_finder

try:
    from retrievers.bm25 import _fastbm25
except ImportError:  # not built (no C compiler at install time): the Python path runs
    _fastbm25 = None


def available() -> bool:
    """Whether the extension is built and not turned off with ``HARNESS_BM25_COMPILED=0``."""
    return _fastbm25 is not None and os.environ.get("HARNESS_BM25_COMPILED", "1") != "0"


def supports(analyzer: Analyzer) -> bool:
    """Whether the compiled encoder reproduces ``analyzer`` (standard tokenizer, lowercase, Porter or no stemmer)."""
    return (available() and analyzer.tokenizer == "standard" and analyzer.lowercase
            and analyzer.stemmer_name in ("porter", None))


def analyze_words(analyzer: Analyzer, words: list[str]) -> list[list[str]]:
    """The terms of each whitespace-free word, through the analyzer's exact path: one regex call
    cuts all the words into candidates, each distinct candidate is analysed once. (The garbage
    collector is paused meanwhile: the many short-lived lists here otherwise trigger full
    collections that doubled this step's time on SciFact, 10 -> 20 ms, in some runs.)"""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _analyze_words(analyzer, words)
    finally:
        if enabled:
            gc.enable()


def _analyze_words(analyzer: Analyzer, words: list[str]) -> list[list[str]]:
    found = separated_candidate_finder(analyzer.tokenizer, "\n")(("\n".join(words) + "\n") if words else "")
    distinct = list(dict.fromkeys(c for c in found if c != "\n"))
    counts, first, terms = analyzer.analyze_flat(distinct)
    of = {c: terms[f:f + n] for c, f, n in zip(distinct, first.tolist(), counts.tolist())}
    out: list[list[str]] = []
    current: list[str] = []
    for cand in found:
        if cand == "\n":
            out.append(current)
            current = []
        else:
            current.extend(of[cand])
    if len(out) != len(words):
        raise ValueError("a word holds a newline; words must be whitespace-free")
    return out


class CompiledTermEncoder:
    """Same interface and terms as :class:`retrievers.bm25.encode.TermEncoder` (term ids may be
    numbered in another order): ``encode(texts) -> (terms per text, term ids)``, ``terms``."""

    def __init__(self, analyzer: Analyzer, terms: list[str] | None = None, n_threads: int = 1):
        if not supports(analyzer):
            raise ValueError(f"the compiled encoder does not support the analyzer {analyzer.params()}")
        self.analyzer = analyzer
        self.n_threads = int(n_threads)  # texts of a large chunk are tokenized on this many threads
        self._encoder = _fastbm25.Encoder(sorted(analyzer.stopwords), analyzer.possessive,
                                          analyzer.stemmer_name == "porter", partial(analyze_words, analyzer))
        self.terms: list[str] = []  # grows in place as chunks are encoded
        if terms is not None:
            self._encoder.add_terms(terms)
            self.terms.extend(terms)

    @property
    def n_terms(self) -> int:
        return len(self.terms)

    def encode(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(number of terms per text as int64, all term ids as int32) for one chunk of texts."""
        counts, ids = self._encoder.encode(texts, self.n_threads)
        self._take_new_terms()
        return np.frombuffer(counts, dtype=np.int64), np.frombuffer(ids, dtype=np.int32)

    def encode_into(self, builder, texts: list[str], titles: list[str] | None = None) -> None:
        """Append the chunk's documents to a ``_fastbm25.PostingsBuilder`` as postings (each text's
        distinct terms with their tf, counted by the encoding threads; no arrays in between).
        ``titles`` (one per text) are read as ``title + " " + text`` without building those strings."""
        self._encoder.encode(texts, self.n_threads, titles=titles, into=builder)
        self._take_new_terms()

    def _take_new_terms(self) -> None:
        """Extend ``terms`` (in place: others hold it) with the terms the last call added."""
        if self._encoder.n_terms > len(self.terms):
            self.terms.extend(self._encoder.terms(len(self.terms)))

    def freeze(self) -> "CompiledTermEncoder":
        """No new terms from now on: unknown terms are dropped (for queries)."""
        self._encoder.freeze()
        return self

    def query_terms(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(offsets, term ids) of each query's known terms (repeats kept); freezes the encoder."""
        self.freeze()
        counts, ids = self.encode(texts)
        return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), ids


def _postings_arrays(raw: tuple[bytes, bytes, bytes, bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """PostingsBuilder.finish's bytes as (indptr int64, indices int32, tf int32, doc_lengths int32)."""
    return tuple(np.frombuffer(b, dtype=t) for b, t in zip(raw, (np.int64, np.int32, np.int32, np.int32)))


def build_postings(chunks, n_terms_after) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(indptr int64, indices int32, tf int32, doc_lengths int32) of (terms per document, term ids)
    chunks: term-major postings, documents ascending within a term. ``n_terms_after()`` gives the
    number of terms once the chunks are consumed (the vocabulary grows while they stream)."""
    builder = _fastbm25.PostingsBuilder()
    for lengths, term_ids in chunks:
        builder.add(np.ascontiguousarray(lengths, dtype=np.int64), np.ascontiguousarray(term_ids, dtype=np.int32))
    raw = builder.finish(n_terms_after())
    return _postings_arrays(raw)


def index_postings(encoder: CompiledTermEncoder, chunks) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(indptr int64, indices int32, tf int32, doc_lengths int32) of (titles, texts) chunks, each
    encoded straight into one PostingsBuilder; ``encoder.terms`` holds the vocabulary after."""
    builder = _fastbm25.PostingsBuilder()
    for titles, texts in chunks:
        encoder.encode_into(builder, texts, titles)
    raw = builder.finish(len(encoder.terms), encoder.n_threads)
    return _postings_arrays(raw)


def score_lucene(indptr: np.ndarray, indices: np.ndarray, tf: np.ndarray, idf32: np.ndarray,
                 inv: np.ndarray, n_threads: int = 1) -> np.ndarray:
    """float32 score of each posting, ``w - w / (1 + tf * inv[doc])`` with ``w = idf32[term]``, in
    float32 operations: the same values as the numpy expression of ``_PostingScorer``."""
    c = lambda a, t: np.ascontiguousarray(a, dtype=t)  # noqa: E731
    raw = _fastbm25.score_lucene(c(indptr, np.int64), c(indices, np.int32), c(tf, np.int32), c(idf32, np.float32),
                                 c(inv, np.float32), int(n_threads))
    return np.frombuffer(raw, dtype=np.float32)


def search(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, n_docs: int, offsets: np.ndarray,
           term_ids: np.ndarray, k: int, id_rank: np.ndarray, doc_of_rank: np.ndarray,
           constants: np.ndarray | None = None, n_threads: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(hits per query int64, documents int64, scores float64 holding float32 values) for queries
    ``offsets``/``term_ids``: score desc, document id desc (``id_rank``), scores > 0 only, at most
    ``k`` per query. The queries are split among ``n_threads`` threads, without the GIL."""
    c = lambda a, t: np.ascontiguousarray(a, dtype=t)  # noqa: E731
    hits, docs, scores = _fastbm25.search(
        c(indptr, np.int64), c(indices, np.int32), c(data, np.float32), int(n_docs), c(offsets, np.int64),
        c(term_ids, np.int32), int(k), c(id_rank, np.int64), c(doc_of_rank, np.int64),
        None if constants is None else c(constants, np.float32), int(n_threads))
    return (np.frombuffer(hits, dtype=np.int64), np.frombuffer(docs, dtype=np.int64),
            np.frombuffer(scores, dtype=np.float64))


def stem(word: str) -> str:
    """Lucene's Porter stem of one lowercase ASCII word, from the C stemmer (for tests)."""
    return _fastbm25.stem(word)

"""The compiled-or-Python choice, taken once: :func:`choose_engine`.

An engine turns a corpus into a :class:`SparseIndex` (``build``), hashes a corpus for the index
cache (``digest``) and makes the searcher of an index (``searcher``):

* :class:`CompiledEngine` when the extension runs (loader.py): texts -> postings in C (the
  compiled tokenizer + Porter when it reproduces the analyzer, else the Python term encoder), Lucene
  scoring, digest and search in C.
* :class:`PythonEngine` otherwise: the term encoder (encode.py), numpy build (build.py) and
  search (search.py), hashlib digest -- nothing compiled.

Both give the same index arrays (term ids may be numbered in another order) and the same runs.
"""

from __future__ import annotations

from functools import partial

import hashlib
from typing import Iterable

import numpy as np

from harness.datasets.corpus import Corpus
from retrievers.bm25 import loader
from retrievers.bm25.analyzer import Analyzer
from retrievers.bm25.build import FusedLuceneScores, build_python, index_from_postings
from retrievers.bm25.encode import TermEncoder
from retrievers.bm25.scoring import ScoringParams
from retrievers.bm25.search import CompiledSearcher, DocOrder, PythonSearcher, flat_term_ids
from retrievers.bm25.sparse_index import SparseIndex, check_postings
from retrievers.texts import corpus_chunks, corpus_columns, lexical_batches

CHUNK_DOCS = 20_000


def corpus_digest(chunks: Iterable[tuple[list[str], list[str], list[str]]], feed_column=None) -> str:
    """sha256 over every document's id, title and text, in order (unambiguous: lengths included):
    per chunk and column, the int64 lengths (code points), then the joined UTF-8 (surrogatepass).
    ``feed_column(update, column)`` (the compiled one) feeds the same bytes without joining."""
    digest = hashlib.sha256()
    for chunk in chunks:
        for column in chunk:
            if feed_column is not None:
                feed_column(digest.update, column)
                continue
            digest.update(np.fromiter((len(s) for s in column), dtype=np.int64, count=len(column)).tobytes())
            digest.update("".join(column).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


class PythonEngine:
    compiled = False

    def __init__(self, analyzer: Analyzer, scoring: ScoringParams, n_threads: int = 1, chunk_docs: int = CHUNK_DOCS):
        self.analyzer, self.scoring, self.n_threads, self.chunk_docs = analyzer, scoring, n_threads, chunk_docs

    def digest(self, corpus: Corpus) -> str:
        return corpus_digest(corpus_chunks(corpus, self.chunk_docs))

    def check_postings(self, indptr: np.ndarray, indices: np.ndarray, n_docs: int) -> None:
        """SparseIndex.validate's postings check (InvalidIndex): numpy here, C on threads compiled."""
        check_postings(indptr, indices, n_docs)

    def build(self, corpus: Corpus) -> SparseIndex:
        encoder = TermEncoder(self.analyzer)  # retrievers/texts.py's lexical_text, a chunk at a time
        chunks = (encoder.encode(batch) for batch in lexical_batches(corpus, self.chunk_docs))
        return build_python(chunks, encoder.terms, self.scoring)

    def searcher(self, index: SparseIndex, order: DocOrder) -> PythonSearcher:
        return PythonSearcher(index, order, self.analyzer, self.n_threads)


class CompiledEngine(PythonEngine):
    compiled = True

    def __init__(self, analyzer: Analyzer, scoring: ScoringParams, n_threads: int = 1, chunk_docs: int = CHUNK_DOCS):
        from retrievers.bm25 import compiled

        super().__init__(analyzer, scoring, n_threads, chunk_docs)
        self._c = compiled
        self.encodes = compiled.supports(analyzer)  # the compiled tokenizer reproduces this analyzer
        self._encoder = None  # the encoder of the last build: its vocabulary is that index's

    def digest(self, corpus: Corpus) -> str:
        return corpus_digest(corpus_chunks(corpus, self.chunk_docs), self._c.digest_column)

    def check_postings(self, indptr: np.ndarray, indices: np.ndarray, n_docs: int) -> None:
        self._c.check_postings(indptr, indices, n_docs, self.n_threads)

    def _score(self, indptr, indices, tf, idf32, inv, in_place: bool = False):
        return self._c.score_lucene(indptr, indices, tf, idf32, inv, self.n_threads, in_place)

    def build(self, corpus: Corpus) -> SparseIndex:
        c = self._c
        fused = None
        if self.encodes:  # postings counted by the encoder's threads, straight into C
            encoder = c.CompiledTermEncoder(self.analyzer, n_threads=self.n_threads)
            chunks = corpus_columns(corpus, self.chunk_docs)  # Arrow buffers read in place by the encoder
            fused = FusedLuceneScores(self.scoring) if self.scoring.method == "lucene" else None  # scored as scattered
            postings = c.index_postings(encoder, chunks, fused)  # title + " " + text, never joined
            self._encoder = encoder.freeze()
            terms = encoder.terms
        else:  # the Python term encoder, its term ids gathered into postings in C
            encoder = TermEncoder(self.analyzer)
            chunks = (encoder.encode(batch) for batch in lexical_batches(corpus, self.chunk_docs))
            postings = c.build_postings(chunks, lambda: len(encoder.terms))
            terms = encoder.terms
        # the builder's tf (a bytearray of its own) is not needed once scored: the scores overwrite it
        return index_from_postings(*postings, terms, self.scoring, partial(self._score, in_place=True),
                                   scored=fused.scorer if fused is not None else None)

    def query_encoder(self, index: SparseIndex):
        """The compiled encoder frozen on ``index``'s vocabulary: the one that built it, else (a
        cached index) one made from its terms."""
        encoder = self._encoder
        if encoder is None or encoder.terms is not index.terms:
            encoder = self._c.CompiledTermEncoder(self.analyzer, index.terms).freeze()
            encoder.terms = index.terms
            self._encoder = encoder
        return encoder

    def searcher(self, index: SparseIndex, order: DocOrder) -> CompiledSearcher:
        if self.encodes:
            query_terms = self.query_encoder(index).query_terms
        else:
            python = PythonSearcher(index, order, self.analyzer, self.n_threads)

            def query_terms(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
                return flat_term_ids(python.queries_term_ids(texts))
        return CompiledSearcher(index, order, query_terms, self.n_threads)


def choose_engine(analyzer: Analyzer, scoring: ScoringParams, n_threads: int = 1,
                  chunk_docs: int = CHUNK_DOCS) -> PythonEngine:
    """The compiled engine when the extension runs (built, ``HARNESS_BM25_COMPILED`` not 0), else the
    Python one. The only place the choice is made."""
    engine = CompiledEngine if loader.extension() is not None else PythonEngine
    return engine(analyzer, scoring, n_threads, chunk_docs)

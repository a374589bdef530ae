"""The fast BM25 backend: bm25s's eager sparse index, Lucene-exact scoring, cached on disk.

index(corpus): hash the corpus (ids, titles, texts) -> cache key with the analyzer and scoring
parameters -> load the cached index, or stream the corpus (``Corpus`` or ``ArrowCorpus``) through
the analyzer in batches of ``iter_contents`` (never a second full copy of the texts) and build it
(sparse_index.py), then save it atomically.

search(queries, k): per query, sum the posting scores of its terms (float64, rounded to float32 as
Lucene does), keep matched documents with score > 0 and take the top k by score descending, ties
by document id descending (the evaluator's canonical order). The compiled search splits the
queries among threads itself; the Python path runs query batches on a thread pool (numpy releases
the GIL in the heavy steps).

Encoding, the postings and search run compiled (retrievers/bm25/compiled.py) when the extension
is built and the analyzer is one it reproduces; otherwise in Python, with the same results.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Iterator
from pathlib import Path

import numpy as np

from harness.datasets.corpus import Corpus, Queries
from harness.run import Run
from retrievers.bm25 import cache as index_cache
from retrievers.bm25 import compiled
from retrievers.bm25.analyzer import Analyzer, porter_implementation
from retrievers.bm25.encode import TermEncoder
from retrievers.bm25.sparse_index import ScoringParams, SparseIndex
from retrievers.topk import run_from_topk, string_ranks, top_k_positive

log = logging.getLogger(__name__)

CHUNK_DOCS = 20_000


def corpus_chunks(corpus: Corpus, size: int = CHUNK_DOCS) -> Iterator[tuple[list[str], list[str], list[str]]]:
    for start in range(0, len(corpus), size):
        end = start + size
        yield corpus.ids[start:end], corpus.titles[start:end], corpus.texts[start:end]


def default_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class BM25sBackend:
    def __init__(self, scoring: ScoringParams, analyzer: Analyzer, cache: bool = True,
                 cache_dir: str | os.PathLike | None = None, n_threads: int | None = None,
                 chunk_docs: int = CHUNK_DOCS):
        self.scoring, self.analyzer = scoring, analyzer
        self.use_cache, self.cache_dir = bool(cache), cache_dir
        self.n_threads = default_threads() if n_threads is None else int(n_threads)
        if self.n_threads < 1:
            raise ValueError(f"n_threads must be >= 1, got {n_threads}")
        self.chunk_docs = int(chunk_docs)
        self._index: SparseIndex | None = None
        self.cache_status: str | None = None  # "hit", "built", "rebuilt" or "off" after index()
        self.cache_entry: Path | None = None  # the index's cache folder after index() (cache on)

    def settings(self) -> dict:
        out = {"analyzer": self.analyzer.params(), "scoring": self.scoring.as_dict()}
        if self.analyzer.stemmer_name == "porter":  # compiled Lucene stemmer or the PyStemmer fallback
            out["porter"] = porter_implementation()
        return out

    # ------------------------------------------------------------------- index
    def build(self, corpus: Corpus) -> SparseIndex:
        if compiled.supports(self.analyzer):  # postings counted by the encoder's threads, straight into C
            encoder = compiled.CompiledTermEncoder(self.analyzer, n_threads=self.n_threads)
            chunks = ((titles, texts) for _, titles, texts in corpus_chunks(corpus, self.chunk_docs))
            postings = compiled.index_postings(encoder, chunks)  # title + " " + text, never joined
            self._query_encoder = encoder.freeze()  # its vocabulary is the index's
            return SparseIndex.from_postings(*postings, encoder.terms, self.scoring, n_threads=self.n_threads)
        encoder = TermEncoder(self.analyzer)
        chunks = (encoder.encode(batch) for batch in corpus.iter_contents(self.chunk_docs))
        return SparseIndex.build(chunks, encoder.terms, self.scoring)

    def index(self, corpus: Corpus) -> None:
        self._ids = corpus.id_array
        self._id_index = corpus.id_index
        self._rank = string_ranks(self._ids)
        if not self.use_cache:
            self._index, self.cache_status, self.cache_entry = self.build(corpus), "off", None
            self._after_index()
            return
        root = index_cache.cache_root(self.cache_dir)
        settings = self.settings()
        key = index_cache.cache_key(index_cache.corpus_digest(corpus_chunks(corpus, self.chunk_docs)), settings)
        status = "built"
        try:
            index = index_cache.load(root, key)
        except index_cache.CacheCorrupt as exc:
            log.warning("BM25 index cache %s is damaged (%s); rebuilding it", index_cache.entry_dir(root, key), exc)
            index_cache.discard(root, key)
            index, status = None, "rebuilt"
        if index is not None and index.n_docs != len(corpus):
            index_cache.discard(root, key)
            index, status = None, "rebuilt"
        if index is None:
            index = self.build(corpus)
            try:
                index_cache.save(index, root, key, settings)
            except OSError as exc:  # a read-only or full disk must not stop the run
                log.warning("could not write the BM25 index cache under %s: %s", root, exc)
        else:
            status = "hit"
        self._index, self.cache_status = index, status
        self.cache_entry = index_cache.entry_dir(root, key)
        self._after_index()

    def _after_index(self) -> None:
        self._term_index = None  # built when a query needs it (Python path)
        self._doc_of_rank = np.empty(len(self._rank), dtype=np.int64)  # inverse of the id ranks
        self._doc_of_rank[self._rank] = np.arange(len(self._rank))

    def _query_term_encoder(self) -> "compiled.CompiledTermEncoder | None":
        """The compiled encoder frozen on the index's vocabulary, when it serves this analyzer: the
        one that built the index, else (a cached index) one made from its terms."""
        if not compiled.supports(self.analyzer):
            return None
        encoder = getattr(self, "_query_encoder", None)  # set by build()
        if encoder is None or encoder.terms is not self.sparse_index.terms:  # a cached index: from its terms
            encoder = compiled.CompiledTermEncoder(self.analyzer, self.sparse_index.terms).freeze()
            encoder.terms = self.sparse_index.terms
            self._query_encoder = encoder
        return encoder

    @property
    def sparse_index(self) -> SparseIndex:
        if self._index is None:
            raise RuntimeError("index() must be called before search()")
        return self._index

    # ------------------------------------------------------------------- search
    def queries_term_ids(self, texts: list[str]) -> list[list[int]]:
        """Term ids of each query's terms that are in the vocabulary (unknown terms match nothing; a
        repeated term repeats), analysing each distinct candidate once for all the queries."""
        per_query = [self.analyzer.candidates(text) for text in texts]
        distinct = list(dict.fromkeys(c for found in per_query for c in found))
        counts, first, terms = self.analyzer.analyze_flat(distinct)
        if self._term_index is None:
            self._term_index = {t: i for i, t in enumerate(self.sparse_index.terms)}
        index = self._term_index
        ids_of = {cand: [index[t] for t in terms[f:f + n] if t in index]
                  for cand, f, n in zip(distinct, first.tolist(), counts.tolist())}
        return [[i for cand in found for i in ids_of[cand]] for found in per_query]

    def _search_batch(self, term_ids: list[list[int]], k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        index, out = self.sparse_index, []
        for ids in term_ids:
            docs, scores = index.search_one(ids)
            positive = scores > 0
            if not positive.all():
                docs, scores = docs[positive], scores[positive]
            if len(docs) > 1:
                chosen = top_k_positive(scores, k, self._rank[docs])
                docs, scores = docs[chosen], scores[chosen]
            out.append((docs, scores.astype(np.float64)))
        return out

    def _map_batches(self, fn, batches: list) -> list:
        """``[fn(b) for b in batches]``, on a thread pool of n_threads when there is more than one."""
        if self.n_threads > 1 and len(batches) > 1:
            with ThreadPoolExecutor(max_workers=self.n_threads) as pool:
                return list(pool.map(fn, batches))
        return [fn(b) for b in batches]

    def _search_compiled(self, queries: Queries, k: int) -> Run | None:
        encoder = self._query_term_encoder()
        if encoder is None:
            return None
        index = self.sparse_index
        offsets, term_ids = encoder.query_terms(list(queries.texts))
        constants = None
        if index.nonoccurrence is not None:  # BM25L / BM25+: every matched document gets a constant
            constants = np.zeros(len(queries), dtype=np.float32)
            for q in range(len(queries)):
                uniq, boost = np.unique(term_ids[offsets[q]:offsets[q + 1]], return_counts=True)
                constants[q] = np.float32((index.nonoccurrence[uniq].astype(np.float64) * boost).sum())
        hits, docs, scores = compiled.search(index.indptr, index.indices, index.data, index.n_docs, offsets, term_ids, k,
                                             self._rank, self._doc_of_rank, constants, n_threads=self.n_threads)
        return Run.from_arrays(queries.ids, np.concatenate([[0], np.cumsum(hits)]), docs, scores, self._ids,
                               self._id_index)

    def search(self, queries: Queries, k: int) -> Run:
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        run = self._search_compiled(queries, k)
        if run is not None:
            return run
        term_ids = self.queries_term_ids(list(queries.texts))
        size = max(1, -(-len(term_ids) // (self.n_threads * 4)))
        batches = [term_ids[i:i + size] for i in range(0, len(term_ids), size)]
        results = [r for batch in self._map_batches(lambda b: self._search_batch(b, k), batches) for r in batch]
        return run_from_topk(queries.ids, [d for d, _ in results], [s for _, s in results], self._ids,
                             self._id_index)

"""The ``lucene`` backend: Lucene's BM25 on an eager sparse index (bm25s's layout), cached on disk.

index(corpus): the corpus's fingerprint, else a hash of its content (ids, titles, texts) -> cache key with the analyzer and scoring
parameters -> load the cached index (checked once, on load), or build it from the corpus streamed
in chunks (``Corpus`` or ``ArrowCorpus``; never a second full copy of the texts), then save it
atomically. search(queries, k): the searcher made for that index (search.py).

The engine (compiled or pure Python, engines.py) is chosen once, when the backend is made; with
``fields="multifield"`` it is wrapped in :class:`retrievers.bm25.multifield.MultifieldEngine` (title and text
as two fields, joined into one index that is cached and searched as any other).
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from harness.atomic import waited_holder
from harness.datasets.corpus import Corpus, Queries
from harness.retriever import flag
from harness.run import Run
from retrievers.bm25 import cache as index_cache
from retrievers.bm25 import loader
from retrievers.bm25.analyzer import ANALYSIS_VERSION, Analyzer
from retrievers.bm25.engines import CHUNK_DOCS, choose_engine
from retrievers.bm25.scoring import ScoringParams
from retrievers.bm25.search import DocOrder
from retrievers.bm25.sparse_index import SparseIndex

log = logging.getLogger(__name__)


def default_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class LuceneBackend:
    def __init__(self, scoring: ScoringParams, analyzer: Analyzer, cache: bool = True,
                 cache_dir: str | os.PathLike | None = None, n_threads: int | None = None,
                 chunk_docs: int = CHUNK_DOCS, fields: str = "flat", code_key: dict | None = None):
        self.scoring, self.analyzer, self.fields = scoring, analyzer, fields
        self.code_key = dict(code_key or {})  # (a BM25Retriever subclass's code: harness.plugin_code.entry_code)
        self.use_cache, self.cache_dir = flag("cache", cache), cache_dir
        self.n_threads = default_threads() if n_threads is None else int(n_threads)
        if self.n_threads < 1:
            raise ValueError(f"n_threads must be >= 1, got {n_threads}")
        self.engine = choose_engine(analyzer, scoring, self.n_threads, int(chunk_docs))
        if fields == "multifield":  # title and text as two fields, joined into one index (multifield.py)
            from retrievers.bm25.multifield import MultifieldEngine

            if scoring.method in ("bm25l", "bm25+"):
                raise ValueError(f"fields='multifield' sums two fields' scores; method {scoring.method!r} adds a "
                                 "constant for every query term to every matched document, which two fields would "
                                 "count twice: choose lucene, robertson or atire")

            self.engine = MultifieldEngine(self.engine)
        self._index: SparseIndex | None = None
        self._searcher = None
        self.cache_status: str | None = None  # "hit", "built", "rebuilt" or "off" after index(); once the
        # background write failed (read-only or full disk), "built, not cached (why)" (or "rebuilt, ...")
        self.cache_entry: Path | None = None  # the index's cache folder after index() (cache on)
        self.index_versions: dict | None = None  # the versions of what built the index (a hit: its entry's)
        self._indexed = 0  # index() calls so far: a failed background write reports on its own call's status only
        self._status_lock = threading.Lock()  # (that check and the write of cache_status, against a later index())

    def settings(self) -> dict:
        out = {"analyzer": self.analyzer.params(), "analysis_version": ANALYSIS_VERSION,
               "scoring": self.scoring.as_dict()}
        if self.analyzer.stemmer_name == "porter":  # the compiled Lucene stemmer or the Python fallback
            out["porter"] = loader.porter_implementation()
        if self.fields != "flat":  # (a flat index keeps the key it always had)
            from retrievers.bm25.multifield import DERIVATION

            out["fields"] = {"kind": self.fields, "derivation": DERIVATION}
        return {**out, **self.code_key}  # (a built-in's is empty: the harness's version stands for its code)

    def libraries(self) -> dict[str, str]:
        """This process's versions of what builds an index: the harness (its analyzer, scoring and C code),
        numpy, regex (the standard tokenizer) and PyStemmer (a stemmer other than Lucene's porter), those
        used."""
        from harness.versions import computed_with

        names = ["retrieval-harness", "numpy", *(["regex"] if self.analyzer.tokenizer == "standard" else []),
                 *(["PyStemmer"] if self.analyzer.stemmer_name not in (None, "porter") else [])]
        return computed_with(names)

    def build(self, corpus: Corpus) -> SparseIndex:
        """The index of ``corpus``, its arrays in RAM (a cached build's are saved by the background writer).
        The documents' id order, which the search needs next (:meth:`DocOrder.of`), is sorted meanwhile on
        a thread of its own: the compiled sort and the encoding both run without the GIL, so the sort takes
        what the encoding's threads leave of the cores, not a turn of its own after them (1M documents
        ~0.05 s, 8.8M ~0.4 s)."""
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1, thread_name_prefix="bm25-id-order") as pool:
            ordering = pool.submit(lambda: corpus.id_rank)  # (Corpus caches it, and id_order)
            index = self.engine.build(corpus)
            ordering.result()
        return index

    def corpus_id(self, corpus: Corpus) -> str:
        """What the cache key names the corpus by: its ``fingerprint`` (the loader's: the source
        file's sha256, nothing read again) when it has one, else the digest of every document."""
        if corpus.fingerprint is not None:
            return f"fingerprint:{corpus.fingerprint}"
        return f"content:{self.engine.digest(corpus)}"

    def index(self, corpus: Corpus) -> None:
        with self._status_lock:
            self._indexed += 1
            call = self._indexed
        index, status, save = self._cached_or_built(corpus)
        self.cache_status = status
        here = self.libraries()
        self.index_versions = index_cache.recorded_versions(self.cache_entry) if status == "hit" else here
        self._index = index
        try:
            order = DocOrder.of(corpus, index.id_rank, index.id_order)
            index.id_rank, index.id_order = order.rank, order.doc_of_rank  # kept in the cache entry: a warm
            # run neither sorts the ids again nor inverts their ranks
            self._searcher = self.engine.searcher(index, order)  # the compiled one adds index.bounds
        except BaseException:
            if save is not None:
                root, key, settings, staging, release = save
                if staging is not None:
                    staging.discard()  # the staged entry
                release()
            raise
        if save is not None:
            root, key, settings, staging, release = save

            def failed(exc: OSError) -> None:  # (on the writer thread; stats() waits for it first)
                with self._status_lock:
                    if self._indexed == call:  # (not a later index()'s: a benchmark reuses the retriever)
                        self.cache_status = f"{status}, not cached ({exc.strerror or exc})"
            index_cache.save_in_background(index, root, key, settings, staging, on_failure=failed,
                                           on_done=release, versions=here)  # written while we search

    def _cached_or_built(self, corpus: Corpus) -> tuple[SparseIndex, str, tuple | None]:
        """(index, cache status, (root, key, settings, staging, release) of the entry to write, or None).

        A miss is built under the entry's build lock (``harness.atomic.build_lock``), looked up again once
        it is taken: a process that finds another building the same entry waits for it (a warning says
        so) and then loads it, instead of building it a second time beside it (at MS MARCO's size, 6 GB
        each). ``release`` gives the lock back once the entry is written (index(): the background write)."""
        self.cache_entry = None
        if not self.use_cache:
            return self.build(corpus), "off", None
        root = index_cache.cache_root(self.cache_dir)
        settings = self.settings()
        key = index_cache.cache_key(self.corpus_id(corpus), settings, len(corpus))
        self.cache_entry = entry = index_cache.entry_dir(root, key)
        index, status = self._load(root, key, len(corpus))
        if index is not None:
            return index, status, None
        waited = []

        def waiting() -> None:
            waited.append(True)
            log.warning("%s is building the BM25 index %s; waiting for it", waited_holder(), entry)
        release = index_cache.build_lock(root, key, on_wait=waiting)
        try:
            if waited:
                index, again = self._load(root, key, len(corpus))
                if index is not None:
                    release()
                    return index, again, None
                status = again if again == "rebuilt" else status
            staging = index_cache.Staging.begin(root, key)
            try:
                index = self.build(corpus)
            except BaseException:
                if staging is not None:
                    staging.discard()
                raise
        except BaseException:
            release()
            raise
        return index, status, (root, key, settings, staging, release)

    def _load(self, root: Path, key: str, n_docs: int) -> tuple[SparseIndex | None, str]:
        """(the cached index of ``key``, ``hit``), else (None, ``built``), or (None, ``rebuilt``) when the
        entry was damaged or of another size (discarded)."""
        try:
            index = index_cache.load(root, key, postings_check=self.engine.check_postings)
        except index_cache.CacheCorrupt as exc:
            log.warning("BM25 index cache %s is damaged (%s); rebuilding it", index_cache.entry_dir(root, key), exc)
            index_cache.discard(root, key)
            return None, "rebuilt"
        if index is not None and index.n_docs != n_docs:
            index_cache.discard(root, key)
            return None, "rebuilt"
        return (index, "hit") if index is not None else (None, "built")

    def cache_written(self) -> None:
        """Wait until this index's cache entry is written (when it is being written)."""
        if self.cache_entry is not None:
            index_cache.wait(self.cache_entry)

    @property
    def sparse_index(self) -> SparseIndex:
        if self._index is None:
            raise RuntimeError("index() must be called before search()")
        return self._index

    def search(self, queries: Queries, k: int) -> Run:
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        if self._searcher is None:
            raise RuntimeError("index() must be called before search()")
        return self._searcher(queries, k)

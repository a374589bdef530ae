"""The ``sparse`` retriever: a sentence-transformers ``SparseEncoder`` (SPLADE-style) served from
an impact index.

    harness run --dataset nfcorpus --retriever sparse --param model=naver/splade-v3

index(corpus): the documents' term weights (encode_document), from the cache when an intact entry
exists for these model files, corpus and max_active_dims, else encoded in chunks (resumable) and
cached (retrievers/sparse/cache.py; under the entry's build lock, so that a second process missing it
meanwhile waits and loads it) -> impact index (impact_index.py; ``quantize`` optional).
search(queries, k): queries encoded (encode_query), scored by sparse dot product on the index,
threads and tie rule as BM25. See docs/sparse.md.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from pathlib import Path

import numpy as np

from harness.atomic import build_lock, waited_holder
from harness.cache import cache_dir as default_cache_dir
from harness.columns import inverse_permutation
from harness.datasets.corpus import Corpus, Queries
from harness.errors import HarnessError
from harness.plugin_code import entry_code
from harness.retriever import Retriever, flag
from harness.run import Run
from harness.versions import ENCODER_LIBRARIES, computed_with
from retrievers.bm25.search import DocOrder
from retrievers.dense.cache import cache_key, merge_versions
from retrievers.dense.model import ModelHandle
from retrievers.dense.texts import content_hash, document_texts, length_order
from retrievers.sparse.cache import CacheCorrupt, SparseRows, SparseWeightCache
from retrievers.sparse.encoder import SparseModel
from retrievers.sparse.impact_index import ImpactSearcher, build_impact_index, quantized, query_columns
from retrievers.sparse.impacts import check_quantize, default_threads

log = logging.getLogger(__name__)


def finite_rows(rows: SparseRows, ids, what: str) -> SparseRows:
    """``rows`` (one per id of ``ids``) when every weight is a finite number, else a HarnessError naming
    the first text's id: a NaN weight would make every score it enters NaN (never retrieved, silently)
    and an infinite one an infinite score, as the impacts reader refuses them in its files."""
    bad = ~np.isfinite(rows.weights)
    if bad.any():
        row = int(np.searchsorted(np.cumsum(rows.lengths), int(np.argmax(bad)), side="right"))
        raise HarnessError(f"the model gave {what} {str(ids[row])!r} a term weight that is not a finite number "
                           f"({float(rows.weights[int(np.argmax(bad))])})")
    return rows


def _positive_int(label: str, value, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{label} must be an integer >= 1, got {value!r}")
    return value


class SparseRetriever(Retriever):
    """``model`` (required: a folder or hub name), ``revision``, ``batch_size`` (32), ``device``
    (auto), ``max_active_dims`` (None: the model's own), ``quantize`` (None or an integer scale).
    Operation (not in :meth:`params`): ``cache`` / ``cache_dir`` (document weights; default
    ``<cache root>/sparse``), ``cache_chunk_size`` (documents per resumable part, 2048),
    ``n_threads`` (search threads)."""

    name = "sparse"

    def __init__(self, model: str | None = None, revision: str | None = None, batch_size: int = 32,
                 device: str = "auto", max_active_dims: int | None = None, quantize: int | str | None = None,
                 cache: bool = True, cache_dir: str | None = None, cache_chunk_size: int = 2048,
                 n_threads: int | None = None):
        if not model:
            raise HarnessError("the sparse retriever needs --param model=NAME_OR_FOLDER (a SparseEncoder)")
        self.batch_size = _positive_int("batch_size", batch_size)
        self.max_active_dims = _positive_int("max_active_dims", max_active_dims, allow_none=True)
        self.cache_chunk_size = _positive_int("cache_chunk_size", cache_chunk_size)
        self.quantize = check_quantize(quantize)
        self.n_threads = default_threads() if n_threads is None else _positive_int("n_threads", n_threads)
        self._code_key, self.cache_enabled = entry_code(type(self), flag("cache", cache))  # (see DenseRetriever)
        self._cache_dir = Path(os.path.expanduser(cache_dir)) if cache_dir else None
        self.handle = ModelHandle.resolve(str(model), revision, device)
        self.model = SparseModel(self.handle, self.batch_size, self.max_active_dims)
        self._searcher: ImpactSearcher | None = None
        self._stats: dict = {}
        self.cache_status: str | None = None  # "hit", "built", "resumed", "rebuilt" or "off" after index()

    @property
    def cache_dir(self) -> Path:
        return self._cache_dir or default_cache_dir("sparse")

    @property
    def model_sha256(self) -> str:
        return self.handle.digest(self.cache_dir / "model-digests.json" if self.cache_enabled else None)

    def params(self) -> dict:
        return {"model": self.handle.name, "model_source": self.handle.source, "model_revision": self.handle.revision,
                "model_sha256": self.model_sha256, "max_active_dims": self.max_active_dims,
                "quantize": self.quantize}

    def stats(self) -> dict:
        return {"device": self.handle.device or "not loaded", "batch_size": self.batch_size,
                "cache_dir": str(self.cache_dir) if self.cache_enabled else None, "cache": self.cache_status,
                **self._stats}

    def document_weights(self, corpus: Corpus) -> SparseRows:
        """The corpus's term weights (corpus order): cached, resumed or encoded. Encoded longest text
        first (:func:`length_order`, as the dense retriever) in chunks of ``cache_chunk_size``, cache
        or not: with a chunk size that is a multiple of ``batch_size``, the batches are those of one
        ``encode_document`` call on the whole corpus (sentence-transformers sorts by length too; up to
        the order of texts of equal length), whatever the chunk size and the cache. (A text's weights
        depend in their last float32 bits on its batch's padding.)"""
        texts = document_texts(corpus)
        order = length_order(texts)
        ids = corpus.ids

        def encode(start: int, stop: int) -> SparseRows:
            self._encoded_here = True
            rows = order[start:stop].tolist()
            return finite_rows(self.model.encode([texts[i] for i in rows], "document"), [ids[i] for i in rows],
                               "document")
        self._entry, self._encoded_here = None, False
        if not self.cache_enabled:
            self.cache_status = "off"
            size = self.cache_chunk_size
            parts = [encode(start, min(start + size, len(texts))) for start in range(0, len(texts), size)]
            return SparseRows.concat(parts).take(inverse_permutation(order))
        fields = {"kind": "sparse-documents", "model_sha256": self.model_sha256,
                  "corpus": content_hash(list(corpus.ids), texts), "max_active_dims": self.max_active_dims,
                  "encoding_order": "longest first",  # (parts of entries encoded in corpus order are never read)
                  **self._code_key}
        entry = SparseWeightCache(self.cache_dir / f"doc-{cache_key(fields)}", len(texts), self.cache_chunk_size,
                                  fields, order)
        self._entry = entry
        try:
            found = entry.load_complete()
        except CacheCorrupt:  # (discarded and encoded again under the lock, once looked at again there)
            found = None
        if found is not None:
            self.cache_status = "hit"
            return found
        # a miss is encoded under the entry's build lock (<cache_dir>/.locks/doc-<key>.lock): a second process
        # missing the same entry meanwhile waits for the first, then loads what it wrote (a hit); where no
        # lock can be taken (a read-only cache, a file system without locks) it goes ahead unlocked
        release = build_lock(entry.folder.parent / ".locks" / f"{entry.folder.name}.lock",
                             on_wait=lambda: log.warning("%s is encoding the documents of %s; "
                                                         "waiting for it", waited_holder(), entry.folder))
        try:
            return self._load_or_build(entry, encode, len(texts), order)
        finally:
            release()

    def _load_or_build(self, entry: SparseWeightCache, encode, n: int, order) -> SparseRows:
        """``entry``'s rows (a damaged entry discarded and encoded again), else encoded into it: under its
        build lock (:meth:`document_weights`)."""
        status = "built"
        try:
            found = entry.load_complete()
        except CacheCorrupt as exc:
            log.warning("sparse weight cache %s is damaged (%s); encoding again", entry.folder, exc)
            with contextlib.suppress(OSError):  # (a read-only cache: the build below fails and goes on without it)
                entry.discard()
            found, status = None, "rebuilt"
        if found is not None:
            self.cache_status = "hit"
            return found
        encoded: dict[int, SparseRows] = {}  # the chunks this call encoded, by first position
        encoder_failed: list[bool] = []  # (an OSError of the encoder itself is not the cache's)

        def encode_for_cache(start: int, stop: int) -> SparseRows:
            try:
                encoded[start] = encode(start, stop)
            except BaseException:
                encoder_failed.append(True)
                raise
            entry.add_versions(computed_with(ENCODER_LIBRARIES))  # (before build writes the part)
            return encoded[start]
        try:
            rows, reused = entry.build(encode_for_cache)
        except OSError as exc:
            # a read-only or full cache disk: encoded without the cache, as BM25 and dense go on; what is
            # encoded already (this call's chunks, an earlier run's parts) is not encoded again
            if encoder_failed:
                raise
            log.warning("could not write the sparse weight cache under %s: %s; encoding the documents without it",
                        entry.folder.parent, exc)
            rows, reused = self._uncached(entry, encoded, encode, n, order)
            self.cache_status = f"{'resumed' if reused and status == 'built' else status}, not cached " \
                                f"({exc.strerror or exc})"
        else:
            self.cache_status = "resumed" if reused and status == "built" else status
        self._stats["documents_from_parts"] = reused
        return rows

    def _uncached(self, entry: SparseWeightCache, encoded: dict, encode, n: int, order) -> tuple[SparseRows, int]:
        """(rows in corpus order, rows taken from an earlier run's parts) when the cache cannot be written:
        each chunk of the encoding order from ``encoded`` (this call's), else its part file, else encoded."""
        parts, reused = [], 0
        for i, start in enumerate(range(0, n, self.cache_chunk_size)):
            stop = min(start + self.cache_chunk_size, n)
            part = encoded.get(start)
            if part is None:
                part = entry.saved_part(i)
                reused += 0 if part is None else stop - start
            parts.append(part if part is not None else encode(start, stop))
        return SparseRows.concat(parts).take(inverse_permutation(order)), reused

    def _documents_versions(self) -> dict[str, list[str]] | None:
        """The versions of the libraries that encoded the documents' weights just read: a cache entry's (null
        for one written before they were recorded), this process's where it encoded them uncached (with an
        earlier run's parts it took, ``unknown`` where those record none)."""
        here = {name: [v] for name, v in computed_with(ENCODER_LIBRARIES).items()}
        if self._entry is None:
            return here if self._encoded_here else {}
        if "not cached" not in (self.cache_status or ""):
            return self._entry.versions()
        earlier = ((self._entry.versions() or {name: ["unknown"] for name in here})
                   if self._stats.get("documents_from_parts") else {})
        return merge_versions(earlier, here if self._encoded_here else {})

    def index(self, corpus: Corpus) -> None:
        started = time.perf_counter()
        self._stats = {}  # the stats are this corpus's: a benchmark reuses one retriever across datasets
        rows = self.document_weights(corpus)
        self._stats["documents_versions"] = self._documents_versions()
        doc_of_entry = np.repeat(np.arange(len(corpus), dtype=np.int64), rows.lengths)
        terms = [str(i) for i in range(int(rows.term_ids.max()) + 1 if len(rows.term_ids) else 0)]
        self._n_terms = len(terms)
        index = build_impact_index(len(corpus), doc_of_entry, rows.term_ids, quantized(rows.weights, self.quantize),
                                   terms)
        self._searcher = ImpactSearcher(index, DocOrder.of(corpus), self.n_threads)
        self._stats.update({"index_seconds": round(time.perf_counter() - started, 3),
                            "postings": int(index.indptr[-1]),
                            "mean_terms_per_document": round(float(rows.lengths.mean()) if len(rows.lengths) else 0.0, 2)})

    def search(self, queries: Queries, k: int) -> Run:
        if self._searcher is None:
            raise RuntimeError("index() must be called before search()")
        started = time.perf_counter()
        rows = finite_rows(self.model.encode(list(queries.texts), "query"), list(queries.ids), "query")
        term_ids = np.where(rows.term_ids < self._n_terms, rows.term_ids, -1)  # terms no document has
        offsets, term_ids, weights = query_columns(rows.offsets, term_ids, quantized(rows.weights, self.quantize))
        run = self._searcher(queries.ids, offsets, term_ids, weights, k)
        self._stats["query_seconds"] = round(time.perf_counter() - started, 3)
        return run

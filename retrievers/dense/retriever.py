"""The dense retriever: sentence-transformers embeddings, an embedding cache, exact top-k search."""

from __future__ import annotations

import contextlib
import logging
import os
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from harness import progress as progress_bars
from harness.atomic import build_lock, waited_holder
from harness.cache import cache_dir as default_cache_dir
from harness.datasets.corpus import Corpus, Queries
from harness.plugin_code import entry_code, unkeyed_code
from harness.run import Run
from harness.retriever import Retriever, flag
from harness.versions import ENCODER_LIBRARIES, computed_with
from retrievers.dense.cache import EmbeddingCache, cache_key, merge_versions
from retrievers.dense.exact import blas_threads, exact_search
from retrievers.dense.model import ModelHandle, gpu_request
from retrievers.dense.texts import content_hash, document_texts, length_order
from retrievers.topk import run_from_topk

SCORES = ("cos", "dot")
INDEXES = ("exact", "faiss")
ENCODERS = ("local", "ray")

log = logging.getLogger(__name__)


class _Quiet:
    def advance(self, n: float = 1) -> None:
        pass


@contextlib.contextmanager
def _progress(total: int, done: int, desc: str, enabled: bool, unit: str):
    """A harness progress bar (rich, on a terminal only) starting at ``done`` of ``total``."""
    if not enabled:
        yield _Quiet()
        return
    with progress_bars.task(desc, total=total, unit=unit) as bar:
        if done:
            bar.advance(done)
        yield bar


class DenseRetriever(Retriever):
    """Bi-encoder retrieval with a sentence-transformers model.

    Documents are encoded once (and cached on disk); each query's top ``k`` documents by cosine
    (``score='cos'``, the default, as MTEB) or dot product, found exactly over the whole corpus.
    See docs/dense.md for every parameter.
    """

    name = "dense"
    search_batch_size = None  # one search() call: query embeddings are cached per call, stats() describe it

    def __init__(self, model: str | ModelHandle | None = None, revision: str | None = None,
                 max_seq_length: int | None = None, query_prompt: str | None = None,
                 document_prompt: str | None = None, query_prompt_name: str | None = None,
                 document_prompt_name: str | None = None, normalize: bool = False, score: str = "cos",
                 batch_size: int = 32, device: str = "auto", cache: bool = True, cache_dir: str | None = None,
                 cache_chunk_size: int = 512, index: str = "exact", faiss_factory: str = "Flat",
                 faiss_nprobe: int | None = None, faiss_ef_search: int | None = None,
                 query_block: int = 256, doc_block: int = 16384, progress: bool = True, encoder: str = "local",
                 ray_workers: int | None = None, ray_address: str | None = None):
        if score not in SCORES:
            raise ValueError(f"score must be one of {', '.join(SCORES)}, got {score!r}")
        if index not in INDEXES:
            raise ValueError(f"index must be one of {', '.join(INDEXES)}, got {index!r}")
        for label, value in (("batch_size", batch_size), ("cache_chunk_size", cache_chunk_size),
                             ("query_block", query_block), ("doc_block", doc_block)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{label} must be an integer >= 1, got {value!r}")
        for label, value in (("faiss_nprobe", faiss_nprobe), ("faiss_ef_search", faiss_ef_search)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ValueError(f"{label} must be an integer >= 1, got {value!r}")
        if max_seq_length is not None and (not isinstance(max_seq_length, int) or max_seq_length < 1):
            raise ValueError(f"max_seq_length must be an integer >= 1, got {max_seq_length!r}")
        if encoder not in ENCODERS:
            raise ValueError(f"encoder must be one of {', '.join(ENCODERS)}, got {encoder!r}")
        if encoder == "ray" and not cache:
            raise ValueError("encoder='ray' writes the embedding cache: it needs cache=true")
        if ray_workers is not None and (not isinstance(ray_workers, int) or isinstance(ray_workers, bool)
                                        or ray_workers < 1):
            raise ValueError(f"ray_workers must be an integer >= 1, got {ray_workers!r}")
        self.encoder, self.ray_workers, self.ray_address = encoder, ray_workers, ray_address
        # (a plugin's subclass: its code keys the entries; a notebook's class caches none)
        self._code_key, self.cache_enabled = entry_code(type(self), flag("cache", cache))
        if encoder == "ray" and not self.cache_enabled:
            raise ValueError(f"encoder='ray' writes the embedding cache, and {unkeyed_code(type(self))}")
        self._cache_dir = Path(os.path.expanduser(cache_dir)) if cache_dir else None
        self.model = model if isinstance(model, ModelHandle) else ModelHandle.resolve(model, revision, device)
        self.query_prompt = self.model.prompt(query_prompt, query_prompt_name, "query")
        self.document_prompt = self.model.prompt(document_prompt, document_prompt_name, "document")
        self.max_seq_length_override = max_seq_length
        self.normalize, self.score, self.batch_size = flag("normalize", normalize), score, batch_size
        self.cache_chunk_size, self.index_kind, self.faiss_factory = cache_chunk_size, index, faiss_factory
        self.faiss_nprobe, self.faiss_ef_search = faiss_nprobe, faiss_ef_search
        self._docs_entry: Path | None = None
        self.query_block, self.doc_block, self.progress = query_block, doc_block, flag("progress", progress)
        self._docs: np.ndarray | None = None
        self._faiss = None
        self._stats: dict = {}

    # ----------------------------------------------------------------- description
    @property
    def cache_dir(self) -> Path:
        """``cache_dir`` as given, else ``<cache root>/embeddings`` read now (so that a benchmark's
        ``HARNESS_CACHE_DIR`` applies)."""
        return self._cache_dir or default_cache_dir("embeddings")

    @property
    def _digest_memo(self) -> Path | None:
        return self.cache_dir / "model-digests.json" if self.cache_enabled else None

    @property
    def model_sha256(self) -> str:
        return self.model.digest(self._digest_memo)

    def params(self) -> dict:
        return {
            "model": self.model.name,
            "model_source": self.model.source,
            "model_revision": self.model.revision,
            "model_sha256": self.model_sha256,
            "max_seq_length": self.max_seq_length,
            "query_prompt": self.query_prompt,
            "document_prompt": self.document_prompt,
            "normalize": self.normalize,
            "score": self.score,
            "index": self.index_kind if self.index_kind == "exact" else f"faiss:{self.faiss_factory}",
            **({"faiss_nprobe": self.faiss_nprobe, "faiss_ef_search": self.faiss_ef_search}
               if self.index_kind == "faiss" else {}),
        }

    def stats(self) -> dict:
        """Encode rates, cache hits/misses and timings of the latest index()/search() (JSON-able)."""
        return {"device": self.model.device or "not loaded", "model_load_seconds": round(self.model.load_seconds, 3),
                "batch_size": self.batch_size, "cache_dir": str(self.cache_dir) if self.cache_enabled else None,
                "blas_threads": blas_threads(), **self._stats}

    @property
    def max_seq_length(self) -> int:
        return self.model.max_seq_length(self.max_seq_length_override)

    # ----------------------------------------------------------------- encoding
    def _encoder(self, texts: Sequence[str], prompt: str | None, counter: dict):
        def encode_rows(rows: np.ndarray) -> np.ndarray:
            self.model.load()
            started = time.perf_counter()
            out = self.model.encode([texts[i] for i in rows.tolist()], prompt=prompt, batch_size=self.batch_size,
                                    normalize=self.normalize, max_seq_length=self.max_seq_length)
            counter["seconds"] += time.perf_counter() - started
            counter["encoded"] += len(rows)
            return out
        return encode_rows

    def _encode_on_ray(self, entry: EmbeddingCache, texts: Sequence[str], prompt: str | None) -> dict:
        """Fill ``entry``'s missing parts on a Ray cluster (see retrievers/dense/distributed.py)."""
        from retrievers.dense.distributed import encode_missing

        return encode_missing(entry, texts, self.model, prompt=prompt, batch_size=self.batch_size,
                              normalize=self.normalize, max_seq_length=self.max_seq_length,
                              workers=self.ray_workers, address=self.ray_address, digest_memo=self._digest_memo)

    def _check_ray_plan(self) -> None:
        """Before waiting for another process's encode of the same documents: the one-line error that
        :func:`~retrievers.dense.distributed.plan_workers` gives where this process's own actors could never
        start (a benchmark cell's task holding the only GPU of the local Ray the bench started), which the
        encode after the wait would give; that task would otherwise hold the GPU while it waits for the other
        cell, whose actors wait for the GPU: without end. Only where Ray is connected already (no Ray is
        started to wait)."""
        import sys

        ray = sys.modules.get("ray")
        if ray is not None and ray.is_initialized():
            from retrievers.dense.distributed import plan_workers

            plan_workers(ray, self.model.requested_device, self.ray_workers)

    def resources(self, cluster: dict) -> dict:
        """What a benchmark cell of this retriever asks a Ray cluster for (harness/bench/executors.py):
        one GPU when the model runs on one (``device='cuda'``, or ``auto`` on a cluster with GPUs).
        With ``encoder='ray'`` the encoding actors hold the CPUs / GPUs, so the cell reserves none
        (it would otherwise hold a CPU its own actors may be waiting for)."""
        if self.encoder == "ray":
            return {"num_cpus": 0}
        return gpu_request(self.model.requested_device, cluster)

    def encode(self, kind: str, ids: Sequence[str], texts: Sequence[str], prompt: str | None) -> np.ndarray:
        """Embeddings of ``texts`` (rows aligned with ``ids``), from the cache where possible.

        ``kind`` ('documents' or 'queries') names the cache entry and the stats keys.
        """
        n = len(texts)
        counter = {"seconds": 0.0, "encoded": 0}
        encode_rows = self._encoder(texts, prompt, counter)
        order = length_order(texts)
        status, reused = "off", 0
        if n == 0:
            status, out = "empty", np.empty((0, 0), dtype=np.float32)
        elif not self.cache_enabled:
            out = self._encode_uncached(n, order, encode_rows, kind)
        else:
            key_fields = {"kind": kind, "model_sha256": self.model_sha256, "max_seq_length": self.max_seq_length,
                          "prompt": prompt, "normalize": self.normalize,
                          "content_sha256": content_hash(ids, texts), "rows": n,
                          **self._code_key}
            entry = EmbeddingCache(self.cache_dir / f"{kind}-{cache_key(key_fields)}", n, order,
                                   self.cache_chunk_size, {**key_fields, "model": self.model.name})
            if kind == "documents":
                self._docs_entry = entry.folder
            out = entry.load_complete()
            release = None
            if out is None:  # (with encoder='ray' this process holds it while its actors write the parts)
                on_ray = self.encoder == "ray" and kind == "documents"

                def waiting() -> None:
                    if on_ray:  # (a cell holding the GPU the holder's actors wait for would wait without end)
                        self._check_ray_plan()
                    log.warning("%s is encoding the %s of %s; waiting for it", waited_holder(), kind, entry.folder)
                release = build_lock(entry.folder.parent / ".locks" / f"{entry.folder.name}.lock", on_wait=waiting)
                out = entry.load_complete()  # (complete now when another process encoded it meanwhile)
            try:
                if out is not None:
                    status, reused = "hit", n
                else:
                    if self.encoder == "ray" and kind == "documents":
                        reused = entry.cached_rows()
                        ray_stats = self._encode_on_ray(entry, texts, prompt)
                        counter["seconds"] += ray_stats["seconds"]
                        counter["encoded"] += ray_stats["rows"]
                        self._stats["documents_ray_actors"] = ray_stats["actors"]
                    start_rows = entry.cached_rows()
                    encoder_failed = []  # (an OSError of the encoder itself is not the cache's)
                    encoded_here: set[int] = set()  # the chunks this call encoded (their first row)
                    last: list = []  # the last chunk encoded, [rows, part]: its part may be the write that failed

                    def encode_for_cache(rows: np.ndarray) -> np.ndarray:
                        try:
                            part = encode_rows(rows)
                        except BaseException:
                            encoder_failed.append(True)
                            raise
                        entry.add_device(self._device_kind())  # (before build writes the part)
                        entry.add_versions(computed_with(ENCODER_LIBRARIES))
                        encoded_here.add(int(rows[0]))
                        last[:] = [rows, part]
                        return part

                    def done_part(i: int, rows: np.ndarray) -> tuple[np.ndarray | None, bool]:
                        """Chunk i's rows encoded already: (part, whether an earlier run encoded it), or
                        (None, False). A write that fails (a full disk: most often the join, which needs as
                        much space again) must not encode again what is encoded (an hour of encoding)."""
                        if last and np.array_equal(last[0], rows):
                            return last[1], False
                        part = entry.saved_part(i)
                        return part, part is not None and int(rows[0]) not in encoded_here
                    try:
                        with _progress(n, start_rows, f"encoding {kind}", self.progress, kind) as bar:
                            out, from_parts = entry.build(encode_for_cache, on_progress=bar.advance)
                    except OSError as exc:
                        # a read-only or full cache disk: encoded without the cache, as BM25, the corpus and
                        # the pipeline caches go on (not with encoder='ray': its actors write the cache)
                        if encoder_failed or (self.encoder == "ray" and kind == "documents"):
                            raise
                        log.warning("could not write the embedding cache under %s: %s; encoding the %s without it",
                                    entry.folder.parent, exc, kind)
                        if kind == "documents":
                            self._docs_entry = None  # (no faiss index file beside an entry that is not there)
                        taken = []
                        out = self._encode_uncached(n, order, encode_rows, kind, done_part, taken)
                        reused = sum(taken)
                        status = f"{'resumed' if reused else 'miss'}, not cached ({exc.strerror or exc})"
                    else:
                        reused = from_parts if self.encoder == "local" or kind != "documents" else reused
                        status = "resumed" if reused else "miss"
            finally:
                if release is not None:
                    release()
        here = computed_with(ENCODER_LIBRARIES)
        if n == 0:
            devices: list[str] | None = []
            versions: dict | None = {}
        elif status in ("hit", "resumed", "miss"):
            devices, versions = entry.devices(), entry.versions()
        else:  # not cached: this process's device, and the parts an earlier run encoded (see EmbeddingCache.devices)
            earlier = ((entry.devices() or ["unknown"]) if reused else []) if self.cache_enabled else []
            devices = sorted({*earlier, *([self._device_kind()] if counter["encoded"] else [])})
            before = (entry.versions() or {name: ["unknown"] for name in here}) if self.cache_enabled and reused else {}
            versions = merge_versions(before, {name: [v] for name, v in here.items()} if counter["encoded"] else {})
        seconds = counter["seconds"]
        self._stats.update({
            f"{kind}": n,
            f"{kind}_cache": status,
            f"{kind}_devices": devices,
            f"{kind}_versions": versions,
            f"{kind}_from_cache": reused,
            f"{kind}_encoded": counter["encoded"],
            f"{kind}_encode_seconds": round(seconds, 3),
            f"{kind}_per_second": round(counter["encoded"] / seconds, 1) if seconds > 0 else None,
        })
        return out

    def _device_kind(self) -> str:
        """The kind of device the loaded model encodes on, ``cpu``, ``cuda`` or ``mps`` (``cuda:1`` -> ``cuda``)."""
        return str(self.model.device).split(":", 1)[0]

    def _encode_uncached(self, n: int, order: np.ndarray, encode_rows, kind: str, done=None,
                         taken: list | None = None) -> np.ndarray:
        """The (n, dim) embeddings encoded in ``order``, a chunk of ``cache_chunk_size`` at a time (the
        batches of the cached path), held in memory. ``done(i, rows)``: chunk i's part when it is encoded
        already, (part or None, whether an earlier run encoded it); ``taken`` gets the number of rows of
        each chunk an earlier run encoded."""
        out = None
        with _progress(n, 0, f"encoding {kind}", self.progress, kind) as bar:
            for start in range(0, n, self.cache_chunk_size):
                rows = order[start:start + self.cache_chunk_size]
                part, earlier = done(start // self.cache_chunk_size, rows) if done is not None else (None, False)
                if part is None:
                    part = encode_rows(rows)
                elif taken is not None and earlier:
                    taken.append(len(rows))
                if out is None:
                    out = np.empty((n, part.shape[1]), dtype=np.float32)
                out[rows] = part
                bar.advance(len(rows))
        return out

    # ----------------------------------------------------------------- Retriever
    def index(self, corpus: Corpus) -> None:
        started = time.perf_counter()
        self._docs_entry = None
        self._stats = {}  # the stats are this corpus's: a benchmark reuses one retriever across datasets
        self._docs = self.encode("documents", corpus.ids, document_texts(corpus), self.document_prompt)
        self._ids = corpus.id_column  # the run vocabulary: no object array of the ids (harness.columns.IdColumn)
        # the ids' ranks and the document at each rank: runs carry them, and their id lookups
        # binary-search them (no dict of every id)
        self._rank, self._order = corpus.id_rank, corpus.id_order
        self._faiss = None
        self._stats["index_seconds"] = round(time.perf_counter() - started, 3)

    def search(self, queries: Queries, k: int) -> Run:
        if self._docs is None:
            raise RuntimeError("index() must be called before search()")
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k must be an integer >= 1, got {k!r}")
        started = time.perf_counter()
        q = self.encode("queries", queries.ids, queries.texts, self.query_prompt)
        search_started = time.perf_counter()
        cosine = self.score == "cos"
        if len(queries) == 0 or len(self._docs) == 0:  # (an empty corpus's matrix is (0, 0): no dim to check)
            idx, scores = np.empty((len(queries), 0), dtype=np.int64), np.empty((len(queries), 0), dtype=np.float32)
        elif self.index_kind == "faiss":
            if self._faiss is None:
                from retrievers.dense.faiss_index import FaissIndex

                cache_path = None
                if self._docs_entry is not None:
                    key = cache_key({"factory": self.faiss_factory, "score": self.score})
                    cache_path = self._docs_entry / f"faiss-{key}.index"
                self._faiss = FaissIndex(self._docs, cosine, self.faiss_factory, nprobe=self.faiss_nprobe,
                                         ef_search=self.faiss_ef_search, cache_path=cache_path)
                self._stats["faiss_index"] = self._faiss.stats()
                self._stats["faiss_versions"] = self._faiss.versions  # (what built it: a cached one's, null before)
            idx, scores = self._faiss.search(q, int(k), self._rank)
        else:
            idx, scores = exact_search(q, self._docs, int(k), self._rank, cosine=cosine, query_block=self.query_block,
                                       doc_block=self.doc_block)
        chosen = [row[row >= 0] for row in idx]
        values = [s[row >= 0].astype(np.float64) for row, s in zip(idx, scores)]
        run = run_from_topk(list(queries.ids), chosen, values, self._ids, id_rank=self._rank, id_order=self._order)
        self._stats["search_seconds"] = round(time.perf_counter() - search_started, 3)
        self._stats["query_seconds"] = round(time.perf_counter() - started, 3)
        return run

"""Optional faiss index (faiss-cpu) for large corpora, built from the cached embeddings and cached itself.

``factory`` is a faiss index-factory string with inner-product metric: ``Flat`` (exact, faiss's
own BLAS kernel), ``HNSW32`` (graph, M = 32) or ``IVF1024,Flat`` (inverted lists, nlist = 1024),
etc. Search-time knobs: ``nprobe`` (IVF lists visited per query) and ``ef_search`` (HNSW
candidate list size); ``None`` keeps faiss's default (nprobe 1, efSearch 16).

Building reads the (possibly memory-mapped) embeddings in blocks: training (IVF, PQ...) uses a
seeded sample of at most ``max(256 * nlist, 65536)`` rows (faiss itself uses at most 256 per
centroid), then every row is added block by block, normalized for cosine. With a ``cache_path`` the
built index is written there atomically (faiss's serialization, temp file + rename; its size and
CRC-32 in ``<name>.json`` beside it, written first, with the faiss-cpu version that built it, ``versions``:
in no key, reported as :attr:`FaissIndex.versions`) and read back on the next run instead of being
rebuilt when it matches that record (a damaged index is rebuilt, never read); the caller keys that
path by the embedding cache entry and the factory string and score (search-time knobs are not part
of the key).

faiss breaks score ties arbitrarily, so each query asks for ``k + tie_margin`` hits which are
then ordered by the evaluator's rule (score desc, id desc) and cut to k: the result matches exact
search unless more than ``tie_margin`` documents tie at the k-th score (or the index is approximate).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from harness.atomic import atomic_path, remove_abandoned, write_json
from harness.checksums import crc_record, matches_record_file
from harness.errors import HarnessError
from retrievers.dense.exact import l2_normalize, rerank_candidates

ADD_BLOCK = 65536


def _record_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def _intact(path: Path) -> bool:
    """Whether the index file has the size and CRC-32 recorded beside it (``<name>.json``, written
    before the index is renamed into place); a damaged or unrecorded index is rebuilt, not read."""
    return matches_record_file(path, _record_path(path))


def _faiss():
    try:
        import faiss
    except ImportError:
        raise HarnessError("index='faiss' needs the faiss-cpu package: pip install 'retrieval-harness[faiss]'") from None
    return faiss


def _rows(docs: np.ndarray, rows, cosine: bool) -> np.ndarray:
    block = np.asarray(docs[rows], dtype=np.float32)
    return np.ascontiguousarray(l2_normalize(block) if cosine else block)


def describe(index) -> dict:
    """The structural parameters of a built index (nlist, M, efConstruction...) and its size."""
    faiss = _faiss()
    info = {"ntotal": int(index.ntotal), "dim": int(index.d)}
    ivf = faiss.try_extract_index_ivf(index)
    if ivf is not None:
        info.update(nlist=int(ivf.nlist), nprobe=int(ivf.nprobe))
    hnsw = getattr(faiss.downcast_index(index), "hnsw", None)
    if hnsw is not None:
        info.update(M=int(hnsw.nb_neighbors(1)), efConstruction=int(hnsw.efConstruction),
                    efSearch=int(hnsw.efSearch))
    return info


class FaissIndex:
    def __init__(self, docs: np.ndarray, cosine: bool, factory: str = "Flat", tie_margin: int = 16,
                 nprobe: int | None = None, ef_search: int | None = None, cache_path: Path | None = None):
        faiss = _faiss()
        started = time.perf_counter()
        from harness.versions import computed_with, versions_in

        self.cache = "off"
        self.versions = computed_with(["faiss-cpu"])  # what built the index (a hit: the cached one's record)
        index = None
        if cache_path is not None and Path(cache_path).is_file():
            try:
                index = faiss.read_index(str(cache_path)) if _intact(Path(cache_path)) else None
            except RuntimeError:
                index = None  # unreadable: rebuilt and rewritten below
            if index is not None and (index.ntotal != docs.shape[0] or index.d != docs.shape[1]):
                index = None
            self.cache = "hit" if index is not None else "miss"
            if index is not None:
                self.versions = versions_in(_record_path(Path(cache_path)))  # (null: recorded before versions)
        elif cache_path is not None:
            self.cache = "miss"
        if index is None:
            index = self._build(faiss, docs, cosine, factory)
            if cache_path is not None:
                remove_abandoned(Path(cache_path).parent)  # a killed write's temporary index (Flat: every vector)
                with atomic_path(cache_path) as tmp:
                    faiss.write_index(index, str(tmp))
                    write_json(_record_path(Path(cache_path)), {**crc_record(tmp), "versions": self.versions})
        space = faiss.ParameterSpace()
        for name, value in (("nprobe", nprobe), ("efSearch", ef_search)):
            if value is not None:
                try:
                    space.set_index_parameter(index, name, int(value))
                except RuntimeError as exc:
                    raise HarnessError(f"faiss index {factory!r} has no parameter {name}: {exc}") from None
        self.index, self.cosine, self.tie_margin, self.n_docs = index, cosine, tie_margin, docs.shape[0]
        self.seconds = time.perf_counter() - started

    @staticmethod
    def _build(faiss, docs: np.ndarray, cosine: bool, factory: str):
        n, dim = docs.shape
        try:
            index = faiss.index_factory(dim, factory, faiss.METRIC_INNER_PRODUCT)
        except RuntimeError as exc:
            raise HarnessError(f"bad faiss index factory string {factory!r}: {exc}") from None
        if not index.is_trained:
            ivf = faiss.try_extract_index_ivf(index)
            size = min(n, max(256 * (ivf.nlist if ivf is not None else 0), 65536))
            sample = np.sort(np.random.default_rng(0).choice(n, size=size, replace=False)) if size < n else slice(None)
            try:
                index.train(_rows(docs, sample, cosine))
            except RuntimeError as exc:  # e.g. IVF with more lists than documents: a bad parameter, not a crash
                raise HarnessError(f"faiss index {factory!r} cannot be trained on {n} documents: {exc}") from None
        for start in range(0, n, ADD_BLOCK):
            index.add(_rows(docs, slice(start, start + ADD_BLOCK), cosine))
        return index

    def stats(self) -> dict:
        return {"cache": self.cache, "seconds": round(self.seconds, 3), **describe(self.index)}

    def search(self, queries: np.ndarray, k: int, id_rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(doc indices, scores), rows in canonical order; -1 marks a missing hit (approximate indexes)."""
        q = np.ascontiguousarray(l2_normalize(queries) if self.cosine else np.asarray(queries, dtype=np.float32))
        k = min(k, self.n_docs)
        scores, idx = self.index.search(q, min(k + self.tie_margin, self.n_docs))
        return rerank_candidates(idx, scores, k, id_rank)

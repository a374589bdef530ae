"""Exact top-k by inner product over the whole corpus, in blocks, with the evaluator's tie rule.

Scores are float32 inner products ``q . d`` (for cosine, of L2-normalized vectors, each divided
by ``max(||x||, 1e-12)`` as torch's ``F.normalize`` does and MTEB's ``cos_sim`` uses). The
documents (typically the embedding cache's memory-mapped ``embeddings.npy``) are read once, one
block at a time; memory is bounded by the block sizes and the number of queries, not by the corpus:
one document block, one (query block x document block) score matrix at a time, plus the running
top k per query.

Ranking is score descending, then document id descending (string order), selected with
``argpartition`` alone on the one int64 key per (score, id) of retrievers/topk.py
(:func:`retrievers.topk.sort_keys`); keys are unique, so the top k of the union of blocks is the
top k of the per-block top k's: for given scores the result does not depend on the block sizes. The
scores themselves can, in the last float32 bit: BLAS picks its kernels by the product's shape, so
another ``doc_block`` or ``query_block`` (how many queries share one product) can give a score one ulp
apart, and rarely another order of two near-equal documents (a scale review saw 5 of 160 random
comparisons of non-default block sizes rank two documents otherwise). The block sizes are operation
settings, not in the retriever's recorded ``params()``: keep the defaults where runs are compared.

Every document block is scored as ``width`` columns, ``width = min(doc_block, n_docs)`` rounded up to a
multiple of :data:`PAD` (a short block, the last one, padded with zero rows that are then dropped):
BLAS picks its kernel by the product's shape and computes the trailing ``width mod unroll`` columns
(and a short last block) with other code, whose float32 result can differ in the last bit, so
without it equal embeddings scored unequally and duplicated documents were ordered by that bit
instead of by id. With it all of a query's scores come from one kernel, in the same column class:
equal embeddings score equal wherever they lie in the corpus.

The number of threads BLAS splits a product among can move a score in the last float32 bit too (and
rarely the order of two near-equal documents; docs/dense.md): :func:`blas_threads` gives what sets it,
recorded in the dense retriever's ``stats()`` (metrics.json ``retriever_stats.blas_threads``).
"""

from __future__ import annotations

import contextlib
import mmap
import os

import numpy as np

from retrievers.topk import largest_keys, sort_keys

__all__ = ["blas_threads", "exact_search", "l2_normalize", "rerank_candidates", "sort_keys"]

EPS = 1e-12
PAD = 64  # a document block's width is a multiple of this (OpenBLAS unrolls by 4 to 16: divides it)
# What OpenBLAS (OPENBLAS_NUM_THREADS, then OMP_NUM_THREADS), MKL (MKL_NUM_THREADS, then OMP_NUM_THREADS)
# and torch read for their thread counts; unset, they use every CPU the process may run on.
BLAS_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def blas_threads() -> dict:
    """What sets the number of threads of the float32 products: ``{"cpus": n, "OMP_NUM_THREADS": value
    or None, ...}``, ``cpus`` the CPUs this process may run on (its affinity, as OpenBLAS counts them;
    ``os.cpu_count()`` where there is no affinity). Two machines with equal values run the products on
    as many threads; a dense run.trec that differs in the last bits of its scores between two results
    whose values differ is explained by them (docs/dense.md)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # (macOS, Windows)
        cpus = os.cpu_count()
    return {"cpus": cpus, **{name: os.environ.get(name) for name in BLAS_THREAD_VARS}}


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Each row of ``x`` divided by ``max(||row||, EPS)``, as float32 (a copy)."""
    x = np.array(x, dtype=np.float32)
    _l2_normalize_in_place(x)
    return x


def _l2_normalize_in_place(x: np.ndarray) -> None:
    """:func:`l2_normalize` of a float32 matrix of one's own, written over it (no second block of memory)."""
    norms = np.sqrt(np.einsum("ij,ij->i", x, x, dtype=np.float32))
    x /= np.maximum(norms, np.float32(EPS))[:, None]


def _release(docs: np.ndarray, start: int, stop: int) -> None:
    """Drop rows ``start:stop`` of a read-only memory map from this process's resident set
    (``madvise(MADV_DONTNEED)``): the pages stay in the kernel's page cache and are read back from
    it if touched again, but no longer count in the process's RSS, so a scan over a map of any size
    keeps RSS at one block. A no-op for in-memory arrays or where madvise is unavailable."""
    handle = getattr(docs, "_mmap", None)
    advice = getattr(mmap, "MADV_DONTNEED", None)
    if handle is None or advice is None or stop <= start or docs.flags.writeable:
        return
    base = np.frombuffer(handle, dtype=np.uint8).ctypes.data
    first = docs[start:stop].ctypes.data - base
    last = first + (stop - start) * docs.strides[0]
    first -= first % mmap.PAGESIZE  # whole pages only (a shared edge page is simply read again)
    with contextlib.suppress(OSError, ValueError):
        handle.madvise(advice, first, last - first)


def exact_search(queries: np.ndarray, docs: np.ndarray, k: int, id_rank: np.ndarray, cosine: bool = True,
                 query_block: int = 256, doc_block: int = 16384) -> tuple[np.ndarray, np.ndarray]:
    """Top ``k`` documents of each query: (doc indices, float32 scores), both (n_queries, k'),
    k' = min(k, n_docs), each row in canonical order (score desc, id desc).

    ``docs`` may be a read-only memory map (e.g. the embedding cache's ``embeddings.npy``): it is
    read once, one block of ``doc_block`` rows at a time, each block normalized once and scored
    against every query block, its pages released after use; once a query keeps ``k`` documents, only
    the scores of a block at or above its bar are keyed (:func:`_above_bar`: the same top k). Peak memory,
    whatever the corpus size: one block of documents, one (query block x document block) score matrix
    with its int64 keys (a first block's; later ones a mask, and the keys of the candidates only), and
    the running top k of every query (n_queries x 2k keys, indices and scores).
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if query_block < 1 or doc_block < 1:
        raise ValueError("block sizes must be >= 1")
    queries = np.asarray(queries, dtype=np.float32)
    n_docs = docs.shape[0]
    if queries.ndim != 2 or docs.ndim != 2 or queries.shape[1] != docs.shape[1]:
        raise ValueError(f"query and document embeddings disagree: {queries.shape} vs {docs.shape}")
    if len(id_rank) != n_docs:
        raise ValueError("id_rank needs one entry per document")
    if cosine:
        queries = l2_normalize(queries)
    k = min(k, n_docs)
    n_q = queries.shape[0]
    id_rank = np.asarray(id_rank, dtype=np.int64)
    if n_q == 0 or k == 0:
        return np.empty((n_q, k), dtype=np.int64), np.empty((n_q, k), dtype=np.float32)
    run_keys = np.empty((n_q, 0), dtype=np.int64)
    run_idx = np.empty((n_q, 0), dtype=np.int64)
    run_scores = np.empty((n_q, 0), dtype=np.float32)
    width = -(-min(doc_block, n_docs) // PAD) * PAD  # one product shape for every block (module docstring)
    for d0 in range(0, n_docs, doc_block):
        d1 = min(d0 + doc_block, n_docs)
        block = np.zeros((width, docs.shape[1]), dtype=np.float32)  # a copy: the mapped pages can go at once
        block[:d1 - d0] = docs[d0:d1]
        _release(docs, d0, d1)
        if cosine:
            _l2_normalize_in_place(block)
        merged = []
        for q0 in range(0, n_q, query_block):
            q1 = min(q0 + query_block, n_q)
            scores = (queries[q0:q1] @ block.T)[:, :d1 - d0]
            found = _above_bar(scores, run_keys[q0:q1], run_scores[q0:q1], k)
            if found is None:  # every score of the block is a candidate
                keys = sort_keys(scores, id_rank[d0:d1])
                top = largest_keys(keys, k)
                keys, top_idx, top_scores = (np.take_along_axis(keys, top, 1), top + d0,
                                             np.take_along_axis(scores, top, 1))
            else:
                keys, top_idx, top_scores = _candidates(scores, *found, id_rank, d0)
            keys = np.concatenate([run_keys[q0:q1], keys], axis=1)
            idx = np.concatenate([run_idx[q0:q1], top_idx], axis=1)
            vals = np.concatenate([run_scores[q0:q1], top_scores], axis=1)
            keep = largest_keys(keys, k)
            merged.append((np.take_along_axis(keys, keep, 1), np.take_along_axis(idx, keep, 1),
                           np.take_along_axis(vals, keep, 1)))
        run_keys, run_idx, run_scores = (np.concatenate(parts) for parts in zip(*merged))
    order = np.argsort(run_keys, axis=1)[:, ::-1]
    return np.take_along_axis(run_idx, order, 1), _nan_as_minus_one(np.take_along_axis(run_scores, order, 1))


CANDIDATE_SHARE = 0.25  # above this share of a block's scores at or above the bars, every score is keyed


def _above_bar(scores: np.ndarray, run_keys: np.ndarray, run_scores: np.ndarray, k: int
               ) -> tuple[np.ndarray, np.ndarray] | None:
    """(rows, columns) of the scores of a block that can enter the top ``k`` kept so far, in row order, or None
    when every score must be keyed (a row keeps fewer than ``k``, or the candidates are over
    :data:`CANDIDATE_SHARE` of the block). The bar of a row is the score of its smallest kept key (NaN as -1,
    as :func:`sort_keys` ranks it): a score below it as a float32 has a smaller key than all ``k`` kept, so
    it cannot enter; a score equal to it may (on its id). The top k is the same as keying every score;
    only the work differs (1M-2M documents, top 10: almost no score of a later block reaches the bar)."""
    if run_keys.shape[1] < k:
        return None
    worst = np.argmin(run_keys, axis=1)
    bar = run_scores[np.arange(len(worst)), worst]
    bar = np.where(np.isnan(bar), np.float32(-1.0), bar).astype(np.float32)
    hit = scores >= bar[:, None]
    low = np.flatnonzero(bar <= -1.0)  # a NaN score ranks as -1: at or above such a bar
    if len(low):
        hit[low] |= np.isnan(scores[low])
    found = np.flatnonzero(hit)  # (np.nonzero of the 2-D mask took ~15x as long: 11 ms per 256 x 16,384 block)
    return None if len(found) > CANDIDATE_SHARE * scores.size else np.divmod(found, scores.shape[1])


def _candidates(scores: np.ndarray, rows: np.ndarray, cols: np.ndarray, id_rank: np.ndarray, d0: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(keys, document indices, scores) of the candidates ``(rows, cols)`` of a block starting at document
    ``d0``, one row per query, padded with the smallest int64 key (below every real key: never kept over
    the ``k`` kept)."""
    n_rows = scores.shape[0]
    counts = np.bincount(rows, minlength=n_rows)
    width = int(counts.max()) if len(rows) else 0
    at = np.arange(len(rows)) - (np.cumsum(counts) - counts)[rows]  # each candidate's place in its row
    keys = np.full((n_rows, width), np.iinfo(np.int64).min, dtype=np.int64)
    idx = np.zeros((n_rows, width), dtype=np.int64)
    vals = np.zeros((n_rows, width), dtype=np.float32)
    values = scores[rows, cols]
    keys[rows, at] = sort_keys(values, id_rank[d0 + cols])
    idx[rows, at] = cols + d0
    vals[rows, at] = values
    return keys, idx, vals


def _nan_as_minus_one(scores: np.ndarray) -> np.ndarray:
    """A NaN score (a NaN or infinite embedding) is -1, in the ranking (:func:`sort_keys`) and in the
    run, as MTEB's and BEIR's exact search set it (``cos_scores[torch.isnan(cos_scores)] = -1``)."""
    scores[np.isnan(scores)] = -1.0
    return scores


def rerank_candidates(cand_idx: np.ndarray, cand_scores: np.ndarray, k: int,
                      id_rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Order candidate lists (e.g. from faiss; -1 = no hit) by the tie rule and keep the top ``k``."""
    cand_idx = np.asarray(cand_idx, dtype=np.int64)
    valid = cand_idx >= 0
    ranks = np.where(valid, np.asarray(id_rank, dtype=np.int64)[np.where(valid, cand_idx, 0)], 0)
    keys = sort_keys(cand_scores, ranks)
    keys[~valid] = np.iinfo(np.int64).min
    order = np.argsort(keys, axis=1)[:, ::-1][:, :k]
    return (np.take_along_axis(cand_idx, order, 1),
            _nan_as_minus_one(np.take_along_axis(np.asarray(cand_scores, np.float32), order, 1)))

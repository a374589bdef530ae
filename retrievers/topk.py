"""Top-k selection with the evaluator's tie rule, and Run assembly.

The ranking is score descending, then document id descending in string order (the evaluator's
and trec_eval's order; scores compared as float32). Every top k of the package -- BM25 (here and
in C, retrievers/bm25/native/topk.c), dense (retrievers/dense/exact.py), rank-bm25 -- selects by
one int64 key per (score, document)::

    key = monotone_int32(float32(score)) * 2**32 + rank_of_id

``monotone_int32`` maps float32 bits to integers in the same order (negative floats have their 31
low bits flipped; -0.0 is first turned into +0.0, NaN counts as -1 as MTEB's search sets it) and
``rank_of_id`` is the id's rank in string order (:func:`string_ranks`). Keys are distinct, so the
k largest are the top k with no tie handling at the boundary, and the top k of the union of blocks
is the top k of the per-block top k's.
"""

from __future__ import annotations

import numpy as np

from harness.columns import object_array
from harness.run import Run


def string_ranks(ids: np.ndarray) -> np.ndarray:
    """Rank of each id in string order, so ties can be broken on integers (higher = later string)."""
    if not isinstance(ids, np.ndarray):  # a list as such would sort as fixed-width strings: "a\0" equal to "a"
        ids = object_array(ids)
    ranks = np.empty(len(ids), dtype=np.int64)
    ranks[np.argsort(ids, kind="stable")] = np.arange(len(ids))
    return ranks


def sort_keys(scores: np.ndarray, id_rank: np.ndarray) -> np.ndarray:
    """The int64 key of each score (any shape; ``id_rank`` broadcast against it): integer order is
    the ranking order (see the module docstring)."""
    s = np.asarray(scores, dtype=np.float32) + np.float32(0.0)  # -0.0 -> +0.0 (and a copy)
    s[np.isnan(s)] = -1.0
    bits = s.view(np.int32)
    mono = np.where(bits < 0, bits ^ np.int32(0x7FFFFFFF), bits).astype(np.int64)
    return (mono << 32) | np.asarray(id_rank, dtype=np.int64)


def largest_keys(keys: np.ndarray, k: int) -> np.ndarray:
    """Column indices of the ``k`` largest keys of each row of a 2-D array, unordered."""
    n = keys.shape[1]
    if k == 0:  # (argpartition has no kth n)
        return np.empty((keys.shape[0], 0), dtype=np.int64)
    if k >= n:
        return np.broadcast_to(np.arange(n), keys.shape).copy()
    return np.argpartition(keys, n - k, axis=1)[:, n - k:]


def ranked(keys: np.ndarray, k: int) -> np.ndarray:
    """Column indices of the ``k`` largest keys of each row, in ranking order (largest first)."""
    top = largest_keys(keys, k)
    order = np.argsort(np.take_along_axis(keys, top, 1), axis=1)[:, ::-1]
    return np.take_along_axis(top, order, 1)


def top_k(scores: np.ndarray, k: int, id_rank: np.ndarray, min_score: float | None = None) -> list[np.ndarray]:
    """Indices of the top ``k`` columns of each row: score descending, then document id descending.

    ``id_rank`` is :func:`string_ranks` of the column ids. Columns scoring ``<= min_score`` (e.g.
    documents BM25 did not match) are left out when ``min_score`` is given.
    """
    scores = np.atleast_2d(scores)
    k = min(k, scores.shape[1])
    if k == 0:
        return [np.empty(0, dtype=np.int64) for _ in range(scores.shape[0])]
    chosen = ranked(sort_keys(scores, id_rank[None, :]), k)
    if min_score is None:
        return list(chosen)
    return [row[s[row] > min_score] for row, s in zip(chosen, scores)]


def top_k_positive(scores: np.ndarray, k: int, id_rank: np.ndarray) -> np.ndarray:
    """:func:`top_k` of one row of float32 scores that are all > 0 (e.g. BM25's matched documents)."""
    scores = np.asarray(scores)
    if scores.dtype != np.float32 or scores.ndim != 1:
        raise ValueError(f"need a 1-D float32 array, got {scores.dtype} with shape {scores.shape}")
    if len(scores) and not scores.min() > 0:
        raise ValueError("every score must be > 0 (filter the rest first)")
    return ranked(sort_keys(scores, id_rank)[None, :], k)[0]


def run_from_topk(query_ids: list[str], chosen: list[np.ndarray], scores: list[np.ndarray],
                  doc_ids: np.ndarray, id_index: dict | None = None, id_rank: np.ndarray | None = None,
                  id_order: np.ndarray | None = None) -> Run:
    """Assemble a Run from per-query document indices (into ``doc_ids``) and their scores;
    ``id_rank`` / ``id_order``: the ids' string ranks and their inverse, when known (the run's id
    lookups then need no id -> position dict: Run.from_arrays's ``vocab_rank`` / ``vocab_order``)."""
    lengths = np.array([len(c) for c in chosen], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    codes = np.concatenate(chosen) if chosen else np.empty(0, dtype=np.int64)
    values = np.concatenate(scores) if scores else np.empty(0, dtype=np.float64)
    return Run.from_arrays(query_ids, offsets, codes, values, doc_ids, id_index, vocab_rank=id_rank,
                           vocab_order=id_order)

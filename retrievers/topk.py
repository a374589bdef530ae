"""Top-k selection over score matrices with the evaluator's tie rule, and Run assembly."""

from __future__ import annotations

import numpy as np

from harness.run import Run


def string_ranks(ids: np.ndarray) -> np.ndarray:
    """Rank of each id in string order, so ties can be broken on integers (higher = later string)."""
    ranks = np.empty(len(ids), dtype=np.int64)
    ranks[np.argsort(ids, kind="stable")] = np.arange(len(ids))
    return ranks


def top_k(scores: np.ndarray, k: int, id_rank: np.ndarray, min_score: float | None = None) -> list[np.ndarray]:
    """Indices of the top ``k`` columns of each row: score descending, then document id descending.

    ``id_rank`` is :func:`string_ranks` of the column ids. Columns scoring ``<= min_score`` (e.g.
    documents BM25 did not match) are left out when ``min_score`` is given.
    """
    scores = np.atleast_2d(scores)
    n_rows, n_cols = scores.shape
    k = min(k, n_cols)
    if k == 0:
        return [np.empty(0, dtype=np.int64) for _ in range(n_rows)]
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    kth = np.take_along_axis(scores, part, axis=1).min(axis=1)
    boundary_ties = (scores >= kth[:, None]).sum(axis=1) > k
    out = []
    for row in range(n_rows):
        s = scores[row]
        cand = np.flatnonzero(s >= kth[row]) if boundary_ties[row] else part[row]
        order = np.lexsort((-id_rank[cand], -s[cand]))[:k]
        chosen = cand[order]
        if min_score is not None:
            chosen = chosen[s[chosen] > min_score]
        out.append(chosen)
    return out


def top_k_positive(scores: np.ndarray, k: int, id_rank: np.ndarray) -> np.ndarray:
    """:func:`top_k` for one row of float32 scores that are all > 0 (e.g. BM25's matched documents).

    Positive finite float32 values order as their bit patterns do, so ``bits << 32 | id_rank`` is
    one int64 key per column ordering (score desc, id desc) as plain integer order; keys are
    distinct, so the k largest need no tie handling at the boundary.
    """
    scores = np.asarray(scores)
    if scores.dtype != np.float32 or scores.ndim != 1:
        raise ValueError(f"need a 1-D float32 array, got {scores.dtype} with shape {scores.shape}")
    if len(scores) and not scores.min() > 0:
        raise ValueError("every score must be > 0 (filter the rest first)")
    keys = (scores.view(np.int32).astype(np.int64) << 32) | np.asarray(id_rank, dtype=np.int64)
    if k < len(keys):
        top = np.argpartition(keys, len(keys) - k)[len(keys) - k:]
        return top[np.argsort(keys[top])[::-1]]
    return np.argsort(keys)[::-1]


def run_from_topk(query_ids: list[str], chosen: list[np.ndarray], scores: list[np.ndarray],
                  doc_ids: np.ndarray, id_index: dict | None = None) -> Run:
    """Assemble a Run from per-query document indices (into ``doc_ids``) and their scores."""
    lengths = np.array([len(c) for c in chosen], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    codes = np.concatenate(chosen) if chosen else np.empty(0, dtype=np.int64)
    values = np.concatenate(scores) if scores else np.empty(0, dtype=np.float64)
    return Run.from_arrays(query_ids, offsets, codes, values, doc_ids, id_index)

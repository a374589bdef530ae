"""Score normalisations, per query and per run, as ranx defines them.

Each function takes a canonical :class:`~harness.run.Run` (score descending, ties by document id
descending) and returns the normalised score of every entry, aligned with ``run.scores``. For one
query with scores ``s_1 >= ... >= s_n`` (its entries in canonical order, position ``i`` from 0):

* ``none``     ``s``
* ``min-max``  ``(s - min) / max(max - min, 1e-9)``
* ``max``      ``s / max(max, 1e-9)``
* ``sum``      ``(s - min) / max(sum(s) - n * min, 1e-9)``
* ``zmuv``     ``(s - mean) / max(std, 1e-9)`` (z-score; population std, ``sqrt(sum((s - mean)^2) / n)``)
* ``rank``     ``1 - i / n`` (1 for the top document, ``1/n`` for the last; uses the order only)

The ``1e-9`` floors keep a query whose scores are all equal (or a ``max`` below 1e-9) finite, as in
ranx. Sums and means add the scores one by one in canonical order, the order ranx adds them in, so
the values equal ranx's to the last bit. A document that a run did not retrieve has no normalised
score in that run: the fusion methods decide what it counts as (see ``harness.fusion.methods``).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from harness.run import Run

FLOOR = 1e-9


def _starts_lengths(run: Run) -> tuple[np.ndarray, np.ndarray]:
    return run.offsets[:-1], np.diff(run.offsets)


def _per_entry(run: Run, per_query: np.ndarray) -> np.ndarray:
    """Broadcast one value per query to that query's entries."""
    return np.repeat(per_query, np.diff(run.offsets))


def _segment_reduce(ufunc: np.ufunc, run: Run, values: np.ndarray, empty: float) -> np.ndarray:
    """``ufunc.reduce`` over each query's entries (``empty`` for a query without entries)."""
    starts, lengths = _starts_lengths(run)
    out = np.full(len(lengths), empty, dtype=np.float64)
    filled = lengths > 0
    if filled.any():
        out[filled] = ufunc.reduceat(values, starts[filled])
    return out


def sequential_sums(run: Run, values: np.ndarray) -> np.ndarray:
    """Each query's sum of ``values``, added left to right in entry order (not numpy's pairwise sum).

    Vectorised across queries: one step per position, over the queries at least that long.
    """
    starts, lengths = _starts_lengths(run)
    order = np.argsort(-lengths, kind="stable")  # longest first: the active queries are a prefix
    sorted_starts, sorted_lengths = starts[order], lengths[order]
    acc = np.zeros(len(lengths), dtype=np.float64)
    n_active = len(lengths)
    for position in range(int(lengths.max()) if len(lengths) else 0):
        while sorted_lengths[n_active - 1] <= position:
            n_active -= 1
        acc[:n_active] += values[sorted_starts[:n_active] + position]
    sums = np.empty_like(acc)
    sums[order] = acc
    return sums


def no_norm(run: Run) -> np.ndarray:
    """``s``."""
    return run.scores.copy()


def min_max_norm(run: Run) -> np.ndarray:
    """``(s - min) / max(max - min, 1e-9)`` per query."""
    low = _per_entry(run, _segment_reduce(np.minimum, run, run.scores, 0.0))
    high = _per_entry(run, _segment_reduce(np.maximum, run, run.scores, 0.0))
    return (run.scores - low) / np.maximum(high - low, FLOOR)


def max_norm(run: Run) -> np.ndarray:
    """``s / max(max, 1e-9)`` per query."""
    high = _per_entry(run, _segment_reduce(np.maximum, run, run.scores, 0.0))
    return run.scores / np.maximum(high, FLOOR)


def sum_norm(run: Run) -> np.ndarray:
    """``(s - min) / max(sum(s) - n * min, 1e-9)`` per query."""
    low = _segment_reduce(np.minimum, run, run.scores, 0.0)
    denominator = np.maximum(sequential_sums(run, run.scores) - low * np.diff(run.offsets), FLOOR)
    return (run.scores - _per_entry(run, low)) / _per_entry(run, denominator)


def zmuv_norm(run: Run) -> np.ndarray:
    """``(s - mean) / max(std, 1e-9)`` per query (zero mean, unit variance; population std)."""
    lengths = np.maximum(np.diff(run.offsets), 1)
    mean = _per_entry(run, sequential_sums(run, run.scores) / lengths)
    deviation = run.scores - mean
    std = np.sqrt(sequential_sums(run, deviation * deviation) / lengths)
    return deviation / _per_entry(run, np.maximum(std, FLOOR))


def positions(run: Run) -> np.ndarray:
    """The 0-based position of every entry within its query (its rank - 1 in a canonical run)."""
    return np.arange(len(run.scores)) - np.repeat(run.offsets[:-1], np.diff(run.offsets))


def rank_norm(run: Run) -> np.ndarray:
    """``1 - i / n`` for the entry at position ``i`` (from 0) of a query with ``n`` entries."""
    return 1.0 - positions(run) / _per_entry(run, np.diff(run.offsets).astype(np.float64))


NORMALIZERS: dict[str, Callable[[Run], np.ndarray]] = {
    "none": no_norm, "min-max": min_max_norm, "max": max_norm, "sum": sum_norm, "zmuv": zmuv_norm,
    "rank": rank_norm,
}


def normalize(run: Run, norm: str) -> np.ndarray:
    """The ``norm``-normalised scores of the canonical ``run``'s entries (see the module docstring)."""
    return NORMALIZERS[norm](run)

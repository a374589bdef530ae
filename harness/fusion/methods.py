"""Fusion methods: combine each document's (normalised) scores from several runs, as ranx defines them.

For one query, ``R(d)`` is the set of runs that retrieved document ``d``, ``s_r(d)`` its normalised
score in run ``r``, ``rank_r(d)`` its 1-based rank in run ``r`` (canonical order: score descending,
ties by document id descending), and ``w_r`` the weight of run ``r``:

* ``rrf``      ``sum_{r in R(d)} w_r / (k + rank_r(d))``  (Cormack et al. 2009; ``w_r = 1`` as in ranx)
* ``combsum``  ``sum_{r in R(d)} s_r(d)``  (Fox & Shaw 1993)
* ``combmnz``  ``|R(d)| * sum_{r in R(d)} s_r(d)``
* ``combmax``  ``max_{r in R(d)} s_r(d)``  (with -1e9 for a run that missed ``d``, see below)
* ``combmin``  ``min_{r in R(d)} s_r(d)``  (with +1e9 for a run that missed ``d``)
* ``wsum``     ``sum_{r in R(d)} w_r * s_r(d)``

A document a run did not retrieve therefore counts as 0 in the sums (ranx: ``res.get(doc, 0.0)``),
is not counted by CombMNZ's ``|R(d)|``, and counts as ranx's sentinel -1e9 in CombMAX and +1e9 in
CombMIN (so it is left out unless the scores reach beyond the sentinel: ``max`` normalisation of
negative scores divides by its 1e-9 floor, and CombMAX then gives -1e9 to a document that some run
missed). Sums run over the runs in the order given, starting from 0, as ranx adds them, so the
fused values equal ranx's exactly.

Each function takes the number of (query, document) pairs of the fused run, one ``(pairs, values)``
per run (the fused pair index of each of that run's entries, and the entries' normalised scores, or
for RRF their 0-based positions) and the weights; a pair occurs at most once per run.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

Contribution = tuple[np.ndarray, np.ndarray]


def _weighted_sum(n_pairs: int, contributions: Sequence[Contribution], weights: Sequence[float]) -> np.ndarray:
    total = np.zeros(n_pairs, dtype=np.float64)
    for (pairs, values), weight in zip(contributions, weights):
        total[pairs] += weight * values
    return total


def rrf(n_pairs: int, contributions: Sequence[Contribution], weights: Sequence[float], k: int = 60) -> np.ndarray:
    """``sum_{r in R(d)} w_r / (k + rank_r(d))``; ``values`` are the 0-based positions (rank - 1).

    ``k + rank`` is added exactly in uint64, then divided (as ranx adds integers): k may be up to
    2^63 - 1, where int64 ``k + rank`` wrapped to a negative number (negative scores, ranking reversed).
    """
    reciprocal = [(pairs, 1.0 / (np.uint64(k) + (positions + 1).astype(np.uint64)))
                  for pairs, positions in contributions]
    return _weighted_sum(n_pairs, reciprocal, weights)


def combsum(n_pairs: int, contributions: Sequence[Contribution], weights: Sequence[float]) -> np.ndarray:
    """``sum_{r in R(d)} s_r(d)`` (weights not used)."""
    return _weighted_sum(n_pairs, contributions, [1.0] * len(contributions))


def combmnz(n_pairs: int, contributions: Sequence[Contribution], weights: Sequence[float]) -> np.ndarray:
    """``|R(d)| * sum_{r in R(d)} s_r(d)``: CombSUM times the number of runs that retrieved ``d``."""
    hits = np.zeros(n_pairs, dtype=np.int64)
    for pairs, _ in contributions:
        hits[pairs] += 1
    return combsum(n_pairs, contributions, weights) * hits


MISSING_MAX, MISSING_MIN = -1e9, 1e9  # ranx's values for a document a run did not retrieve


def _extreme(n_pairs: int, contributions: Sequence[Contribution], pick: np.ufunc, missing: float) -> np.ndarray:
    best = np.full(n_pairs, -np.inf if missing < 0 else np.inf, dtype=np.float64)
    hits = np.zeros(n_pairs, dtype=np.int64)
    for pairs, values in contributions:
        best[pairs] = pick(best[pairs], values)
        hits[pairs] += 1
    some_missed = hits < len(contributions)
    best[some_missed] = pick(best[some_missed], missing)
    return best


def combmax(n_pairs: int, contributions: Sequence[Contribution], weights: Sequence[float]) -> np.ndarray:
    """``max_{r in R(d)} s_r(d)``, and -1e9 for each run that missed ``d``."""
    return _extreme(n_pairs, contributions, np.maximum, MISSING_MAX)


def combmin(n_pairs: int, contributions: Sequence[Contribution], weights: Sequence[float]) -> np.ndarray:
    """``min_{r in R(d)} s_r(d)``, and +1e9 for each run that missed ``d``."""
    return _extreme(n_pairs, contributions, np.minimum, MISSING_MIN)


def wsum(n_pairs: int, contributions: Sequence[Contribution], weights: Sequence[float]) -> np.ndarray:
    """``sum_{r in R(d)} w_r * s_r(d)``."""
    return _weighted_sum(n_pairs, contributions, weights)


COMBINERS: dict[str, Callable[..., np.ndarray]] = {
    "rrf": rrf, "combsum": combsum, "combmnz": combmnz, "combmax": combmax, "combmin": combmin, "wsum": wsum,
}

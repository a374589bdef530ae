"""Average precision: at k (MAP@k) and over the whole ranking (AP)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric, safe_divide


def precision_at_relevant_ranks(j: Judgments, k: int | None) -> tuple[np.ndarray, np.ndarray]:
    """For each relevant hit within the cutoff: (query index, precision at its rank)."""
    mask = j.relevant_hits(k)
    query, rank = j.hit_query[mask], j.hit_rank[mask]
    order = np.lexsort((rank, query))
    query, rank = query[order], rank[order]
    nth_relevant = np.arange(len(query)) - np.searchsorted(query, query, side="left") + 1
    return query, nth_relevant / rank


@dataclass(frozen=True)
class MAP(Metric):
    """AP@k = (1 / R) * sum_{i<=k, doc i relevant} P@i,  R = all relevant documents of the query.

    The mean over queries is MAP@k. Dividing by all R (not min(R, k)) is trec_eval's ``map_cut``.
    """

    family = "MAP"
    aliases = ("map_cut", "AP_cut")
    whole_ranking_form = "AP"  # "MAP" / "map" without a cutoff

    def __call__(self, j: Judgments) -> np.ndarray:
        query, precision = precision_at_relevant_ranks(j, self.k)
        return safe_divide(np.bincount(query, weights=precision, minlength=j.n_queries), j.n_relevant)


@dataclass(frozen=True)
class AP(Metric):
    """AP = (1 / R) * sum_{i, doc i relevant} P@i over the whole ranking (trec_eval's ``map``).

    R = all relevant documents of the query; relevant documents never retrieved add 0. The mean over
    queries is MAP. ``MAP`` or ``map`` without a cutoff name this metric; ``AP@k`` is ``MAP@k``.
    """

    family = "AP"
    needs_k = False
    cutoff_form = "MAP"

    def __call__(self, j: Judgments) -> np.ndarray:
        query, precision = precision_at_relevant_ranks(j, None)
        return safe_divide(np.bincount(query, weights=precision, minlength=j.n_queries), j.n_relevant)

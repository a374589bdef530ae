"""Reciprocal rank: at k (MRR@k) and over the whole ranking (RR)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric


def reciprocal_first_rank(j: Judgments, k: int | None) -> np.ndarray:
    """Per query, 1 / (rank of the first relevant document within the cutoff), 0 if there is none."""
    mask = j.relevant_hits(k)
    first = np.full(j.n_queries, np.inf)
    np.minimum.at(first, j.hit_query[mask], j.hit_rank[mask])
    return 1.0 / first


@dataclass(frozen=True)
class MRR(Metric):
    """RR@k = 1 / (rank of the first relevant document) if that rank <= k, else 0; MRR@k is the mean.

    ``MRR`` without a cutoff names ``RR`` (in a metric list: ``MRR@k`` at every k, as ``MAP``).
    """

    family = "MRR"
    whole_ranking_form = "RR"  # "MRR" / "mrr" without a cutoff

    def __call__(self, j: Judgments) -> np.ndarray:
        return reciprocal_first_rank(j, self.k)


@dataclass(frozen=True)
class RR(Metric):
    """RR = 1 / (rank of the first relevant document) over the whole ranking, 0 if none is retrieved.

    trec_eval's ``recip_rank`` and ir_measures' ``RR``; the mean over queries is MRR. ``recip_rank`` and
    ``RR`` name this metric (in a metric list too); ``RR@k`` / ``recip_rank@k`` is ``MRR@k``.
    """

    family = "RR"
    aliases = ("recip_rank",)
    needs_k = False
    cutoff_form = "MRR"

    def __call__(self, j: Judgments) -> np.ndarray:
        return reciprocal_first_rank(j, None)

"""Mean reciprocal rank at k."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric


@dataclass(frozen=True)
class MRR(Metric):
    """RR@k = 1 / (rank of the first relevant document) if that rank <= k, else 0; MRR@k is the mean."""

    family = "MRR"
    aliases = ("RR", "recip_rank")

    def __call__(self, j: Judgments) -> np.ndarray:
        mask = j.relevant_hits(self.k)
        first = np.full(j.n_queries, np.inf)
        np.minimum.at(first, j.hit_query[mask], j.hit_rank[mask])
        return 1.0 / first

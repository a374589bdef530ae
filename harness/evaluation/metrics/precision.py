"""Precision at k."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric


@dataclass(frozen=True)
class Precision(Metric):
    """P@k = |relevant documents in the top k| / k  (k, not the number retrieved, as trec_eval's P.k)."""

    family = "P"
    aliases = ("Precision",)

    def __call__(self, j: Judgments) -> np.ndarray:
        return j.per_query_sum(j.relevant_hits(self.k)) / self.k

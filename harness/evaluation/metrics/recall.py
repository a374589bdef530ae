"""Recall at k, and BEIR's capped recall."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric, safe_divide


@dataclass(frozen=True)
class Recall(Metric):
    """Recall@k = |relevant documents in the top k| / R, R = all relevant documents of the query."""

    family = "Recall"
    aliases = ("R", "recall")

    def __call__(self, j: Judgments) -> np.ndarray:
        return safe_divide(j.per_query_sum(j.relevant_hits(self.k)), j.n_relevant)


@dataclass(frozen=True)
class RCap(Metric):
    """R_cap@k = |relevant documents in the top k| / min(R, k)  (BEIR's capped recall).

    Also trec_eval's ``relative_P.k`` (``m_rel_P.c``, the same in 9 and 10: relevant in the top k /
    min(k, R), "precision up until R, and then recall after R"), so ``relative_P`` names it.
    """

    family = "R_cap"
    aliases = ("Recall_cap", "RCap", "relative_P")

    def __call__(self, j: Judgments) -> np.ndarray:
        return safe_divide(j.per_query_sum(j.relevant_hits(self.k)), np.minimum(j.n_relevant, self.k))

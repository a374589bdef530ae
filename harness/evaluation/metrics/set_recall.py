"""Recall of the whole retrieved set (trec_eval's ``set_recall``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric, safe_divide


@dataclass(frozen=True)
class SetRecall(Metric):
    """set_recall = num_rel_ret / R: the share of the relevant documents retrieved at any rank.

    Recall@k with k past the ranking. trec_eval's ``set_recall``, ir_measures' ``SetR``.
    """

    family = "set_recall"
    aliases = ("SetR",)
    needs_k = False

    def __call__(self, j: Judgments) -> np.ndarray:
        return safe_divide(j.per_query_sum(j.relevant_hits()), j.n_relevant)

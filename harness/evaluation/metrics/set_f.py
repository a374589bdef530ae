"""F1 of the whole retrieved set (trec_eval's ``set_F``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric, safe_divide


@dataclass(frozen=True)
class SetF(Metric):
    """set_F = 2 * P * R / (P + R),  P = set_P = num_rel_ret / num_ret,  R = set_recall = num_rel_ret / R;
    0 when no relevant document is retrieved.

    trec_eval's ``set_F`` with its default weight x = 1 ((x + 1) P R / (x P + R), computed in that order);
    ir_measures' ``SetF``. Other weights (trec_eval's ``set_F.0.5``) are not provided.
    """

    family = "set_F"
    aliases = ("SetF",)
    needs_k = False

    def __call__(self, j: Judgments) -> np.ndarray:
        relevant_retrieved = j.per_query_sum(j.relevant_hits())
        p = safe_divide(relevant_retrieved, j.n_retrieved)
        r = safe_divide(relevant_retrieved, j.n_relevant)
        return safe_divide(2.0 * p * r, p + r)

"""Unranked average precision of the retrieved set (trec_eval's ``set_map``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric, safe_divide


@dataclass(frozen=True)
class SetMap(Metric):
    """set_map = num_rel_ret^2 / (num_ret * R) = set_P * set_recall  (0 when nothing is retrieved).

    The AP of a set ranked without order: every relevant document retrieved contributes the set's
    precision, every one not retrieved 0. trec_eval's ``set_map`` (``m_set_map.c``, the same in 9 and
    10; once ``exact_unranked_avg_prec``), computed as (num_rel_ret * num_rel_ret) / (num_ret * R).
    """

    family = "set_map"
    aliases = ("SetMap",)
    needs_k = False

    def __call__(self, j: Judgments) -> np.ndarray:
        relevant_retrieved = j.per_query_sum(j.relevant_hits())
        return safe_divide(relevant_retrieved * relevant_retrieved,
                           j.n_retrieved.astype(np.float64) * j.n_relevant.astype(np.float64))

"""Precision of the whole retrieved set (trec_eval's ``set_P``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric, safe_divide


@dataclass(frozen=True)
class SetP(Metric):
    """set_P = num_rel_ret / num_ret: the relevant share of everything retrieved (0 when nothing is).

    P@k with k the ranking's own length, so the order inside the set does not matter. trec_eval's
    ``set_P``, ir_measures' ``SetP``.
    """

    family = "set_P"
    aliases = ("SetP",)
    needs_k = False

    def __call__(self, j: Judgments) -> np.ndarray:
        return safe_divide(j.per_query_sum(j.relevant_hits()), j.n_retrieved)

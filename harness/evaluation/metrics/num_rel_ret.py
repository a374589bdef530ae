"""Number of relevant documents retrieved (trec_eval's ``num_rel_ret``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric


@dataclass(frozen=True)
class NumRelRet(Metric):
    """num_rel_ret = |relevant documents in the ranking|, the whole ranking (grade >= threshold).

    trec_eval's ``num_rel_ret``, ir_measures' ``NumRelRet``. Recall over the whole ranking is
    num_rel_ret / num_rel. The summary is the mean over queries; trec_eval prints the sum (see
    docs/evaluation.md).
    """

    family = "num_rel_ret"
    aliases = ("NumRelRet",)
    needs_k = False

    def __call__(self, j: Judgments) -> np.ndarray:
        return j.per_query_sum(j.relevant_hits())

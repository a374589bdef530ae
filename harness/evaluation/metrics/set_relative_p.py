"""Relative precision of the retrieved set (trec_eval's ``set_relative_P``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric, safe_divide


@dataclass(frozen=True)
class SetRelativeP(Metric):
    """set_relative_P = num_rel_ret / min(num_ret, R)  (0 when nothing is retrieved).

    The set's precision relative to the best a set of its size can reach: set_P when fewer than R
    documents are retrieved, set_recall otherwise. trec_eval's ``set_relative_P`` (``m_set_rel_P.c``,
    the same in 9 and 10; once ``exact_relative_prec``): ``R_cap@k`` (trec_eval's ``relative_P``) with k
    the ranking's own length.
    """

    family = "set_relative_P"
    aliases = ("SetRelativeP",)
    needs_k = False

    def __call__(self, j: Judgments) -> np.ndarray:
        return safe_divide(j.per_query_sum(j.relevant_hits()), np.minimum(j.n_retrieved, j.n_relevant))

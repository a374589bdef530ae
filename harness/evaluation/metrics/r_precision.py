"""R-Precision: precision at rank R."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric, safe_divide


@dataclass(frozen=True)
class RPrecision(Metric):
    """R-Prec = |relevant documents in the top R| / R,  R = all relevant documents of the query.

    A ranking shorter than R counts as padded with non-relevant documents (trec_eval's ``Rprec``).
    At rank R precision equals recall.
    """

    family = "R-Prec"
    aliases = ("Rprec", "R_Prec", "RPrecision", "R-Precision")
    needs_k = False

    def __call__(self, j: Judgments) -> np.ndarray:
        within_r = j.relevant_hits() & (j.hit_rank <= j.n_relevant[j.hit_query])
        return safe_divide(j.per_query_sum(within_r), j.n_relevant)

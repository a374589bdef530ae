"""Success at k (BEIR's Accuracy@k)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric


@dataclass(frozen=True)
class Success(Metric):
    """Success@k = 1 if at least one relevant document is in the top k, else 0.

    trec_eval's ``success.k``, BEIR's ``Accuracy@k`` (BEIR ranks by sorting the document ids'
    second character rather than the scores; here the ranking is the evaluator's) and ranx's
    ``hit_rate@k``. Not ir_measures' ``Accuracy`` (the share of relevant-above-non-relevant pairs):
    ``Accuracy@k`` is BEIR's name here.
    """

    family = "Success"
    aliases = ("success", "Accuracy", "top_k_accuracy", "hit_rate")

    def __call__(self, j: Judgments) -> np.ndarray:
        return (j.per_query_sum(j.relevant_hits(self.k)) > 0).astype(np.float64)

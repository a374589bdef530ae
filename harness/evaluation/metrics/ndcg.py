"""Normalised discounted cumulative gain at k."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric, safe_divide


@dataclass(frozen=True)
class NDCG(Metric):
    """nDCG@k = DCG@k / IDCG@k,  DCG@k = sum_{i<=k} rel_i / log2(i + 1).

    rel_i is the raw grade of the document at rank i (0 if unjudged); IDCG@k is the DCG@k of the
    ideal ranking of all the query's judged grades > 0 (retrieved or not), as trec_eval's
    ``ndcg_cut``.
    """

    family = "NDCG"
    aliases = ("nDCG", "ndcg_cut")

    def __call__(self, j: Judgments) -> np.ndarray:
        gained = (j.hit_rank <= self.k) & (j.hit_grade > 0)
        dcg = j.per_query_sum(gained, j.hit_grade / np.log2(j.hit_rank + 1.0))
        ideal = j.ideal_rank <= self.k
        idcg = np.bincount(j.ideal_query[ideal], weights=j.ideal_grade[ideal] / np.log2(j.ideal_rank[ideal] + 1.0),
                           minlength=j.n_queries)
        return safe_divide(dcg, idcg)

"""Judged at k: how much of the top k the qrels cover."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric


@dataclass(frozen=True)
class Judged(Metric):
    """Judged@k = |documents in the top k judged for the query (any grade)| / k.

    The denominator is k even when fewer than k documents are retrieved, as in BEIR's Hole@k and
    ir_measures' Judged@k. BEIR's Hole@k counts as "annotated" a document judged for *any* query,
    so 1 - Hole@k >= Judged@k, with equality when no retrieved document is judged only for another
    query. A low Judged@k warns that the other metrics treat many unjudged documents as
    non-relevant.
    """

    family = "Judged"
    aliases = ("judged",)

    def __call__(self, j: Judgments) -> np.ndarray:
        return j.per_query_sum(j.hit_rank <= self.k) / self.k

"""Judged at k: how much of the top k the qrels cover."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric, safe_divide


@dataclass(frozen=True)
class Judged(Metric):
    """Judged@k = |judged documents in the top k| / min(k, |retrieved|)  (0 when nothing is retrieved).

    As ir_measures' ``Judged@k``: a ranking shorter than k is judged on what it retrieved (two judged
    documents retrieved, k = 5: 1.0). A document is judged when the qrels have it for the query with
    any grade; under ``trec_eval-10`` semantics a negative grade counts as unjudged, as trec_eval 10's
    ``unj``. Note that BEIR's Hole@k and trec_eval 10's ``unj@k`` divide by k instead (their sources:
    ``len(hole_docs) / k``; ``unj_so_far / cutoff`` for cutoffs past the ranking), so
    1 - unj@k = Judged@k only when at least k documents are retrieved. A low Judged@k warns that the
    other metrics treat many unjudged documents as non-relevant.

    It measures the judgments, not the ranking (ir_measures lists it beside its effectiveness measures as a
    check of pool coverage; BEIR reports Hole@k for the same reason): a run that finds relevant documents
    the pool never saw scores lower on it. So it is no quality measure (``counts``,
    :mod:`harness.compare.measures`): a drop is reported, never a regression, and no system is its best.
    """

    family = "Judged"
    aliases = ("judged",)
    counts = "the share of the top k that the qrels judge (how far the judgments cover the run, not its quality)"

    def __call__(self, j: Judgments) -> np.ndarray:
        judged = j.hit_rank <= self.k
        if not j.semantics.negative_grade_judged:
            judged &= j.hit_grade >= 0
        return safe_divide(j.per_query_sum(judged), np.minimum(j.n_retrieved, self.k))

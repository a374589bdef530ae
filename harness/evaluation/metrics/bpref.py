"""Binary preference (Buckley & Voorhees, SIGIR 2004), as trec_eval computes it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric, safe_divide


@dataclass(frozen=True)
class Bpref(Metric):
    """bpref = (1 / R) * sum_{r relevant retrieved} (1 - min(n_r, R) / min(N, R)).

    R = relevant documents of the query (grade >= threshold); N = its judged non-relevant documents
    (0 <= grade < threshold), retrieved or not; n_r = judged non-relevant documents ranked above r.
    A term with n_r = 0 is 1 (so N = 0 gives no 0/0). Unjudged documents are skipped, and so are
    negative grades (trec_eval's "in the pool, not judged"). Whole ranking, no cutoff (trec_eval's
    ``bpref``; the min(N, R) denominator is trec_eval's, the paper divides by R).
    """

    family = "bpref"
    aliases = ("Bpref",)
    needs_k = False

    def __call__(self, j: Judgments) -> np.ndarray:
        order = np.lexsort((j.hit_rank, j.hit_query))
        query = j.hit_query[order]
        relevant = j.relevant_hits()[order]
        nonrelevant_seen = np.cumsum(j.nonrelevant_hits()[order])
        starts = np.searchsorted(query, query, side="left")
        before_query = np.concatenate([[0], nonrelevant_seen])[starts]
        # For a relevant hit its own position adds no non-relevant, so this counts those above it.
        n_above = (nonrelevant_seen - before_query)[relevant]
        q = query[relevant]
        r = j.n_relevant[q]
        denominator = np.minimum(j.n_nonrelevant[q], r)
        penalty = safe_divide(np.minimum(n_above, r).astype(np.float64), denominator)
        terms = np.where(n_above > 0, 1.0 - penalty, 1.0)
        return safe_divide(np.bincount(q, weights=terms, minlength=j.n_queries), j.n_relevant)

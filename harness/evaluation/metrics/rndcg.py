"""nDCG averaged at the ideal ranking's grade boundaries (trec_eval's ``Rndcg``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric, safe_divide
from harness.evaluation.metrics.discounting import at_rank, dcg_prefix, ideal_prefix, linear_shift


@dataclass(frozen=True)
class RNDCG(Metric):
    """Rndcg = mean_{b in B} DCG@b / IDCG@b.

    DCG@i = sum_{j<=i} rel_j / log2(j + 1) with the raw grade as gain (trec_eval's default gains;
    unjudged and negative grades gain 0), IDCG@i the same of the query's positive grades sorted
    descending. B holds the R levels: the rank b at which the ideal ranking's last document of each
    positive grade stands (grades 3, 3, 2, 1, 1: b = 2, 3, 5), so the last is R+, the number of
    positive grades; and n, the length of the ranking, when n >= R+ + 2 (trec_eval's "final implied
    R-level change at num_retrieved": DCG / IDCG of the whole ranking, which trec_eval adds only when its
    loop has a document left past rank R+ + 1). DCG@b for b past n is the whole ranking's DCG. As the
    source computes it (``m_Rndcg.c``, the same in 9 and 10), not as its help text says (that counts the
    grade-0 documents as a level, with a point at R+ plus their number). trec_eval's ``Rndcg`` with its
    default gains (gain parameters ``Rndcg.1=3.5`` are not provided). Grades past 2^960 are scaled per
    query by a power of two, as ``NDCG``'s, so the value stays finite.
    """

    family = "Rndcg"
    aliases = ()
    needs_k = False

    def __call__(self, j: Judgments) -> np.ndarray:
        shift = linear_shift(j)  # (grades near the largest double: scaled by a power of two, as NDCG)
        query, rank, dcg = dcg_prefix(j, shift)
        ideal = ideal_prefix(j, shift)
        iq, grade = j.ideal_query, j.ideal_grade
        # the last ideal rank of each grade within its query
        boundary = np.ones(len(iq), dtype=bool)
        boundary[:-1] = (iq[1:] != iq[:-1]) | (grade[1:] != grade[:-1])
        b_query, b_rank = iq[boundary], j.ideal_rank[boundary]
        values = safe_divide(at_rank(query, rank, dcg, j.n_queries, b_query, b_rank), ideal[boundary])
        total = np.bincount(b_query, weights=values, minlength=j.n_queries)
        count = np.bincount(b_query, minlength=j.n_queries).astype(np.float64)
        positive = np.bincount(iq, minlength=j.n_queries)  # R+
        extra = (j.n_retrieved >= positive + 2) & (positive > 0)
        if extra.any():
            q = np.flatnonzero(extra)
            whole = at_rank(query, rank, dcg, j.n_queries, q, j.n_retrieved[q])
            last = np.searchsorted(iq, q, side="right") - 1
            total[q] += safe_divide(whole, ideal[last])
            count[q] += 1
        return safe_divide(total, count)

"""nDCG averaged over the relevant documents (trec_eval's ``ndcg_rel``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric, safe_divide
from harness.evaluation.metrics.discounting import at_rank, dcg_prefix, ideal_prefix, linear_shift


@dataclass(frozen=True)
class NDCGRel(Metric):
    """ndcg_rel = (1 / R+) * (sum_{d retrieved, rel_d > 0} DCG@r_d / IDCG@r_d + (R+ - R+_ret) * DCG / IDCG).

    R+ = the query's judged documents with grade > 0 (whatever the relevance threshold), R+_ret those
    retrieved, r_d the rank of d; DCG@i = sum_{j<=i} rel_j / log2(j + 1) with the raw grade as gain
    (trec_eval's default gains; unjudged and negative grades gain 0), IDCG@i the same of the query's
    positive grades sorted descending (IDCG@i = IDCG for i >= R+); DCG / IDCG over the whole ranking
    (``NDCG_all``) for each positive document not retrieved. I.e. the mean over the R+ documents of
    nDCG at the rank each is retrieved at. trec_eval's ``ndcg_rel`` with its default gains
    (``m_ndcg_rel.c``, the same in 9 and 10; gain parameters ``ndcg_rel.1=3.5`` are not provided).
    Grades past 2^960 are scaled per query by a power of two, as ``NDCG``'s, so the value stays finite.
    """

    family = "ndcg_rel"
    aliases = ()
    needs_k = False

    def __call__(self, j: Judgments) -> np.ndarray:
        shift = linear_shift(j)  # (grades near the largest double: scaled by a power of two, as NDCG)
        query, rank, dcg = dcg_prefix(j, shift)
        ideal = ideal_prefix(j, shift)
        idcg_at_hit = at_rank(j.ideal_query, j.ideal_rank, ideal, j.n_queries, query, rank)
        at_hits = np.bincount(query, weights=safe_divide(dcg, idcg_at_hit), minlength=j.n_queries)
        positive = np.bincount(j.ideal_query, minlength=j.n_queries).astype(np.float64)  # R+
        retrieved = np.bincount(query, minlength=j.n_queries)
        queries, end = np.arange(j.n_queries), np.full(j.n_queries, np.iinfo(np.int64).max)
        whole = at_rank(query, rank, dcg, j.n_queries, queries, end)  # DCG of the whole ranking, and IDCG
        whole_ideal = at_rank(j.ideal_query, j.ideal_rank, ideal, j.n_queries, queries, end)
        total = at_hits + (positive - retrieved) * safe_divide(whole, whole_ideal)
        return safe_divide(total, positive)

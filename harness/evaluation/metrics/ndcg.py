"""Normalised discounted cumulative gain, at k (NDCG@k) and over the whole ranking (NDCG_all), in three
gain/discount schemes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import safe_divide
from harness.evaluation.metrics.discounting import SCHEMES, SchemedMetric, dcg, exp_shift, ideal_dcg, linear_shift


@dataclass(frozen=True)
class NDCG(SchemedMetric):
    """nDCG@k = DCG@k / IDCG@k,  DCG@k = sum_{i<=k} g(rel_i) / d(i)  (0 when IDCG@k = 0).

    rel_i is the raw grade of the document at rank i (0 if unjudged); IDCG@k is the DCG@k of the
    ideal ranking of all the query's judged grades > 0 (retrieved or not), as trec_eval's
    ``ndcg_cut``. Schemes (see ``discounting``): ``trec`` g = rel, d(i) = log2(i + 1) (the
    default, ``NDCG@10``); ``exp`` g = 2^rel - 1 (``NDCG_exp@10``); ``jarvelin`` d(i) =
    max(1, log2 i) (``NDCG_jarvelin@10``). Grades are the gains whatever the relevance threshold.
    ``exp`` with grades past 960 (float click or vote counts; 2^rel overflows past 1023): each query's
    gains are scaled by 2^-(max grade - 960), which leaves the ratio as it is; ``trec`` / ``jarvelin``
    with grades past 2^960 (near the largest double, where the sums overflow: inf / inf) are scaled by
    a power of two likewise (``linear_shift``), so nDCG@k is always a finite number in [0, 1].
    """

    family = "NDCG"
    aliases = ("nDCG", "ndcg_cut")
    whole_ranking_name = "NDCG_all"  # named when NDCG is given alone (refused: NDCG means NDCG@k here)

    def __call__(self, j: Judgments) -> np.ndarray:
        # exp: each query's gains scaled by 2^-shift (the ratio is the same, and finite for grades past 1023)
        shift = exp_shift(j) if self.scheme == "exp" else linear_shift(j)
        return safe_divide(dcg(j, self.k, self.scheme, shift), ideal_dcg(j, self.k, self.scheme, shift))


@dataclass(frozen=True)
class NDCGAll(NDCG):
    """nDCG = DCG / IDCG over the whole ranking (no cutoff): DCG = sum_i g(rel_i) / d(i) over every
    retrieved document, IDCG the same over all the query's judged grades > 0 sorted descending (0 when
    IDCG = 0). trec_eval's ``ndcg`` (the ``trec`` scheme) and ir_measures' ``nDCG``.

    Names: ``NDCG_all``, ``NDCG_all_exp``, ``NDCG_all_jarvelin``; ``NDCG_all@10`` is ``NDCG@10``. Not
    ``ndcg`` / ``nDCG``: names are case-insensitive, and ``NDCG`` without a cutoff is BEIR's family,
    ``NDCG@k`` at every k in a metric list and refused alone (pointing here), where ``MAP`` alone is
    ``AP``: a BEIR user's ``NDCG`` means a cutoff. The schemes and the scaling of huge grades are ``NDCG``'s.
    """

    family = "NDCG_all"
    aliases = ()
    needs_k = False
    cutoff_form = "NDCG"

    @property
    def name(self) -> str:
        return self.family if self.scheme == SCHEMES[0] else f"{self.family}_{self.scheme}"

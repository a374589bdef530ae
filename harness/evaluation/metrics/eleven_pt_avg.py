"""Interpolated precision averaged over the 11 standard recall levels (trec_eval's ``11pt_avg``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric
from harness.evaluation.metrics.iprec_at_recall import STANDARD_LEVELS, interpolated_precision


@dataclass(frozen=True)
class ElevenPtAvg(Metric):
    """11pt_avg = (1 / 11) * sum_{p in 0.0, 0.1, ..., 1.0} iprec_at_recall_p.

    iprec_at_recall_p = max_{n >= c} n / r_n (see ``IPrecAtRecall``), c = floor(p * R + 0.9) under
    ``trec_eval-9`` and lround(p * R) under ``trec_eval-10`` (``m_11pt_avg.c`` changed as
    ``m_iprec_at_recall.c`` did), c = 0 counting as 1; 0 for a level whose c relevant documents are not
    all retrieved, and 0 for a query with nothing retrieved. Whole ranking. trec_eval's ``11pt_avg``
    with its default levels (trec_eval's ``11pt_avg.0.2,0.5,0.8``, other levels, is not provided:
    average the ``iprec_at_recall_p`` values instead); the sum runs from level 1.0 down to 0.0, as
    trec_eval adds them.
    """

    family = "11pt_avg"  # (a name starting with a digit: parse_metric looks it up whole)
    aliases = ("11-pt_avg",)
    needs_k = False

    def __call__(self, j: Judgments) -> np.ndarray:
        total = np.zeros(j.n_queries)
        for values in interpolated_precision(j, STANDARD_LEVELS[::-1]):
            total += values
        return total / len(STANDARD_LEVELS)

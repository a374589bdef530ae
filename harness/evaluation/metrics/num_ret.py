"""Number of documents retrieved (trec_eval's ``num_ret``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric


@dataclass(frozen=True)
class NumRet(Metric):
    """num_ret = |ranking|: the documents the run retrieved for the query (after the identical-id rule;
    0 for a query missing from the run), judged or not.

    trec_eval's ``num_ret``, ir_measures' ``NumRet``. The summary is the mean over queries, as for every
    metric here; trec_eval prints the sum (mean * queries, exact for counts: see docs/evaluation.md).
    """

    family = "num_ret"
    aliases = ("NumRet",)
    needs_k = False
    counts = "the number of documents retrieved (the run's depth, whatever their relevance)"

    def __call__(self, j: Judgments) -> np.ndarray:
        return j.n_retrieved.astype(np.float64)

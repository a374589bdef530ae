"""Number of relevant documents (trec_eval's ``num_rel``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric


@dataclass(frozen=True)
class NumRel(Metric):
    """num_rel = R: the query's judged documents with grade >= threshold, retrieved or not (also for a
    query missing from the run).

    trec_eval's ``num_rel``, ir_measures' ``NumRel``. The summary is the mean over queries; trec_eval
    prints the sum (see docs/evaluation.md).
    """

    family = "num_rel"
    aliases = ("NumRel",)
    needs_k = False
    counts = "the number of relevant documents judged (the qrels', the same for every run on them)"

    def __call__(self, j: Judgments) -> np.ndarray:
        return j.n_relevant.astype(np.float64)

"""Number of judged non-relevant documents retrieved (trec_eval's ``num_nonrel_judged_ret``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric


@dataclass(frozen=True)
class NumNonrelJudgedRet(Metric):
    """num_nonrel_judged_ret = |retrieved documents judged with 0 <= grade < threshold|, whole ranking.

    trec_eval's num_ret - num_nonpool - num_unjudged_in_pool - num_rel_ret (``m_num_nonrel_judged_ret.c``,
    the same in 9 and 10): unjudged documents and negative grades ("in the pool, not judged") are not
    counted. num_ret = num_rel_ret + num_nonrel_judged_ret + the unjudged retrieved. The summary is the
    mean over queries; trec_eval prints the sum (see docs/evaluation.md).
    """

    family = "num_nonrel_judged_ret"
    aliases = ("NumNonrelJudgedRet",)
    needs_k = False
    counts = "the number of judged non-relevant documents retrieved (it grows with the depth)"

    def __call__(self, j: Judgments) -> np.ndarray:
        return j.per_query_sum(j.nonrelevant_hits())

"""Discounted cumulative gain at k (unnormalised), in three gain/discount schemes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.discounting import SchemedMetric, dcg


@dataclass(frozen=True)
class DCG(SchemedMetric):
    """DCG@k = sum_{i<=k} g(rel_i) / d(i); rel_i is the grade at rank i (0 if unjudged).

    Schemes (see ``discounting``): ``trec`` g = rel, d(i) = log2(i + 1) (``DCG@10``); ``exp``
    g = 2^rel - 1 (``DCG_exp@10``); ``jarvelin`` g = rel, d(i) = max(1, log2 i), i.e.
    rel_1 + sum_{i>=2} rel_i / log2(i) (``DCG_jarvelin@10``). Unbounded: compare it only between
    runs on the same qrels.
    """

    family = "DCG"

    def __call__(self, j: Judgments) -> np.ndarray:
        return dcg(j, self.k, self.scheme)

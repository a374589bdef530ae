"""Interpolated precision at a recall level (trec_eval's ``iprec_at_recall``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric, hundredths
from harness.evaluation.semantics import Semantics

# trec_eval's default levels (``-m iprec_at_recall``, part of ``-m official``): the 11-point curve.
STANDARD_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def recall_cutoff(level: float, n_relevant: np.ndarray, semantics: Semantics) -> np.ndarray:
    """The number of relevant documents c that recall level p stands for, per query (R = n_relevant):
    c = floor(p * R + 0.9) under trec_eval-9, c = lround(p * R) (half away from zero) under trec_eval-10,
    in double arithmetic as trec_eval's C (``m_iprec_at_recall.c``): 0.3 * 3 + 0.9 is 1.7999999999999998."""
    x = level * n_relevant.astype(np.float64)
    if not semantics.rounded_recall_cutoffs:
        return np.floor(x + 0.9).astype(np.int64)
    whole = np.floor(x)
    return (whole + (x - whole >= 0.5)).astype(np.int64)  # (x - floor(x) is exact: no x + 0.5 rounding)


def suffix_max(query: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per position i, the largest of values[i:] within its query (``query`` sorted ascending), exactly:
    values are replaced by their order among the distinct values, offset per query, so one running
    maximum over the reversed arrays never crosses a query."""
    if not len(values):
        return values
    distinct, order = np.unique(values, return_inverse=True)
    width = len(distinct)
    group = int(query.max()) - query  # reversed: the group offset grows along the reversed arrays
    key = (group * width + order)[::-1]
    running = np.maximum.accumulate(key)
    return distinct[(running - group[::-1] * width)][::-1]


@dataclass(frozen=True)
class IPrecAtRecall(Metric):
    """iprec_at_recall_p = max_{i >= r_c} P@i, the interpolated precision at recall level p, 0 <= p <= 1.

    R = relevant documents of the query, r_n = rank of the n-th relevant document retrieved, P@i =
    relevant in the top i / i, c = the number of relevant documents level p stands for: floor(p * R + 0.9)
    (trec_eval 9; lround(p * R) under ``trec_eval-10``), taken as 1 when it is 0. The value is 0 when fewer
    than c relevant documents are retrieved. Equivalently max_{n >= c} n / r_n (precision peaks at
    relevant ranks). Whole ranking. trec_eval's ``iprec_at_recall`` (``m_iprec_at_recall.c``),
    ir_measures' ``IPrec@p``.

    Names: ``iprec_at_recall_0.10`` (trec_eval's printed name; canonical), ``iprec_at_recall.0.1``,
    ``iprec_at_recall@0.1``, ``IPrec@0.1``; a level is a multiple of 0.01 in [0, 1]. In a metric list
    ``iprec_at_recall`` / ``IPrec`` without a level stands for trec_eval's 11 levels 0.00, 0.10 ... 1.00.
    """

    recall: float | None = None
    family = "iprec_at_recall"
    aliases = ("IPrec",)
    needs_k = False
    levels: ClassVar[tuple[float, ...]] = STANDARD_LEVELS  # a metric list's expansion of the bare name

    @classmethod
    def make(cls, k: int | None, variant: str | None = None, level: float | None = None) -> "IPrecAtRecall":
        if variant is not None:
            raise ValueError(f"{cls.family} has no variants")
        return cls(k, level)

    def __post_init__(self) -> None:
        super().__post_init__()
        example = (f"e.g. {self.family}_0.10; in a metric list {self.family} alone stands for the 11 levels "
                   "0.00 ... 1.00")
        if self.recall is None:
            raise ValueError(f"{self.family} needs a recall level, {example}")
        object.__setattr__(self, "recall", hundredths(self.recall, self.family, "recall level", 1.0, example))

    @property
    def name(self) -> str:
        return self.family if self.recall is None else f"{self.family}_{self.recall:.2f}"

    def __call__(self, j: Judgments) -> np.ndarray:
        return interpolated_precision(j, [self.recall])[0]


def interpolated_precision(j: Judgments, levels) -> list[np.ndarray]:
    """``iprec_at_recall_p`` per query for each level p (see :class:`IPrecAtRecall`), ranking the relevant
    hits once for all of them."""
    mask = j.relevant_hits()
    query, rank = j.hit_query[mask], j.hit_rank[mask]
    order = np.lexsort((rank, query))
    query, rank = query[order], rank[order]
    start = np.searchsorted(query, query, side="left")
    nth = np.arange(len(query)) - start + 1
    interpolated = suffix_max(query, nth / rank)  # at the n-th relevant: max_{m >= n} m / r_m
    retrieved_relevant = np.bincount(query, minlength=j.n_queries)
    first = np.searchsorted(query, np.arange(j.n_queries), side="left")
    values = []
    for level in levels:
        c = np.maximum(recall_cutoff(level, j.n_relevant, j.semantics), 1)
        reached = c <= retrieved_relevant
        out = np.zeros(j.n_queries)
        out[reached] = interpolated[first[reached] + c[reached] - 1]
        values.append(out)
    return values

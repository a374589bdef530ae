"""Gain and discount schemes shared by DCG and nDCG.

===========  ==============  ==========================================
scheme       gain g(rel)     discount d(i) for rank i >= 1
===========  ==============  ==========================================
``trec``     rel             log2(i + 1)          (trec_eval, BEIR; the default)
``exp``      2^rel - 1       log2(i + 1)          (Burges et al.)
``jarvelin`` rel             max(1, log2(i))      (Järvelin & Kekäläinen: rank 1 undiscounted)
===========  ==============  ==========================================

DCG@k = sum_{i <= k} g(rel_i) / d(i). Only positive grades gain (a grade <= 0, or an unjudged
document, adds nothing; trec_eval likewise ignores negative grades). Every scheme's gain is
increasing in the grade and every discount non-decreasing in the rank, so the ideal ranking is the
judged grades sorted descending under all three.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric

SCHEMES = ("trec", "exp", "jarvelin")


def check_scheme(scheme: str) -> None:
    if scheme not in SCHEMES:
        raise ValueError(f"unknown DCG scheme {scheme!r}; choose one of {', '.join(SCHEMES)}")


def gain(grades: np.ndarray, scheme: str, shift: np.ndarray | float = 0.0) -> np.ndarray:
    """g(rel) of positive grades, scaled by 2^-shift (nDCG's ratio is unchanged): ``exp``
    2^(rel - shift) - 2^-shift (2^rel alone overflows past rel 1023), and expm1(rel * ln 2) * 2^-shift
    for rel < 1 (2^rel - 1 cancels there: every bit of it below rel 1.1e-16, where it is 0); the
    linear schemes rel * 2^-shift (exact: a power of two)."""
    if scheme == "exp":
        gains = np.exp2(grades - shift) - np.exp2(-shift)
        small = (grades > 0) & (grades < 1)  # (a grade <= 0 gains nothing: its value is never used)
        if small.any():
            gains = np.where(small, np.expm1(np.minimum(grades, 1.0) * np.log(2.0)) * np.exp2(-shift), gains)
        return gains
    return grades if np.all(shift == 0) else grades * np.exp2(-shift)


def discount(ranks: np.ndarray, scheme: str) -> np.ndarray:
    """d(i) of 1-based ranks."""
    if scheme == "jarvelin":
        return np.maximum(np.log2(ranks.astype(np.float64)), 1.0)
    return np.log2(ranks + 1.0)


def dcg(j: Judgments, k: int | None, scheme: str, shift: np.ndarray | None = None) -> np.ndarray:
    """DCG@k of the run, per evaluated query (gains scaled by 2^-shift[query] when given, see ``gain``);
    k None: the whole ranking."""
    gained = j.hit_grade > 0
    if k is not None:
        gained &= j.hit_rank <= k
    by = 0.0 if shift is None else shift[j.hit_query]
    return j.per_query_sum(gained, gain(j.hit_grade, scheme, by) / discount(j.hit_rank, scheme))


def ideal_dcg(j: Judgments, k: int | None, scheme: str, shift: np.ndarray | None = None) -> np.ndarray:
    """IDCG@k: DCG@k of the query's judged positive grades sorted descending (retrieved or not); k None:
    all of them."""
    ideal = j.ideal_rank <= (k if k is not None else np.iinfo(np.int64).max)
    by = 0.0 if shift is None else shift[j.ideal_query[ideal]]
    weights = gain(j.ideal_grade[ideal], scheme, by) / discount(j.ideal_rank[ideal], scheme)
    return np.bincount(j.ideal_query[ideal], weights=weights, minlength=j.n_queries).astype(np.float64)


def exp_shift(j: Judgments) -> np.ndarray:
    """Per query, max(0, highest grade - 960): the ``exp`` gains scaled by 2^-shift stay finite, and so
    do their sums (2^960 ~ 1e289), for the float grades (click or vote counts) past 1023 whose 2^rel
    overflows; 0 (no scaling) for every query whose grades are at most 960."""
    top = np.zeros(j.n_queries)
    np.maximum.at(top, j.ideal_query, j.ideal_grade)
    return np.maximum(top - 960.0, 0.0)


def linear_shift(j: Judgments) -> np.ndarray | None:
    """Per query, max(0, e - 960) for the largest grade in [2^(e-1), 2^e): the linear gains scaled by
    2^-shift stay below 2^960, so their discounted sums (at most a few thousand terms) stay finite for
    grades near the largest double (1.8e308), where the plain sums overflow and nDCG would be inf / inf
    = NaN; None (no scaling) when every grade is below 2^960, i.e. for any real qrels."""
    top = np.zeros(j.n_queries)
    np.maximum.at(top, j.ideal_query, j.ideal_grade)
    shift = np.maximum(np.frexp(top)[1] - 960, 0).astype(np.float64)
    return shift if shift.any() else None


@dataclass(frozen=True)
class SchemedMetric(Metric):
    """Base of the DCG family: a cutoff plus a scheme, named ``FAMILY@k`` or ``FAMILY_<scheme>@k``."""

    scheme: str = "trec"
    variants = SCHEMES

    def __post_init__(self) -> None:
        super().__post_init__()
        check_scheme(self.scheme)

    @classmethod
    def make(cls, k: int | None, variant: str | None = None) -> "SchemedMetric":
        return cls(k, variant or SCHEMES[0])

    @property
    def name(self) -> str:
        suffix = "" if self.scheme == SCHEMES[0] else f"_{self.scheme}"
        return f"{self.family}{suffix}@{self.k}"

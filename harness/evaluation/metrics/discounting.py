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


def running_sum(query: np.ndarray, values: np.ndarray, n_queries: int) -> np.ndarray:
    """Per position i, values[first of its query] + ... + values[i] (``query`` sorted ascending), added
    one term at a time in order as a C loop adds them (no global cumsum minus the sum before the query,
    which would carry the rounding of every earlier query's terms)."""
    out = np.empty(len(values), dtype=np.float64)
    if not len(values):
        return out
    position = np.arange(len(query)) - np.searchsorted(query, query, side="left")
    order = np.argsort(position, kind="stable")
    bounds = np.searchsorted(position[order], np.arange(int(position.max()) + 2), side="left")
    running = np.zeros(n_queries)
    for p in range(len(bounds) - 1):  # one pass per position within a query, over all queries at once
        at = order[bounds[p]:bounds[p + 1]]
        running[query[at]] += values[at]
        out[at] = running[query[at]]
    return out


def dcg_prefix(j: Judgments, shift: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``trec`` scheme's running DCG at each retrieved positive grade: (query, rank, DCG@rank), sorted
    by query then rank; gains scaled by 2^-shift[query] when given (:func:`linear_shift`)."""
    gained = j.hit_grade > 0
    query, rank, grade = j.hit_query[gained], j.hit_rank[gained], j.hit_grade[gained]
    order = np.lexsort((rank, query))
    query, rank, grade = query[order], rank[order], grade[order]
    gains = gain(grade, "trec", 0.0 if shift is None else shift[query])
    return query, rank, running_sum(query, gains / discount(rank, "trec"), j.n_queries)


def ideal_prefix(j: Judgments, shift: np.ndarray | None = None) -> np.ndarray:
    """The ideal ranking's running DCG (``trec`` scheme) at each of its ranks, aligned with ``j.ideal_*``;
    gains scaled by 2^-shift[query] when given."""
    gains = gain(j.ideal_grade, "trec", 0.0 if shift is None else shift[j.ideal_query])
    return running_sum(j.ideal_query, gains / discount(j.ideal_rank, "trec"), j.n_queries)


def at_rank(query: np.ndarray, rank: np.ndarray, running: np.ndarray, n_queries: int, at_query: np.ndarray,
            cut: np.ndarray) -> np.ndarray:
    """For each (at_query, cut): the running sum at the last entry of that query with rank <= cut (0 when
    none); ``query``, ``rank`` sorted by query then rank, ``running`` from :func:`running_sum`."""
    if not len(query):
        return np.zeros(len(at_query))
    start = np.searchsorted(query, np.arange(n_queries), side="left")
    end = np.searchsorted(query, np.arange(n_queries), side="right")
    # rank <= cut within the query: entries of the query are sorted by rank, so count them by a merge
    both_query = np.concatenate([query, at_query])
    both_rank = np.concatenate([rank, cut])
    probe = np.concatenate([np.zeros(len(query), dtype=bool), np.ones(len(at_query), dtype=bool)])
    order = np.lexsort((probe, both_rank, both_query))  # an entry before a probe of its rank
    entries_before = np.cumsum(~probe[order])
    count = np.empty(len(at_query), dtype=np.int64)
    count[order[probe[order]] - len(query)] = entries_before[probe[order]]
    last = count - 1  # the global index of the last entry <= (at_query, cut)
    has = last >= start[at_query]
    has &= last < end[at_query]
    out = np.zeros(len(at_query))
    out[has] = running[last[has]]
    return out

"""Paired significance tests on aligned per-query arrays.

Every function takes two arrays ``a`` (the baseline) and ``b`` (the other system) of per-query
values of one metric, aligned so that ``a[i]`` and ``b[i]`` belong to the same query, and works on
the per-query differences ``d = b - a``. All tests are two-sided; the null hypothesis is that the
two systems are interchangeable (mean difference 0).

* :func:`paired_t_test` -- Student's paired t-test::

      t = mean(d) / (sd(d) / sqrt(n)),   sd with n - 1 degrees of freedom,   p = P(|T_{n-1}| >= |t|)

  The t-distribution tail is scipy's incomplete beta function (see :func:`t_two_sided_p`).
  Degenerate cases (up to rounding: sd and mean within 1e-12 * max(1, max|d|)): all differences 0
  -> t = 0, p = 1; a constant non-zero difference -> t = +-inf, p = 0 (scipy's ttest_rel returns
  NaN for both).
* :func:`randomization_test` -- Fisher's (paired) randomization test, as in Smucker, Allan and
  Carterette (CIKM 2007): under the null each query's pair could have come out either way, so each
  ``d[i]`` is equally likely to carry either sign. The p-value is the share of the 2^n sign
  assignments ``s`` whose ``|sum(s * d)|`` is at least the observed ``|sum(d)|``. Zero differences
  add 0 under either sign, so only the m non-zero ones are permuted (all zero: p = 1). When
  ``2^m <= permutations`` every assignment is enumerated (exact p). Otherwise ``permutations``
  random sign vectors are drawn (seeded) and ``p = (count + 1) / (permutations + 1)``, counting the
  observed assignment itself (Phipson and Smyth 2010), so a Monte Carlo p is never 0.
* :func:`paired_bootstrap_ci` -- percentile confidence interval of ``mean(d)``: queries are
  resampled with replacement ``resamples`` times (seeded) and the interval is the
  ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the resampled means.
  :func:`bootstrap_ci` is the same interval for the mean of one system's values (a leaderboard
  cell), and :func:`bootstrap_means` returns the resampled means themselves (the mean over several
  datasets resamples each dataset's queries independently and averages the draws).
* :func:`holm_bonferroni` -- Holm's step-down adjustment of m p-values (sorted ascending
  ``p_(1) <= ... <= p_(m)``): ``adj_(j) = max_{i <= j} min(1, (m - i + 1) * p_(i))``. Rejecting where
  ``adj < alpha`` controls the family-wise error rate at ``alpha``.
* :func:`significant` -- ``p < alpha``, with a p-value within a relative 1e-12 of ``alpha`` counted as
  ``alpha`` itself (not significant): a p of exactly alpha is often computed a few ulps low (the
  t-test's p = 1/2 for t = 1 with one degree of freedom comes out 0.4999999999999999). The one rule
  of ``harness check``'s verdicts, ``harness compare``'s markers and the report's groups.
* :func:`rank_groups` -- systems ranked by mean, split into groups that are not significantly
  different: each group is a maximal run of consecutive ranks in which no pair differs
  significantly (a system may belong to two overlapping groups, as in a compact letter display).

Random draws are made in blocks of sign (or index) matrices so that memory stays bounded
(about ``_BLOCK_CELLS`` cells per block) while the work stays in numpy.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

from harness.evaluation.evaluator import finite_mean

_BLOCK_CELLS = 1 << 22  # cells of one block of random signs / indices (32 MiB as float64)
_MAX_EXACT_QUERIES = 24  # never enumerate more than 2^24 sign vectors


def _differences(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"paired tests need two 1-d arrays of the same length, got shapes {a.shape} and {b.shape}")
    if len(a) < 2:
        raise ValueError(f"paired tests need at least 2 queries, got {len(a)}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("per-query values must be finite numbers")
    return b - a


def _scale(x: np.ndarray) -> float:
    """1.0, or for values past 2^500 in magnitude (DCG_exp of grades past 500; up to 2^1023) the power of
    two that brings the largest below 1: the tests' sums and squares then stay finite, t and p do not
    change (they are scale-free), and means and intervals scale back exactly (powers of two)."""
    top = float(np.abs(x).max()) if x.size else 0.0
    return 2.0 ** -math.frexp(top)[1] if top > 2.0**500 else 1.0


# ------------------------------------------------------------------------------ t distribution
def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom::

        P = I_{df/(df+t^2)}(df/2, 1/2) = 1 - I_{t^2/(df+t^2)}(1/2, df/2)

    with ``I`` the regularized incomplete beta function (scipy's ``betainc``): the first form when
    it is below 1/2, else the second, so that neither a tiny p nor a p close to 1 loses digits
    (``scipy.special.stdtr`` keeps only ~8 digits of ``1 - P`` near t = 0).
    """
    if df <= 0:
        raise ValueError(f"degrees of freedom must be > 0, got {df}")
    if math.isnan(t):
        raise ValueError("t statistic is NaN")
    if math.isinf(t):
        return 0.0
    from scipy.special import betainc  # imported on first use: it costs ~0.25 s

    tt = t * t
    upper = float(betainc(df / 2.0, 0.5, df / (df + tt)))
    return upper if upper < 0.5 else 1.0 - float(betainc(0.5, df / 2.0, tt / (df + tt)))


# ------------------------------------------------------------------------------ tests
@dataclass(frozen=True)
class TTestResult:
    statistic: float
    p_value: float
    df: int


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> TTestResult:
    """Paired t-test of ``b`` against ``a`` (see the module docstring for the formula)."""
    d = _differences(a, b)
    n = len(d)
    d = d * _scale(d)  # (t is scale-free; the squares of differences past 2^512 would overflow)
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    # A difference that is constant up to rounding has sd ~ 1e-17 rather than 0: treat it as constant,
    # and as no difference at all when its mean is within the same rounding (differences such as
    # [3e-13, -1e-13, 2e-13] are noise, not an infinitely significant shift).
    rounding = 1e-12 * max(1.0, float(np.abs(d).max()))
    if sd <= rounding:
        if abs(mean) <= rounding:
            return TTestResult(0.0, 1.0, n - 1)
        return TTestResult(math.copysign(math.inf, mean), 0.0, n - 1)
    t = mean / (sd / math.sqrt(n))
    return TTestResult(t, t_two_sided_p(t, n - 1), n - 1)


@dataclass(frozen=True)
class RandomizationResult:
    p_value: float
    n_permutations: int  # sign vectors evaluated (2^m when exact, m = non-zero differences)
    exact: bool
    seed: int | None


def _count_extreme(signs: np.ndarray, d: np.ndarray, threshold: float) -> int:
    return int(np.count_nonzero(np.abs(signs @ d) >= threshold))


def randomization_test(a: Sequence[float], b: Sequence[float], permutations: int = 10_000, seed: int = 0,
                       method: str = "auto") -> RandomizationResult:
    """Fisher's paired randomization test (see the module docstring).

    ``method``: ``"auto"`` enumerates all 2^m sign vectors of the m non-zero differences when
    ``2^m <= permutations``, else samples; ``"exact"`` always enumerates (m <= 24); ``"monte-carlo"``
    always samples ``permutations`` vectors.
    """
    d = _differences(a, b)
    if permutations < 1:
        raise ValueError(f"permutations must be >= 1, got {permutations}")
    if method not in ("auto", "exact", "monte-carlo"):
        raise ValueError(f"method must be 'auto', 'exact' or 'monte-carlo', got {method!r}")
    # A zero difference adds 0 whatever its sign: only the m non-zero differences matter, so the
    # exact enumeration runs over 2^m sign vectors (e.g. a change that touched 12 of 300 queries).
    d = d[d != 0.0]
    d = d * _scale(d)  # (p is scale-free; sums of differences near 2^1023 would overflow)
    m = len(d)
    if m == 0:
        return RandomizationResult(1.0, 1, True, None)
    observed = abs(float(d.sum()))
    # Sums that equal the observed one in exact arithmetic may differ from it in the last bits.
    threshold = observed - 1e-9 * float(np.abs(d).sum())
    exact = method == "exact" or (method == "auto" and m <= _MAX_EXACT_QUERIES and 2 ** m <= permutations)
    if exact:
        if m > _MAX_EXACT_QUERIES:
            raise ValueError(f"exact enumeration is limited to {_MAX_EXACT_QUERIES} non-zero differences, got {m}")
        total = 2 ** m
        bits = np.arange(m, dtype=np.int64)
        rows = max(1, _BLOCK_CELLS // m)
        count = 0
        for start in range(0, total, rows):
            codes = np.arange(start, min(total, start + rows), dtype=np.int64)
            signs = 1.0 - 2.0 * ((codes[:, None] >> bits) & 1)
            count += _count_extreme(signs, d, threshold)
        return RandomizationResult(count / total, total, True, None)
    rng = np.random.default_rng(seed)
    rows = max(1, _BLOCK_CELLS // m)
    count = 0
    for start in range(0, permutations, rows):
        size = min(rows, permutations - start)
        signs = rng.integers(0, 2, size=(size, m), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
        count += _count_extreme(signs, d, threshold)
    return RandomizationResult((count + 1) / (permutations + 1), permutations, False, seed)


@dataclass(frozen=True)
class BootstrapResult:
    low: float
    high: float
    confidence: float
    resamples: int
    seed: int


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")


def bootstrap_means(x: Sequence[float] | np.ndarray, resamples: int = 10_000, seed: int = 0) -> np.ndarray:
    """The means of ``resamples`` resamplings of the queries with replacement (seeded, in blocks).

    ``x`` holds one value per query (1-d; returns ``resamples`` means) or one column per system or
    metric (n x c; returns resamples x c, every column resampled with the same queries). Each block
    of resamplings is turned into counts (how often each query was drawn), so that the means of all
    columns are one matrix product: ``means = counts @ x / n``.
    """
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    if x.ndim not in (1, 2) or n == 0:
        raise ValueError(f"the bootstrap needs a non-empty 1-d or 2-d array, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("per-query values must be finite numbers")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    scale = _scale(x)  # (means scale back exactly; sums of values near 2^1023 would overflow)
    x = x * scale
    rng = np.random.default_rng(seed)
    rows = max(1, _BLOCK_CELLS // n)
    means = np.empty((resamples,) + x.shape[1:], dtype=np.float64)
    for start in range(0, resamples, rows):
        size = min(rows, resamples - start)
        drawn = rng.integers(0, n, size=(size, n))
        if x.ndim == 1:  # one column: gathering the drawn values is cheaper than counting them
            means[start:start + size] = x[drawn].mean(axis=1)
            continue
        drawn += (np.arange(size, dtype=np.int64) * n)[:, None]
        counts = np.bincount(drawn.ravel(), minlength=size * n).reshape(size, n).astype(np.float64)
        means[start:start + size] = counts @ x / n
    return means / scale


def percentile_interval(means: np.ndarray, confidence: float = 0.95, seed: int = 0) -> BootstrapResult:
    """The ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of resampled means."""
    _check_confidence(confidence)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return BootstrapResult(float(low), float(high), confidence, len(means), seed)


def bootstrap_ci(x: Sequence[float], resamples: int = 10_000, confidence: float = 0.95,
                 seed: int = 0) -> BootstrapResult:
    """Percentile bootstrap interval of ``mean(x)`` over queries resampled with replacement."""
    _check_confidence(confidence)
    x = np.asarray(x, dtype=np.float64)
    scale = _scale(x) if np.isfinite(x).all() else 1.0  # (bootstrap_means names the non-finite values)
    interval = percentile_interval(bootstrap_means(x * scale, resamples, seed), confidence, seed)
    return BootstrapResult(interval.low / scale, interval.high / scale, confidence, resamples, seed)


def paired_bootstrap_ci(a: Sequence[float], b: Sequence[float], resamples: int = 10_000, confidence: float = 0.95,
                        seed: int = 0) -> BootstrapResult:
    """Percentile bootstrap interval of ``mean(b - a)`` over queries resampled with replacement."""
    return bootstrap_ci(_differences(a, b), resamples, confidence, seed)


def holm_bonferroni(p_values: Sequence[float]) -> np.ndarray:
    """Holm-adjusted p-values, in the input order (see the module docstring)."""
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError("holm_bonferroni takes a 1-d sequence of p-values")
    if p.size == 0:
        return p.copy()
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError(f"p-values must lie in [0, 1], got {p.tolist()}")
    m = len(p)
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m, dtype=np.float64)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def holm_standard_errors(p_values: Sequence[float], draws: Sequence[int | None]) -> np.ndarray:
    """The Monte Carlo standard error of each Holm-adjusted p-value, in the input order::

        p'_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))      (p'_(i) is (m - j* + 1) p_(j*), j* attaining the max)
        se(p'_(i)) = (m - j* + 1) sqrt(p_(j*) (1 - p_(j*)) / n_(j*))

    ``draws[i]``: the random sign vectors behind ``p_values[i]``, or None where it is exact (se 0, as it is
    where the adjusted p is clipped at 1). With m = 1 it is the plain ``sqrt(p (1 - p) / n)``."""
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    se = np.zeros(m, dtype=np.float64)
    if m == 0:
        return se
    order = np.argsort(p, kind="stable")
    scaled = (m - np.arange(m)) * p[order]
    best = 0
    for i in range(m):
        if scaled[i] > scaled[best]:
            best = i
        n = draws[order[best]]
        if n is not None and scaled[best] < 1.0:
            q = p[order[best]]
            se[order[i]] = (m - best) * math.sqrt(q * (1.0 - q) / n)
    return se


def near_alpha(p: float, se: float, alpha: float) -> bool:
    """Whether a Monte Carlo p-value lies within 3 standard errors of ``alpha``: ``|p - alpha| < 3 se``.

    Then another seed or more draws could put it on the other side of alpha, and the call with it: the
    call is reproducible (the draws are seeded) but decided by the draws, not the data."""
    return se > 0 and abs(p - alpha) < 3 * se


def percent(confidence: float) -> str:
    """A confidence level as printed: ``95%``, ``99.5%`` (``:.0%`` printed 0.995, ``--alpha 0.005``, as 100%),
    ``99.99999%`` (up to 10 decimals of the percentage: ``:g`` kept 6 digits, and printed 1 - 1e-7 as 100%)."""
    return f"{round(confidence * 100, 10):.12g}%"


def significant(p: float, alpha: float) -> bool:
    """Whether ``p`` is below ``alpha`` (see the module docstring: a relative 1e-12 of rounding is
    allowed for, so a p-value of exactly alpha is never significant)."""
    return p < alpha * (1.0 - 1e-12)


def rank_groups(means: Sequence[float], different: np.ndarray) -> list[list[int]]:
    """Groups of systems that are not significantly different, best first (see the module docstring).

    ``means[i]`` is system i's mean; ``different[i, j]`` is true when systems i and j differ
    significantly. Systems are ranked by mean, descending (ties keep the input order). Returns the
    maximal runs of consecutive ranks without a significant pair, each as system indices in rank
    order; a system significantly different from both neighbours forms a group of its own.
    """
    means = np.asarray(means, dtype=np.float64)
    different = np.asarray(different, dtype=bool)
    n = len(means)
    if different.shape != (n, n):
        raise ValueError(f"'different' must be {n} x {n}, got {different.shape}")
    order = np.argsort(-means, kind="stable").tolist()
    groups: list[list[int]] = []
    last_end = -1
    for start in range(n):
        end = start
        while end + 1 < n and not any(different[order[end + 1], order[i]] for i in range(start, end + 1)):
            end += 1
        if end > last_end:  # not inside the previous group
            groups.append(order[start:end + 1])
            last_end = end
    return groups


@dataclass(frozen=True)
class PairedComparison:
    """Every statistic of one system against the baseline on one metric."""

    n: int
    baseline_mean: float
    mean: float
    difference: float
    wins: int
    losses: int
    ties: int
    t_statistic: float
    p_t: float
    p_randomization: float
    randomization_exact: bool
    permutations: int
    ci_low: float
    ci_high: float
    confidence: float

    def to_dict(self) -> dict:
        return asdict(self)


def compare_paired(a: Sequence[float], b: Sequence[float], permutations: int = 10_000, resamples: int = 10_000,
                   confidence: float = 0.95, seed: int = 0) -> PairedComparison:
    """Run all three tests of ``b`` against ``a``."""
    d = _differences(a, b)
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    t = paired_t_test(a, b)
    r = randomization_test(a, b, permutations=permutations, seed=seed)
    ci = paired_bootstrap_ci(a, b, resamples=resamples, confidence=confidence, seed=seed)
    return PairedComparison(
        n=len(d), baseline_mean=finite_mean(a), mean=finite_mean(b), difference=finite_mean(d),
        wins=int((d > 0).sum()), losses=int((d < 0).sum()), ties=int((d == 0).sum()),
        t_statistic=t.statistic, p_t=t.p_value, p_randomization=r.p_value, randomization_exact=r.exact,
        permutations=r.n_permutations, ci_low=ci.low, ci_high=ci.high, confidence=confidence)


def paired_bootstrap_ratio(a: Sequence[float], b: Sequence[float], statistic, resamples: int = 10_000,
                           confidence: float = 0.95, seed: int = 0, clusters: np.ndarray | None = None
                           ) -> BootstrapResult:
    """Percentile bootstrap interval of ``statistic(b) / statistic(a)`` (e.g. the ratio of two p95
    latencies): the queries are resampled with replacement as pairs (seeded, in blocks, as
    :func:`paired_bootstrap_ci`), and ``statistic(matrix)`` reduces each row of a (resamples, n)
    matrix of values (e.g. ``lambda x: np.percentile(x, 95, axis=1)``).

    ``clusters`` (optional, an (m, size) matrix of positions): resample these m groups of queries
    instead of single queries (a cluster bootstrap, for values measured per group, such as the
    per-batch shares of a batched search); each drawn group contributes its ``size`` positions.
    """
    _differences(a, b)  # the same checks: 1-d, same length, >= 2 queries, finite
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    groups = None if clusters is None else np.asarray(clusters, dtype=np.int64)
    units = len(a) if groups is None else len(groups)
    rng = np.random.default_rng(seed)
    rows = max(1, _BLOCK_CELLS // (len(a) if groups is None else groups.size))
    ratios = np.empty(resamples, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for start in range(0, resamples, rows):
            size = min(rows, resamples - start)
            drawn = rng.integers(0, units, size=(size, units))
            if groups is not None:
                drawn = groups[drawn].reshape(size, -1)
            ratios[start:start + size] = statistic(b[drawn]) / statistic(a[drawn])
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(ratios, [tail, 1.0 - tail])
    return BootstrapResult(float(low), float(high), confidence, resamples, seed)

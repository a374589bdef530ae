"""Significance tests against independent oracles: closed forms, scipy, brute-force enumeration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import special, stats

from harness.compare.significance import (bootstrap_ci, bootstrap_means, compare_paired, holm_bonferroni,
                                          paired_bootstrap_ci, paired_t_test, randomization_test, rank_groups,
                                          t_two_sided_p)


# ------------------------------------------------------------------ t distribution
@pytest.mark.parametrize("t", [0.0, 1e-8, 0.3, 1.0, 2.5, 12.0, 1e4])
def test_t_tail_matches_closed_forms(t):
    # df = 1 is the Cauchy distribution: P(|T| >= t) = 1 - (2/pi) atan(t).
    assert t_two_sided_p(t, 1) == pytest.approx(1 - 2 / math.pi * math.atan(t), rel=1e-12, abs=1e-300)
    # df = 2: P(|T| >= t) = 1 - t / sqrt(2 + t^2) = 2 / (s (s + t)) with s = sqrt(2 + t^2) (no cancellation).
    s = math.sqrt(2 + t * t)
    assert t_two_sided_p(t, 2) == pytest.approx(2 / (s * (s + t)), rel=1e-12, abs=1e-300)


def test_t_tail_matches_scipy_stdtr():
    for df in (3, 9, 29, 299, 5000):
        for t in (0.1, 0.7, 1.96, 3.0, 6.0, 15.0):
            assert t_two_sided_p(t, df) == pytest.approx(2 * special.stdtr(df, -t), rel=1e-10)


def test_t_test_matches_scipy_ttest_rel():
    rng = np.random.default_rng(7)
    for n, shift in ((5, 0.0), (30, 0.05), (300, 0.01), (300, -0.2)):
        a = rng.random(n)
        b = np.clip(a + rng.normal(shift, 0.1, n), 0, 1)
        mine = paired_t_test(a, b)
        ref = stats.ttest_rel(b, a)
        assert mine.statistic == pytest.approx(ref.statistic, rel=1e-12)
        assert mine.p_value == pytest.approx(ref.pvalue, rel=1e-9)
        assert mine.df == n - 1


def test_t_test_degenerate_differences():
    a = np.array([0.1, 0.5, 0.9])
    assert paired_t_test(a, a) == paired_t_test(a, a.copy())
    assert (paired_t_test(a, a).statistic, paired_t_test(a, a).p_value) == (0.0, 1.0)
    shifted = paired_t_test(a, a + 0.1)  # constant non-zero difference: infinitely significant
    assert shifted.statistic == math.inf and shifted.p_value == 0.0
    assert paired_t_test(a, a - 0.1).statistic == -math.inf


def test_inputs_are_validated():
    with pytest.raises(ValueError, match="same length"):
        paired_t_test([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="at least 2"):
        randomization_test([1.0], [0.0])
    with pytest.raises(ValueError, match="finite"):
        paired_bootstrap_ci([1.0, float("nan")], [0.0, 1.0])


# ------------------------------------------------------------------ randomization test
def _brute_force_p(d):
    """Share of the 2^n sign assignments with |sum| >= |observed sum| (plain Python loop)."""
    observed = abs(sum(d))
    hits = sum(abs(sum(s * x for s, x in zip(signs, d))) >= observed - 1e-12
               for signs in itertools.product((1, -1), repeat=len(d)))
    return hits / 2 ** len(d)


def test_randomization_worked_example():
    # d = (1, 2, 3): the 8 signed sums are +-6, +-4, +-2, 0, 0; only +-6 reach |6| -> p = 2/8.
    r = randomization_test([0, 0, 0], [1, 2, 3])
    assert r.exact and r.n_permutations == 8 and r.p_value == 0.25


def test_randomization_exact_matches_enumeration_of_all_2_to_the_10_sign_flips():
    rng = np.random.default_rng(3)
    a = rng.random(10)
    b = np.clip(a + rng.normal(0.1, 0.2, 10), 0, 1)
    expected = _brute_force_p((b - a).tolist())
    exact = randomization_test(a, b, method="exact")
    assert exact.exact and exact.n_permutations == 1024
    assert exact.p_value == pytest.approx(expected, abs=1e-15)
    # auto picks enumeration because 2^10 <= 10,000 permutations
    assert randomization_test(a, b).p_value == exact.p_value
    # Monte Carlo with 100,000 sign vectors lands within 4 standard errors of the exact p
    mc = randomization_test(a, b, permutations=100_000, seed=11, method="monte-carlo")
    assert not mc.exact
    se = math.sqrt(expected * (1 - expected) / 100_000)
    assert abs(mc.p_value - expected) < 4 * se


def test_zero_differences_are_left_out_of_the_enumeration():
    # Zeros add 0 under either sign: brute force over all 2^12 flips (2 zeros included) equals the
    # exact test, which enumerates only the 2^10 flips of the non-zero differences.
    rng = np.random.default_rng(4)
    d = np.concatenate([rng.normal(0.05, 0.2, 10), [0.0, 0.0]])
    r = randomization_test(np.zeros(12), d)
    assert r.exact and r.n_permutations == 1024
    assert r.p_value == pytest.approx(_brute_force_p(d.tolist()), abs=1e-15)
    # 300 queries of which 10 changed: still exact, same p
    wide = randomization_test(np.zeros(300), np.concatenate([d, np.zeros(288)]))
    assert wide.exact and wide.p_value == r.p_value


def test_randomization_counts_ties_of_the_observed_sum():
    # metric values on a grid (e.g. P@10) make equal sums common; d = (0.1, 0.2, 0.3) has the
    # floating sums 0.1 + 0.2 - 0.3 != 0 exactly but the tie with the observed sum must count:
    # |+-0.1 +-0.2 +-0.3| >= 0.6 only for all-plus and all-minus -> 2/8.
    assert randomization_test([0, 0, 0], [0.1, 0.2, 0.3]).p_value == 0.25
    assert randomization_test([0.3, 0.2, 0.1, 0.5], [0.3, 0.2, 0.1, 0.5]).p_value == 1.0


def test_randomization_monte_carlo_is_seeded_and_never_zero():
    rng = np.random.default_rng(5)
    a = rng.random(300)
    b = a + 0.2  # every query improves: no random sign vector reaches the observed sum
    r = randomization_test(a, b, permutations=10_000, seed=0)
    assert r.p_value == 1 / 10_001
    c = np.clip(a + rng.normal(0.01, 0.1, 300), 0, 1)
    first = randomization_test(a, c, seed=42)
    assert randomization_test(a, c, seed=42) == first
    assert randomization_test(a, c, seed=43).p_value != first.p_value


def test_randomization_agrees_with_t_test_on_a_large_sample():
    # For n = 300 roughly normal differences both tests estimate the same tail probability.
    rng = np.random.default_rng(9)
    a = rng.random(300)
    b = a + rng.normal(0.012, 0.1, 300)
    assert randomization_test(a, b, permutations=20_000).p_value == pytest.approx(paired_t_test(a, b).p_value,
                                                                                   abs=0.01)


# ------------------------------------------------------------------ bootstrap
def test_bootstrap_constant_difference_has_zero_width():
    ci = paired_bootstrap_ci([0.1, 0.2, 0.3], [0.35, 0.45, 0.55])
    assert ci.low == pytest.approx(0.25) and ci.high == pytest.approx(0.25)


def test_bootstrap_interval_matches_normal_approximation():
    # For n = 400 normal differences the percentile interval is close to mean +- 1.96 sd / sqrt(n).
    rng = np.random.default_rng(1)
    d = rng.normal(0.02, 0.1, 400)
    ci = paired_bootstrap_ci(np.zeros(400), d, resamples=20_000, seed=3)
    half = 1.959964 * d.std(ddof=1) / math.sqrt(400)
    assert ci.low == pytest.approx(d.mean() - half, abs=0.1 * half)
    assert ci.high == pytest.approx(d.mean() + half, abs=0.1 * half)
    assert paired_bootstrap_ci(np.zeros(400), d, resamples=20_000, seed=3) == ci



def test_one_sample_bootstrap_matches_normal_approximation_and_the_paired_one():
    # One system's mean: the percentile interval is close to mean +- 1.96 sd / sqrt(n) (n = 300 values
    # in [0, 1], like nDCG per query); the paired interval is the one-sample interval of b - a.
    rng = np.random.default_rng(7)
    x = rng.beta(0.6, 0.4, 300)
    ci = bootstrap_ci(x, resamples=20_000, seed=5)
    half = 1.959964 * x.std(ddof=1) / math.sqrt(300)
    assert ci.low == pytest.approx(x.mean() - half, abs=0.1 * half)
    assert ci.high == pytest.approx(x.mean() + half, abs=0.1 * half)
    a = rng.random(300)
    assert paired_bootstrap_ci(a, x, resamples=500, seed=2) == bootstrap_ci(x - a, resamples=500, seed=2)
    means = bootstrap_means(x, resamples=1000, seed=5)
    assert means.shape == (1000,) and means.min() >= x.min() and means.max() <= x.max()
    # Columns are resampled with the same queries: each column's means are the 1-d means.
    both = bootstrap_means(np.column_stack([x, a]), resamples=1000, seed=5)
    assert both.shape == (1000, 2)
    assert np.allclose(both[:, 0], means, rtol=0, atol=1e-12)
    assert np.allclose(both[:, 1], bootstrap_means(a, resamples=1000, seed=5), rtol=0, atol=1e-12)
    # A resample's mean is a mean of drawn values: check one block against a direct gather.
    drawn = np.random.default_rng(5).integers(0, 300, size=(1000, 300))
    assert np.allclose(means, x[drawn].mean(axis=1), rtol=0, atol=1e-12)
    with pytest.raises(ValueError):
        bootstrap_ci([], resamples=10)
    with pytest.raises(ValueError):
        bootstrap_ci([0.5, 0.2], confidence=1.0)

# ------------------------------------------------------------------ Holm-Bonferroni
def test_holm_worked_example():
    # sorted: 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> running max
    # 0.02, 0.03, 0.06, 0.06, returned in input order.
    assert holm_bonferroni([0.01, 0.04, 0.03, 0.005]).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm_bonferroni([0.5, 0.6]).tolist() == [1.0, 1.0]
    assert holm_bonferroni([0.2]).tolist() == [0.2]
    with pytest.raises(ValueError):
        holm_bonferroni([1.5])


def test_compare_paired_counts_and_means():
    a = [0.5, 0.5, 0.2, 0.0]
    b = [0.7, 0.5, 0.1, 0.4]
    c = compare_paired(a, b)
    assert (c.wins, c.losses, c.ties, c.n) == (2, 1, 1, 4)
    assert c.difference == pytest.approx(0.125) and c.mean == pytest.approx(0.425)
    assert c.randomization_exact and c.permutations == 8  # 2^3: the tied query is not permuted


# ------------------------------------------------------------------ rank groups
def test_rank_groups_worked_example():
    # Means rank A > B > C > D; significant pairs: A-C, A-D, B-D, C-D. Runs of consecutive ranks
    # without a significant pair: {A, B}, {B, C}, {D} ({C} alone lies inside {B, C}).
    means = [0.3, 0.5, 0.1, 0.4]  # C, A, D, B in input order
    names = ["C", "A", "D", "B"]
    pairs = {("A", "C"), ("A", "D"), ("B", "D"), ("C", "D")}
    different = np.array([[(x, y) in pairs or (y, x) in pairs for y in names] for x in names])
    groups = [[names[i] for i in g] for g in rank_groups(means, different)]
    assert groups == [["A", "B"], ["B", "C"], ["D"]]


def test_rank_groups_extremes():
    none = np.zeros((3, 3), dtype=bool)
    assert rank_groups([0.1, 0.3, 0.2], none) == [[1, 2, 0]]
    assert rank_groups([0.1, 0.3, 0.2], ~np.eye(3, dtype=bool)) == [[1], [2], [0]]
    assert rank_groups([], np.zeros((0, 0), dtype=bool)) == []
    with pytest.raises(ValueError):
        rank_groups([0.1, 0.2], none)

"""Compare and check on per-query values near the largest double (DCG_exp of grades past 500 reaches
2^500 and more; up to 2^1023): the statistics are those of the same values scaled by a power of two,
which leaves t and p unchanged and scales means exactly, never inf or NaN from an overflowing sum or square."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.compare import align, compare
from harness.compare.load import load_system
from harness.compare.significance import compare_paired, paired_t_test
from tests.compare.helpers import write_result

A = np.array([3.0, 1.0, 2.0, 5.0])
B = np.array([1.0, 2.0, 2.0, 2.0])


@pytest.mark.parametrize("exponent", [600, 1020])
def test_t_statistic_is_scale_free_where_squares_overflow(exponent):
    # (d * 2^e)^2 overflows past e = 512: sd was inf, t 0 and p 1 whatever the data.
    scale = 2.0**exponent
    assert paired_t_test(A * scale, B * scale) == paired_t_test(A, B)


def test_paired_means_near_2_to_the_1023_are_finite():
    scale = 2.0**1021  # the largest, 5 * 2^1021, is a double; the sum, 11 * 2^1021, is not
    stats = compare_paired(A * scale, B * scale, permutations=10, resamples=10)
    assert (stats.baseline_mean, stats.mean, stats.difference) == (2.75 * scale, 1.75 * scale, -1.0 * scale)
    assert stats.t_statistic == paired_t_test(A, B).statistic


def test_compare_json_means_are_numbers_not_inf(tmp_path):
    big = 2.0**1023
    base = load_system(str(write_result(tmp_path / "b", {"q1": {"M": big}, "q2": {"M": big}, "q3": {"M": 0.0}})))
    cur = load_system(str(write_result(tmp_path / "c", {"q1": {"M": big}, "q2": {"M": 0.0}, "q3": {"M": 0.0}})))
    document = compare(align([base, cur], ["M"])).to_dict()
    assert document["systems"][0]["means"] == {"M": big / 3 * 2} and document["systems"][1]["means"] == {"M": big / 3}
    json.dumps(document, allow_nan=False)


def test_randomization_p_and_bootstrap_interval_are_those_of_the_scaled_values():
    from harness.compare.significance import paired_bootstrap_ci, randomization_test

    scale = 2.0**1021  # |sum of signed differences| and bootstrap sums pass the largest double unscaled
    a, b = np.array([5.0, 0.0, 4.0, 0.0, 5.0]), np.array([0.0, 1.0, 0.0, 5.0, 0.0])
    assert randomization_test(a * scale, b * scale).p_value == randomization_test(a, b).p_value
    big, small = paired_bootstrap_ci(a * scale, b * scale, resamples=200), paired_bootstrap_ci(a, b, resamples=200)
    assert (big.low, big.high) == (small.low * scale, small.high * scale)


def test_latency_interval_undefined_by_zero_baselines_falls_back_to_wall_time(tmp_path):
    # 18 of 20 baseline queries timed at 0 ms: many resamples have a p90 of 0, so ratios 0/0 and x/0 made
    # the interval [nan, nan] and the check JSON held NaN. As for a baseline statistic of 0: wall time.
    from harness.compare.latency import check_latency

    per_query = {f"q{i}": {"M": 0.5} for i in range(20)}
    latencies = {f"q{i}": (0.0 if i < 18 else 5.0) for i in range(20)}
    efficiency = {"stages_s": {"search": 1.0}, "latency_ms": {"basis": "per request"}}
    base, cur = (load_system(str(write_result(tmp_path / n, per_query, efficiency=efficiency,
                                              query_latency_ms=latencies))) for n in ("b", "c"))
    result = check_latency(base, cur, "p90", 0.2, resamples=200)
    assert [(c.stage, c.statistic, c.verdict) for c in result.checks] == [("search", "wall", "OK")]
    assert any("interval undefined" in w for w in result.warnings)
    json.dumps(result.to_dict(), allow_nan=False)

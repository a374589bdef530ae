"""Edges found by a differential review of the comparison statistics and the check gate.

* A change of exactly the tolerance is within it (docs/compare.md: OK when |Δ| <= tolerance), even
  though the mean difference of float values comes out a few ulps beyond it.
* A NaN tolerance is refused (it would make every change exceed the tolerance, or, for latency,
  none ever exceed it).
* Per-query differences at rounding level with mixed signs are not an infinitely significant shift.
* The at-k curves of ``--plots`` average the queries the comparison is made on (``--intersection``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from harness.compare.check import OK, run_check, verdict
from harness.compare.latency import check_latency
from harness.compare.load import align, load_system
from harness.compare.plots import curves
from harness.compare.significance import paired_t_test
from tests.compare.helpers import values, write_result


def test_change_of_exactly_the_tolerance_is_ok(tmp_path):
    # 0.495 - 0.5 is -0.005 in decimals, -0.0050000000000000044 in floats: the gate must pass (exit 0).
    a = load_system(str(write_result(tmp_path / "baseline", values("NDCG@10", [0.5] * 10))))
    b = load_system(str(write_result(tmp_path / "current", values("NDCG@10", [0.495] * 10))))
    result = run_check(align([a, b], ["NDCG@10"]), tolerance=0.005)
    assert result.checks[0].verdict == OK and result.exit_code == 0
    # and a change just beyond it still counts
    c = load_system(str(write_result(tmp_path / "worse", values("NDCG@10", [0.4949] * 10))))
    assert run_check(align([a, c], ["NDCG@10"]), tolerance=0.005).exit_code == 1


def test_nan_tolerances_are_refused(tmp_path):
    with pytest.raises(ValueError, match="tolerance"):
        verdict(-0.2, 0.001, math.nan, 0.05)
    a = load_system(str(write_result(tmp_path / "a", values("NDCG@10", [0.5] * 3))))
    with pytest.raises(ValueError, match="tolerance"):
        check_latency(a, a, "p95", math.nan)


def test_rounding_level_differences_of_mixed_sign_are_not_significant():
    a = np.array([0.5, 0.5, 0.5])
    b = a + np.array([3e-13, -1e-13, 2e-13])
    # scipy.stats.ttest_rel: t = 1.109, p = 0.383 -- nowhere near significant; before: t = inf, p = 0.
    assert stats.ttest_rel(b, a).pvalue > 0.3
    result = paired_t_test(a, b)
    assert (result.statistic, result.p_value) == (0.0, 1.0)
    shifted = paired_t_test(a, a + 0.1)  # a real constant shift stays infinitely significant
    assert shifted.statistic == math.inf and shifted.p_value == 0.0


def test_curves_average_the_compared_queries(tmp_path):
    s1 = {"q1": {"NDCG@1": 1.0, "NDCG@10": 1.0}, "q2": {"NDCG@1": 0.0, "NDCG@10": 0.0}}
    s2 = {"q1": {"NDCG@1": 1.0, "NDCG@10": 1.0}, "q2": {"NDCG@1": 0.0, "NDCG@10": 0.5},
          "q3": {"NDCG@1": 0.0, "NDCG@10": 0.0}, "q4": {"NDCG@1": 0.0, "NDCG@10": 0.2}}
    systems = [load_system(str(write_result(tmp_path / n, v))) for n, v in (("s1", s1), ("s2", s2))]
    aligned = align(systems, ["NDCG@10"], intersection=True)
    # on the common queries q1, q2: s2's NDCG@10 = (1.0 + 0.5) / 2 = 0.75, as in the table
    assert aligned.of("s2", "NDCG@10").mean() == 0.75
    assert curves(aligned.systems)["NDCG"] == [(1, {"s1": 0.5, "s2": 0.5}), (10, {"s1": 0.5, "s2": 0.75})]

"""Check verdicts: each rule of harness.compare.check on data with exactly known p-values.

With 10 queries the randomization test enumerates all 2^10 sign vectors, so p is exact:
for differences of equal size 0.1 with B positive ones, |sum| >= |observed| counts the B' with
|2B' - 10| >= |2B - 10|, i.e. p = sum of binomial(10, B') / 1024 over those B'.
"""

from __future__ import annotations

import pytest

from harness.compare.check import IMPROVED, NOISE, OK, REGRESSED, cutoff, format_report, run_check, verdict
from harness.compare.load import align, load_system
from tests.compare.helpers import values, write_result


@pytest.mark.parametrize("delta, p, expected", [
    (-0.02, 0.01, REGRESSED),
    (0.02, 0.01, IMPROVED),
    (-0.02, 0.2, NOISE),
    (0.02, 0.2, NOISE),
    (-0.004, 0.001, OK),   # significant but within tolerance
    (-0.005, 0.001, OK),   # exactly at the tolerance is within it
    (0.0, 1.0, OK),
    (-0.02, 0.05, NOISE),  # p must be strictly below alpha
])
def test_verdict_rules(delta, p, expected):
    assert verdict(delta, p, tolerance=0.005, alpha=0.05) == expected


def test_verdict_validates_options():
    with pytest.raises(ValueError, match="tolerance"):
        verdict(0.0, 0.5, -0.1, 0.05)
    with pytest.raises(ValueError, match="alpha"):
        verdict(0.0, 0.5, 0.005, 1.5)


def _check(tmp_path, diffs, tolerance=0.005, **kwargs):
    base = [0.5] * len(diffs)
    a = load_system(str(write_result(tmp_path / "baseline", values("NDCG@10", base))))
    b = load_system(str(write_result(tmp_path / "current", values("NDCG@10", [x + d for x, d in zip(base, diffs)]))))
    return run_check(align([a, b], ["NDCG@10"]), tolerance=tolerance, **kwargs)


def test_regressed(tmp_path):
    result = _check(tmp_path, [-0.1] * 10)
    c = result.checks[0]
    assert c.verdict == REGRESSED and c.p_value == 2 / 1024  # only all-minus and all-plus reach |sum| = 1
    assert c.delta == pytest.approx(-0.1) and (c.wins, c.ties, c.losses) == (0, 0, 10)
    assert result.exit_code == 1 and result.regressed


def test_improved(tmp_path):
    c = _check(tmp_path, [0.1] * 9 + [-0.1]).checks[0]
    # B = 9: |2B' - 10| >= 8 for B' in {0, 1, 9, 10}: (1 + 10 + 10 + 1) / 1024
    assert c.verdict == IMPROVED and c.p_value == 22 / 1024 and c.delta == pytest.approx(0.08)


def test_noise(tmp_path):
    result = _check(tmp_path, [-0.1] * 6 + [0.1] * 4)
    c = result.checks[0]
    # B = 4: |2B' - 10| >= 2 for every B' except 5: 1 - 252 / 1024
    assert c.verdict == NOISE and c.p_value == 1 - 252 / 1024 and c.delta == pytest.approx(-0.02)
    assert result.exit_code == 0


def test_ok_when_significant_but_within_tolerance(tmp_path):
    c = _check(tmp_path, [-0.001] * 10).checks[0]
    assert c.verdict == OK and c.p_value == 2 / 1024


def test_t_test_option(tmp_path):
    stats = pytest.importorskip("scipy.stats")
    diffs = [-0.1, -0.2, 0.05, -0.15, -0.1, 0.0, -0.3, 0.1, -0.05, -0.1]
    c = _check(tmp_path, diffs, test="t").checks[0]
    expected = stats.ttest_rel([0.5 + d for d in diffs], [0.5] * 10).pvalue
    assert c.p_value == pytest.approx(expected, rel=1e-9) and c.verdict == REGRESSED


def test_worst_queries_with_texts_and_rankings(tmp_path):
    per_base = {"q1": {"NDCG@3": 0.9}, "q2": {"NDCG@3": 0.8}, "q3": {"NDCG@3": 0.5}}
    per_cur = {"q1": {"NDCG@3": 0.9}, "q2": {"NDCG@3": 0.3}, "q3": {"NDCG@3": 0.4}}
    texts = {"q1": "one", "q2": "two", "q3": "three"}
    a = load_system(str(write_result(tmp_path / "baseline", per_base, texts,
                                     rankings={"q1": ["a", "b", "c"], "q2": ["d1", "d2", "d3", "d4"], "q3": ["x"]})))
    b = load_system(str(write_result(tmp_path / "current", per_cur, texts,
                                     rankings={"q1": ["a", "b", "c"], "q2": ["d3", "d9", "d2", "d1"], "q3": ["y"]})))
    result = run_check(align([a, b], ["NDCG@3"]), tolerance=0.0, show=5)
    worst = result.checks[0].worst
    assert [q.query_id for q in worst] == ["q2", "q3"]  # biggest loss first; q1 did not lose
    q2 = worst[0]
    assert (q2.query, q2.baseline, q2.current, q2.k) == ("two", 0.8, 0.3, 3)
    assert q2.left == ["d1"] and q2.entered == ["d9"]  # top 3: d1 d2 d3 -> d3 d9 d2
    assert worst[1].left == ["x"] and worst[1].entered == ["y"]
    report = format_report(result, "baseline", "current")
    assert "queries that lost most on NDCG@3 (NOISE):" in report
    assert "q2  'two'" in report and "left top 3: d1" in report and "entered top 3: d9" in report
    assert report.rstrip().endswith("PASSED")


def test_missing_rankings_degrade_gracefully(tmp_path):
    result = _check(tmp_path, [-0.1] * 10, show=2)
    worst = result.checks[0].worst
    assert len(worst) == 2 and worst[0].left is None and worst[0].query is None
    report = format_report(result, "b", "c")
    assert "rankings unavailable" in report and report.rstrip().endswith("FAILED: regression on NDCG@10")


def test_cutoff():
    assert cutoff("NDCG@10") == 10 and cutoff("R_cap@100") == 100 and cutoff("MAP") is None


def test_a_drop_of_exactly_the_tolerance_on_large_means_is_ok(tmp_path):
    """DCG sums past 1e4: the docs say a change of exactly the tolerance is OK, but 10 queries dropping
    from 12345.6 to 12345.5 (decimal drop 0.1 = --tolerance 0.1) give a mean difference of
    -0.10000000000218279 (one ulp of 12345.6 is 1.8e-12, above the old absolute slack of 1e-12):
    REGRESSED (exit 1), p = 2/1024 (all 10 signs alike, enumerated exactly). Expected: OK. The slack
    is relative to the means (1e-12 * max(1, |mean|): 1.2e-8 here), so a drop of 0.1 + 1e-7 still regresses."""
    import numpy as np

    base = load_system(str(write_result(tmp_path / "baseline", values("DCG@1000", [12345.6] * 10))))
    cur = load_system(str(write_result(tmp_path / "current", values("DCG@1000", [12345.5] * 10))))
    (check,) = run_check(align([base, cur], ["DCG@1000"]), tolerance=0.1).checks
    assert (check.verdict, check.p_value, check.losses) == (OK, 2 / 1024, 10)
    cur = load_system(str(write_result(tmp_path / "worse", values("DCG@1000", [12345.4] * 10))))
    assert run_check(align([base, cur], ["DCG@1000"]), tolerance=0.1).checks[0].verdict == REGRESSED
    delta = float(np.full(10, 12345.5).mean() - np.full(10, 12345.6).mean())
    assert delta == -0.10000000000218279 and delta < -0.1 - 1e-12  # an absolute slack refuses it
    assert verdict(delta, 2 / 1024, 0.1, 0.05, 12345.6) == OK
    assert verdict(delta, 2 / 1024, 0.1, 0.05) == REGRESSED  # no scale given: absolute 1e-12
    assert verdict(-0.1 - 1e-7, 2 / 1024, 0.1, 0.05, 12345.6) == REGRESSED  # beyond rounding: still caught
    assert verdict(-0.0050000000000000044, 0.001, 0.005, 0.05, 0.5) == OK  # small means: as before

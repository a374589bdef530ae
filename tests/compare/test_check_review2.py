"""`harness check` (second review): a p-value of exactly alpha, JUnit XML that stays well-formed, --seed.

Expected values are worked examples:

* two queries with differences [-0.25, 0]: t = mean / (sd / sqrt(2)) = -0.125 / 0.125 = -1 with one
  degree of freedom, whose two-sided p is 1 - (2 / pi) * atan(1) = 1/2 exactly (the Cauchy
  distribution); scipy.stats.ttest_rel gives 0.5000000000000001, the harness 0.4999999999999999. At
  ``--alpha 0.5`` the rule "REGRESSED: p < alpha" does not hold (p = alpha: NOISE), so the gate passes
  (exit 0); it failed (exit 1) on the rounding.
* a query id holding U+0001 (a TREC file splits on ASCII whitespace only, so such an id is read and
  evaluated) went into the JUnit failure text as it is: XML 1.0 has no such character, and every JUnit
  reader refused the file ("not well-formed (invalid token)").
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from harness.compare.check import NOISE, verdict
from tests.cli.test_rerank_cli import main_in_process
from tests.compare.helpers import values, write_result


def test_a_p_value_of_exactly_alpha_is_noise_and_the_gate_passes(tmp_path, monkeypatch, capsys):
    assert verdict(-0.125, 0.4999999999999999, 0.0, 0.5) == NOISE  # p = 1/2 a ulp low
    base = write_result(tmp_path / "base", values("NDCG@10", [0.5, 0.5]))
    cur = write_result(tmp_path / "cur", values("NDCG@10", [0.25, 0.5]))
    code, out, _ = main_in_process(monkeypatch, capsys, "check", "--baseline", str(base), "--current", str(cur),
                                   "--test", "t", "--alpha", "0.5", "--tolerance", "0")
    assert "  NOISE     NDCG@10  0.5000 -> 0.3750  (-0.1250, p = 0.5; 0 better, 1 same, 1 worse)" in out
    assert (code, out.splitlines()[-1]) == (0, "PASSED")


def test_junit_xml_is_well_formed_with_a_control_character_in_a_query_id(tmp_path, monkeypatch, capsys):
    base = write_result(tmp_path / "base", {"q\x01": {"P@1": 1.0}, "q2": {"P@1": 1.0}})
    cur = write_result(tmp_path / "cur", {"q\x01": {"P@1": 0.0}, "q2": {"P@1": 0.0}})
    junit = tmp_path / "check.xml"
    code, out, _ = main_in_process(monkeypatch, capsys, "check", "--baseline", str(base), "--current", str(cur),
                                   "-m", "P@1", "--tolerance", "0", "--alpha", "0.9", "--junit", str(junit))
    assert code == 1 and out.splitlines()[-1] == "FAILED: regression on P@1"  # p = 2/4 < 0.9
    failure = ET.parse(junit).find("testsuite/testcase/failure")  # was: ParseError, not well-formed
    assert failure.get("type") == "REGRESSED"
    assert failure.text.splitlines() == ["q\\x01: 1.0000 -> 0.0000", "q2: 1.0000 -> 0.0000"]


def test_a_negative_seed_is_named(tmp_path, monkeypatch, capsys):
    # 20 changed queries: 2^20 sign vectors > --permutations, so the randomization test samples (seeded)
    base = write_result(tmp_path / "base", values("NDCG@10", [0.5] * 20))
    cur = write_result(tmp_path / "cur", values("NDCG@10", [0.25] * 20))
    code, _, err = main_in_process(monkeypatch, capsys, "check", "--baseline", str(base), "--current", str(cur),
                                   "--seed", "-1")
    assert (code, err) == (2, "error: --seed must be >= 0\n")  # was: 'error: expected non-negative integer'


def test_a_search_latency_that_is_no_finite_number_is_named(tmp_path, monkeypatch, capsys):
    """A hand-edited metrics.json with ``"query_latency_ms": {"q0": NaN}`` (Python's json reads the
    token) stopped the check with 'error: per-query values must be finite numbers' (no file, no query,
    and the per-query metric values were fine); a negative latency gave a ratio interval [-5, 1]."""
    efficiency = {"latency_ms": {"basis": "per request"}, "stages_s": {"search": 1.0}}
    base = write_result(tmp_path / "base", values("NDCG@10", [0.5] * 3), efficiency=efficiency,
                        query_latency_ms={"q0": 1.0, "q1": 1.0, "q2": 2.0})
    for bad, shown in ((float("nan"), "nan"), (float("inf"), "inf"), (-5.0, "-5.0")):
        cur = write_result(tmp_path / f"cur{shown}", values("NDCG@10", [0.5] * 3), efficiency=efficiency,
                           query_latency_ms={"q0": 1.0, "q1": bad, "q2": 2.0})
        code, _, err = main_in_process(monkeypatch, capsys, "check", "--baseline", str(base), "--current", str(cur),
                                       "--latency-tolerance", "0.2")
        assert (code, err) == (2, f"error: {cur / 'metrics.json'}: query_latency_ms: the search latency {shown} ms "
                                  "is not a finite number >= 0 (id 'q1')\n")


def test_compare_and_the_report_mark_a_p_value_of_exactly_alpha_as_check_does(tmp_path):
    # t = -1 with one degree of freedom: p = 1/2 exactly (scipy 0.5000000000000001), computed here as
    # 0.4999999999999999. check said NOISE (fixed above) while compare's marker (p < alpha) and the
    # report's comparison still called the same difference significant at alpha = 0.5.
    from harness.compare import Settings, align, compare, load_system
    from harness.compare.significance import paired_t_test, significant

    assert paired_t_test([0.5, 0.5], [0.25, 0.5]).p_value == 0.4999999999999999
    assert not significant(0.4999999999999999, 0.5) and significant(0.49999999999, 0.5)
    folders = [str(write_result(tmp_path / "base", values("NDCG@10", [0.5, 0.5]))),
               str(write_result(tmp_path / "cur", values("NDCG@10", [0.25, 0.5])))]
    result = compare(align([load_system(f) for f in folders], ["NDCG@10"]), None, Settings(test="t", alpha=0.5))
    assert not result.cells[("cur", "NDCG@10")].significant


def test_a_negative_seed_is_named_by_compare_and_report_too(tmp_path, monkeypatch, capsys):
    # compare and report said 'expected non-negative integer' (numpy), naming no option, once they drew
    base = write_result(tmp_path / "base", values("NDCG@10", [0.5] * 20))
    cur = write_result(tmp_path / "cur", values("NDCG@10", [0.25] * 20))
    for command in (["compare", str(base), str(cur)], ["report", str(base), str(cur), "-o", str(tmp_path / "r.html")]):
        code, _, err = main_in_process(monkeypatch, capsys, *command, "--seed", "-1")
        assert (code, err) == (2, "error: seed must be >= 0, got -1\n"), command

"""``harness check --tolerance METRIC=NUMBER``: a tolerance per metric, since one gate may mix units.

Worked example (10 queries; exact randomization p-values as in test_check.py): NDCG@10 drops by 0.1 on
every query (mean change -0.1, p = 2/1024) and num_rel_ret by 1 relevant document on every query (mean
change -1, p = 2/1024). With the one default tolerance 0.005 both are REGRESSED; a tolerance of 2
documents for num_rel_ret makes its drop OK (|-1| <= 2) and leaves NDCG@10 gated at 0.005; a default
tolerance of 0.2 with num_rel_ret's own 0.5 turns it around (NDCG@10 OK, num_rel_ret REGRESSED).
"""

from __future__ import annotations

import json

import pytest

from tests.compare.helpers import write_result


@pytest.fixture
def pair(tmp_path):
    base = {f"q{i}": {"NDCG@10": 0.5, "num_rel_ret": 3.0, "AP": 0.4} for i in range(10)}
    cur = {f"q{i}": {"NDCG@10": 0.4, "num_rel_ret": 2.0, "AP": 0.4} for i in range(10)}
    return write_result(tmp_path / "baseline", base), write_result(tmp_path / "current", cur)


def _verdicts(harness_cli, pair, tmp_path, *tolerance):
    out = tmp_path / "check.json"
    proc = harness_cli("check", "--baseline", pair[0], "--current", pair[1], "-m", "NDCG@10,num_rel_ret",
                       *tolerance, "--json", out)
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(out.read_text())
    return proc, {c["metric"]: (c["verdict"], c["tolerance"]) for c in doc["checks"]}, doc


def test_one_tolerance_for_every_metric_by_default(harness_cli, pair, tmp_path):
    proc, verdicts, doc = _verdicts(harness_cli, pair, tmp_path)
    assert verdicts == {"NDCG@10": ("REGRESSED", 0.005), "num_rel_ret": ("REGRESSED", 0.005)}
    assert doc["tolerance"] == 0.005 and doc["tolerances"] == {}
    assert "(tolerance 0.005, alpha 0.05, randomization test)" in proc.stdout.splitlines()[0]


def test_a_metric_given_its_own_tolerance(harness_cli, pair, tmp_path):
    proc, verdicts, doc = _verdicts(harness_cli, pair, tmp_path, "--tolerance", "num_rel_ret=2")
    assert proc.returncode == 1
    assert verdicts == {"NDCG@10": ("REGRESSED", 0.005), "num_rel_ret": ("OK", 2.0)}
    assert doc["tolerance"] == 0.005 and doc["tolerances"] == {"num_rel_ret": 2.0}
    assert "(tolerance 0.005, 2 for num_rel_ret, alpha 0.05, randomization test)" in proc.stdout.splitlines()[0]
    assert proc.stdout.splitlines()[-1] == "FAILED: regression on NDCG@10"


def test_a_default_and_an_own_tolerance_in_one_option(harness_cli, pair, tmp_path):
    proc, verdicts, _ = _verdicts(harness_cli, pair, tmp_path, "--tolerance", "0.2, num_rel_ret=0.5")
    assert verdicts == {"NDCG@10": ("OK", 0.2), "num_rel_ret": ("REGRESSED", 0.5)}
    assert proc.stdout.splitlines()[-1] == "FAILED: regression on num_rel_ret"


def test_junit_and_github_summary_name_the_own_tolerance(harness_cli, pair, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    junit = tmp_path / "check.xml"
    harness_cli("check", "--baseline", pair[0], "--current", pair[1], "-m", "NDCG@10,num_rel_ret",
                "--tolerance", "num_rel_ret=2", "--junit", junit, "--github-summary")
    assert '<property name="tolerance num_rel_ret" value="2.0" />' in junit.read_text()
    assert "10 queries, tolerance 0.005, 2 for num_rel_ret, alpha 0.05, randomization test" in summary.read_text()


@pytest.mark.parametrize("tolerance, message", [
    ("P@5=1", "error: --tolerance P@5=1: P@5 is not gated here (gated: NDCG@10, num_rel_ret; add it with -m)"),
    ("map=0.1", "error: --tolerance map=0.1: AP is not gated here (gated: NDCG@10, num_rel_ret; add it with -m)"),
    ("num_rel_ret=", "error: --tolerance: 'num_rel_ret=' is neither a number nor METRIC=NUMBER"),
    ("=2", "error: --tolerance: '=2' is neither a number nor METRIC=NUMBER"),
    ("0.1,0.2", "error: --tolerance: two tolerances for every metric (0.1 and 0.2)"),
    ("num_rel_ret=1,num_rel_ret=2", "error: --tolerance: two tolerances for num_rel_ret (1 and 2)"),
    ("num_rel_ret=-1", "error: --tolerance must be >= 0 and finite, got num_rel_ret=-1"),
    ("inf", "error: --tolerance must be >= 0 and finite, got inf"),
    (",", "error: --tolerance: ',' gives no tolerance"),
])
def test_bad_tolerances_are_one_line_exit_2(harness_cli, pair, tolerance, message):
    proc = harness_cli("check", "--baseline", pair[0], "--current", pair[1], "-m", "NDCG@10,num_rel_ret",
                       "--tolerance", tolerance)
    assert proc.returncode == 2 and proc.stderr.startswith(message), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_the_same_tolerance_twice_is_one(harness_cli, pair, tmp_path):
    _, verdicts, _ = _verdicts(harness_cli, pair, tmp_path, "--tolerance", "0.2", "--tolerance", "0.2,num_rel_ret=2",
                               "--tolerance", "num_rel_ret=2")
    assert verdicts == {"NDCG@10": ("OK", 0.2), "num_rel_ret": ("OK", 2.0)}

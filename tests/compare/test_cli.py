"""`harness compare` and `harness check` end to end through the command line (small synthetic results).

Commands run in-process through ``harness.cli.main`` (the entry point: one-line errors, exit 2) to
keep the file fast; one test goes through a real subprocess.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.compare.helpers import values, write_result

REPO = Path(__file__).resolve().parents[2]
BASELINE = REPO / "results" / "baselines" / "scifact" / "bm25"


@pytest.fixture
def harness(harness_cli):
    return harness_cli


@pytest.fixture
def pair(tmp_path):
    """A baseline and three currents on 10 queries (exact randomization p-values, see test_check.py)."""
    base = [0.5] * 10
    texts = {f"q{i}": f"query number {i}" for i in range(10)}
    rankings = {f"q{i}": ["d1", "d2", "d3"] for i in range(10)}
    folders = {"baseline": write_result(tmp_path / "baseline", values("NDCG@10", base), texts, rankings)}
    for name, diffs in (("regressed", [-0.1] * 10), ("noise", [-0.1] * 6 + [0.1] * 4), ("same", [0.0] * 10)):
        moved = {f"q{i}": ["d9", "d1", "d2"] if d < 0 else ["d1", "d2", "d3"] for i, d in enumerate(diffs)}
        folders[name] = write_result(tmp_path / name, values("NDCG@10", [x + d for x, d in zip(base, diffs)]),
                                     texts, moved)
    return folders


def test_check_exit_codes_and_report(harness, pair, tmp_path):
    ok = harness("check", "--baseline", pair["baseline"] / "metrics.json", "--current", pair["same"])
    assert ok.returncode == 0, ok.stderr
    assert "  OK        NDCG@10  0.5000 -> 0.5000  (+0.0000, p = 1; 0 better, 10 same, 0 worse)" in ok.stdout
    noise = harness("check", "--baseline", pair["baseline"], "--current", pair["noise"])
    assert noise.returncode == 0 and "NOISE" in noise.stdout and "p = 0.7539" in noise.stdout
    bad = harness("check", "--baseline", pair["baseline"], "--current", pair["regressed"], "--show", "1",
                  "--json", tmp_path / "check.json")
    assert bad.returncode == 1, bad.stderr
    lines = bad.stdout.splitlines()
    assert lines[1] == "  REGRESSED NDCG@10  0.5000 -> 0.4000  (-0.1000, p = 0.001953; 0 better, 0 same, 10 worse)"
    assert lines[-1] == "FAILED: regression on NDCG@10"
    assert "  q0  'query number 0'" in lines and "      left top 10: d3" in lines and "      entered top 10: d9" in lines
    doc = json.loads((tmp_path / "check.json").read_text())
    assert doc["passed"] is False and doc["checks"][0]["verdict"] == "REGRESSED"
    assert doc["checks"][0]["p_value"] == 2 / 1024
    # a looser tolerance turns the same drop into OK
    assert harness("check", "--baseline", pair["baseline"], "--current", pair["regressed"],
                   "--tolerance", "0.2").returncode == 0


def test_check_bad_input_exits_2(harness, pair, tmp_path):
    missing = harness("check", "--baseline", tmp_path / "nope.json", "--current", pair["same"])
    assert missing.returncode == 2 and missing.stderr.startswith("error: ") and "no such file" in missing.stderr
    (tmp_path / "broken.json").write_text("{")
    broken = harness("check", "--baseline", tmp_path / "broken.json", "--current", pair["same"])
    assert broken.returncode == 2 and "malformed JSON" in broken.stderr
    metric = harness("check", "--baseline", pair["baseline"], "--current", pair["same"], "--metric", "MAP@100")
    assert metric.returncode == 2 and "metric MAP@100 is not in this result" in metric.stderr
    negative = harness("check", "--baseline", pair["baseline"], "--current", pair["same"], "--tolerance", "-1")
    assert negative.returncode == 2 and "tolerance must be >= 0" in negative.stderr


def test_check_different_query_sets(harness, pair, tmp_path):
    fewer = write_result(tmp_path / "fewer", values("NDCG@10", [0.5] * 9))
    refused = harness("check", "--baseline", pair["baseline"], "--current", fewer)
    assert refused.returncode == 2
    assert "different query sets: 1 of baseline's queries are missing here (first: 'q9')" in refused.stderr
    allowed = harness("check", "--baseline", pair["baseline"], "--current", fewer, "--intersection")
    assert allowed.returncode == 0 and "on 9 queries" in allowed.stdout
    assert "warning: comparing on the 9 queries common to all systems (1 of 10 queries dropped)" in allowed.stdout


def test_compare_markdown_json_and_plots(harness, pair, tmp_path):
    out = tmp_path / "out" / "cmp.json"
    proc = harness("compare", pair["baseline"], pair["regressed"], f"other={pair['noise']}", "--metric", "NDCG@10",
                   "--json", out, "--plots")
    assert proc.returncode == 0, proc.stderr
    assert "| baseline (baseline) | **0.5000** |" in proc.stdout
    assert "| regressed | 0.4000 ▼ |" in proc.stdout
    assert "| other | 0.4800 |" in proc.stdout
    doc = json.loads(out.read_text())
    cells = {c["system"]: c for c in doc["comparisons"]}
    # Holm over 2 systems: raw exact p 2/1024 and 772/1024 -> 4/1024 and 772/1024
    assert cells["regressed"]["p_randomization_holm"] == 4 / 1024
    assert cells["other"]["p_randomization_holm"] == 772 / 1024
    pngs = sorted(p.name for p in out.parent.glob("*.png"))
    assert pngs == ["cmp_diff_NDCG_10_other_vs_baseline.png", "cmp_diff_NDCG_10_regressed_vs_baseline.png"]


def test_compare_run_files_with_qrels(harness, tmp_path):
    # P@1 per query by hand: run a ranks the relevant doc first for q1 and q2 (1, 1, 0);
    # run b only for q1 (1, 0, 0).
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\n")
    (tmp_path / "a.trec").write_text("q1 Q0 d1 1 2.0 a\nq2 Q0 d2 1 2.0 a\nq3 Q0 d9 1 2.0 a\n")
    (tmp_path / "b.trec").write_text("q1 Q0 d1 1 2.0 b\nq2 Q0 d9 1 2.0 b\nq3 Q0 d8 1 2.0 b\n")
    proc = harness("compare", tmp_path / "a.trec", tmp_path / "b.trec", "--qrels", tmp_path / "qrels.txt",
                   "--metric", "P@1", "--json", tmp_path / "c.json")
    assert proc.returncode == 0, proc.stderr
    assert "| a (baseline) | **0.6667** |" in proc.stdout and "| b | 0.3333 |" in proc.stdout
    cell = json.loads((tmp_path / "c.json").read_text())["comparisons"][0]
    # one non-zero difference (-1): exact randomization over 2 sign vectors -> p = 1
    assert (cell["wins"], cell["ties"], cell["losses"]) == (0, 2, 1) and cell["p_randomization"] == 1.0


def test_compare_usage_errors(harness, pair, tmp_path):
    one = harness("compare", pair["baseline"])
    assert one.returncode == 2 and "at least two results" in one.stderr
    plots = harness("compare", pair["baseline"], pair["same"], "--plots")
    assert plots.returncode == 2 and "--plots writes beside the JSON" in plots.stderr
    run = harness("compare", pair["baseline"], tmp_path / "x.trec")
    assert run.returncode == 2 and "no such file" in run.stderr


def test_committed_baseline_passes_against_itself_through_the_entry_point():
    if not (BASELINE / "metrics.json").is_file():
        pytest.skip("no committed baseline in results/baselines/scifact/bm25")
    command = [sys.executable, "-m", "harness", "check", "--baseline", BASELINE, "--current", BASELINE / "metrics.json",
               "--metric", "NDCG@10", "--metric", "Recall@100"]
    proc = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("  OK        ") == 2


def test_check_github_summary_and_junit(harness, pair, tmp_path, monkeypatch):
    import xml.etree.ElementTree as ET

    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    bad = harness("check", "--baseline", pair["baseline"], "--current", pair["regressed"], "--metric", "NDCG@10",
                  "--github-summary", "--junit", tmp_path / "check.xml")
    assert bad.returncode == 1, bad.stderr
    text = summary.read_text()
    assert text.startswith("earlier step\n### harness check: ❌ FAILED: regression on NDCG@10\n")  # appended
    assert "| NDCG@10 | ❌ REGRESSED | 0.5000 | 0.4000 | -0.1000 | 0.001953 | 0 / 0 / 10 |" in text
    suite = ET.parse(tmp_path / "check.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("1", "1")
    case = suite.find("testcase")
    assert (case.get("classname"), case.get("name")) == ("harness.check", "NDCG@10")
    assert case.find("failure").get("message").startswith("REGRESSED NDCG@10: 0.5000 -> 0.4000 (-0.1000, p = 0.001953")
    ok = harness("check", "--baseline", pair["baseline"], "--current", pair["same"], "--github-summary",
                 "--junit", tmp_path / "ok.xml")
    assert ok.returncode == 0 and summary.read_text().count("### harness check") == 2
    assert "### harness check: ✅ PASSED" in summary.read_text()
    ok_case = ET.parse(tmp_path / "ok.xml").getroot().find("testsuite/testcase")
    assert ok_case.find("failure") is None and ok_case.find("system-out").text.startswith("OK NDCG@10")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    outside = harness("check", "--baseline", pair["baseline"], "--current", pair["same"], "--github-summary")
    assert outside.returncode == 0 and "GITHUB_STEP_SUMMARY is not set" in outside.stderr


def test_qrels_with_no_run_file_to_evaluate_is_a_usage_error(harness, pair, tmp_path):
    # (was: accepted and unused, exit 0: a user who meant the results to be evaluated on these qrels saw
    # numbers computed on others; docs review)
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    proc = harness("compare", pair["baseline"], pair["same"], "--qrels", tmp_path / "qrels.txt")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == ("error: --qrels applies to run files only; every result given "
                                                    "is evaluated already (a result folder or metrics.json)")

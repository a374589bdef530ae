"""Judged@k measures the judgments' coverage of a run, not the run: a drop is reported, never a regression.

ir_measures' Judged@k (the share of the top k judged for the query) and BEIR's Hole@k exist to warn that
the other measures count unjudged documents as non-relevant; ranx ranks systems by no such measure. A run
that finds relevant documents outside the pool scores lower on it. It was gated as higher-is-better:
``harness check -m Judged@10`` failed (exit 1, REGRESSED) a run whose top 10 the qrels judge less, and
compare marked it ▼. It is now treated as trec_eval's counts are (harness.compare.measures).
"""

from __future__ import annotations

import json

import pytest

from tests.compare.helpers import write_result

Q = [f"q{i}" for i in range(30)]


def _results(tmp_path):
    """Baseline: every top 10 fully judged (Judged@10 1.0); current: 6 of 10 judged (0.6) on every query,
    with the same NDCG@10 (the new documents were not in the pool)."""
    base = write_result(tmp_path / "base", {q: {"Judged@10": 1.0, "NDCG@10": 0.5} for q in Q})
    cur = write_result(tmp_path / "cur", {q: {"Judged@10": 0.6, "NDCG@10": 0.5} for q in Q})
    return base, cur


def test_check_refuses_to_gate_judged_as_it_refuses_counts(harness_cli, tmp_path):
    """Old code: 'REGRESSED Judged@10  1.0000 -> 0.6000  (-0.4000, p = 9.999e-05; 0 better, 0 same, 30 worse)', exit 1."""
    base, cur = _results(tmp_path)
    done = harness_cli("check", "--baseline", base, "--current", cur, "-m", "Judged@10")
    assert done.returncode == 2, done.stdout
    lines = done.stderr.strip().splitlines()
    assert lines == ["error: metric Judged@10 is not a quality measure and is not gated: it is the share of the top k "
                     "that the qrels judge (how far the judgments cover the run, not its quality), where more is not "
                     "better (gate the quality measures; compare shows the coverage beside them)"], done.stderr
    assert "REGRESSED" not in done.stdout
    assert harness_cli("check", "--baseline", base, "--current", cur, "-m", "NDCG@10").returncode == 0


def test_compare_shows_judged_without_best_marker_or_test(harness_cli, tmp_path):
    """Old code: '| base (baseline) | **1.0000** |', '| cur | 0.6000 ▼ |' and a details row."""
    base, cur = _results(tmp_path)
    done = harness_cli("compare", base, cur, "-m", "Judged@10,NDCG@10", "--json", tmp_path / "c.json")
    assert done.returncode == 0, done.stderr
    assert "| base (baseline) | 1.0000 | **0.5000** |" in done.stdout
    assert "| cur | 0.6000 | **0.5000** |" in done.stdout
    assert "| cur | Judged@10 |" not in done.stdout
    document = json.loads((tmp_path / "c.json").read_text())
    assert [c["metric"] for c in document["comparisons"]] == ["NDCG@10"]
    assert list(document["counts"]) == ["Judged@10"]


def test_report_and_explorer_treat_judged_as_neutral(tmp_path):
    """The report's leaderboard drew no best, no groups and no row against the baseline; the explorer's
    ``counts`` flag (differences uncoloured, filtered as lower / higher) is set."""
    from harness.compare import Settings, load_system
    from harness.reports.html.model import build_report

    systems = [load_system(str(f)) for f in _results(tmp_path)]
    report = build_report({"toy": systems}, ["Judged@10", "NDCG@10"], settings=Settings(permutations=100,
                                                                                         resamples=100))
    (section,) = report.datasets
    assert [v["best"] for v in section.cells["Judged@10"].values()] == [False, False]
    assert all("groups" not in v for v in section.cells["Judged@10"].values())
    assert [v["metric"] for v in section.versus] == ["NDCG@10"]
    assert section.explorer["counts"] == [True, False]


def test_judged_is_no_target_of_fusion_optimisation_nor_a_best_of_the_bench_leaderboard():
    from harness.bench.leaderboard import metric_table
    from harness.fusion.optimize import single_metric_evaluator

    with pytest.raises(ValueError, match="optimisation needs a quality measure: Judged@10 is the share of the top k"):
        single_metric_evaluator("Judged@10")
    board = {"retrievers": ["a", "b"], "tables": {
        "Judged@10": {"rows": {"scifact": {"a": 0.9, "b": 0.6}}, "average": {"a": 0.9, "b": 0.6}}}}
    assert "**" not in "\n".join(metric_table(board, "Judged@10")).replace("**average**", "")

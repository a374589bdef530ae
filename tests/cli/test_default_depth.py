"""The default search depth covers every cutoff asked for, of --k and of -m: ``--k 1,10 -m Recall@30``
used to search 10 deep (max of --k), so the reported Recall@30 was the run's Recall@10 under the name
Recall@30 (and AP, R-Prec, bpref were computed on the top 10)."""

from __future__ import annotations

import json

import pytest

from harness.bench.config import parse_config
from harness.evaluation import Evaluator, default_depth
from harness.evaluation.metrics import parse_metric


def test_default_depth_is_the_largest_cutoff_of_k_and_metrics():
    assert default_depth([1, 10], [parse_metric("Recall@30"), parse_metric("AP"), parse_metric("P@5")]) == 30
    assert default_depth([1, 100], [parse_metric("NDCG@10")]) == 100
    assert default_depth([1, 10], Evaluator(["P@1", "Recall@1000"]).metrics) == 1000


def test_bench_search_depth_covers_leaderboard_metrics():
    config = parse_config({"name": "b", "datasets": ["scifact"], "retrievers": [{"type": "bm25"}], "k": [1, 10],
                           "metrics": ["NDCG@10", "Recall@100"]})
    assert config.search_depth == 100  # was 10
    assert parse_config({**config.to_dict(), "depth": 20}).search_depth == 20  # an explicit depth is kept


def test_run_searches_deep_enough_for_a_metric_cutoff(tmp_path, harness_cli, monkeypatch):
    """On the bundled SciFact: Recall@100 with --k 1,10 equals Recall@100 of a run with --k 1,10,100."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    values = {}
    for name, k in (("narrow", "1,10"), ("wide", "1,10,100")):
        out = harness_cli("run", "-d", "scifact", "-r", "bm25", "--k", k, "-m", "Recall@100", "-q",
                          "-o", tmp_path, "--name", name)
        assert out.returncode == 0, out.stderr
        doc = json.loads((tmp_path / "scifact" / name / "metrics.json").read_text())
        values[name] = doc["metrics"]["Recall@100"]
        assert doc["settings"]["depth"] == 100
    assert values["narrow"] == values["wide"] == pytest.approx(0.9253, abs=5e-5)  # README's SciFact gate

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
    assert default_depth([1, 10], [parse_metric("Recall@30"), parse_metric("P@5")]) == 30
    # AP has no cutoff: it is computed on the whole run, which is searched 1000 deep (see below)
    assert default_depth([1, 10], [parse_metric("Recall@30"), parse_metric("AP"), parse_metric("P@5")]) == 1000
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


def test_a_whole_ranking_metric_is_searched_1000_deep_by_default(tmp_path):
    # `harness run --k 1,10 -m AP` searched 10 deep (the largest cutoff) and reported, without a word,
    # the AP of a 10-document run: 0.6333 on BM25/SciFact, where the 1000-deep run's AP is 0.640108
    # (pytrec_eval's `map` on that run.trec, 300 queries). Found by the second Python API review.
    from harness.evaluation import WHOLE_RANKING_DEPTH, default_depth, depth_warning, parse_metric

    metrics = [parse_metric("NDCG@10"), parse_metric("AP")]
    assert WHOLE_RANKING_DEPTH == 1000 and default_depth([1, 10], metrics) == 1000
    assert default_depth([1, 10], [parse_metric("NDCG@10")]) == 10
    assert depth_warning(100, [1, 10], metrics) == ("depth 100 is below 1000 (the largest cutoff, or 1000 for a "
                                                    "metric of the whole ranking): AP computed on the top 100 "
                                                    "documents only")
    import json
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "harness", "run", "-d", "scifact", "--k", "1,10", "-m", "AP",
                           "-o", str(tmp_path), "-q"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "scifact" / "bm25" / "metrics.json").read_text())
    assert doc["settings"]["depth"] == 1000 and round(doc["metrics"]["AP"], 6) == 0.640108

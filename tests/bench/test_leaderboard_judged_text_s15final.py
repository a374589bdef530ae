"""Review (s15 final): the bench leaderboard.md's line above a metric that ranks no system names what it is.

13afe44 made Judged@k a non-quality measure (``Metric.counts``: "the share of the top k that the qrels judge"),
and leaderboard.md then introduced its table as "a count, not a quality measure": Judged@10 is a share in
[0, 1] of judged documents (ir_measures' Judged), not a count. Expected (worked example): the line names each
measure by its own ``counts`` text (harness/evaluation/metrics/judged.py, num_ret.py), as ``harness compare``
does ("Judged@10, the share of the top k that the qrels judge ..."), and a quality measure keeps "best of each
row in bold".
"""

from __future__ import annotations

from harness.bench.leaderboard import markdown


def _board(metric: str, a: float, b: float) -> dict:
    return {"bench": "toy", "metrics": [metric], "retrievers": ["a", "b"],
            "tables": {metric: {"rows": {"scifact": {"a": a, "b": b}}, "average": {"a": a, "b": b}}}, "cells": []}


def test_the_leaderboard_line_names_judged_as_coverage_not_a_count():
    text = markdown(_board("Judged@10", 0.0883, 0.0887))
    assert ("Mean over each dataset's evaluated queries; not a quality measure (the share of the top k that the "
            "qrels judge (how far the judgments cover the run, not its quality)): no best value (docs/compare.md)"
            in text)
    assert "a count" not in text  # before: "a count, not a quality measure: no best value"


def test_a_count_and_a_quality_measure_keep_their_lines():
    assert ("not a quality measure (the number of documents retrieved (the run's depth, whatever their relevance)): "
            "no best value" in markdown(_board("num_ret", 980.0, 100.0)))
    text = markdown(_board("NDCG@10", 0.6789, 0.6822))
    assert "best of each row in bold" in text and "| scifact | 0.6789 | **0.6822** |" in text

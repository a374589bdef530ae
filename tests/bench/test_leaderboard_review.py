"""leaderboard.md marks the best of a row for every retriever that reaches it (found by a review)."""

from __future__ import annotations

from harness.bench.leaderboard import metric_table


def test_means_equal_up_to_their_summation_are_both_bold():
    """0.6 and 0.5999999999999999: the same P@3 values (k/3) averaged in two query orders (numpy's
    sums of tests/compare/test_best_review.py's A and B), both exactly 0.6; 0.59 is below."""
    board = {"retrievers": ["a", "b", "c"],
             "tables": {"P@3": {"rows": {"d": {"a": 0.6, "b": 0.5999999999999999, "c": 0.59}},
                                "average": {"a": 0.6, "b": 0.5999999999999999, "c": 0.59}}}}
    lines = metric_table(board, "P@3")
    assert lines[2] == "| d | **0.6000** | **0.6000** | 0.5900 |"
    assert lines[3] == "| **average** | **0.6000** | **0.6000** | 0.5900 |"

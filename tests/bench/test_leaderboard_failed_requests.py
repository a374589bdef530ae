"""The leaderboard's timings of an http cell some of whose requests failed (latency review): its p95 is
that of the queries answered (docs/efficiency.md), and the leaderboard says so, as compare does."""

from __future__ import annotations

from harness.bench.leaderboard import markdown
from harness.reports import efficiency


def _cell(retriever: str, failed: int) -> dict:
    block = {"n_queries": 300, "queries_per_s": 120.0,
             "latency_ms": {"p50": 48.3, "p95": 54.66, "basis": "per request", "failed": failed}}
    return {"dataset": "scifact", "retriever": retriever, "status": "ok", "efficiency": efficiency.summary(block)}


def test_a_cell_with_failed_requests_is_named_under_the_timings():
    board = {"bench": "b", "metrics": [], "cells": [_cell("es", 2), _cell("serve", 0)]}
    assert board["cells"][0]["efficiency"]["failed"] == 2  # leaderboard.json's summary carries the count
    md = markdown(board)
    assert ("> warning: scifact / es: 2 requests failed (scored 0); its p95 is that of the queries answered, "
            "without the failed ones.") in md
    assert "scifact / serve:" not in md

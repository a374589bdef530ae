"""report.html lists an http retriever's failed requests among its results' warnings, as ``harness bench`` prints
them for a cell (harness/reports/html ``recorded_warnings``; harness/bench/leaderboard.py ``recorded_failures``).

A run with ``on_failure=empty`` whose service failed some queries records how many in metrics.json's
``efficiency`` block (``latency_ms.failed``), not in its ``warnings``: ``harness bench`` prints them (a reused
cell: ``<cells>: 2 requests failed (scored 0; ...)``, even with -q) and leaderboard.md says them, but the page
listed only the ``warnings`` (7b82de3), so a reader saw a partial run's values, its failed queries scored 0,
with no word of it, although docs/report.md said the page lists them.
"""

from __future__ import annotations

from html import escape

from tests.compare.helpers import write_result
from tests.reports.test_report_recorded_warnings_s21 import _warnings_list

FAILED = {"latency_ms": {"p50": 2.0, "p90": 3.0, "p95": 3.0, "p99": 3.0, "mean": 2.0, "max": 3.0,
                         "basis": "per request", "failed": 2}, "queries_per_s": 100.0}


def test_harness_report_lists_the_failed_requests_of_its_results(tmp_path, harness_cli):
    per_query = {"q1": {"P@1": 1.0}, "q2": {"P@1": 0.0}}
    write_result(tmp_path / "a", per_query, efficiency=FAILED)
    write_result(tmp_path / "b", per_query, efficiency=FAILED)
    write_result(tmp_path / "c", per_query, efficiency={**FAILED, "latency_ms": {**FAILED["latency_ms"], "failed": 0}})
    out = tmp_path / "page.html"
    proc = harness_cli("report", tmp_path / "a", tmp_path / "b", tmp_path / "c", "-m", "P@1", "-o", out)
    assert proc.returncode == 0, proc.stderr
    line = "toy / a, toy / b: 2 requests failed (scored 0; metrics.json retriever_stats.failed_queries)"
    assert escape(line) in _warnings_list(out.read_text(encoding="utf-8"))  # (c: none failed, not named)
    assert f"warning: {line}\n" in proc.stderr

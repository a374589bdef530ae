"""Efficiency in `harness bench`: every cell's metrics.json has the block; the leaderboard shows it
beside effectiveness and flags cells timed on different hardware."""

from __future__ import annotations

import json

from harness.bench.config import load_config
from harness.bench.runner import run_bench

from .test_bench import setup, two_retrievers, write_config  # noqa: F401 - the fixture

__all__ = ["setup"]


def test_cells_carry_efficiency_and_the_leaderboard_shows_it(setup):  # noqa: F811
    tmp_path, tiny, run = setup
    config = load_config(write_config(tmp_path, two_retrievers(tiny, run)))
    run_bench(config)
    out = tmp_path / "results" / "t"
    cell = json.loads((out / "tiny" / "overlap" / "metrics.json").read_text())
    block = cell["efficiency"]
    assert block["n_queries"] == 2 and set(cell["query_latency_ms"]) == {"q1", "q2"}
    assert block["queries_per_s"] == 2 / block["stages_s"]["search"]
    assert block["stages_s"]["search"] == cell["timings"]["search_s"]
    assert (out / "tiny" / "overlap" / "run.trec").read_text().startswith("# ir_metadata.start\n# tag: \"overlap\"\n")
    board = json.loads((out / "leaderboard.json").read_text())
    summary = board["cells"][0]["efficiency"]
    assert summary["p95_ms"] == block["latency_ms"]["p95"] and summary["basis"] == "per batch share"
    assert summary["peak_rss_mb"] == round(block["peak_rss_bytes"] / 1e6, 3)
    md = (out / "leaderboard.md").read_text()
    assert "| p95 ms | index MB | peak RSS MB | hardware |" in md
    assert f"| {summary['p95_ms']:,.3f} | - | {summary['peak_rss_mb']:,.1f} | A |" in md
    assert "different hardware" not in md

    # A cell reused from another machine: its timings are flagged as not comparable.
    path = out / "tiny" / "mine" / "metrics.json"
    other = json.loads(path.read_text())
    other["efficiency"]["fingerprint"]["cpu"] = {"model": "Elsewhere CPU", "cores": 64, "machine": "arm64"}
    path.write_text(json.dumps(other))
    result = run_bench(config)
    assert [o.status for o in result.outcomes] == ["reused", "reused"]
    md = (out / "leaderboard.md").read_text()
    assert "**B** = Elsewhere CPU (64 cores)" in md and md.count("| B |") == 1
    assert "> warning: cells were timed on different hardware" in md

"""harness compare's files: one --plots PNG per system whatever the names, strict JSON whatever the
efficiency blocks hold."""

from __future__ import annotations

import json

import pytest

from tests.compare.helpers import values, write_result


@pytest.fixture
def harness(harness_cli):
    return harness_cli


def test_systems_whose_names_slug_alike_get_a_plot_each(harness, tmp_path):
    """Names that differ only outside [A-Za-z0-9_.-] ('a b' and 'a_b', or "ü" and "ö", which both
    slug to 'x') gave one file name: the second plot overwrote the first (two "plot written to" lines
    naming the same file). Expected: four systems against the baseline, four difference plots."""
    pytest.importorskip("matplotlib")
    base = write_result(tmp_path / "base", values("NDCG@10", [0.5, 0.25, 0.75, 1.0]))
    other = write_result(tmp_path / "other", values("NDCG@10", [0.5, 0.5, 0.75, 0.0]))
    names = ["ü", "ö", "a b", "a_b"]
    result = harness("compare", f"base={base}", *(f"{n}={other}" for n in names), "--metric", "NDCG@10",
                     "--permutations", "100", "--resamples", "100", "--json", tmp_path / "out" / "c.json", "--plots")
    assert result.returncode == 0, result.stderr
    diffs = sorted(p.name for p in (tmp_path / "out").glob("c_diff_*.png"))
    assert diffs == ["c_diff_NDCG_10_a_b-2_vs_base.png", "c_diff_NDCG_10_a_b_vs_base.png",
                     "c_diff_NDCG_10_x-2_vs_base.png", "c_diff_NDCG_10_x_vs_base.png"]
    from harness.compare.plots import slugs

    assert slugs(["x", "?", "x-2", "??"]) == {"x": "x", "?": "x-2", "x-2": "x-2-2", "??": "x-3"}


def test_nan_and_infinite_efficiency_figures_are_null_in_the_json(harness, tmp_path):
    """A hand-edited or foreign metrics.json may hold NaN (Python's JSON reads it); compare --json wrote
    it back as NaN / Infinity, which strict JSON readers (jq, JavaScript, Go) refuse. Expected: null, as
    metrics.json writes such numbers (docs/efficiency.md); the Markdown table still shows nan / inf."""
    efficiency = {"queries_per_s": float("nan"), "latency_ms": {"p95": float("inf"), "basis": "per request"},
                  "index_bytes": 2_000_000}
    a = write_result(tmp_path / "a", values("NDCG@10", [0.5, 0.25, 0.75]), efficiency=efficiency)
    b = write_result(tmp_path / "b", values("NDCG@10", [0.5, 0.5, 0.75]), efficiency=efficiency)
    result = harness("compare", a, b, "--metric", "NDCG@10", "--permutations", "100", "--resamples", "100",
                     "--json", tmp_path / "c.json")
    assert result.returncode == 0, result.stderr
    assert "| a (baseline) | 0.5000 | nan | inf | 2.0 |" in result.stdout

    def refuse(constant):
        raise ValueError(f"not strict JSON: {constant}")

    document = json.loads((tmp_path / "c.json").read_text(), parse_constant=refuse)
    assert document["efficiency"]["a"]["queries_per_s"] is None and document["efficiency"]["a"]["p95_ms"] is None
    assert document["efficiency"]["a"]["index_mb"] == 2.0

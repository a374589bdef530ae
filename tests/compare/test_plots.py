"""Plots: the numbers plotted, PNG files written, matplotlib and scipy imported lazily."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from harness.compare.load import load_system
from harness.compare.plots import curves, plot_metric_curves, plot_query_differences
from tests.compare.helpers import write_result

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _systems(tmp_path):
    a = {"q1": {"NDCG@1": 0.0, "NDCG@10": 0.5, "MAP": 0.3}, "q2": {"NDCG@1": 1.0, "NDCG@10": 0.7, "MAP": 0.1}}
    b = {"q1": {"NDCG@1": 1.0, "NDCG@10": 0.9, "MAP": 0.2}, "q2": {"NDCG@1": 1.0, "NDCG@10": 0.8, "MAP": 0.2}}
    return [load_system(str(write_result(tmp_path / n, p))) for n, p in (("a", a), ("b", b))]


def test_curve_points_are_the_means_per_cutoff(tmp_path):
    points = curves(_systems(tmp_path))
    assert list(points) == ["NDCG"]  # MAP has no cutoff
    assert points["NDCG"] == [(1, {"a": 0.5, "b": 1.0}), (10, {"a": pytest.approx(0.6), "b": pytest.approx(0.85)})]


def test_pngs_are_written(tmp_path):
    pytest.importorskip("matplotlib")
    written = plot_metric_curves(_systems(tmp_path), tmp_path / "out")
    assert [p.name for p in written] == ["compare_NDCG_at_k.png"]
    diff = plot_query_differences("a", "b/x", "NDCG@10", np.array([0.4, 0.1, -0.2, 0.0]), tmp_path / "out")
    assert diff.name == "compare_diff_NDCG_10_b_x_vs_a.png"
    for path in [*written, diff]:
        assert path.read_bytes()[:8] == PNG_MAGIC


def test_heavy_libraries_are_imported_lazily():
    code = ("import sys, harness.compare, harness.compare.plots, harness.compare.table; "
            "print(sorted(m for m in ('matplotlib', 'scipy', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"

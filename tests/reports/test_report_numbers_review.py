"""The report's numbers against an oracle: the "against the baseline" table equals harness compare's."""

from __future__ import annotations

import numpy as np

from harness.compare import Settings, align, compare, load_system
from harness.reports.html import build_report, load_results, render
from tests.compare.helpers import write_result

METRICS = ["M1@10", "M2@10", "M3@10"]


def test_versus_interval_is_harness_compares_to_the_last_bit(tmp_path):
    """Three systems x three metrics: nine bootstrap columns. Systems s1 and s2 equal the baseline
    except on one query, where they gain 0.5, so every per-query difference is >= 0 and the lower
    bound of the paired interval is exactly 0 (most resamplings miss that query), as
    ``harness compare`` (paired_bootstrap_ci on d) gives it. The old report took the differences of
    the matrix product's column means, which is -1.1e-16 for the ninth column (BLAS sums an edge
    column in another order) and was shown as "[-0.0000, ...]"."""
    rng = np.random.default_rng(0)
    base = np.round(rng.random(30), 4)
    folders = []
    for s, changed in (("s0", None), ("s1", 1), ("s2", 2)):
        column = base.copy()
        if changed is not None:
            column[changed] = min(1.0, column[changed] + 0.5)
        per_query = {f"q{i}": {m: float(v) for m in METRICS} for i, v in enumerate(column)}
        folders.append(str(write_result(tmp_path / s, per_query)))
    settings = Settings(permutations=1000, resamples=1000, seed=0)
    report = build_report(load_results(folders), METRICS, None, settings)
    expected = compare(align([load_system(f) for f in folders], METRICS), None, settings)
    rows = report.datasets[0].versus
    assert len(rows) == len(expected.cells) == 6
    for row in rows:
        cell = expected.cells[(row["system"], row["metric"])]
        assert (row["low"], row["high"]) == (cell.stats.ci_low, cell.stats.ci_high)
        assert row["low"] == 0.0  # every difference is >= 0 and most resamplings miss the changed query
        assert row["difference"] == cell.stats.difference and row["p_holm"] == cell.p_value
    html = render(report)
    assert "[-0.0000" not in html and html.count("[+0.0000, +0.") == 6

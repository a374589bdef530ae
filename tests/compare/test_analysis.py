"""Comparison of several systems: Holm across systems, best in bold, significance marks, JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.compare.analysis import Settings, compare
from harness.compare.load import align, load_system
from harness.compare.significance import holm_bonferroni, randomization_test
from harness.compare.table import comparison_markdown, comparison_table
from tests.compare.helpers import write_result


@pytest.fixture
def three(tmp_path):
    rng = np.random.default_rng(0)
    base = rng.random(60)
    better = np.clip(base + 0.15 + rng.normal(0, 0.05, 60), 0, 1)
    same = np.clip(base + rng.normal(0, 0.05, 60), 0, 1)
    systems = []
    for name, column in (("base", base), ("better", better), ("same", same)):
        per_query = {f"q{i}": {"NDCG@10": float(v), "P@10": float(round(v, 1))} for i, v in enumerate(column)}
        systems.append(load_system(str(write_result(tmp_path / name, per_query))))
    return systems, base, better, same


def test_holm_is_applied_across_systems(three):
    systems, base, better, same = three
    c = compare(align(systems, ["NDCG@10", "P@10"]), settings=Settings(permutations=2000))
    order = np.argsort([f"q{i}" for i in range(len(base))], kind="stable")  # (aligned in query-id order)
    raw = [randomization_test(base[order], x[order], permutations=2000).p_value for x in (better, same)]
    adjusted = holm_bonferroni(raw)
    assert c.cells[("better", "NDCG@10")].p_randomization_holm == adjusted[0]
    assert c.cells[("same", "NDCG@10")].p_randomization_holm == adjusted[1]
    assert c.cells[("better", "NDCG@10")].significant and not c.cells[("same", "NDCG@10")].significant
    assert c.best("NDCG@10") == {"better"}
    assert c.means["base"]["NDCG@10"] == pytest.approx(base.mean())


def test_markdown_and_json(three):
    systems, *_ = three
    c = compare(align(systems, ["NDCG@10"]), baseline="same", settings=Settings(test="t"))
    md = comparison_markdown(c)
    rows = [line for line in md.splitlines() if line.startswith("| ") and not line.startswith("| ---")]
    assert rows[0] == "| system | NDCG@10 |"
    # base and same differ by noise only: no mark; better is the best and significantly above the baseline
    assert rows[1] == f"| base | {c.means['base']['NDCG@10']:.4f} |"
    assert rows[2].startswith("| better | **") and rows[2].endswith("** ▲ |")
    assert rows[3].startswith("| same (baseline) | ")
    assert "paired t-test" in md and "Holm-Bonferroni" in md
    doc = json.loads(json.dumps(c.to_dict()))
    assert doc["schema"] == "retrieval-harness/compare/v1" and doc["baseline"] == "same"
    assert {x["system"] for x in doc["comparisons"]} == {"base", "better"}
    assert doc["comparisons"][0]["p_value"] == doc["comparisons"][0]["p_t_holm"]


def test_identical_systems_are_not_significant_and_infinite_t_is_json_safe(tmp_path):
    per_query = {f"q{i}": {"M": 0.1 * i} for i in range(5)}
    shifted = {f"q{i}": {"M": 0.1 * i + 0.05} for i in range(5)}
    systems = [load_system(str(write_result(tmp_path / n, p))) for n, p in
               (("a", per_query), ("b", per_query), ("c", shifted))]
    c = compare(align(systems, ["M"]))
    assert not c.cells[("b", "M")].significant and c.cells[("b", "M")].stats.p_t == 1.0
    assert c.cells[("c", "M")].stats.t_statistic == float("inf")
    text = json.dumps(c.to_dict(), allow_nan=False)
    assert '"t_statistic": "inf"' in text


def test_unknown_baseline_and_bad_settings(three):
    systems, *_ = three
    with pytest.raises(ValueError, match="baseline 'zzz' is not one of the systems"):
        compare(align(systems, ["NDCG@10"]), baseline="zzz")
    with pytest.raises(ValueError, match="test must be one of"):
        Settings(test="wilcoxon")


def test_worse_systems_are_marked_down(three):
    systems, *_ = three
    c = compare(align(systems, ["NDCG@10"]), baseline="better")
    rows = [line for line in comparison_table(c).splitlines() if line.startswith(("| base |", "| same |"))]
    assert len(rows) == 2 and all(row.endswith(" ▼ |") for row in rows)

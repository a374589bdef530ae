"""The report's numbers without a browser: average row, groups, graceful degradation, bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from harness.compare import Settings
from harness.reports.html import build_report, load_results, render
from tests.compare.helpers import write_result
from tests.compare.test_cli import harness  # noqa: F401  (the fixture running the CLI in-process)

FAST = Settings(permutations=2000, resamples=2000)


def _result(folder: Path, dataset: str, column: list[float], texts: dict | None = None, **extra) -> Path:
    per_query = {f"q{i}": {"NDCG@10": v, "Recall@100": min(1.0, v + 0.1), "MRR@10": v} for i, v in enumerate(column)}
    write_result(folder, per_query, texts=texts)
    doc = json.loads((folder / "metrics.json").read_text())
    doc["dataset"]["name"] = dataset
    doc.update(extra)
    (folder / "metrics.json").write_text(json.dumps(doc))
    return folder


@pytest.fixture
def two_datasets(tmp_path):
    """Datasets a (40 queries) and b (30); strong = weak + 0.3 everywhere, twin = weak, noisy = weak + noise;
    b has only strong and weak."""
    rng = np.random.default_rng(3)
    columns = {}
    for dataset, n in (("a", 40), ("b", 30)):
        weak = rng.random(n) * 0.6
        columns[dataset] = {"weak": weak, "strong": weak + 0.3, "twin": weak.copy(),
                            "noisy": np.clip(weak + rng.normal(0.02, 0.15, n), 0, 1)}
        for name, column in columns[dataset].items():
            if dataset == "b" and name in ("twin", "noisy"):
                continue
            _result(tmp_path / dataset / name, dataset, column.tolist())
    return SimpleNamespace(root=tmp_path, columns=columns)


def test_average_row_groups_and_best(two_datasets):
    groups = load_results([str(two_datasets.root)])
    assert {label: [s.name for s in systems] for label, systems in groups.items()} == \
        {"a": ["noisy", "strong", "twin", "weak"], "b": ["strong", "weak"]}
    report = build_report(groups, ["NDCG@10"], baseline="weak", settings=FAST)
    a, b = report.datasets
    cells = a.cells["NDCG@10"]
    columns = two_datasets.columns
    for name in ("weak", "strong", "twin", "noisy"):
        assert cells[name]["mean"] == pytest.approx(columns["a"][name].mean(), abs=1e-12)
        assert cells[name]["low"] < cells[name]["mean"] < cells[name]["high"] or name != "strong"
    # strong is +0.3 on every query: significantly better than both; twin and weak are identical.
    assert cells["strong"]["groups"] == "a" and not set("a") & set(cells["weak"]["groups"] + cells["noisy"]["groups"])
    assert cells["twin"]["groups"] == cells["weak"]["groups"]
    assert cells["strong"]["best"] and not cells["weak"]["best"]
    average = report.average["NDCG@10"]
    assert set(average) == {"strong", "weak"}  # twin and noisy have no value on b
    expected = (columns["a"]["strong"].mean() + columns["b"]["strong"].mean()) / 2
    assert average["strong"]["mean"] == pytest.approx(expected, abs=1e-12)
    assert average["strong"]["low"] < expected < average["strong"]["high"]
    # Averaging two independent datasets narrows the interval compared with either dataset alone.
    width = average["weak"]["high"] - average["weak"]["low"]
    assert width < min(s.cells["NDCG@10"]["weak"]["high"] - s.cells["NDCG@10"]["weak"]["low"] for s in (a, b))
    versus = {(v["system"], v["metric"]): v for v in a.versus}
    assert versus[("strong", "NDCG@10")]["difference"] == pytest.approx(0.3, abs=1e-12)
    assert versus[("strong", "NDCG@10")]["significant"] and not versus[("twin", "NDCG@10")]["significant"]
    # The baseline comparisons are harness compare's numbers (same test, seed, draws and Holm family).
    from harness.compare import align, compare

    reference = compare(align(groups["a"], ["NDCG@10"]), "weak", FAST)
    assert reference.cells[("noisy", "NDCG@10")].stats.ci_low < reference.cells[("noisy", "NDCG@10")].stats.ci_high
    for (name, _), cell in reference.cells.items():
        mine = versus[(name, "NDCG@10")]
        assert mine["low"] == pytest.approx(cell.stats.ci_low, abs=1e-12)
        assert mine["high"] == pytest.approx(cell.stats.ci_high, abs=1e-12)
        assert mine["p_holm"] == cell.p_value and mine["significant"] == cell.significant
        assert (mine["wins"], mine["ties"], mine["losses"]) == (cell.stats.wins, cell.stats.ties, cell.stats.losses)
    page = render(report)
    assert page.count('class="average"') == 1 and 'data-groups="a"' in page


def test_missing_judgments_and_hostile_text_degrade_gracefully(tmp_path):
    texts = {"q0": "what </script><script>alert(1)</script> is", "q1": "<!-- two -->"}
    _result(tmp_path / "x" / "one", "nowhere", [0.2, 0.4], texts=texts)
    _result(tmp_path / "x" / "two", "nowhere", [0.3, 0.1], texts=texts)
    report = build_report(load_results([str(tmp_path / "x")]), settings=FAST)
    section = report.datasets[0]
    assert section.explorer["judged"] is None and section.explorer["titles"] is None
    assert any("no judgments" in w for w in section.warnings)
    page = render(report)
    assert page.count("</script>") == 2  # the two real ones: the query text cannot close the data block
    data = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S).group(1)
    assert json.loads(data)["datasets"][0]["texts"] == [texts["q0"], texts["q1"]]


def test_efficiency_block_is_shown_when_present(tmp_path):
    _result(tmp_path / "r" / "fast", "d", [0.2, 0.4], timings={"index_s": 2.0, "search_s": 0.5},
            efficiency={"qps": 1234.5, "latency_ms": {"p50": 0.8, "p99": 3.25}, "hardware": {"cpu": "x"}})
    _result(tmp_path / "r" / "slow", "d", [0.3, 0.1], timings={"index_s": 4.0, "search_s": 1.0})
    report = build_report(load_results([str(tmp_path / "r")]), settings=FAST)
    rows = dict(report.datasets[0].efficiency)
    assert rows["fast"]["latency_ms.p99"] == 3.25 and rows["fast"]["hardware.cpu"] == "x"
    assert rows["fast"]["queries_per_s"] == pytest.approx(2 / 0.5)  # 2 queries in 0.5 s
    assert "latency_ms.p99" not in rows["slow"] and rows["slow"]["index_s"] == 4.0


def test_cli_bad_input_is_one_line_exit_2_and_nothing_written(harness, two_datasets, tmp_path):
    out = tmp_path / "page.html"
    root = two_datasets.root
    cases = [
        ((root / "a", "--baseline", "nobody"), "baseline 'nobody' is not one of the systems"),
        ((tmp_path / "absent",), "no such file or folder"),
        ((root / "a" / "weak", f"weak={root / 'b' / 'weak'}", "--metric", "NDCG@10"), None),  # fine: two datasets
        ((root / "a" / "weak", f"weak={root / 'a' / 'strong'}"), "two results are both named 'weak'"),
        ((root, "--dataset", "/nowhere"), "say which with LABEL=FOLDER"),
        ((root / "a", "--metric", "P@7"), "metric P@7 is not in this result"),
    ]
    for args, message in cases:
        result = harness("report", *args, "-o", out, "--resamples", "200", "--permutations", "200")
        if message is None:
            assert result.returncode == 0 and out.is_file(), result.stderr
            out.unlink()
            continue
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr.startswith("error: ") and message in result.stderr and result.stderr.count("\n") == 1
        assert not out.exists()


@pytest.mark.parametrize("count", ["x", True, None, 2.5])
def test_a_query_count_that_is_no_integer_is_taken_as_unknown(tmp_path, count):
    """A hand-edited metrics.json whose dataset.n_queries is no integer ("x") crashed the report with a
    TypeError traceback (queries per second divides by it); compare and check read such a file. The
    count is now unknown: no queries-per-second figure, the rest of the report as before."""
    folder = _result(tmp_path / "r" / "a", "d", [0.2, 0.4], timings={"index_s": 2.0, "search_s": 0.5})
    doc = json.loads((folder / "metrics.json").read_text())
    doc["dataset"]["n_queries"] = count
    (folder / "metrics.json").write_text(json.dumps(doc))
    _result(tmp_path / "r" / "b", "d", [0.3, 0.1], timings={"index_s": 4.0, "search_s": 1.0})
    rows = dict(build_report(load_results([str(tmp_path / "r")]), settings=FAST).datasets[0].efficiency)
    assert "queries_per_s" not in rows["a"] and rows["a"]["search_s"] == 0.5
    assert rows["b"]["queries_per_s"] == pytest.approx(2 / 1.0)


@pytest.mark.parametrize("semantics, negative_unjudged", [("trec_eval-10", True), ("trec_eval-9", False), (None, False)])
def test_the_explorer_data_says_whether_a_negative_grade_is_unjudged(tmp_path, semantics, negative_unjudged):
    """The explorer marks and counts unjudged documents as Judged@k does: under trec_eval-10 a negative
    grade is unjudged (trec_eval 10's unj: RELVALUE_UNJUDGED); under trec_eval-9, or none recorded (the
    default), judged. (The page itself is checked in Chromium: tests/reports/test_html_report.py.)"""
    settings = {"relevance_threshold": 1.0, "ignore_identical_ids": True, "depth": 10}
    if semantics:
        settings["semantics"] = semantics
    for name, column in (("one", [0.2, 0.4]), ("two", [0.3, 0.1])):
        write_result(tmp_path / "x" / name, {f"q{i}": {"NDCG@10": v} for i, v in enumerate(column)}, settings=settings)
    report = build_report(load_results([str(tmp_path / "x")]), ["NDCG@10"], settings=FAST)
    assert report.datasets[0].explorer["negative_unjudged"] is negative_unjudged

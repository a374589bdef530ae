"""The report on per-query values near the largest double (DCG_exp@k of grades past ~1000: 2^grade - 1
is up to 2^1023), which harness compare handles (docs/compare.md: values scaled by a power of two).

Before: the cells' means were numpy's plain mean (the sum overflows: "inf" shown for both systems, no
best marked, never a significant pair), the explorer's values rounded to inf (JSON ``Infinity``: the
page's JSON.parse failed and the explorer was dead), the average row's interval over three datasets was
inf, and a metric at two cutoffs crashed the page's line chart (OverflowError, a traceback from
harness report).
"""

from __future__ import annotations

import json
import re

from harness.compare import Settings, align, compare, load_system
from harness.reports.html import build_report, load_results, render
from tests.compare.helpers import write_result

TOP = 2.0**1023  # the largest power of two a double holds
FAST = Settings(permutations=200, resamples=200)


def _strict(text: str):
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_values_near_the_largest_double_give_compares_means_and_a_working_page(tmp_path):
    a = [TOP, TOP / 2, TOP, 0.0]
    b = [TOP * 0.75, TOP, TOP, TOP / 4]
    for dataset in ("one", "two", "three"):  # the same values thrice: the average row is the same again
        for name, column in (("a", a), ("b", b)):
            folder = write_result(tmp_path / dataset / name,
                                  {f"q{i}": {"DCG_exp@5": v / 2, "DCG_exp@10": v} for i, v in enumerate(column)})
            document = json.loads((folder / "metrics.json").read_text())
            document["dataset"]["name"] = dataset
            (folder / "metrics.json").write_text(json.dumps(document))
    report = build_report(load_results([str(tmp_path)]), ["DCG_exp@10"], None, FAST)
    cells = report.datasets[0].cells["DCG_exp@10"]
    # Worked example (exact in binary): mean(a) = 2.5 * 2^1023 / 4, mean(b) = 3 * 2^1023 / 4.
    assert cells["a"]["mean"] == 0.625 * TOP and cells["b"]["mean"] == 0.75 * TOP
    assert cells["b"]["best"] and not cells["a"]["best"]
    versus = report.datasets[0].versus[0]
    assert versus["difference"] == 0.125 * TOP
    average = report.average["DCG_exp@10"]
    assert average["a"]["mean"] == 0.625 * TOP and average["b"]["mean"] == 0.75 * TOP and average["b"]["best"]
    assert all(0 < average[n]["low"] <= average[n]["mean"] <= average[n]["high"] <= TOP for n in "ab")
    # ... harness compare's numbers for the same results
    reference = compare(align([load_system(str(tmp_path / "one" / n)) for n in "ab"], ["DCG_exp@10"]), "a", FAST)
    assert [reference.means[n]["DCG_exp@10"] for n in "ab"] == [cells["a"]["mean"], cells["b"]["mean"]]
    assert reference.cells[("b", "DCG_exp@10")].stats.difference == versus["difference"]
    page = render(report)  # the DCG_exp@k line chart and the histogram are drawn (an OverflowError before)
    assert page.count("<svg") == 6
    assert re.findall(r'<span class="mean">([^<]*)</span>', page) == [f"{0.625 * TOP:.4f}", f"{0.75 * TOP:.4f}"] * 4
    data = _strict(re.search(r'id="report-data">(.*?)</script>', page, re.S).group(1))
    assert data["datasets"][0]["values"] == [[a], [b]]  # past 2^52 nothing is rounded

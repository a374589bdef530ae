"""report.html lists the warnings its results' metrics.json files record (harness/reports/html ``recorded_warnings``).

``harness bench`` prints its cells' warnings (a depth below a cutoff, documents not in the corpus, an http
service's failed queries) after its tables, and leaderboard.md / leaderboard.json carry them; the page the
same benchmark writes, report.html, and ``harness report`` over result folders showed none: a reader of the
page saw NDCG@100 of a run searched 50 deep with no word of it. Now the page's warnings end with one line per
distinct warning, naming its results as bench names its cells (``<row> / <column>``).
"""

from __future__ import annotations

import json
from html import escape

from harness.bench import run_bench
from harness.bench.config import parse_config
from tests.bench.bench_helpers import write_tiny
from tests.compare.helpers import write_result


def _warnings_list(page: str) -> list[str]:
    start = page.index('<ul class="warnings">')
    return [item.split("</li>")[0] for item in page[start:page.index("</ul>", start)].split("<li>")[1:]]


def test_a_benchmarks_page_lists_its_cells_warnings_once_per_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    tiny = write_tiny(tmp_path / "tiny")
    data = {"name": "w", "output_dir": str(tmp_path / "out"), "k": [1, 3], "depth": 1, "metrics": ["P@1", "P@3"],
            "datasets": [{"path": str(tiny), "label": "tiny"}],
            "retrievers": [{"type": "bm25", "label": "a"}, {"type": "bm25", "label": "b", "params": {"k1": 1.2}}]}
    result = run_bench(parse_config(data))
    assert [o.status for o in result.outcomes] == ["run", "run"]
    warning = ("depth 1 is below the largest cutoff 3: values at cutoffs past 1 (NDCG@3, MAP@3, Recall@3, P@3, ...) "
               "are computed on the top 1 documents only")
    assert result.warnings() == [f"tiny / a, tiny / b: {warning}"]  # (what harness bench prints)
    page = (tmp_path / "out" / "w" / "report.html").read_text(encoding="utf-8")
    assert _warnings_list(page) == [escape(f"tiny / a, tiny / b: {warning}")]


def test_harness_report_over_result_folders_lists_their_warnings(tmp_path, harness_cli):
    per_query = {"q1": {"P@1": 1.0}, "q2": {"P@1": 0.0}}
    for name, warnings in (("a", ["3 document id(s) returned by 'run-file' are not in the corpus (first: 'x<y>' "
                                  "for query 'q1'); they count as retrieved and not relevant"]), ("b", []), ("c", [])):
        folder = write_result(tmp_path / name, per_query)
        doc = json.loads((folder / "metrics.json").read_text())
        (folder / "metrics.json").write_text(json.dumps({**doc, "warnings": warnings} if warnings else doc))
    out = tmp_path / "page.html"
    proc = harness_cli("report", tmp_path / "a", tmp_path / "b", tmp_path / "c", "-m", "P@1", "-o", out)
    assert proc.returncode == 0, proc.stderr
    expected = ("toy / a: 3 document id(s) returned by 'run-file' are not in the corpus (first: 'x<y>' for query "
                "'q1'); they count as retrieved and not relevant")
    assert escape(expected) in _warnings_list(out.read_text(encoding="utf-8"))
    assert "x<y>" not in out.read_text(encoding="utf-8")  # (escaped)

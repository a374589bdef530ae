"""The per-query explorer as a browser shows it, against the result files (review s17).

Oracle: each query's difference ``system - baseline`` computed here from the per-query values the
results hold, printed as Python prints it (``f"{d:+.4f}"``, the digits ``harness compare`` prints), and its
sign counted as W/T/L counts it (``harness compare``, the page's own table against the baseline).
"""

from __future__ import annotations

from harness.compare import Settings
from harness.reports.html import build_report, load_results, write_report
from tests.compare.helpers import write_result
from tests.reports.browser import console_errors

FAST = Settings(permutations=50, resamples=50, test="t")

# MRR@10 of the baseline and of the other system per query. q72's pair is SciFact's q72 NDCG@10 under
# bm25 (k1 0.9, b 0.4) and bm25 (k1 1.2, b 0.75) (harness run, SciFact test set).
BASE = {"q1": 1 / 6, "q2": 0.5, "q3": 0.25, "q72": 0.43067655807339306, "q5": 1 / 3}
OTHER = {"q1": 1 / 3, "q2": 0.50002, "q3": 0.25, "q72": 0.6309297535714575, "q5": 0.2}


def _results(tmp_path):
    return [str(write_result(tmp_path / name, {q: {"MRR@10": v} for q, v in values.items()}))
            for name, values in (("base", BASE), ("other", OTHER))]


def _expected() -> dict[str, str]:
    """The Δ column's text per query: the difference of the values, rounded once (U+2212 for a loss)."""
    return {q: f"{OTHER[q] - BASE[q]:+.4f}".replace("-", "\u2212") for q in BASE}


def test_the_explorer_data_holds_each_difference_rounded_once(tmp_path):
    """1/3 - 1/6 = 0.16667 (+0.1667), but the explorer took it from the values rounded to 4 decimals,
    0.3333 - 0.1667 = +0.1666; SciFact's q72 +0.2003 was +0.2002; a gain of 0.00002 was a tie (0.5 - 0.5),
    where W/T/L counts it a win."""
    explorer = build_report(load_results(_results(tmp_path)), ["MRR@10"], None, FAST).datasets[0].explorer
    assert explorer["systems"] == ["base", "other"] and explorer["baseline"] == 0
    deltas = dict(zip(explorer["queries"], explorer["deltas"][1][0]))
    assert explorer["deltas"][0] is None
    assert {q: f"{d:+.4f}" for q, d in deltas.items()} == {q: f"{OTHER[q] - BASE[q]:+.4f}" for q in BASE}
    assert deltas["q1"] == 0.1667 and deltas["q72"] == 0.2003 and deltas["q3"] == 0
    assert deltas["q2"] > 0  # (rounds to 0.0000: its sign kept)


def test_the_explorer_values_are_rounded_as_the_tables_print_them(tmp_path):
    """NFCorpus's PLAIN-1887 AP under bm25 is 0.00125 (harness bench, AP, per_query.jsonl): the double is just above
    the half, and Python prints it 0.0013 (f"{v:.4f}"), as the tables and the deltas round; the explorer's data
    held numpy's round, 0.0012 (it scales by 10^4 first)."""
    values = {"q1": 0.00125, "q2": 1 / 3, "q3": 1.0, "q4": 0.0}
    paths = [str(write_result(tmp_path / name, {q: {"AP": v} for q, v in values.items()})) for name in ("a", "b")]
    explorer = build_report(load_results(paths), ["AP"], None, FAST).datasets[0].explorer
    shown = dict(zip(explorer["queries"], explorer["values"][0][0]))
    assert shown == {"q1": 0.0013, "q2": 0.3333, "q3": 1, "q4": 0}
    assert {q: f"{v:.4f}" for q, v in shown.items()} == {q: f"{v:.4f}" for q, v in values.items()}


def test_the_delta_column_and_filters_agree_with_the_values(tmp_path, chrome):
    """In the browser: the Δ column shows each difference as the files give it, the sort by Δ orders by it,
    and 'better than baseline' lists the queries W/T/L counts as wins (3: q1, q2, q72), 'tied' the ties (q3)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page = write_report(build_report(load_results(_results(tmp_path)), ["MRR@10"], None, FAST), tmp_path / "r.html")
    chrome.get(page.as_uri())

    def shown() -> dict[str, str]:
        return {row.get_attribute("data-query"): row.find_elements(By.TAG_NAME, "td")[-1].text
                for row in chrome.find_elements(By.CSS_SELECTOR, "#x-table tbody tr")}

    assert shown() == {**_expected(), "q3": "\u00b10.0000"}
    order = [row.get_attribute("data-query") for row in chrome.find_elements(By.CSS_SELECTOR, "#x-table tbody tr")]
    assert order == sorted(BASE, key=lambda q: (OTHER[q] - BASE[q], list(BASE).index(q)))  # losses first
    wins = [q for q in BASE if OTHER[q] > BASE[q]]
    assert chrome.find_element(By.CSS_SELECTOR, "details.versus td:last-child").get_attribute("textContent") \
        == f"{len(wins)}/1/1"
    Select(chrome.find_element(By.ID, "x-filter")).select_by_value("better")
    assert sorted(shown()) == sorted(wins) == ["q1", "q2", "q72"]
    Select(chrome.find_element(By.ID, "x-filter")).select_by_value("tied")
    assert list(shown()) == ["q3"]
    assert console_errors(chrome) == []


# ------------------------------------------------------------------------------ bidi controls in names
RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: its scope runs to the end of the paragraph unless something ends it

_LEFT = """
function left(node, i) { var r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 1);
                         return r.getBoundingClientRect().left; }
"""


def test_a_label_with_a_bidi_override_does_not_reorder_the_text_after_it(tmp_path, chrome):
    """A dataset label and system names ending in U+202E (a folder name, a NAME=PATH) are shown as text,
    but their override ran on into the page's own words: the baseline table's summary read
    'ds: every system against the baseline base (as harness compare)' right to left (its baseline left of
    'harness compare'), the explorer's column head 'base (baseline)' as ')enilesab(' and the histogram's
    title ': MRR@10, other - base' backwards. Expected (UAX #9, with the label isolated): the words after
    a label run left to right, as in any other label."""
    import json

    from selenium.webdriver.common.by import By

    arguments = []
    for name, values in (("base", BASE), ("other", OTHER)):
        folder = write_result(tmp_path / name, {q: {"MRR@10": v} for q, v in values.items()})
        doc = json.loads((folder / "metrics.json").read_text())
        doc["dataset"]["name"] = f"ds{RLO}"
        (folder / "metrics.json").write_text(json.dumps(doc))
        arguments.append(f"{name}{RLO}={folder}")
    page = write_report(build_report(load_results(arguments), ["MRR@10"], None, FAST), tmp_path / "r.html")
    chrome.get(page.as_uri())
    summary = chrome.find_element(By.CSS_SELECTOR, "details.versus summary")
    assert RLO in summary.get_attribute("textContent")  # (the label is shown as it is)
    baseline, code = summary.find_element(By.TAG_NAME, "b"), summary.find_element(By.TAG_NAME, "code")
    assert baseline.rect["x"] < code.rect["x"]
    head = chrome.find_elements(By.CSS_SELECTOR, "#x-table thead th")[2]
    opened, closed = chrome.execute_script(_LEFT + """
        var node = arguments[0].firstChild, at = node.data.indexOf("(baseline)");
        return [left(node, at), left(node, at + 9)];""", head)
    assert opened < closed
    title = chrome.find_element(By.CSS_SELECTOR, "#plots svg text.chart-title")
    colon, m = chrome.execute_script("""
        var t = arguments[0], at = t.textContent.indexOf(": MRR@10");
        return [t.getStartPositionOfChar(at).x, t.getStartPositionOfChar(at + 2).x];""", title)
    assert colon < m
    assert console_errors(chrome) == []


# ------------------------------------------------------------------------------ a benchmark without results
def test_a_benchmark_whose_every_cell_failed_is_one_line_naming_its_leaderboard(tmp_path, harness_cli):
    """`harness report results/allfail` over a benchmark whose only cell failed said 'error: nothing to
    report: no results', naming no file (docs/report.md: bad input is one line naming the file at fault).
    Expected: exit 2, one line naming the leaderboard.json, nothing written."""
    import json

    from harness.bench.leaderboard import SCHEMA

    bench = tmp_path / "results" / "allfail"
    bench.mkdir(parents=True)
    (bench / "leaderboard.json").write_text(json.dumps({
        "schema": SCHEMA, "bench": "allfail", "metrics": ["NDCG@10"], "datasets": ["broken"], "retrievers": ["bm25"],
        "cells": [{"dataset": "broken", "retriever": "bm25", "folder": "broken/bm25", "status": "failed"}]}))
    page = tmp_path / "r.html"
    proc = harness_cli("report", bench, "-o", page)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: nothing to report: no finished cell in {bench / 'leaderboard.json'} " \
                                  "(every cell failed)"
    assert not page.exists()

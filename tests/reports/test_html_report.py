"""The HTML report in a real headless Chromium: leaderboard numbers, the explorer, no console errors.

Oracles: the leaderboard means are recomputed here from each metrics.json's per-query values; the
intervals are checked against the normal approximation mean +- 1.96 sd / sqrt(n); the judged
documents against the bundled SciFact qrels file and the top 10 against run.trec, both parsed here.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from tests.reports.big_inputs import big_inputs
from tests.reports.browser import console_errors

BUNDLED = Path(__file__).resolve().parents[2] / "harness" / "datasets" / "bundled" / "scifact"


@pytest.fixture(scope="module")
def harness():
    from harness.cli import main

    def call(*args):
        saved = sys.argv
        sys.argv = ["harness", *map(str, args)]
        try:
            main()
            return 0
        except SystemExit as exc:
            return exc.code or 0
        finally:
            sys.argv = saved

    return call


@pytest.fixture(scope="module")
def scifact_results(tmp_path_factory):
    """BM25 with Anserini's (k1 0.9, b 0.4) and Robertson's (k1 1.2, b 0.75) parameters on the bundled SciFact."""
    from harness.cli.options import build_evaluator
    from harness.datasets import load_dataset
    from harness.experiment import run_experiment
    from retrievers import create

    root = tmp_path_factory.mktemp("results")
    dataset = load_dataset("scifact")
    evaluator, ks = build_evaluator("1,3,5,10,100", None, 1.0, False)
    folders = {}
    for name, params in (("bm25", {}), ("bm25-robertson", {"k1": 1.2, "b": 0.75})):
        folders[name] = root / "scifact" / name
        run_experiment(dataset, create("bm25", cache=False, **params), evaluator, ks, depth=100,
                       output_dir=folders[name])
    return SimpleNamespace(root=root, folders=folders)


@pytest.fixture(scope="module")
def scifact_page(harness, scifact_results, chrome):
    page = scifact_results.root / "report.html"
    assert harness("report", scifact_results.root, "--baseline", "bm25", "-o", page) == 0
    chrome.get(page.as_uri())
    return SimpleNamespace(path=page, driver=chrome)


def _click(driver, element) -> None:
    """Click ``element`` after scrolling it to the middle of the window (the page header is sticky)."""
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    element.click()


def _per_query(folder: Path) -> dict[str, dict[str, float]]:
    return json.loads((folder / "metrics.json").read_text())["per_query"]


def _qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines()[1:]:
        q, d, g = line.split("\t")
        out.setdefault(q, {})[d] = int(g)
    return out


def _top(run: Path, query: str, k: int) -> list[str]:
    rows = [line.split() for line in run.read_text().splitlines() if line.split()[0] == query]
    rows.sort(key=lambda r: r[2], reverse=True)  # trec_eval: score descending, then docid descending
    rows.sort(key=lambda r: float(r[4]), reverse=True)
    return [r[2] for r in rows[:k]]


def test_page_is_self_contained(scifact_page):
    text = scifact_page.path.read_text(encoding="utf-8")
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in text and "<link" not in text and "src=" not in text


def test_leaderboard_cells_hold_the_means_and_intervals(scifact_page, scifact_results):
    from selenium.webdriver.common.by import By

    driver = scifact_page.driver
    tables = driver.find_elements(By.CSS_SELECTOR, "table.board")
    assert [t.get_attribute("data-metric") for t in tables] == ["NDCG@10", "Recall@100", "MRR@10"]
    per_query = {name: _per_query(folder) for name, folder in scifact_results.folders.items()}
    for table in tables:
        metric = table.get_attribute("data-metric")
        cells = table.find_elements(By.CSS_SELECTOR, "tr[data-dataset='scifact'] td.cell")
        assert [c.get_attribute("data-system") for c in cells] == ["bm25", "bm25-robertson"]
        means = {}
        for cell in cells:
            values = np.array([row[metric] for row in per_query[cell.get_attribute("data-system")].values()])
            assert len(values) == 300
            mean = float(values.mean())
            means[cell.get_attribute("data-system")] = mean
            assert float(cell.get_attribute("data-mean")) == pytest.approx(mean, abs=1e-12)
            assert cell.find_element(By.CSS_SELECTOR, ".mean").text.startswith(f"{mean:.4f}")
            half = 1.959964 * values.std(ddof=1) / math.sqrt(len(values))
            low, high = float(cell.get_attribute("data-low")), float(cell.get_attribute("data-high"))
            assert low == pytest.approx(mean - half, abs=0.15 * half)
            assert high == pytest.approx(mean + half, abs=0.15 * half)
            assert cell.find_element(By.CSS_SELECTOR, ".ci").text == f"{low:.3f}–{high:.3f}"
        best = max(means, key=means.get)
        marked = [c.get_attribute("data-system") for c in cells if "best" in c.get_attribute("class").split()]
        assert marked == [best]
    # SciFact's published BM25 figure (Anserini flat, REFERENCE_SCORES.md table B) in the first cell.
    first = tables[0].find_element(By.CSS_SELECTOR, "td.cell[data-system='bm25'] .mean").text
    assert first.startswith("0.6789")


def test_groups_follow_the_paired_test(scifact_page, scifact_results):
    # Two systems share a letter exactly when they are not significantly different; the t-test of
    # scipy (an independent oracle; the page uses the randomization test) decides the clear cases.
    from scipy.stats import ttest_rel
    from selenium.webdriver.common.by import By

    a, b = (_per_query(f) for f in scifact_results.folders.values())
    for table in scifact_page.driver.find_elements(By.CSS_SELECTOR, "table.board"):
        metric = table.get_attribute("data-metric")
        x = [a[q][metric] for q in a]
        y = [b[q][metric] for q in a]
        p = ttest_rel(x, y).pvalue
        groups = [set(c.get_attribute("data-groups")) for c in table.find_elements(By.CSS_SELECTOR, "td.cell")]
        assert all(groups)
        if p > 0.1:
            assert groups[0] & groups[1], metric
        elif p < 0.01:
            assert not groups[0] & groups[1], metric


def test_explorer_opens_a_query_with_its_judged_documents_and_rankings(scifact_page, scifact_results):
    from selenium.webdriver.common.by import By

    driver = scifact_page.driver
    rows = driver.find_elements(By.CSS_SELECTOR, "#x-table tbody tr")
    assert len(rows) == 50  # one page; the other 250 queries are not in the DOM
    assert "of 300 queries" in driver.find_element(By.ID, "x-status").text
    # Sorted by delta, losses first: the first row holds the largest loss of NDCG@10.
    a, b = (_per_query(f) for f in scifact_results.folders.values())
    worst = min(b[q]["NDCG@10"] - a[q]["NDCG@10"] for q in a)
    assert rows[0].find_elements(By.TAG_NAME, "td")[-1].text.replace("−", "-") == f"{worst:+.4f}"

    qrels = _qrels(BUNDLED / "qrels" / "test.tsv")
    query = next(q for q in a if len(qrels[q]) >= 3 and len(q) >= 3)  # several judged documents
    search = driver.find_element(By.ID, "x-search")
    search.clear()
    search.send_keys(query)
    time.sleep(0.2)
    row = next(r for r in driver.find_elements(By.CSS_SELECTOR, "#x-table tbody tr")
               if r.get_attribute("data-query") == query)
    _click(driver, row)
    detail = driver.find_element(By.ID, "x-detail")
    assert detail.is_displayed()
    assert detail.find_element(By.TAG_NAME, "h3").text == f"Query {query}"
    texts = {json.loads(line)["query_id"]: json.loads(line)["query"]
             for line in (scifact_results.folders["bm25"] / "per_query.jsonl").read_text().splitlines()}
    assert detail.find_element(By.CLASS_NAME, "query-text").text == texts[query]
    judged = detail.find_elements(By.CSS_SELECTOR, "ul.judged li")
    assert {li.get_attribute("data-doc"): int(li.find_element(By.CLASS_NAME, "grade").text) for li in judged} \
        == qrels[query]
    assert all(len(li.text) > len(li.get_attribute("data-doc")) + 3 for li in judged)  # titles shown
    for name, folder in scifact_results.folders.items():
        box = detail.find_element(By.CSS_SELECTOR, f".list[data-system='{name}']")
        items = box.find_elements(By.CSS_SELECTOR, "ol.topk li")
        assert [li.get_attribute("data-doc") for li in items] == _top(folder / "run.trec", query, 10)
        for li in items:
            doc = li.get_attribute("data-doc")
            unjudged = "is-unjudged" in li.get_attribute("class")
            assert unjudged == (doc not in qrels[query])
            if not unjudged:
                assert li.find_element(By.CLASS_NAME, "grade").text == str(qrels[query][doc])
    search.clear()
    search.send_keys("no query has these words xyzzy")
    time.sleep(0.2)
    assert driver.find_elements(By.CSS_SELECTOR, "#x-table tbody tr") == []
    assert driver.find_element(By.ID, "x-status").text == "No query matches."
    assert console_errors(driver) == []


def test_plots_efficiency_and_settings_are_on_the_page(scifact_page, scifact_results):
    from selenium.webdriver.common.by import By

    driver = scifact_page.driver
    charts = driver.find_elements(By.CSS_SELECTOR, "#plots svg.chart")
    titles = [c.get_attribute("aria-label") for c in charts]
    assert "scifact: NDCG@k" in titles and "scifact: NDCG@10, bm25-robertson − bm25" in titles
    efficiency = driver.find_element(By.ID, "efficiency").text
    assert "search_s" in efficiency and "queries_per_s" in efficiency
    doc = json.loads((scifact_results.folders["bm25-robertson"] / "metrics.json").read_text())
    settings = driver.find_element(By.ID, "results").get_attribute("textContent")
    assert doc["dataset"]["files"]["qrels/test.tsv"] in settings and '"k1": 1.2' in settings
    assert console_errors(driver) == []


# ------------------------------------------------------------------------------ 7k queries x 5 systems
def test_seven_thousand_queries_five_systems_stay_usable(harness, chrome, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    data, results = big_inputs(tmp_path)
    page = tmp_path / "big.html"
    assert harness("report", results, "--dataset", data, "-o", page, "--permutations", "1000",
                   "--resamples", "1000") == 0
    size = page.stat().st_size
    assert size < 12 * 2 ** 20, f"{size / 2 ** 20:.1f} MiB"
    print(f"\n7,000 queries x 5 systems: report.html is {size / 2 ** 20:.2f} MiB")  # docs/report.md quotes it
    chrome.get(page.as_uri())
    rows = chrome.find_elements(By.CSS_SELECTOR, "#x-table tbody tr")
    assert len(rows) == 50
    assert "of 7000 queries" in chrome.find_element(By.ID, "x-status").text
    assert len(chrome.find_elements(By.CSS_SELECTOR, "table.board td.cell")) == 15
    Select(chrome.find_element(By.ID, "x-sort")).select_by_value("delta-desc")
    Select(chrome.find_element(By.ID, "x-system")).select_by_index(3)  # system-4 - system-0
    _click(chrome, chrome.find_element(By.ID, "x-next"))
    assert chrome.find_element(By.ID, "x-page").text == "page 2 of 140"
    row = chrome.find_elements(By.CSS_SELECTOR, "#x-table tbody tr")[0]
    query = row.get_attribute("data-query")
    _click(chrome, row)
    detail = chrome.find_element(By.ID, "x-detail")
    assert detail.find_element(By.TAG_NAME, "h3").text == f"Query {query}"
    assert 2 <= len(detail.find_elements(By.CSS_SELECTOR, "ul.judged li")) <= 4
    assert len(detail.find_elements(By.CSS_SELECTOR, "ol.topk")) == 5
    assert "Document" in detail.find_element(By.CSS_SELECTOR, "ol.topk li").text
    assert "latency_ms.p99" in chrome.find_element(By.ID, "efficiency").text
    assert console_errors(chrome) == []


# ------------------------------------------------------------------------------ negative grades
def _negative_grade_dataset(folder: Path) -> Path:
    """q1 judges d1 1 and d2 -1, d3 unjudged (its top 3 holds all three); q2 judges d4."""
    (folder / "qrels").mkdir(parents=True)
    docs = {"d1": "apple pie", "d2": "apple tart", "d3": "apple juice", "d4": "pear"}
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": t.title(), "text": t}) + "\n"
                                                 for d, t in docs.items()))
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "apple"}\n{"_id": "q2", "text": "pear"}\n')
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t-1\nq2\td4\t1\n")
    return folder


@pytest.mark.parametrize("semantics, unjudged", [("trec_eval-10", ["d2", "d3"]), ("trec_eval-9", ["d3"])])
def test_the_explorer_counts_judged_documents_as_the_evaluator_does(harness, chrome, tmp_path, semantics, unjudged):
    """trec_eval 10 counts a document with a negative qrels grade as unjudged (te_form_res_rels gives it
    RELVALUE_UNJUDGED, which m_unj.c counts), and so does Judged@k under --semantics trec_eval-10: q1's top 3
    (d1 grade 1, d2 grade -1, d3 unjudged) has Judged@3 = 1/3. The explorer said "top 3 (1 unjudged)" and
    marked d2 judged. Expected: the unjudged documents are those Judged@3 leaves out (1 - Judged@3 = 2/3
    of 3 under trec_eval-10; 1 of 3 under trec_eval-9, where a negative grade is judged)."""
    from selenium.webdriver.common.by import By

    data = _negative_grade_dataset(tmp_path / "neg")
    for name, k1 in (("bm25", "0.9"), ("bm25b", "0.5")):
        assert harness("run", "-d", data, "-r", "bm25", "-p", f"k1={k1}", "--name", name, "--semantics", semantics,
                       "-m", "Judged@3", "--k", "3", "-o", tmp_path / "out", "-q") == 0
    per_query = _per_query(tmp_path / "out" / "neg" / "bm25")
    assert per_query["q1"]["Judged@3"] == pytest.approx(1 - len(unjudged) / 3)  # the evaluator's count
    page = tmp_path / "report.html"
    assert harness("report", tmp_path / "out" / "neg" / "bm25", tmp_path / "out" / "neg" / "bm25b", "-d", data,
                   "-m", "Judged@3", "--top-k", "3", "-o", page) == 0
    chrome.get(page.as_uri())
    row = next(r for r in chrome.find_elements(By.CSS_SELECTOR, "#x-table tbody tr")
               if r.get_attribute("data-query") == "q1")
    _click(chrome, row)
    box = chrome.find_element(By.CSS_SELECTOR, "#x-detail .list[data-system='bm25']")
    items = box.find_elements(By.CSS_SELECTOR, "ol.topk li")
    assert sorted(li.get_attribute("data-doc") for li in items) == ["d1", "d2", "d3"]
    assert sorted(li.get_attribute("data-doc") for li in items if "is-unjudged" in li.get_attribute("class")) \
        == unjudged
    assert box.find_element(By.TAG_NAME, "h4").text == f"bm25: top 3 ({len(unjudged)} unjudged)"
    judged = chrome.find_element(By.CSS_SELECTOR, "#x-detail ul.judged")
    assert {li.get_attribute("data-doc"): li.find_element(By.CLASS_NAME, "grade").text
            for li in judged.find_elements(By.TAG_NAME, "li")} == {"d1": "1", "d2": "-1"}  # grades still shown
    assert console_errors(chrome) == []

"""`harness report` leftovers (review s18): the explorer's query-id order, the default baseline's warning,
bench folders beside plain results, odd folder names, an old bench.json, the title of several benchmarks.
"""

from __future__ import annotations

from harness.compare import Settings
from harness.reports.html import build_report, load_results, write_report
from tests.compare.helpers import write_result
from tests.reports.browser import console_errors

FAST = Settings(permutations=50, resamples=50, test="t")

# ------------------------------------------------------------------------------ natural query-id order
# Worked example: SciFact's ids are numbers ("2", "10"), NFCorpus's PLAIN-<n>, TREC's sometimes zero-padded.
# Natural order: digit runs compared as numbers (of any length: 10^20 after 20 nines, past a double's
# precision), text between them as text, ids that start with digits before those that start with text, and
# ids equal so ("07", "7") in their text order ("07" first, as Python's sorted). Text order (the old page):
# "07", "1", "10", "100000000000000000000", "2", ...
NATURAL = ["1", "2", "07", "7", "10", "99999999999999999999", "100000000000000000000",
           "MED-2", "PLAIN-9", "PLAIN-10", "PLAIN-100", "a"]


def _shown(chrome) -> list[str]:
    from selenium.webdriver.common.by import By
    return [row.get_attribute("data-query") for row in chrome.find_elements(By.CSS_SELECTOR, "#x-table tbody tr")]


def _page(tmp_path, base: dict[str, float], other: dict[str, float]):
    results = [str(write_result(tmp_path / name, {q: {"MRR@10": v} for q, v in values.items()}))
               for name, values in (("base", base), ("other", other))]
    return write_report(build_report(load_results(results), ["MRR@10"], None, FAST), tmp_path / "r.html")


def test_sort_by_query_id_is_natural_order(tmp_path, chrome):
    """'sort: query id' listed "10" before "2" and PLAIN-10 before PLAIN-9 (the ids' text order)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    ids = sorted(NATURAL, key=lambda q: (q[::-1]))  # (the results' order plays no part)
    chrome.get(_page(tmp_path, {q: 0.5 for q in ids}, {q: 0.25 + i / 100 for i, q in enumerate(ids)}).as_uri())
    Select(chrome.find_element(By.ID, "x-sort")).select_by_value("id")
    assert _shown(chrome) == NATURAL
    assert console_errors(chrome) == []


def test_ties_of_the_delta_sort_are_in_natural_order(tmp_path, chrome):
    """Queries with the same Δ (here every one: two systems with equal values) were listed in text order under
    'Δ, losses first' (the page's default) and 'baseline value': the same natural order as 'query id'."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    values = {q: 0.5 for q in NATURAL}
    chrome.get(_page(tmp_path, values, dict(values)).as_uri())
    assert _shown(chrome) == NATURAL
    Select(chrome.find_element(By.ID, "x-sort")).select_by_value("base-asc")
    assert _shown(chrome) == NATURAL
    assert console_errors(chrome) == []


# ------------------------------------------------------------------------------ the default baseline
def test_no_baseline_warning_without_baseline_option(tmp_path):
    """Results of bm25 on one dataset and only of bm25-robertson on another, no --baseline: the page and
    stderr said "baseline 'bm25' has no result on nfcorpus: bm25-robertson is the baseline here", a warning
    about an option nobody gave. Expected: no warning; nfcorpus's baseline its own first system; with
    --baseline bm25 the warning as before."""
    import json

    folders = []
    for dataset, name in (("scifact", "bm25"), ("scifact", "bm25-robertson"), ("nfcorpus", "bm25-robertson")):
        folder = write_result(tmp_path / dataset / name, {f"q{i}": {"MRR@10": i / 10} for i in range(4)})
        doc = json.loads((folder / "metrics.json").read_text())
        doc["dataset"]["name"] = dataset
        (folder / "metrics.json").write_text(json.dumps(doc))
        folders.append(str(folder))
    groups = load_results(folders)
    report = build_report(groups, ["MRR@10"], None, FAST)
    assert report.baseline == "bm25"
    assert {s.label: s.baseline for s in report.datasets} == {"scifact": "bm25", "nfcorpus": "bm25-robertson"}
    assert [w for s in report.datasets for w in s.warnings if "baseline" in w] == []
    chosen = build_report(groups, ["MRR@10"], "bm25", FAST)
    assert [w for s in chosen.datasets for w in s.warnings if "baseline" in w] == \
        ["baseline 'bm25' has no result on nfcorpus: bm25-robertson is the baseline here"]


# ------------------------------------------------------------------------------ a result given twice
def _plain(root, dataset: str = "toy", **values) -> list[str]:
    """Result folders root/<dataset>/<name> (MRR@10 per query q0..q3) of dataset ``dataset``."""
    import json

    out = []
    for name, column in values.items():
        folder = write_result(root / dataset / name, {f"q{i}": {"MRR@10": v} for i, v in enumerate(column)})
        doc = json.loads((folder / "metrics.json").read_text())
        doc["dataset"]["name"] = dataset
        (folder / "metrics.json").write_text(json.dumps(doc))
        out.append(folder)
    return out


def test_a_result_found_twice_is_read_once(tmp_path, monkeypatch, harness_cli):
    """`harness report results results/toy/bm25` (the tree, and a result in it, as benchmarks are given) said
    "error: toy: two results are both named 'bm25' (results/toy/bm25/metrics.json and
    results/toy/bm25/metrics.json)", one file twice; with `mine=results/toy/bm25` the page had the same values
    twice, as columns bm25 and mine. Expected: each result once (bm25, other), under the name given (mine)."""
    from tests.reports.test_report_benches import _columns

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    _plain(tmp_path / "results", bm25=[1, 0.5, 0, 0.25], other=[0.5, 0.5, 0, 1])
    ran = harness_cli("report", "results", "results/toy/bm25", "-m", "MRR@10", "-o", "r.html")
    assert ran.returncode == 0, ran.stderr
    assert _columns((tmp_path / "r.html").read_text(), "MRR@10") == ["bm25", "other"]
    ran = harness_cli("report", "results", "mine=results/toy/bm25", "-m", "MRR@10", "-o", "r.html")
    assert ran.returncode == 0, ran.stderr
    assert _columns((tmp_path / "r.html").read_text(), "MRR@10") == ["mine", "other"]


def test_a_benchmarks_cell_given_again_is_its_column_once(tmp_path, monkeypatch, harness_cli):
    """Benchmarks a (GOOD, P@1 1.0) and b (HALF, 0.5) in results/, and a's cell given as a result too: the page had
    columns a/mine, b/mine and mine, a's values twice (with a alone: refused as two results named 'mine').
    Expected: a/mine and b/mine with their leaderboards' values, and a note naming the cell; a and its cell: a's
    page (its metrics and title, not those of results beside a benchmark: "none of the default metrics")."""
    import json

    from tests.reports.test_report_benches import GOOD, HALF, _bench, _board

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    a = _bench(tmp_path, "a", {"mine": GOOD})
    _bench(tmp_path, "b", {"mine": HALF})
    cell = a / json.loads((a / "leaderboard.json").read_text())["cells"][0]["folder"]
    ran = harness_cli("report", tmp_path / "results", cell, "-m", "P@1", "-o", tmp_path / "r.html")
    assert ran.returncode == 0, ran.stderr
    assert _board((tmp_path / "r.html").read_text())["tiny"] == {"a/mine": "1.0", "b/mine": "0.5"}
    assert f"note: {cell / 'metrics.json'}: a finished cell of {a / 'leaderboard.json'}" in ran.stderr
    ran = harness_cli("report", a, cell, "-o", tmp_path / "a.html")
    assert ran.returncode == 0, ran.stderr
    page = (tmp_path / "a.html").read_text()
    assert _board(page)["tiny"] == {"mine": "1.0"} and "<title>Benchmark a</title>" in page


# ------------------------------------------------------------------------------ folders named . and ..
def test_a_result_given_as_dot_or_dotdot_is_named_by_its_folder(tmp_path, monkeypatch, harness_cli):
    """From inside results/toy/run #1 ü: `harness report . ../other` named the result 'metrics.json' (Path('.')
    has no name), and from a folder below it `harness report .. ../../other` named it '..'. Expected: the
    folder's name, 'run #1 ü', as `harness report results/toy/run #1 ü` names it."""
    from tests.reports.test_report_benches import _columns

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    run, _ = _plain(tmp_path / "results", **{"run #1 ü": [1, 0.5, 0, 0.25], "other": [0.5, 0.5, 0, 1]})
    monkeypatch.chdir(run)
    ran = harness_cli("report", ".", "../other", "-m", "MRR@10", "-o", tmp_path / "r.html")
    assert ran.returncode == 0, ran.stderr
    assert _columns((tmp_path / "r.html").read_text(), "MRR@10") == ["run #1 ü", "other"]
    (run / "sub").mkdir()
    monkeypatch.chdir(run / "sub")
    ran = harness_cli("report", "..", "../../other", "-m", "MRR@10", "-o", tmp_path / "r.html")
    assert ran.returncode == 0, ran.stderr
    assert _columns((tmp_path / "r.html").read_text(), "MRR@10") == ["run #1 ü", "other"]


def test_benchmark_columns_given_through_dotdot_are_named_by_their_folders(tmp_path, monkeypatch, harness_cli):
    """From results/b, `harness report ../a .` named the columns '../a/mine' and 'b/mine' (the folders' paths
    below their common one, '..' and all). Expected: a/mine and b/mine, as `harness report results` names them."""
    from tests.reports.test_report_benches import GOOD, HALF, _bench, _board

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    _bench(tmp_path, "a", {"mine": GOOD})
    b = _bench(tmp_path, "b", {"mine": HALF})
    monkeypatch.chdir(b)
    ran = harness_cli("report", "../a", ".", "-o", tmp_path / "r.html")
    assert ran.returncode == 0, ran.stderr
    assert _board((tmp_path / "r.html").read_text())["tiny"] == {"a/mine": "1.0", "b/mine": "0.5"}


# ------------------------------------------------------------------------------ a results folder named like the dataset
def test_a_results_folder_named_like_the_dataset_is_not_taken_for_it(tmp_path, monkeypatch, harness_cli):
    """`harness run -o .` writes ./scifact/bm25; `harness report .` from there took ./scifact (the results) for
    the dataset 'scifact' the results record: "warning: scifact: no document titles: scifact: no corpus.jsonl"
    and "no judgments". Expected: the bundled SciFact's judgments (its qrels/test.tsv, whose sha256 the results
    record) and titles, no warning, as from any other directory."""
    import csv
    import json

    from harness.checksums import sha256
    from harness.datasets import BUNDLED
    from tests.reports.test_report_benches import _explorer

    qrels = BUNDLED / "scifact" / "qrels" / "test.tsv"
    with qrels.open() as f:
        rows = list(csv.reader(f, delimiter="\t"))[1:]
    expected = {q: {d: int(g) for qq, d, g in rows if qq == q} for q in ("1", "3")}
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    for folder in _plain(tmp_path, "scifact", bm25=[0, 1], other=[0.5, 1]):
        doc = json.loads((folder / "metrics.json").read_text())
        doc["per_query"] = {"1": doc["per_query"]["q0"], "3": doc["per_query"]["q1"]}
        doc["dataset"]["files"] = {"qrels/test.tsv": sha256(qrels)}
        (folder / "metrics.json").write_text(json.dumps(doc))
    ran = harness_cli("report", ".", "-m", "MRR@10", "-o", "r.html")
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr == ""
    explorer = _explorer((tmp_path / "r.html").read_text())["datasets"][0]
    grades = {q: {explorer["docs"][c]: g for c, g in zip(flat[::2], flat[1::2])}
              for q, flat in zip(explorer["queries"], explorer["judged"])}
    assert grades == expected and all(expected.values())
    assert explorer["titles"] is not None


# ------------------------------------------------------------------------------ an old bench.json, several benchmarks
def test_an_old_bench_json_whose_folder_is_found_nowhere_names_it(tmp_path, monkeypatch, harness_cli):
    """A bench.json without cwd (written before it was recorded) with an absolute output_dir and path =
    "data/tiny", the project moved since: from elsewhere the page said only "warning: tiny: no document titles:
    unknown dataset 'data/tiny': not a folder, not bundled ...", not where data/tiny was looked for nor what to
    do. Expected: a line naming the bench.json, the label and --dataset tiny=FOLDER; with that option, no
    warning and tiny's judgments (q1 d2 2, d3 1; q2 d4 1)."""
    import json

    from harness.bench import load_config, run_bench
    from tests.bench.bench_helpers import QRELS, write_tiny
    from tests.reports.test_report_benches import GOOD, _explorer

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    project = tmp_path / "project"
    write_tiny(project / "data" / "tiny")
    (project / "run.trec").write_text(GOOD)
    (project / "b.toml").write_text(f'name = "suite"\nk = [1]\nmetrics = ["P@1"]\noutput_dir = "{project / "out"}"\n'
                                    'datasets = [{path = "data/tiny", label = "tiny"}]\n'
                                    '[[retrievers]]\ntype = "run-file"\nlabel = "mine"\nparams = {path = "run.trec"}\n')
    monkeypatch.chdir(project)
    run_bench(load_config("b.toml"))
    manifest = json.loads((project / "out" / "suite" / "bench.json").read_text())
    manifest.pop("cwd")
    (project / "out" / "suite" / "bench.json").write_text(json.dumps(manifest))
    monkeypatch.chdir(tmp_path)
    project.rename(tmp_path / "moved")
    suite = tmp_path / "moved" / "out" / "suite"
    ran = harness_cli("report", suite, "-o", "r.html")
    assert ran.returncode == 0, ran.stderr
    assert (f"warning: {suite / 'bench.json'}: dataset tiny's folder 'data/tiny' is relative to the directory the "
            "benchmark ran in") in ran.stderr
    assert "give it with --dataset tiny=FOLDER" in ran.stderr
    ran = harness_cli("report", suite, "-d", f"tiny={tmp_path / 'moved' / 'data' / 'tiny'}", "-o", "r.html")
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr == ""
    explorer = _explorer((tmp_path / "r.html").read_text())["datasets"][0]
    grades = {q: {explorer["docs"][c]: g for c, g in zip(flat[::2], flat[1::2])}
              for q, flat in zip(explorer["queries"], explorer["judged"])}
    assert grades == {q: {d: g for qq, d, g in QRELS if qq == q} for q in ("q1", "q2")}


def test_several_benchmarks_are_titled_by_their_names(tmp_path, monkeypatch, harness_cli):
    """`harness report results` over benchmarks a and b was titled "Retrieval report" (one of them alone:
    "Benchmark a"). Expected: "Benchmarks a, b"; with a plain result beside them, the default."""
    from tests.reports.test_report_benches import GOOD, HALF, _bench

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    _bench(tmp_path, "a", {"mine": GOOD})
    _bench(tmp_path, "b", {"mine": HALF})
    ran = harness_cli("report", tmp_path / "results", "-o", tmp_path / "r.html")
    assert ran.returncode == 0, ran.stderr
    page = (tmp_path / "r.html").read_text()
    assert "<title>Benchmarks a, b</title>" in page and "<h1>Benchmarks a, b</h1>" in page


def test_the_page_and_harness_check_give_the_same_natural_order(chrome):
    """report.js ``naturalRanks`` and its Python twin ``harness.compare.check.natural_ranks`` (harness check's
    list of the queries that lost most) must order ids alike. Both run here on 3,000 random ids drawn to hit
    the edges: digit runs with leading zeros and past 2^53, ids equal but for zeros ("7", "07"), letters, '/',
    ':' (code points on each side of the digits), non-ASCII digits ('٣', not a digit run for either), astral
    code points (two UTF-16 units in JS) and empty ids. The function is taken from report.js as the page has it."""
    import random
    import re
    from pathlib import Path

    from harness.compare.check import natural_ranks

    source = (Path(__file__).resolve().parents[2] / "harness" / "reports" / "html" / "report.js").read_text("utf-8")
    function = re.search(r"\n  function naturalRanks\(ids\) \{\n.*?\n  \}\n", source, re.S).group(0)
    rng = random.Random(15)
    pieces = ["0", "00", "7", "07", "10", "9" * 20, "1" + "0" * 20, "a", "B", "-", "/", ":", "PLAIN-", "MED-",
              "\u0663", "é", "\U0001F600", "\uff10", " "]
    ids = [""] + ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))) for _ in range(3000)]
    chrome.get("about:blank")
    page = chrome.execute_script(function + "\nreturn naturalRanks(arguments[0]);", ids)
    assert page == natural_ranks(ids).tolist()
    assert sorted(page) == list(range(len(ids)))

"""``harness report`` over benchmark folders: several benchmarks, a retriever whose every cell failed, relative
dataset folders, and the explorer's counts (report review, the leftovers of fbc9171).

Data: tests/bench/bench_helpers.py's ``tiny`` (q1 judges d2 grade 2 and d3 grade 1, q2 judges d4 grade 1) and
run files written here, whose P@1 is worked by hand: ``GOOD`` ranks d2 first for q1 and d4 for q2 (P@1 = 1 on
both), ``HALF`` ranks d1 for q1 (not relevant) and d4 for q2 (P@1 = (0 + 1) / 2 = 0.5). The expected values of
the benchmarks' columns are those of their own leaderboard.json.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.bench import load_config, run_bench
from tests.bench.bench_helpers import QRELS, write_tiny
from tests.reports.browser import console_errors

GOOD = "q1 Q0 d2 1 2 x\nq1 Q0 d1 2 1 x\nq2 Q0 d4 1 2 x\nq2 Q0 d3 2 1 x\n"  # P@1 1, num_ret 2 per query
HALF = "q1 Q0 d1 1 2 x\nq2 Q0 d4 1 2 x\n"  # P@1 0 on q1, 1 on q2; num_ret 1 per query


def _board(page: str, metric: str = "P@1") -> dict[str, dict[str, str | None]]:
    """row -> column -> the page's mean (None for '-') in the leaderboard table of ``metric``."""
    table = re.search(rf'<table class="board" data-metric="{re.escape(metric)}">.*?</table>', page, re.S).group(0)
    out: dict[str, dict[str, str | None]] = {}
    for label, row in re.findall(r'<tr[^>]*data-dataset="([^"]+)"[^>]*>(.*?)</tr>', table, re.S):
        cells = re.findall(r'<td class="[^"]*" data-system="([^"]+)"( data-mean="([^"]+)")?', row)
        out[label] = {system: mean or None for system, _, mean in cells}
    return out


def _columns(page: str, metric: str = "P@1") -> list[str]:
    table = re.search(rf'<table class="board" data-metric="{re.escape(metric)}">.*?</table>', page, re.S).group(0)
    return re.findall(r"<th>([^<]*)</th>", re.search(r"<thead>.*?</thead>", table, re.S).group(0))[1:]


def _explorer(page: str) -> dict:
    data = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S).group(1)
    return json.loads(data)


def _bench(tmp_path: Path, name: str, retrievers: dict[str, str], datasets: str = "tiny",
           output_dir: str | None = None) -> Path:
    """A config ``name`` with run-file retrievers (label -> run text) on ``datasets`` (labels of tiny folders
    under tmp_path), run; its folder."""
    lines = [f'name = "{name}"', 'k = [1]', 'metrics = ["P@1"]', f'output_dir = "{output_dir or tmp_path / "results"}"',
             "datasets = [" + ", ".join(f'{{path = "{write_tiny(tmp_path / d)}", label = "{d}"}}'
                                        for d in datasets.split(",")) + "]"]
    for label, text in retrievers.items():
        run = tmp_path / f"{name}-{label}.trec"
        run.write_text(text)
        lines.append(f'[[retrievers]]\ntype = "run-file"\nlabel = "{label}"\nparams = {{path = "{run}"}}')
    config = tmp_path / f"{name}.toml"
    config.write_text("\n".join(lines) + "\n")
    run_bench(load_config(config))
    return Path(output_dir or tmp_path / "results") / name


# ------------------------------------------------------------------------------ 1. two benchmarks, one label
def test_two_benchmarks_with_the_same_labels_are_columns_named_by_their_folders(tmp_path, monkeypatch, harness_cli):
    """results/a and results/b both have a retriever "mine" on "tiny" (a: GOOD, P@1 1.0; b: HALF, P@1 0.5, as
    their leaderboard.json say). The old `harness report results` refused the tree: "error: tiny: two results
    are both named 'mine' (...); name them with NAME=PATH", which cannot name a benchmark's cell. Expected:
    columns a/mine and b/mine with their own leaderboards' values; --baseline takes the new names."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    a = _bench(tmp_path, "a", {"mine": GOOD})
    b = _bench(tmp_path, "b", {"mine": HALF})
    expected = {"a/mine": json.loads((a / "leaderboard.json").read_text())["tables"]["P@1"]["rows"]["tiny"]["mine"],
                "b/mine": json.loads((b / "leaderboard.json").read_text())["tables"]["P@1"]["rows"]["tiny"]["mine"]}
    assert expected == {"a/mine": 1.0, "b/mine": 0.5}
    ran = harness_cli("report", tmp_path / "results", "--baseline", "b/mine", "-o", tmp_path / "r.html")
    assert ran.returncode == 0, ran.stderr
    page = (tmp_path / "r.html").read_text()
    assert _board(page)["tiny"] == {name: repr(value) for name, value in expected.items()}
    assert "baseline <b>b/mine</b>" in page
    # the tree and a benchmark in it: the benchmark is read once (it was the same duplicate-name error)
    ran = harness_cli("report", tmp_path / "results", a, "-o", tmp_path / "twice.html")
    assert ran.returncode == 0, ran.stderr
    assert _board((tmp_path / "twice.html").read_text())["tiny"] == _board(page)["tiny"]


def test_benchmarks_that_share_no_cell_keep_their_labels_and_average(tmp_path, monkeypatch, harness_cli):
    """One config per dataset (a on tiny, b on tiny2, both "mine"): no row holds two results of one name, so the
    labels stay one column and the average is over both rows, (1.0 + 0.5) / 2 = 0.75 (as before)."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    _bench(tmp_path, "a", {"mine": GOOD}, "tiny")
    _bench(tmp_path, "b", {"mine": HALF}, "tiny2")
    ran = harness_cli("report", tmp_path / "results", "-m", "P@1", "-o", tmp_path / "r.html")
    assert ran.returncode == 0, ran.stderr
    assert _board((tmp_path / "r.html").read_text()) == {"tiny": {"mine": "1.0"}, "tiny2": {"mine": "0.5"},
                                                         "average": {"mine": "0.75"}}


# ------------------------------------------------------------------------------ 2. a retriever whose cells all failed
def test_a_retriever_whose_every_cell_failed_is_a_column_of_dashes(tmp_path, monkeypatch, harness_cli):
    """"broken" reads a file that is no run (its cells fail); leaderboard.json lists it among the retrievers,
    null on every row and the average (leaderboard.md: '-'). The old report.html (the benchmark's and `harness
    report`'s) had no such column. Expected: the columns of leaderboard.json in its order, broken '-' in every
    row and the average, named under the tables; --baseline broken is one line, exit 2."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    out = _bench(tmp_path, "suite", {"broken": "not a run file\n", "mine": GOOD}, "tiny,tiny2")
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["retrievers"] == ["broken", "mine"]
    table = board["tables"]["P@1"]
    assert table["rows"] == {"tiny": {"broken": None, "mine": 1.0}, "tiny2": {"broken": None, "mine": 1.0}}
    assert table["average"] == {"broken": None, "mine": 1.0}
    expected = {row: {r: None if v is None else repr(v) for r, v in values.items()}
                for row, values in [*table["rows"].items(), ("average", table["average"])]}
    ran = harness_cli("report", out, "-o", tmp_path / "again.html")
    assert ran.returncode == 0, ran.stderr
    for page in ((out / "report.html").read_text(), (tmp_path / "again.html").read_text()):
        assert _columns(page) == board["retrievers"]
        assert _board(page) == expected
        assert "No results from broken (every cell failed)" in page
        assert "baseline <b>mine</b>" in page  # (the first column with results)
    ran = harness_cli("report", out, "--baseline", "broken", "-o", tmp_path / "b.html")
    assert ran.returncode == 2
    assert ran.stderr.strip() == "error: baseline 'broken' has no results (every cell of it failed); choose one of mine"
    assert not (tmp_path / "b.html").exists()


# ------------------------------------------------------------------------------ 3. relative dataset folders
@pytest.mark.parametrize("recorded", ["cwd", "output_dir", "cwd, absolute output_dir"])
def test_relative_dataset_folders_are_taken_from_where_the_benchmark_ran(tmp_path, monkeypatch, harness_cli,
                                                                         recorded):
    """The benchmark ran in project/ with path = "data/tiny". `harness report project/results/suite` from
    another directory looked for data/tiny there: "warning: tiny: no document titles: unknown dataset
    'data/tiny'" and "no judgments" (the explorer without grades). Expected from anywhere: tiny's judgments
    (the qrels file: q1 d2 2, d3 1; q2 d4 1) and no warning, as from project/: from bench.json's cwd, or for a
    bench.json without it (written before it was recorded) from its relative output_dir (project/ is
    results/suite's grandparent)."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    project = tmp_path / "project"
    write_tiny(project / "data" / "tiny")
    (project / "run.trec").write_text(GOOD)
    output_dir = str(project / "out") if "absolute" in recorded else "results"
    (project / "b.toml").write_text(f'name = "suite"\nk = [1]\nmetrics = ["P@1"]\noutput_dir = "{output_dir}"\n'
                                    'datasets = [{path = "data/tiny", label = "tiny"}]\n'
                                    '[[retrievers]]\ntype = "run-file"\nlabel = "mine"\nparams = {path = "run.trec"}\n')
    monkeypatch.chdir(project)
    run_bench(load_config("b.toml"))
    out = project / ("out" if "absolute" in recorded else "results") / "suite"
    manifest = json.loads((out / "bench.json").read_text())
    if recorded == "output_dir":
        manifest.pop("cwd", None)
        (out / "bench.json").write_text(json.dumps(manifest))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    ran = harness_cli("report", out, "-o", "r.html")
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr == ""
    explorer = _explorer((elsewhere / "r.html").read_text())["datasets"][0]
    grades = {q: {explorer["docs"][c]: g for c, g in zip(flat[::2], flat[1::2])}
              for q, flat in zip(explorer["queries"], explorer["judged"])}
    assert grades == {"q1": {"d2": 2, "d3": 1}, "q2": {"d4": 1}} == {
        q: {d: g for qq, d, g in QRELS if qq == q} for q in ("q1", "q2")}
    assert explorer["titles"] is not None  # the corpus was found (tiny's documents have texts, no titles)
    if recorded != "output_dir":
        assert manifest["cwd"] == str(project)


# ------------------------------------------------------------------------------ 4. counts in the explorer
def test_the_explorer_shows_counts_neither_better_nor_worse(tmp_path, monkeypatch, harness_cli, chrome):
    """HALF against GOOD (baseline): P@1 q1 1 -> 0 (worse: red), q2 1 -> 1 (tied); num_ret 2 -> 1 on both
    queries, a shallower run, not a worse one (harness.compare.measures; compare shows no ▼ for it). The old
    explorer coloured num_ret's Δ -1.0000 red ("down") and filtered it as "worse than baseline". Expected: for
    num_ret no colour and the filter and sort read lower / higher (the same queries: Δ < 0 is lower); P@1
    unchanged."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    data = write_tiny(tmp_path / "tiny")
    for name, text in (("good", GOOD), ("half", HALF)):
        (tmp_path / f"{name}.trec").write_text(text)
        ran = harness_cli("run", "-r", "run-file", "-p", f"path={tmp_path / f'{name}.trec'}", "-d", data, "--k", "1",
                          "-m", "P@1,num_ret", "--name", name, "-o", tmp_path / "results", "-q")
        assert ran.returncode == 0, ran.stderr
    page = tmp_path / "r.html"
    ran = harness_cli("report", tmp_path / "results", "-m", "P@1,num_ret", "--baseline", "good", "-d", data,
                      "--permutations", "100", "--resamples", "100", "-o", page)
    assert ran.returncode == 0, ran.stderr
    chrome.get(page.as_uri())

    def shown() -> dict[str, tuple[str, str]]:
        return {r.get_attribute("data-query"): (r.find_elements(By.TAG_NAME, "td")[-1].text,
                                                r.find_elements(By.TAG_NAME, "td")[-1].get_attribute("class"))
                for r in chrome.find_elements(By.CSS_SELECTOR, "#x-table tbody tr")}

    def labels(select: str) -> list[str]:
        return [o.text for o in Select(chrome.find_element(By.ID, select)).options]

    assert shown() == {"q1": ("−1.0000", "num down"), "q2": ("±0.0000", "num ")}
    assert labels("x-filter")[1:3] == ["worse than baseline", "better than baseline"]
    Select(chrome.find_element(By.ID, "x-metric")).select_by_visible_text("num_ret")
    assert shown() == {"q1": ("−1.0000", "num "), "q2": ("−1.0000", "num ")}
    assert labels("x-filter")[1:3] == ["lower than baseline", "higher than baseline"]
    assert labels("x-sort")[:2] == ["Δ, lowest first", "Δ, highest first"]
    Select(chrome.find_element(By.ID, "x-filter")).select_by_value("better")
    assert shown() == {}  # (no query retrieved more)
    Select(chrome.find_element(By.ID, "x-filter")).select_by_value("worse")
    assert set(shown()) == {"q1", "q2"}
    Select(chrome.find_element(By.ID, "x-metric")).select_by_visible_text("P@1")
    assert shown() == {"q1": ("−1.0000", "num down")}
    assert labels("x-filter")[1:3] == ["worse than baseline", "better than baseline"]
    assert console_errors(chrome) == []
    assert _explorer(page.read_text())["datasets"][0]["counts"] == [False, True]


# ------------------------------------------------------------------------------ the order of benchmarks in a tree
def test_the_benchmarks_of_a_tree_are_read_in_one_order(tmp_path, monkeypatch):
    """results/a (column x) and results/b (column y), both on tiny. The benchmarks of a tree were taken in the
    order of a set of paths, which follows the hash seed: from one process to the next the columns were x, y
    or y, x, and with them the default baseline (the first column) and every "against the baseline" number.
    Expected in every process (PYTHONHASHSEED 0 to 7): by folder, a then b: x, y."""
    import os
    import subprocess
    import sys

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    _bench(tmp_path, "a", {"x": GOOD})
    _bench(tmp_path, "b", {"y": HALF})
    script = ("import sys; from harness.reports.html import load_inputs; "
              "print(' '.join(s.name for s in load_inputs([sys.argv[1]]).groups['tiny']))")
    root = Path(__file__).resolve().parents[2]
    seen = {subprocess.run([sys.executable, "-c", script, str(tmp_path / "results")], capture_output=True, text=True,
                           check=True, cwd=root, env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout.strip()
            for seed in range(8)}
    assert seen == {"x y"}


def test_a_moved_project_is_found_from_the_directory_the_report_runs_in(tmp_path, monkeypatch, harness_cli):
    """The benchmark ran in project/ (bench.json's cwd); then project/ was moved to moved/ and the bench
    folder copied elsewhere, so neither the recorded directory nor the folder layout holds data/tiny.
    `harness report` run from moved/ looked in the deleted project/ only: "no document titles" and no
    judgments. Expected, as from project/ before the move: tiny's judgments (the qrels file: q1 d2 2, d3 1;
    q2 d4 1), no warning."""
    import shutil

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    project = tmp_path / "project"
    write_tiny(project / "data" / "tiny")
    (project / "run.trec").write_text(GOOD)
    (project / "b.toml").write_text('name = "suite"\nk = [1]\nmetrics = ["P@1"]\noutput_dir = "results"\n'
                                    'datasets = [{path = "data/tiny", label = "tiny"}]\n'
                                    '[[retrievers]]\ntype = "run-file"\nlabel = "mine"\nparams = {path = "run.trec"}\n')
    monkeypatch.chdir(project)
    run_bench(load_config("b.toml"))
    shutil.copytree(project / "results" / "suite", tmp_path / "copied" / "suite")
    monkeypatch.chdir(tmp_path)
    project.rename(tmp_path / "moved")
    monkeypatch.chdir(tmp_path / "moved")
    ran = harness_cli("report", tmp_path / "copied" / "suite", "-o", tmp_path / "r.html")
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr == ""
    explorer = _explorer((tmp_path / "r.html").read_text())["datasets"][0]
    grades = {q: {explorer["docs"][c]: g for c, g in zip(flat[::2], flat[1::2])}
              for q, flat in zip(explorer["queries"], explorer["judged"])}
    assert grades == {"q1": {"d2": 2, "d3": 1}, "q2": {"d4": 1}} == {
        q: {d: g for qq, d, g in QRELS if qq == q} for q in ("q1", "q2")}

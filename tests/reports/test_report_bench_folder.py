"""``harness report`` over a folder written earlier by ``harness bench`` (bench/report review).

The benchmark's own page (report.html) follows its leaderboard: a row whose every cell failed, or a
CQADupStack forum whose cell failed, leaves the ``cqadupstack`` row and the average row without a value, as
leaderboard.json has them (null). ``harness report`` over the same folder read only the metrics.json files
below it: the 11 forums with results became rows of their own, named ``cqadupstack/<forum>``, and the page's
average was a number over the partial rows ((1 + 3 x 1 + 8 x 0) / 12 = 0.3333 in the case below), the
weighting BEIR's CQADupStack row exists to prevent. It now reads the folder's leaderboard.json (and bench.json
for the datasets' sources) and builds the page through the same code as ``harness bench``: the two pages are
the same page (up to the creation time), and the cells of its leaderboard those of leaderboard.json.

The data is tests/bench/test_bench_cqadupstack.py's: 12 synthetic forums (P@1 by hand: 1 in android, english
and gaming, 0 in the 9 others) and ``tiny`` (P@1 = 1).
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from harness.bench import load_config, run_bench
from tests.bench.bench_helpers import write_tiny
from tests.bench.test_bench_cqadupstack import _setup


def _board(page: str, metric: str = "P@1") -> list[tuple[str, str | None]]:
    """(row, its cell's mean or None for '-') of the page's leaderboard table of ``metric``."""
    table = re.search(rf'<table class="board" data-metric="{re.escape(metric)}">.*?</table>', page, re.S).group(0)
    rows = re.findall(r'<tr[^>]*data-dataset="([^"]+)"[^>]*>.*?<td class="[^"]*"([^>]*)>', table, re.S)
    return [(label, (re.search(r'data-mean="([^"]+)"', attrs) or [None, None])[1]) for label, attrs in rows]


def _without_time(page: str) -> str:
    return re.sub(r"created \d{4}-\d\d-\d\dT[\d:]+\+00:00", "created -", page)


def _leaderboard(board: dict, metric: str = "P@1") -> list[tuple[str, str | None]]:
    """leaderboard.json's rows and average as :func:`_board` reads a page (one retriever: 'mine')."""
    table = board["tables"][metric]
    return [(label, None if row["mine"] is None else repr(row["mine"]))
            for label, row in [*table["rows"].items(), ("average", table["average"])]]


@pytest.mark.parametrize("failing", ["forum", "row"])
def test_report_over_a_bench_folder_is_the_bench_page_with_its_failed_cells(tmp_path, monkeypatch, harness_cli,
                                                                             failing):
    """A failed forum (gis has no corpus.jsonl), or a row whose every cell failed (tiny has none). Expected,
    as leaderboard.json and the benchmark's page: rows tiny and cqadupstack (config order, dataset labels), the
    row without results and the average without a value. The old `harness report` gave, for the failed forum,
    rows cqadupstack/android ... tiny ... cqadupstack/wordpress and an average of 0.3333; for the failed row,
    the cqadupstack row (0.25) alone, with no average row and no word of tiny, where leaderboard.json has
    tiny '-' and the average null."""
    config = _setup(tmp_path, monkeypatch)
    if failing == "forum":
        (tmp_path / "cache" / "datasets" / "cqadupstack" / "gis" / "corpus.jsonl").unlink()
    else:
        (tmp_path / "tiny" / "corpus.jsonl").unlink()
    result = run_bench(load_config(config))
    assert [o.status for o in result.outcomes].count("failed") == 1
    out = tmp_path / "results" / "suite"
    board = json.loads((out / "leaderboard.json").read_text())
    expected = [("tiny", "1.0"), ("cqadupstack", None), ("average", None)] if failing == "forum" else \
        [("tiny", None), ("cqadupstack", "0.25"), ("average", None)]
    assert _leaderboard(board) == expected
    bench_page = (out / "report.html").read_text()
    assert _board(bench_page) == [row for row in expected if row != ("tiny", None)]  # (no results: named below it)

    ran = harness_cli("report", out, "-m", "P@1", "-o", tmp_path / "again.html")
    assert ran.returncode == 0, ran.stderr
    page = (tmp_path / "again.html").read_text()
    assert _board(page) == _board(bench_page)
    assert _without_time(page) == _without_time(bench_page)  # the same page: title, forums table, explorer, notes


def test_report_over_a_bench_folder_without_metric_options_shows_the_benchmarks_metrics(tmp_path, monkeypatch,
                                                                                       harness_cli):
    """The config's metrics (P@1) are the page's, as in the benchmark's own report.html; the old `harness
    report` refused the folder: 'none of the default metrics (NDCG@10, Recall@100, MRR@10) is in every result'
    (cells evaluated at k = 1)."""
    run_bench(load_config(_setup(tmp_path, monkeypatch)))
    out = tmp_path / "results" / "suite"
    ran = harness_cli("report", out, "-o", tmp_path / "again.html")
    assert ran.returncode == 0, ran.stderr
    page = (tmp_path / "again.html").read_text()
    assert "<title>Benchmark suite</title>" in page
    assert _board(page) == [("tiny", "1.0"), ("cqadupstack", "0.25"), ("average", "0.625")]
    assert _without_time(page) == _without_time((out / "report.html").read_text())


def test_report_over_a_bench_folder_leaves_out_folders_that_are_no_finished_cell(tmp_path, monkeypatch, harness_cli):
    """A cell folder of an earlier config (tiny/old: a retriever since removed from the config) is not in the
    leaderboard: the old `harness report` made it a column of the page ('old', P@1 1.0 on tiny) beside the
    benchmark's; it is left out, with a note naming it."""
    config = _setup(tmp_path, monkeypatch)
    run_bench(load_config(config))
    out = tmp_path / "results" / "suite"
    shutil.copytree(out / "tiny" / "mine", out / "tiny" / "old")
    ran = harness_cli("report", out, "-m", "P@1", "-o", tmp_path / "again.html")
    assert ran.returncode == 0, ran.stderr
    assert f"note: {out / 'tiny' / 'old' / 'metrics.json'}: not a finished cell of {out / 'leaderboard.json'}: " \
           "left out" in ran.stderr
    page = (tmp_path / "again.html").read_text()
    assert 'data-system="old"' not in page
    assert _without_time(page) == _without_time((out / "report.html").read_text())


def test_a_bench_folder_with_a_broken_leaderboard_is_one_line_naming_it(tmp_path, monkeypatch, harness_cli):
    config = _setup(tmp_path, monkeypatch)
    run_bench(load_config(config))
    out = tmp_path / "results" / "suite"
    (out / "leaderboard.json").write_text('{"schema": "retrieval-harness/leaderboard/v1", "bench": ')
    ran = harness_cli("report", out, "-m", "P@1", "-o", tmp_path / "again.html")
    assert ran.returncode == 2
    assert ran.stderr.strip() == f"error: {out / 'leaderboard.json'}:1: malformed JSON: Expecting value"
    assert not (tmp_path / "again.html").exists()


def test_rows_evaluated_under_different_semantics_are_not_averaged_silently(tmp_path, monkeypatch, harness_cli):
    """Two datasets, each with the same two runs (a and b): tiny evaluated under trec_eval-9, tiny2 under
    trec_eval-10. Each row compares its systems under one semantics (mixed semantics within a row are
    refused, harness.compare.semantics), but the average row averaged a trec_eval-9 value with a trec_eval-10
    one without a word. Expected: one warning line on stderr and on the page naming both rows' semantics."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    runs = {"a": "q1 Q0 d2 1 2 a\nq1 Q0 d1 2 1 a\nq2 Q0 d4 1 1 a\n", "b": "q1 Q0 d1 1 2 b\nq2 Q0 d3 1 1 b\n"}
    for dataset, semantics in (("tiny", "trec_eval-9"), ("tiny2", "trec_eval-10")):
        folder = write_tiny(tmp_path / dataset)
        for name, text in runs.items():
            (tmp_path / f"{name}.trec").write_text(text)
            ran = harness_cli("run", "-r", "run-file", "-p", f"path={tmp_path / f'{name}.trec'}", "-d", folder,
                              "--k", "1", "--semantics", semantics, "--name", name, "-o", tmp_path / "results", "-q")
            assert ran.returncode == 0, ran.stderr
    ran = harness_cli("report", tmp_path / "results", "-m", "P@1", "--permutations", "100", "--resamples", "100",
                      "-d", f"tiny={tmp_path / 'tiny'}", "-d", f"tiny2={tmp_path / 'tiny2'}", "-o", tmp_path / "r.html")
    assert ran.returncode == 0, ran.stderr
    warning = ("the datasets were evaluated with different semantics (tiny: trec_eval-9; tiny2: trec_eval-10): "
               "the average row averages values computed under different rules")
    assert ran.stderr.splitlines() == [f"warning: {warning}"]
    page = (tmp_path / "r.html").read_text()
    assert f"<li>{warning}</li>" in page
    assert _board(page)[-1] == ("average", "1.0")  # a: P@1 1 on both (b: 0); the value stays, with the warning


def test_a_cell_rewritten_since_the_leaderboard_is_named_in_a_warning(tmp_path, monkeypatch, harness_cli):
    """After the benchmark, `harness run` writes another run into the cell's folder (tiny/mine: P@1 0, where
    leaderboard.json says 1.0). The page shows the folder's values (0.0); the old `harness report` did so
    without a word beside a leaderboard.json that says otherwise. Expected: a warning naming the file."""
    config = _setup(tmp_path, monkeypatch)
    run_bench(load_config(config))
    out = tmp_path / "results" / "suite"
    (tmp_path / "other.trec").write_text("tq1 Q0 d2 1 1 x\ntq2 Q0 d2 1 1 x\n")
    ran = harness_cli("run", "-r", "run-file", "-p", f"path={tmp_path / 'other.trec'}", "-d", tmp_path / "tiny",
                      "--k", "1", "--name", "mine", "-o", out, "-q")
    assert ran.returncode == 0, ran.stderr
    assert json.loads((out / "tiny" / "mine" / "metrics.json").read_text())["metrics"]["P@1"] == 0.0
    ran = harness_cli("report", out, "-m", "P@1", "-o", tmp_path / "again.html")
    assert ran.returncode == 0, ran.stderr
    warning = (f"{out / 'tiny' / 'mine' / 'metrics.json'}: not the cell {out / 'leaderboard.json'} records (another "
               "fingerprint: rewritten since); the page shows this file's values, not the leaderboard's")
    assert f"warning: {warning}" in ran.stderr.splitlines()
    page = (tmp_path / "again.html").read_text()
    assert _board(page)[0] == ("tiny", "0.0")
    assert "not the cell" in page


@pytest.mark.parametrize("name", ["leaderboard.json", "bench.json"])
def test_the_page_is_not_written_over_the_benchmarks_files_it_reads(tmp_path, monkeypatch, harness_cli, name):
    """-o results/suite/leaderboard.json replaced the leaderboard the page was made from with the page (exit
    0; the next `harness report` of the folder: 'malformed JSON'); refused as an -o over a result's
    metrics.json is (docs/report.md: one line, exit 2, nothing written)."""
    run_bench(load_config(_setup(tmp_path, monkeypatch)))
    out = tmp_path / "results" / "suite"
    before = (out / name).read_bytes()
    ran = harness_cli("report", out, "-m", "P@1", "-o", out / name)
    assert ran.returncode == 2
    assert ran.stderr.strip() == f"error: --output {out / name}: is the input file {out / name}; writing there " \
                                 "would replace it"
    assert (out / name).read_bytes() == before


def test_without_bench_json_the_forums_are_still_one_row(tmp_path, monkeypatch, harness_cli):
    """bench.json gone (the benchmark killed before writing it, or not copied): the forum labels (android ...)
    name no dataset, but leaderboard.json lists them as cqadupstack's forums and each cell records its forum
    (cqadupstack/android): still one cqadupstack row (0.25) and the average (1 + 0.25) / 2 = 0.625."""
    run_bench(load_config(_setup(tmp_path, monkeypatch)))
    out = tmp_path / "results" / "suite"
    (out / "bench.json").unlink()
    ran = harness_cli("report", out, "-m", "P@1", "-o", tmp_path / "again.html")
    assert ran.returncode == 0, ran.stderr
    assert _board((tmp_path / "again.html").read_text()) == [("tiny", "1.0"), ("cqadupstack", "0.25"),
                                                             ("average", "0.625")]


def test_rows_warnings_name_each_datasets_rule_and_read_numbers_by_value(tmp_path):
    """Row a: depth 10, threshold 1 (int), numbers version of this build; row b: depth 100, threshold 1.0, numbers
    version 1. Expected: a warning for depth and one for the numbers versions, none for the threshold (1 and
    1.0 are one threshold)."""
    from harness.compare import load_system
    from harness.reports.html.model import rows_warnings
    from harness.versions import NUMBERS_VERSION
    from tests.compare.helpers import BUILD, values, write_result

    per_query = values("P@1", [1.0, 0.0])
    a = write_result(tmp_path / "a" / "x", per_query, settings={"relevance_threshold": 1, "depth": 10})
    b = write_result(tmp_path / "b" / "x", per_query, settings={"relevance_threshold": 1.0, "depth": 100},
                     versions={**BUILD, "numbers_version": 1})
    warnings = rows_warnings({"a": [load_system(str(a))], "b": [load_system(str(b))]})
    assert warnings == [
        f"the datasets were evaluated with different numbers versions (a: {NUMBERS_VERSION}; b: 1): the average row "
        "averages values computed under different rules",
        "the datasets were evaluated with different depth (a: 10; b: 100): the average row averages values "
        "computed under different rules"]

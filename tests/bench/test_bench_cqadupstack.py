"""``harness bench`` and ``harness run`` on a (synthetic, local) downloaded CQADupStack (beirsuite review).

BEIR reports CQADupStack as one dataset: the unweighted mean of its 12 forums' values, counted once in
the average over datasets (the BEIR paper's tables; Pyserini's ``pyserini/2cr/beir.py``). The 12 forums
here are written into the download cache as ``harness datasets download cqadupstack`` leaves them; each
has two queries, ``<forum>-q1`` and ``<forum>-q2`` ("apple"), judged relevant to ``d1`` in android, english
and gaming and to ``d2`` in the 9 others. The run file ranks d1 above d2 for every query, so by hand P@1 is 1 in 3 forums
and 0 in 9: the cqadupstack row is 3/12 = 0.25. ``tiny`` has two queries whose top document is relevant
(P@1 = 1). The average is (1 + 0.25) / 2 = 0.625; the old leaderboard gave (1 + 3 x 1) / 13 = 0.3077
(13 rows: tiny and the 12 forums labelled android ... wordpress).
"""

from __future__ import annotations

import json

import pytest
import re

from typer.testing import CliRunner

from harness.bench import load_config, run_bench
from harness.cli import _register, app
from harness.datasets import download as dl
from harness.datasets.registry import lookup
from harness.errors import HarnessError

FORUMS = list(lookup("cqadupstack").subsets)


def _folder(folder, queries: dict, relevant: dict) -> None:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n"
                                                 for d, t in {"d1": "apple", "d2": "apple pie"}.items()))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items()))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n"
                                               + "".join(f"{q}\t{d}\t1\n" for q, d in relevant.items()))


def _setup(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv(dl.CACHE_ENV, str(cache))
    monkeypatch.delenv(dl.MIRROR_ENV, raising=False)
    root = cache / "datasets" / "cqadupstack"
    for i, forum in enumerate(FORUMS):
        queries = [f"{forum}-q1", f"{forum}-q2"]
        _folder(root / forum, dict.fromkeys(queries, "apple"), dict.fromkeys(queries, "d1" if i < 3 else "d2"))
    (root / "DOWNLOAD.json").write_text(json.dumps({"url": "u", "bytes": 1, "sha256": "s", "downloaded_at": "d"}))
    _folder(tmp_path / "tiny", {"tq1": "apple", "tq2": "apple"}, {"tq1": "d1", "tq2": "d1"})
    run = tmp_path / "run.trec"
    run.write_text("".join(f"{q} Q0 d1 1 2.0 x\n{q} Q0 d2 2 1.0 x\n" for q in [*(f"{f}-q{n}" for f in FORUMS for n in (1, 2)), "tq1", "tq2"]))
    config = tmp_path / "bench.toml"
    config.write_text(f'name = "suite"\nk = [1]\nmetrics = ["P@1"]\noutput_dir = "{tmp_path / "results"}"\n'
                      f'datasets = [{{path = "{tmp_path / "tiny"}", label = "tiny"}}, "cqadupstack"]\n'
                      f'[[retrievers]]\ntype = "run-file"\nlabel = "mine"\nparams = {{path = "{run}"}}\n')
    return config


def test_bench_reports_cqadupstack_as_one_row_in_every_output(tmp_path, monkeypatch):
    result = run_bench(load_config(_setup(tmp_path, monkeypatch)))
    assert [o.status for o in result.outcomes] == ["run"] * 13
    out = tmp_path / "results" / "suite"
    board = json.loads((out / "leaderboard.json").read_text())
    table = board["tables"]["P@1"]
    assert table["rows"] == {"tiny": {"mine": 1.0}, "cqadupstack": {"mine": 0.25}}
    assert table["average"] == {"mine": 0.625}
    assert table["forums"]["cqadupstack"] == {f: {"mine": 1.0 if i < 3 else 0.0} for i, f in enumerate(FORUMS)}
    text = (out / "leaderboard.md").read_text()
    assert "| cqadupstack | 0.2500 |" in text and "| **average** | 0.6250 |" in text
    assert "| android | 1.0000 |" in text and "| wordpress | 0.0000 |" in text
    page = (out / "report.html").read_text()
    board_html = re.search(r'<table class="board" data-metric="P@1">.*?</table>', page, re.S).group(0)
    rows = re.findall(r'<tr[^>]*data-dataset="([^"]+)"[^>]*>.*?data-mean="([^"]+)"', board_html, re.S)
    assert rows == [("tiny", "1.0"), ("cqadupstack", "0.25"), ("average", "0.625")]
    forums_html = re.search(r'<table class="board forums".*?</table>', page, re.S).group(0)
    assert len(re.findall(r"<tr[^>]*data-dataset=", forums_html)) == 13  # 12 forums and their mean
    # `harness report` over the bench folder: its leaderboard's rows (dataset labels, config order), as the page
    from harness.reports.html import load_inputs, report_of

    report = report_of(load_inputs([str(out)]), ["P@1"])
    assert [row.label for row in report.rows] == ["tiny", "cqadupstack"]
    assert report.forums["cqadupstack"].cells["P@1"]["mine"]["mean"] == 0.25
    assert report.average["P@1"]["mine"]["mean"] == 0.625
    # each forum is an ordinary result folder
    assert json.loads((out / "gis" / "mine" / "metrics.json").read_text())["metrics"]["P@1"] == 0.0


def test_run_on_the_whole_cqadupstack_says_how_to_get_beirs_number(tmp_path, monkeypatch):
    _setup(tmp_path, monkeypatch)
    _register()
    result = CliRunner().invoke(app, ["run", "-d", "cqadupstack", "--retriever", "bm25", "-o", str(tmp_path / "out")],
                                env={"COLUMNS": "400"})
    # (the CLI's entry point prints a HarnessError as one "error: ..." line and exits 2; CliRunner keeps it)
    assert isinstance(result.exception, HarnessError), result.output
    assert str(result.exception) == (
        "'cqadupstack' is 12 forums, each a dataset of its own: name one as cqadupstack/<forum> "
        f"({', '.join(FORUMS)}); BEIR reports CQADupStack as the unweighted mean of the 12 forums' values, which "
        '`harness bench` gives as one row for datasets = ["cqadupstack"] (docs/bench.md)')
    assert not (tmp_path / "out").exists()
    ran = CliRunner().invoke(app, ["run", "-d", "cqadupstack/android", "--retriever", "bm25", "-o", str(tmp_path / "out"), "-q"])
    assert ran.exit_code == 0, ran.output


def test_with_some_forums_only_each_forum_is_a_dataset_of_its_own_everywhere(tmp_path, monkeypatch):
    """Two forums of twelve: no cqadupstack row (their mean is not BEIR's number); each forum is a row of
    its own in leaderboard.json and report.html, and the average is over the three rows: (1 + 1 + 0) / 3."""
    config = _setup(tmp_path, monkeypatch)
    config.write_text(config.read_text().replace('"cqadupstack"]', '"cqadupstack/android", "cqadupstack/gis"]'))
    run_bench(load_config(config))
    out = tmp_path / "results" / "suite"
    board = json.loads((out / "leaderboard.json").read_text())
    table = board["tables"]["P@1"]
    assert table["rows"] == {"tiny": {"mine": 1.0}, "android": {"mine": 1.0}, "gis": {"mine": 0.0}}
    assert table["average"]["mine"] == pytest.approx(2 / 3, abs=1e-15)
    assert "forums" not in table and "forums" not in board
    page = (out / "report.html").read_text()
    board_html = re.search(r'<table class="board" data-metric="P@1">.*?</table>', page, re.S).group(0)
    cells = re.findall(r'<tr[^>]*data-dataset="([^"]+)"[^>]*>.*?<td class="([^"]+)"', board_html, re.S)
    assert cells == [("tiny", "cell"), ("android", "cell"), ("gis", "cell"), ("average", "cell")]


def test_a_forum_whose_cell_failed_leaves_the_cqadupstack_row_without_a_value_in_every_output(tmp_path, monkeypatch):
    """gis has no corpus.jsonl: its cell fails. leaderboard.json has the cqadupstack row without a value
    (11 of 12 forums is not BEIR's number) and so no average; report.html must say the same. It gave the
    11 other forums as rows of their own and an average of (1 + 3 x 1 + 8 x 0) / 12 = 0.3333, the weighting
    of CQADupStack 11/12 that this row exists to prevent, beside leaderboard.md's "-"."""
    config = _setup(tmp_path, monkeypatch)
    (tmp_path / "cache" / "datasets" / "cqadupstack" / "gis" / "corpus.jsonl").unlink()
    result = run_bench(load_config(config))
    assert [o.status for o in result.outcomes].count("failed") == 1
    out = tmp_path / "results" / "suite"
    table = json.loads((out / "leaderboard.json").read_text())["tables"]["P@1"]
    assert table["rows"] == {"tiny": {"mine": 1.0}, "cqadupstack": {"mine": None}}
    assert table["average"] == {"mine": None}
    page = (out / "report.html").read_text()
    board_html = re.search(r'<table class="board" data-metric="P@1">.*?</table>', page, re.S).group(0)
    cells = re.findall(r'<tr[^>]*data-dataset="([^"]+)"[^>]*>.*?<td class="([^"]+)"', board_html, re.S)
    assert cells == [("tiny", "cell"), ("cqadupstack", "cell missing"), ("average", "cell missing")]
    forums_html = re.search(r'<table class="board forums".*?</table>', page, re.S).group(0)
    assert len(re.findall(r"<tr[^>]*data-dataset=", forums_html)) == 12  # the 11 forums with results, the mean
    assert "mean of 12 forums (11 here)" in board_html


@pytest.mark.parametrize("failing", ["tiny", "cqadupstack"])
def test_a_row_whose_every_cell_failed_leaves_the_page_without_an_average(tmp_path, monkeypatch, failing):
    """Three rows: tiny, tiny2 (a copy of tiny, P@1 = 1) and cqadupstack (0.25). Every cell of one row fails
    (tiny has no corpus.jsonl; or no forum has one: a download of CQADupStack that failed as a whole).
    leaderboard.json's average is null (a value on every dataset is required); report.html gave the mean of
    the two rows left as "average" ((1 + 0.25) / 2 = 0.625, or (1 + 1) / 2 = 1.0), an average over two of
    three datasets. Expected, as leaderboard.json: the average row without a value."""
    config = _setup(tmp_path, monkeypatch)
    import shutil

    shutil.copytree(tmp_path / "tiny", tmp_path / "tiny2")
    config.write_text(config.read_text().replace(
        '"cqadupstack"]', f'{{path = "{tmp_path / "tiny2"}", label = "tiny2"}}, "cqadupstack"]'))
    if failing == "tiny":
        (tmp_path / "tiny" / "corpus.jsonl").unlink()
    else:
        for forum in FORUMS:
            (tmp_path / "cache" / "datasets" / "cqadupstack" / forum / "corpus.jsonl").unlink()
    run_bench(load_config(config))
    out = tmp_path / "results" / "suite"
    table = json.loads((out / "leaderboard.json").read_text())["tables"]["P@1"]
    assert table["rows"][failing] == {"mine": None} and table["average"] == {"mine": None}
    page = (out / "report.html").read_text()
    board_html = re.search(r'<table class="board" data-metric="P@1">.*?</table>', page, re.S).group(0)
    cells = re.findall(r'<tr[^>]*data-dataset="([^"]+)"[^>]*>.*?<td class="([^"]+)"', board_html, re.S)
    assert [label for label, _ in cells] == [d for d in ("tiny", "tiny2", "cqadupstack") if d != failing] + ["average"]
    assert cells[-1] == ("average", "cell missing")
    assert f"No results for {failing} (every cell failed)" in page

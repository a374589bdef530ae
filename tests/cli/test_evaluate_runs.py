"""`harness evaluate` with several runs, --semantics, and its refusals (issue 13)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def harness(*args):
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], capture_output=True, text=True)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels").write_text("q 0 a 0\nq 0 b 1\n")
    # Equal in float32, not in float64 (issue 13's example): trec_eval 9 ranks b first, trec_eval 10 a.
    (tmp_path / "tie.trec").write_text("q Q0 a 1 1.0000000001 x\nq Q0 b 2 1.0 x\n")
    (tmp_path / "good.trec").write_text("q Q0 b 1 2 x\nq Q0 a 2 1 x\n")
    return tmp_path


def test_several_runs_one_table_a_row_each_and_one_json_per_run(files):
    out = files / "out"
    proc = harness("evaluate", "--qrels", files / "qrels", "--run", files / "tie.trec", "--run", files / "good.trec",
                   "--k", "1", "--json", out, "--markdown", files / "t.md")
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if ".trec" in line]
    assert len(rows) == 2 and "tie.trec" in rows[0] and "good.trec" in rows[1]
    for name in ("tie.trec", "good.trec"):  # float32 tie: b (relevant) first under the default semantics
        doc = json.loads((out / f"{name}.json").read_text())
        assert doc["metrics"]["P@1"] == 1.0 and doc["settings"]["semantics"] == "trec_eval-9"
        assert doc["per_query"] == {"q": doc["metrics"]}
    assert (files / "t.md").read_text().splitlines()[2].startswith("| tie.trec | 1.0000 |")


def test_semantics_trec_eval_10_ranks_by_double(files):
    out = files / "m.json"
    proc = harness("evaluate", "--qrels", files / "qrels", "--run", files / "tie.trec", "--k", "1",
                   "--semantics", "trec_eval-10", "--json", out)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["metrics"]["P@1"] == 0.0 and doc["metrics"]["MRR@1"] == 0.0
    assert doc["settings"]["semantics"] == "trec_eval-10"


def test_unknown_semantics_one_line_exit_2(files):
    proc = harness("evaluate", "--qrels", files / "qrels", "--run", files / "tie.trec", "--semantics", "nope")
    assert proc.returncode == 2
    assert proc.stderr == "error: unknown semantics 'nope'; known: trec_eval-9, trec_eval-10\n"


def test_a_bad_second_run_writes_nothing(files):
    (files / "bad.trec").write_text("q Q0 a 1 1_0 x\n")
    out = files / "out"
    proc = harness("evaluate", "--qrels", files / "qrels", "--run", files / "good.trec", "--run", files / "bad.trec",
                   "--json", out)
    assert proc.returncode == 2
    assert proc.stderr == f"error: {files / 'bad.trec'}:1: score '1_0' is not a number (id 'a')\n"
    assert not out.exists()


def test_runs_with_the_same_file_name_are_labelled_by_path(files):
    """Two result folders both hold run.trec: the rows name the paths, so they can be told apart."""
    for name, run in (("a", "tie.trec"), ("b", "good.trec")):
        (files / name).mkdir()
        (files / name / "run.trec").write_text((files / run).read_text())
    proc = harness("evaluate", "--qrels", files / "qrels", "--run", files / "a" / "run.trec",
                   "--run", files / "b" / "run.trec", "--k", "1", "--markdown", files / "t.md")
    assert proc.returncode == 0, proc.stderr
    rows = (files / "t.md").read_text().splitlines()[2:]
    assert [row.split(" | ")[0] for row in rows] == [f"| {files / 'a' / 'run.trec'}", f"| {files / 'b' / 'run.trec'}"]
    assert rows[0].split(" | ")[1] == "1.0000"  # NDCG@1 of a: the float32 tie ranks b (relevant) first

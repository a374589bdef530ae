"""`harness check` lists the documents that left / entered the top k from the run the values were
computed on (end-to-end review), also for metrics files written by ``harness evaluate --json``.

``harness evaluate --run run.trec --run new.trec --json DIR`` writes ``DIR/run.trec.json`` and
``DIR/new.trec.json``; each records the run file it evaluated (path and sha256). The listing took
"run.trec beside the metrics file" for both, so with DIR holding the runs the current system was
listed from the baseline's ranking: P@1 fell from 1 to 0 on q1 while "left top 1: none, entered top 1:
none" was printed.
"""

from __future__ import annotations

import json

QRELS = "q1\td1\t1\nq2\td1\t1\n"
BASELINE = "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d1 1 2.0 t\nq2 Q0 d2 2 1.0 t\n"
CURRENT = "q1 Q0 d9 1 2.0 t\nq1 Q0 d1 2 1.0 t\nq2 Q0 d8 1 2.0 t\nq2 Q0 d1 2 1.0 t\n"


def _evaluate_both(harness_cli, folder):
    folder.mkdir(exist_ok=True)
    (folder / "qrels.tsv").write_text(QRELS)
    (folder / "run.trec").write_text(BASELINE)
    (folder / "new.trec").write_text(CURRENT)
    done = harness_cli("evaluate", "--qrels", folder / "qrels.tsv", "--run", folder / "run.trec",
                       "--run", folder / "new.trec", "--k", "1", "--json", folder)
    assert done.returncode == 0, done.stderr


def _worst(harness_cli, tmp_path, baseline, current):
    done = harness_cli("check", "--baseline", baseline, "--current", current, "-m", "P@1", "--tolerance", "0",
                       "--alpha", "0.9", "--json", tmp_path / "check.json")
    assert done.returncode == 1, done.stderr  # P@1 1 -> 0 on both queries, p = 0.5 < 0.9: REGRESSED
    return {w["query_id"]: w for w in json.loads((tmp_path / "check.json").read_text())["checks"][0]["worst_queries"]}


def test_evaluate_metrics_files_are_listed_from_their_own_runs(harness_cli, tmp_path):
    _evaluate_both(harness_cli, tmp_path / "D")
    worst = _worst(harness_cli, tmp_path, tmp_path / "D" / "run.trec.json", tmp_path / "D" / "new.trec.json")
    # Expected (worked example): q1's top 1 was d1 (baseline), is d9 (current); q2's d1 -> d8.
    assert (worst["q1"]["left_top_k"], worst["q1"]["entered_top_k"]) == (["d1"], ["d9"])  # was ([], [])
    assert (worst["q2"]["left_top_k"], worst["q2"]["entered_top_k"]) == (["d1"], ["d8"])


def test_a_changed_run_file_is_not_listed(harness_cli, tmp_path):
    _evaluate_both(harness_cli, tmp_path / "D")
    (tmp_path / "D" / "new.trec").write_text(BASELINE)  # no longer the run the values were computed on
    worst = _worst(harness_cli, tmp_path, tmp_path / "D" / "run.trec.json", tmp_path / "D" / "new.trec.json")
    assert worst["q1"]["left_top_k"] is None and worst["q1"]["entered_top_k"] is None

"""TREC run and qrels files."""

from __future__ import annotations

import numpy as np
import pytest

from harness.errors import InputError
from harness.formats.trec import read_qrels, read_run, write_run
from harness.run import Run


def test_run_round_trips_scores_exactly_with_real_ranks(tmp_path):
    scores = {"q1": {"a": 0.1 + 0.2, "b": 1 / 3, "c": 1 / 3}, "q2": {"z": float(np.float32(0.7))}}
    write_run(Run.from_dict(scores), tmp_path / "run.trec", tag="sys")
    lines = (tmp_path / "run.trec").read_text().splitlines()
    assert lines[0] == "q1 Q0 c 1 0.3333333333333333 sys"  # tie c/b broken by id descending
    assert lines[2].split()[3] == "3"
    assert read_run(tmp_path / "run.trec").to_dict() == scores


def test_run_lines_for_a_query_may_be_interleaved(tmp_path):
    (tmp_path / "r").write_text("q1 Q0 a 1 2 x\nq2 Q0 b 1 5 x\nq1 Q0 c 2 3 x\n")
    run = read_run(tmp_path / "r")
    assert run.doc_ids(0) == ["c", "a"] and run.doc_ids(1) == ["b"]


@pytest.mark.parametrize("text,message", [
    ("q1 Q0 a 1 2\n", r"r:1: expected 6 columns"),
    ("q1 Q0 a 1 2 x\nq1 Q0 a 2 1 x\n", r"r:2: document retrieved twice for query 'q1' \(first on line 1\) \(id 'a'\)"),
    ("q1 Q0 a 1 nan x\n", r"r:1: score is NaN"),
    ("", r"r: the run file is empty"),
])
def test_bad_run_files_name_file_and_line(tmp_path, text, message):
    (tmp_path / "r").write_text(text)
    with pytest.raises(InputError, match=message):
        read_run(tmp_path / "r")


def test_trec_and_beir_qrels_are_both_read(tmp_path):
    (tmp_path / "trec").write_text("q1 0 d1 2\nq1 0 d2 0\n")
    (tmp_path / "beir").write_text("query-id\tcorpus-id\tscore\r\nq1\td1\t2\r\nq1\td2\t0\r\n")
    assert read_qrels(tmp_path / "trec").to_dict() == read_qrels(tmp_path / "beir").to_dict() == {"q1": {"d1": 2, "d2": 0}}


def test_conflicting_qrels_grades_are_an_error(tmp_path):
    (tmp_path / "trec").write_text("q1 0 d1 2\nq1 0 d1 1\n")
    with pytest.raises(InputError, match=r"trec:2: conflicting grade"):
        read_qrels(tmp_path / "trec")

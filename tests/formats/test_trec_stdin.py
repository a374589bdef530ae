"""``read_run("-")`` / ``read_qrels("-")`` read standard input (harness/formats/trec.py ``_source``); before,
``-`` was a file name (``cannot read run file: No such file or directory``). Expected values: the
entries written in the bytes given (a worked example), the same as reading those bytes from a file."""

from __future__ import annotations

import io
import sys

import pytest

from harness.errors import InputError
from harness.formats.trec import read_once, read_qrels, read_run

RUN = b"q1 Q0 d1 1 3.0 t\nq1 Q0 d3 2 2.0 t\nq2 Q0 d2 1 0.5 t\n"


def _stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def test_read_run_dash_reads_stdin(monkeypatch, tmp_path):
    _stdin(monkeypatch, RUN)
    assert read_run("-").to_dict() == {"q1": {"d1": 3.0, "d3": 2.0}, "q2": {"d2": 0.5}}
    (tmp_path / "r").write_bytes(RUN)
    assert read_run(tmp_path / "r").to_dict() == {"q1": {"d1": 3.0, "d3": 2.0}, "q2": {"d2": 0.5}}


def test_read_qrels_dash_reads_stdin_beir_and_trec(monkeypatch):
    _stdin(monkeypatch, b"query-id\tcorpus-id\tscore\nq1\td1\t2\n")
    assert read_qrels("-").to_dict() == {"q1": {"d1": 2.0}}
    _stdin(monkeypatch, b"q1 0 d1 1\n")
    assert read_qrels("-").to_dict() == {"q1": {"d1": 1.0}}


def test_errors_name_stdin_and_the_line(monkeypatch):
    _stdin(monkeypatch, RUN + b"q2 Q0 d2 2 0.4 t\n")
    with pytest.raises(InputError) as caught:
        read_run("-")
    assert str(caught.value) == "<stdin>:4: document retrieved twice for query 'q2' (first on line 3) (id 'd2')"


def test_read_once_takes_stdin_bytes_that_read_run_then_parses(monkeypatch):
    _stdin(monkeypatch, RUN)
    raw = read_once("-", "run")
    assert raw == RUN
    assert read_run("-", raw).to_dict() == {"q1": {"d1": 3.0, "d3": 2.0}, "q2": {"d2": 0.5}}

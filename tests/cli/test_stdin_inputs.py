"""``-`` is standard input wherever a run or qrels file is read (harness/formats/trec.py ``_source``,
harness/cli/evaluate.py, fuse.py, rerank.py).

``zcat run.gz | harness evaluate --qrels q --run -`` stopped with ``error: -: cannot read run file: No such
file or directory`` (only ``/dev/stdin`` worked). Now ``-`` reads standard input once, whole; a bad line is
named ``<stdin>:LINE`` with the file reader's message; metrics.json records the run as ``<stdin>`` with
the sha256 of the bytes read; ``-`` in two options is refused before anything is read.

Expected values, worked by hand: query q1 judges d1 and d2 relevant (grade 1); the run ranks d1 (3.0),
d3 (2.0), d2 (1.0). P@1 = 1, P@3 = 2/3, Recall@3 = 1, NDCG@3 = (1 + 1/log2 4) / (1 + 1/log2 3)
= 1.5 / 1.6309298 = 0.9197208; the same values from the same bytes read as a file (the oracle of the
path that already worked)."""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys

import pytest

QRELS = b"q1 0 d1 1\nq1 0 d2 1\n"
RUN = b"q1 Q0 d1 1 3.0 t\nq1 Q0 d3 2 2.0 t\nq1 Q0 d2 3 1.0 t\n"
NDCG3 = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))


def harness(*args, stdin: bytes = b"", cwd=None):
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], input=stdin, capture_output=True,
                          cwd=cwd, timeout=120)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_bytes(QRELS)
    (tmp_path / "run.trec").write_bytes(RUN)
    return tmp_path


def _metrics(document: dict) -> dict:
    return {name: document["metrics"][name] for name in ("P@1", "P@3", "Recall@3", "NDCG@3")}


def test_run_from_stdin_is_evaluated_and_recorded_as_stdin(files):
    proc = harness("evaluate", "--qrels", files / "qrels.txt", "--run", "-", "--k", "1,3", "--json", "-", stdin=RUN)
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert _metrics(document) == pytest.approx({"P@1": 1.0, "P@3": 2 / 3, "Recall@3": 1.0, "NDCG@3": NDCG3},
                                               abs=1e-12)
    assert document["retriever"]["params"] == {"path": "<stdin>", "sha256": hashlib.sha256(RUN).hexdigest()}
    from_file = harness("evaluate", "--qrels", files / "qrels.txt", "--run", files / "run.trec", "--k", "1,3",
                        "--json", "-")
    assert _metrics(json.loads(from_file.stdout)) == _metrics(document)


def test_qrels_from_stdin_without_json(files):
    """(No --json: the reader reads standard input itself, not through read_pipes.)"""
    proc = harness("evaluate", "--qrels", "-", "--run", files / "run.trec", "--k", "3", "--markdown",
                   files / "m.md", stdin=QRELS)
    assert proc.returncode == 0, proc.stderr
    assert f"| NDCG | {NDCG3:.4f} |" in (files / "m.md").read_text()


def test_a_bad_line_on_stdin_is_named_by_its_line(files):
    proc = harness("evaluate", "--qrels", files / "qrels.txt", "--run", "-", stdin=RUN + b"q1 Q0 d4 4 x t\n")
    assert (proc.returncode, proc.stdout) == (2, b"")
    assert proc.stderr.decode() == "error: <stdin>:4: score 'x' is not a number (id 'd4')\n"
    proc = harness("evaluate", "--qrels", "-", "--run", files / "run.trec", stdin=b"q1 0 d1 1_0\n")
    assert proc.stderr.decode() == "error: <stdin>:1: grade '1_0' for document 'd1' is not a number (id 'q1')\n"


def test_stdin_in_two_options_is_refused(files):
    proc = harness("evaluate", "--qrels", "-", "--run", "-", stdin=QRELS)
    assert proc.returncode == 2
    assert proc.stderr.decode() == ("error: --qrels - and --run -: standard input can be read once; give the other "
                                    "as a file (or <(command))\n")


def test_fuse_reads_a_run_from_stdin(files):
    proc = harness("fuse", "--run", "-", "--run", files / "run.trec", "-o", files / "fused.trec", "--json",
                   files / "fused.json", stdin=RUN)
    assert proc.returncode == 0, proc.stderr
    runs = json.loads((files / "fused.json").read_text())["runs"]
    assert runs[0] == {"path": "<stdin>", "sha256": hashlib.sha256(RUN).hexdigest()}
    # RRF of a run with itself: the run's own order (d1, d3, d2)
    assert [line.split()[2] for line in (files / "fused.trec").read_text().splitlines()] == ["d1", "d3", "d2"]


def test_the_markdown_title_of_a_run_from_stdin_is_shown_literally(tmp_path):
    """GitHub renders ``### <stdin>`` as an empty heading (an unknown HTML tag); written as entities it
    shows ``<stdin>``."""
    from harness.reports.markdown import metrics_table

    assert metrics_table({"P@1": 1.0}, title="<stdin>").splitlines()[0] == "### &lt;stdin>"
    assert metrics_table({"P@1": 1.0}, title="a >= b.trec").splitlines()[0] == "### a >= b.trec"

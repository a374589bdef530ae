"""``harness rerank --run`` names the line of a document missing from the corpus (or a query missing from
the split) whatever the run's source (harness/reranker.py ``_line_of``, harness/formats/trec.py
``line_of``). Before, the line was found by opening the file again as text: standard input (``--run -``)
and a ``.gz`` run were named without it (``error: <stdin>: document is not ...``), and a named pipe
(``mkfifo``) was opened again and waited for a writer for good (the command never ended).

Expected values, a worked example: the run's 4th line retrieves ``nope``, which the corpus (d1, d2, d3)
lacks: ``FILE:4: document is not in the dataset's corpus (id 'nope')``, as for a plain file."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import threading

import pytest

from tests.cli.test_rerank_cli import main_in_process
from tests.cli.test_rerank_review2 import ByRow

RERANKER = "tests.cli.test_rerank_review2:ByRow"
BAD = b"# a comment: not line 1 of the entries\nq1 Q0 d3 1 3.0 f\nq1 Q0 d1 2 2.0 f\nq1 Q0 nope 3 1.0 f\n"
MESSAGE = "4: document is not in the dataset's corpus (id 'nope')"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "ds" / "qrels").mkdir(parents=True)
    (tmp_path / "ds" / "corpus.jsonl").write_text("".join(
        f'{{"_id": "{d}", "title": "", "text": "t"}}\n' for d in ("d1", "d2", "d3")))
    (tmp_path / "ds" / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    (tmp_path / "ds" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td3\t1\n")
    return tmp_path


def _rerank(files, run: str, monkeypatch, capsys):
    return main_in_process(monkeypatch, capsys, "rerank", "-d", str(files / "ds"), "--run", run, "-r", RERANKER,
                           "-o", str(files / "out.trec"), "--quiet")


def test_a_run_from_stdin_names_the_line(files, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BAD), encoding="utf-8"))
    code, _, err = _rerank(files, "-", monkeypatch, capsys)
    assert (code, err) == (2, f"error: <stdin>:{MESSAGE}\n")
    assert not (files / "out.trec").exists()
    bad_query = BAD.replace(b"q1 Q0 nope", b"q9 Q0 d2")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(bad_query), encoding="utf-8"))
    code, _, err = _rerank(files, "-", monkeypatch, capsys)
    assert (code, err) == (2, "error: <stdin>:4: query is not among the split's queries (those its qrels judge) "
                              "(id 'q9')\n")


def test_a_gz_run_names_the_line(files, monkeypatch, capsys):
    (files / "bad.trec.gz").write_bytes(gzip.compress(BAD))
    code, _, err = _rerank(files, str(files / "bad.trec.gz"), monkeypatch, capsys)
    assert (code, err) == (2, f"error: {files / 'bad.trec.gz'}:{MESSAGE}\n")
    (files / "bad.trec").write_bytes(BAD)  # (the plain file, named so before)
    code, _, err = _rerank(files, str(files / "bad.trec"), monkeypatch, capsys)
    assert (code, err) == (2, f"error: {files / 'bad.trec'}:{MESSAGE}\n")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_is_not_opened_again(files):
    fifo = files / "run.fifo"
    os.mkfifo(fifo)

    def write():
        with open(fifo, "wb") as handle:  # (waits for the reader)
            handle.write(BAD)

    threading.Thread(target=write, daemon=True).start()
    proc = subprocess.run([sys.executable, "-m", "harness", "rerank", "-d", str(files / "ds"), "--run", str(fifo),
                           "-r", RERANKER, "-o", str(files / "out.trec"), "--quiet"], capture_output=True,
                          text=True, timeout=120)  # (before: waited for a second writer for good)
    assert (proc.returncode, proc.stderr) == (2, f"error: {fifo}:{MESSAGE}\n")


def test_an_unknown_dataset_is_named_before_standard_input_is_read(tmp_path):
    # `slow-retrieval | harness rerank --run - -d scifcat ...` read the whole run from standard input (here:
    # never closed) before it named the typo; a local dataset no folder is found for is refused first
    proc = subprocess.Popen([sys.executable, "-m", "harness", "rerank", "--run", "-", "-d", str(tmp_path / "nosuch"),
                             "-r", RERANKER, "-o", str(tmp_path / "out.trec")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        code = proc.wait(timeout=60)  # (standard input left open: the old code waited on it, until killed here)
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert code == 2
    assert err.startswith(f"error: unknown dataset {str(tmp_path / 'nosuch')!r}: not a folder"), err


class OldSignature(ByRow):
    """A plugin that overrides rerank() with the signature it had before ``source_data``."""

    def rerank(self, run, queries, corpus, depth, source=None, ignore_identical_ids=True, semantics=None):
        return super().rerank(run, queries, corpus, depth, source=source, ignore_identical_ids=ignore_identical_ids,
                              semantics=semantics)


def test_a_plugin_overriding_rerank_with_the_old_signature_still_runs(files, monkeypatch, capsys):
    # `harness rerank --run -` passed source_data= to every reranker: a plugin's rerank() written before it
    # failed with "unexpected keyword argument 'source_data'". Expected: the run reranked by ByRow's score
    # (minus the corpus row: d1, d2, d3 in that order)
    good = b"q1 Q0 d3 1 3.0 f\nq1 Q0 d1 2 2.0 f\nq1 Q0 d2 3 1.0 f\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(good), encoding="utf-8"))
    code, _, err = main_in_process(monkeypatch, capsys, "rerank", "-d", str(files / "ds"), "--run", "-", "-r",
                                   "tests.cli.test_rerank_stdin_lines:OldSignature", "-o", str(files / "out.trec"),
                                   "--quiet")
    assert code == 0, err
    lines = [line.split() for line in (files / "out.trec").read_text().splitlines() if not line.startswith("#")]
    assert [line[2] for line in lines] == ["d1", "d2", "d3"]

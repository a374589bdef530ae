"""What a harness command writes for a run with no hits is read back by every command with the same
metrics: every judged query scores 0, as trec_eval -c scores queries missing from a run (10.x scores a
file of only ``#`` lines so; see tests/formats/test_trec_empty_run.py for the references). It was
refused ("the run file is empty") by ``evaluate``, ``-r run-file``, ``fuse`` and ``check``."""

from __future__ import annotations

import json

import pytest

from harness.formats.trec import EMPTY_RUN_LINE

ZERO = {"NDCG@10": 0.0, "MAP@10": 0.0, "Recall@10": 0.0, "P@10": 0.0, "R_cap@10": 0.0, "MRR@10": 0.0}


@pytest.fixture
def harness(harness_cli):
    """``harness ARGS`` in this process (conftest's harness_cli), which must succeed."""
    def call(*args):
        proc = harness_cli(*args)
        assert proc.returncode == 0, proc.stderr
        return proc

    return call


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """A BEIR folder of 3 documents and 2 judged queries, and run files: one of another query only
    (replayed, it retrieves nothing for q1 and q2), one that finds every relevant document."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HARNESS_PROGRESS", "0")
    folder = tmp_path / "tiny"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "text": d}) + "\n" for d in ("d1", "d2", "d3")))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": "x"}) + "\n" for q in ("q1", "q2")))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td2\t1\nq2\td3\t2\n")
    (tmp_path / "other.trec").write_text("zz Q0 d1 1 1.0 s\n")
    (tmp_path / "good.trec").write_text("q1 Q0 d2 1 2.0 s\nq1 Q0 d1 2 1.0 s\nq2 Q0 d3 1 1.0 s\n")
    return tmp_path


def _metrics(path):
    return json.loads(path.read_text())["metrics"]


def test_an_empty_run_written_by_harness_run_reads_back_everywhere(tiny, harness):
    qrels = tiny / "tiny/qrels/test.tsv"
    harness("run", "-d", tiny / "tiny", "-r", "run-file", "-p", f"path={tiny / 'other.trec'}", "--k", "10",
            "-o", tiny / "empty", "--quiet")
    written = tiny / "empty/tiny/run-file"
    assert _metrics(written / "metrics.json") == ZERO
    assert all(line.startswith("#") for line in (written / "run.trec").read_text().splitlines())  # the header only

    evaluated = harness("evaluate", "--qrels", qrels, "--run", written / "run.trec", "--k", "10", "--json", tiny / "ev.json")
    doc = json.loads((tiny / "ev.json").read_text())
    assert doc["metrics"] == ZERO and doc["per_query"] == {"q1": ZERO, "q2": ZERO}  # every judged query 0
    assert "2 judged queries are missing from the run and score 0" in evaluated.stderr

    harness("run", "-d", tiny / "tiny", "-r", "run-file", "-p", f"path={written / 'run.trec'}", "--k", "10",
            "-o", tiny / "replayed", "--quiet")  # (the run-file retriever indexed an empty run's offsets: IndexError)
    assert _metrics(tiny / "replayed/tiny/run-file/metrics.json") == ZERO

    harness("fuse", "--run", written / "run.trec", "--run", tiny / "replayed/tiny/run-file/run.trec", "-o", tiny / "fused.trec")
    assert (tiny / "fused.trec").read_text() == EMPTY_RUN_LINE + "\n"  # no header: the one comment line
    harness("evaluate", "--qrels", qrels, "--run", tiny / "fused.trec", "--k", "10", "--json", tiny / "fused.json")
    assert _metrics(tiny / "fused.json") == ZERO

    harness("run", "-d", tiny / "tiny", "-r", "run-file", "-p", f"path={tiny / 'good.trec'}", "--k", "10",
            "-o", tiny / "good", "--quiet")
    compared = harness("compare", f"good={tiny / 'good/tiny/run-file'}", f"empty={written}")
    assert "| empty | 0.0000 | 0.0000 |" in compared.stdout
    check = harness("check", "--baseline", tiny / "good/tiny/run-file", "--current", written, "--qrels", qrels,
                    "--json", tiny / "check.json")  # (NOISE on 2 queries: passes)
    report = json.loads((tiny / "check.json").read_text())
    assert report["warnings"] == []  # the empty run's rankings were read (not "rankings ... unavailable")
    assert "left top 10: d2 (grade 1), d1" in check.stdout and "left top 10: d3 (grade 2)" in check.stdout

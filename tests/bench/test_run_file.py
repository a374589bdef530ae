"""The run-file retriever: a TREC run replayed as a retriever (restriction to queries and depth,
canonical order), end to end through `harness run`."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.datasets import BUNDLED
from harness.datasets.corpus import Corpus, Queries
from retrievers import create
from retrievers.run_file import RunFileRetriever

from .bench_helpers import write_tiny

REPO = Path(__file__).resolve().parents[2]


def harness(*args):
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, cwd=REPO)


@pytest.fixture
def run_path(tmp_path):
    path = tmp_path / "system.trec"
    path.write_text(
        "q1 Q0 d1 1 3.0 sys\n"
        "q1 Q0 d3 2 2.0 sys\n"
        "q1 Q0 d2 3 1.0 sys\n"
        "q9 Q0 d4 1 5.0 sys\n"      # a query nobody asks for
        "t Q0 a 1 1.0 sys\n"        # ties: file order a, b; canonical order (doc id descending) is b, a
        "t Q0 b 2 1.0 sys\n"
        "t Q0 c 3 0.5 sys\n")
    return path


def test_search_restricts_to_requested_queries_in_their_order(run_path):
    retriever = create("run-file", path=str(run_path))
    assert isinstance(retriever, RunFileRetriever) and retriever.name == "run-file"
    retriever.index(Corpus(["d1", "d2", "d3"], ["", "", ""], ["", "", ""]))  # no-op beyond noting the ids
    run = retriever.search(Queries(["q2", "q1"], ["fig", "banana cherry"]), k=2)
    assert run.query_ids.tolist() == ["q2", "q1"]
    assert run.to_dict() == {"q2": {}, "q1": {"d1": 3.0, "d3": 2.0}}
    assert run.is_canonical()
    assert retriever.stats() == {"run_queries": 3, "requested_queries": 2, "requested_missing_from_run": 1,
                                 "returned_docs_not_in_corpus": 0}


def test_depth_cut_follows_the_canonical_order(run_path):
    retriever = RunFileRetriever(str(run_path))
    run = retriever.search(Queries(["t"], [""]), k=1)
    assert run.doc_ids(0) == ["b"]  # tie at 1.0 broken by doc id descending, not by file order
    run = retriever.search(Queries(["t", "q1"], ["", ""]), k=10)
    assert run.doc_ids(0) == ["b", "a", "c"] and run.doc_ids(1) == ["d1", "d3", "d2"]
    np.testing.assert_array_equal(run.scores, [1.0, 1.0, 0.5, 3.0, 2.0, 1.0])


def test_params_record_the_file_checksum(run_path):
    import hashlib

    params = RunFileRetriever(str(run_path)).params()
    assert params == {"path": str(run_path), "sha256": hashlib.sha256(run_path.read_bytes()).hexdigest()}


def test_missing_file_and_bad_k(tmp_path, run_path):
    with pytest.raises(ValueError, match="run file not found"):
        RunFileRetriever(str(tmp_path / "nope.trec"))
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        RunFileRetriever(str(run_path)).search(Queries(["q1"], [""]), k=0)


def test_harness_run_with_a_run_file(tmp_path, run_path):
    write_tiny(tmp_path / "tiny")
    proc = harness("run", "--retriever", "run-file", "--param", f"path={run_path}", "--dataset", str(tmp_path / "tiny"),
                   "--k", "1,3", "--output-dir", str(tmp_path / "out"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"results written to {tmp_path / 'out' / 'tiny' / 'run-file'}"
    doc = json.loads((tmp_path / "out/tiny/run-file/metrics.json").read_text())
    # Worked by hand: q1 ranks d1 (grade 0), d3 (1), d2 (2); the ideal is d2, d3.
    #   DCG@3 = 0 + 1/log2(3) + 2/log2(4), IDCG@3 = 2/log2(2) + 1/log2(3); q2 is missing from the run: 0.
    ndcg_q1 = (1 / math.log2(3) + 2 / math.log2(4)) / (2 + 1 / math.log2(3))
    assert doc["metrics"]["NDCG@3"] == pytest.approx((ndcg_q1 + 0) / 2, abs=1e-12)
    assert doc["metrics"]["P@1"] == 0.0 and doc["n_missing_from_run"] == 1
    assert doc["retriever"]["params"]["path"] == str(run_path)


def test_perfect_run_on_scifact_scores_one(tmp_path):
    # A run built from SciFact's own qrels (every judged document, score = grade) must score
    # NDCG@10 = P@1 = Recall@100 = 1 exactly: every SciFact test query has <= 100 relevant documents.
    lines = (BUNDLED / "scifact/qrels/test.tsv").read_text().splitlines()[1:]
    run = tmp_path / "perfect.trec"
    run.write_text("".join(f"{q} Q0 {d} 0 {g} perfect\n" for q, d, g in (line.split("\t") for line in lines)))
    proc = harness("run", "--retriever", "run-file", "--param", f"path={run}", "--k", "1,10,100",
                   "--output-dir", str(tmp_path / "out"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "out/scifact/run-file/metrics.json").read_text())
    assert doc["n_queries"] == 300 and doc["n_missing_from_run"] == 0
    assert doc["metrics"]["NDCG@10"] == 1.0 and doc["metrics"]["P@1"] == 1.0 and doc["metrics"]["Recall@100"] == 1.0


def test_params_hash_the_content_that_was_scored(tmp_path):
    # A benchmark computes a cell's fingerprint (params(): the file's sha256) before the search; a run
    # file rewritten in between was scored as rewritten but recorded with the old file's sha256.
    import hashlib

    path = tmp_path / "mine.trec"
    old, new = b"q1 Q0 d1 1 3.0 s\n", b"q1 Q0 d2 1 3.0 s\nq1 Q0 d1 2 1.0 s\n"
    path.write_bytes(old)
    retriever = RunFileRetriever(str(path))
    assert retriever.params()["sha256"] == hashlib.sha256(old).hexdigest()
    path.write_bytes(new)  # (another size: a different signature whatever the clock's resolution)
    queries = Queries(["q1"], ["x"])
    retriever.index(Corpus(["d1", "d2"], ["", ""], ["a", "b"]))
    assert retriever.search(queries, 10).doc_ids(0) == ["d2", "d1"]
    assert retriever.params()["sha256"] == hashlib.sha256(new).hexdigest()
    path.write_bytes(old)  # rewritten after the search: the hash still describes what was scored
    assert retriever.params()["sha256"] == hashlib.sha256(new).hexdigest()

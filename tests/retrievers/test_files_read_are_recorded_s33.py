"""A file a retriever reads is recorded (``params()``) by the sha256 of what it read, not of what the file held when
``harness bench`` planned the cell (harness/checksums.py, HashedFile).

Probe of 2026-11-29: a bench's impacts cell recorded the documents file's sha256 from the plan beside the numbers of
the file copied over it before the cell ran; with the old file back, the cell was reused with the new file's
numbers (NDCG@10 0.1453, where a fresh run of the old file gives 0.1427). The run-file retriever rehashed a file
that changed, but told it by size, mtime and inode: a rewrite in place of the same size, its mtime set back, kept
the old sha256. Expected values: sha256 of the files' bytes (hashlib here); the run is that of the content read.
"""

from __future__ import annotations

import hashlib
import os

from harness.datasets.corpus import Corpus, Queries
from retrievers.run_file import RunFileRetriever
from retrievers.sparse.impacts import ImpactsRetriever
from tests.retrievers.sparse_data import run_pairs, write_jsonl


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_impacts_records_the_files_it_read(tmp_path):
    corpus = Corpus(ids=["a", "b"], titles=[""] * 2, texts=[""] * 2)
    docs = write_jsonl(tmp_path / "d.jsonl", [{"_id": "a", "vector": {"x": 1.0}}, {"_id": "b", "vector": {"x": 2.0}}])
    queries = write_jsonl(tmp_path / "q.jsonl", [{"_id": "q1", "vector": {"x": 1.0}}])
    r = ImpactsRetriever(documents=str(docs), queries=str(queries), n_threads=1)
    planned = r.params()  # (the bench's plan)
    assert planned["documents_sha256"] == _sha(docs)
    write_jsonl(docs, [{"_id": "a", "vector": {"x": 3.0}}, {"_id": "b", "vector": {"x": 2.0}}])  # rewritten
    write_jsonl(queries, [{"_id": "q1", "vector": {"x": 2.0}}])
    r.index(corpus)
    assert run_pairs(r.search(Queries(ids=["q1"], texts=[""]), 10)) == {"q1": [("a", 6.0), ("b", 4.0)]}
    after = r.params()
    assert (after["documents_sha256"], after["queries_sha256"]) == (_sha(docs), _sha(queries))
    assert after["documents_sha256"] != planned["documents_sha256"]
    write_jsonl(docs, [{"_id": "a", "vector": {"x": 5.0}}])  # rewritten after it was read: what was read stays
    assert r.params()["documents_sha256"] == after["documents_sha256"]


def test_a_run_file_rewritten_in_place_with_its_mtime_set_back_is_hashed_again(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 a 1 2.0 x\nq1 Q0 b 2 1.0 x\n")
    r = RunFileRetriever(path=str(path))
    planned = r.params()["sha256"]
    stat = path.stat()
    with open(path, "r+b") as handle:  # the same size, in place (same inode), then its old mtime back
        handle.write(b"q1 Q0 b 1 2.0 x\nq1 Q0 a 2 1.0 x\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns, path.stat().st_ino) == \
        (stat.st_size, stat.st_mtime_ns, stat.st_ino)
    r.index(Corpus(ids=["a", "b"], titles=[""] * 2, texts=[""] * 2))
    assert run_pairs(r.search(Queries(ids=["q1"], texts=[""]), 10)) == {"q1": [("b", 2.0), ("a", 1.0)]}
    assert r.params()["sha256"] == _sha(path) != planned

"""``harness run --retriever impacts`` end to end on NFCorpus.

BM25 exported as impacts (document vectors = BM25 posting scores, query vectors = term counts;
tests/retrievers/sparse_data.py) must give BM25's own metrics: the impact search is the same sum.
"""

from __future__ import annotations

import json

from harness.datasets import load_dataset
from tests.cli.test_cli import harness
from tests.retrievers.sparse_data import bm25_as_impacts


def _metrics(folder):
    return json.loads(next(folder.rglob("metrics.json")).read_text())


def test_bm25_as_impacts_reproduces_bm25(nfcorpus_dir, tmp_path):
    dataset = load_dataset(str(nfcorpus_dir))
    docs, queries = bm25_as_impacts(dataset, tmp_path)
    r1 = harness("run", "-d", str(nfcorpus_dir), "-r", "impacts", "-p", f"documents={docs}",
                 "-p", f"queries={queries}", "-o", str(tmp_path / "imp"))
    assert r1.returncode == 0, r1.stderr
    r2 = harness("run", "-d", str(nfcorpus_dir), "-r", "bm25", "-p", "cache=false", "-o", str(tmp_path / "bm25"))
    assert r2.returncode == 0, r2.stderr
    imp, bm25 = _metrics(tmp_path / "imp"), _metrics(tmp_path / "bm25")
    assert imp["retriever"]["params"]["documents"] == str(docs)
    for name in ("NDCG@10", "MAP@100", "Recall@100"):
        assert abs(imp["metrics"][name] - bm25["metrics"][name]) < 1e-4, name
    # BM25 on NFCorpus test (lucene backend, k1 0.9, b 0.4): nDCG@10 0.320555 (docs/bm25.md)
    assert round(imp["metrics"]["NDCG@10"], 6) == round(bm25["metrics"]["NDCG@10"], 6) == 0.320555


def test_bad_documents_exit_2_and_write_nothing(nfcorpus_dir, tmp_path):
    bad = tmp_path / "docs.jsonl"
    bad.write_text('{"id": "MED-10", "vector": {"a": 1}}\n{"id": "NOT-A-DOC", "vector": {"a": 1}}\n')
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "PLAIN-2", "vector": {"a": 1}}\n')
    out = tmp_path / "out"
    r = harness("run", "-d", str(nfcorpus_dir), "-r", "impacts", "-p", f"documents={bad}",
                "-p", f"queries={queries}", "-o", str(out))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == f"error: {bad}:2: document is not in the dataset's corpus (id 'NOT-A-DOC')"
    assert not out.exists()
    r = harness("run", "-d", str(nfcorpus_dir), "-r", "impacts", "-p", f"documents={tmp_path / 'docs.jsonl'}",
                "-p", f"queries={queries}", "-o", str(out))
    assert r.returncode == 2
    assert "error: " in r.stderr and "not in the dataset's corpus" in r.stderr

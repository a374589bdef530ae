"""``harness rerank -r bi-encoder`` reuses the embedding cache as ``harness run -r dense`` does; it writes a run
file only (no metrics.json records its stats), so when the embeddings it scored were encoded under other
versions of transformers than this process's, the one place to say so is a warning line on stderr. Before,
nothing did. Versions are faked by replacing ``harness.versions.versions`` (the CLI runs in this process);
tiny model built at test time."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("sentence_transformers")

import harness.versions  # noqa: E402
from tests.retrievers.tiny_models import sentence_transformer  # noqa: E402

REAL = harness.versions.versions()


def _fake(monkeypatch, transformers: str) -> None:
    fake = {**REAL, "sentence-transformers": "3.0", "torch": "2.0", "transformers": transformers}
    monkeypatch.setattr(harness.versions, "versions", lambda: dict(fake))


def test_rerank_says_once_that_it_scored_embeddings_of_another_version(tmp_path, monkeypatch, harness_cli):
    (tmp_path / "model").mkdir()
    model = sentence_transformer(tmp_path / "model")
    ds = tmp_path / "ds"
    (ds / "qrels").mkdir(parents=True)
    (ds / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "title": "", "text": t}) + "\n"
                                             for i, t in enumerate(["abc def", "xyz", "abc abc", "q r s"])))
    (ds / "queries.jsonl").write_text('{"_id": "q1", "text": "abc"}\n')
    (ds / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td0\t1\n")
    run = tmp_path / "first.trec"
    run.write_text("q1 Q0 d1 1 3.0 x\nq1 Q0 d0 2 2.0 x\nq1 Q0 d2 3 1.0 x\n")
    args = ("rerank", "-d", ds, "--run", run, "-r", "bi-encoder", "-p", f"model={model}", "-p", "device=cpu",
            "-p", f"cache_dir={tmp_path / 'cache'}", "--depth", "3", "-o", tmp_path / "reranked.trec")

    _fake(monkeypatch, "1.0")
    proc = harness_cli(*args)
    assert proc.returncode == 0, proc.stderr
    assert "library versions" not in proc.stderr
    proc = harness_cli(*args)  # the same versions: the cache is reused, nothing to say
    assert proc.returncode == 0 and "library versions" not in proc.stderr

    _fake(monkeypatch, "2.0")  # pip install -U transformers
    proc = harness_cli(*args)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "library versions" in line]
    assert lines == ["warning: reranker 'bi-encoder': cached work computed under other library versions was reused "
                     "(documents_versions transformers 1.0 (this process: 2.0); queries_versions transformers 1.0 "
                     "(this process: 2.0)): versions are in no cache key; give the reranker a cache_dir of its own "
                     "(or cache=false) to compute it again"]

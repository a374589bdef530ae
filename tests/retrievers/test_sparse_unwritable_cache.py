"""The sparse retriever goes on without a document weight cache it cannot write
(retrievers/sparse/retriever.py), as BM25 and dense do.

With ``HARNESS_CACHE_DIR`` on a read-only folder (a read-only bind mount), ``harness run -r sparse`` stopped
with ``error: <cache>/sparse: Read-only file system`` (the first write, meta.json, raised) before encoding
anything, where ``-r bm25`` and ``-r dense`` run uncached. Now the failed write is logged, the documents are
encoded without the cache (the oracle: the same run with ``cache=False``, score for score) and the
status says so: ``built, not cached (<strerror>)``. A write that fails midway (a full disk at the join)
keeps the chunks encoded so far: each chunk is encoded once (4 documents in chunks of 2: 2 calls), and a
later run takes the parts left (``resumed, not cached (...)``, 0 calls). A cache root under a file fails
the same way (ENOTDIR) without a mount. The model: a tiny random SPLADE encoder
(tests/retrievers/tiny_models.py)."""

from __future__ import annotations

import errno
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sentence_transformers.sparse_encoder")

from harness.datasets.corpus import Corpus, Queries  # noqa: E402
from retrievers.sparse import cache as sparse_cache  # noqa: E402
from retrievers.sparse.retriever import SparseRetriever  # noqa: E402
from tests.retrievers.tiny_models import sparse_encoder  # noqa: E402

WORDS = "cancer diet fat heart blood risk study milk fish salt".split()
CORPUS = Corpus(ids=["d1", "d2", "d3", "d4"], titles=[""] * 4,
                texts=["cancer diet", "fat heart blood", "blood cancer risk", "milk fish salt study"])
QUERIES = Queries(["q1", "q2"], ["cancer", "fish salt"])


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    return sparse_encoder(tmp_path_factory.mktemp("splade"), WORDS)


def _run(model: Path, **params):
    r = SparseRetriever(model=str(model), device="cpu", cache_chunk_size=2, batch_size=2, **params)
    r.index(CORPUS)
    return r, r.search(QUERIES, 4).to_dict()


def test_an_unwritable_cache_is_warned_about_and_the_run_made_without_it(tiny_model, tmp_path, caplog):
    (tmp_path / "a-file").write_text("")
    with caplog.at_level(logging.WARNING):
        r, run = _run(tiny_model, cache_dir=str(tmp_path / "a-file" / "sparse"))
    assert run == _run(tiny_model, cache=False)[1]
    assert r.stats()["cache"] == "built, not cached (Not a directory)"
    warned = [rec.getMessage() for rec in caplog.records if rec.levelno == logging.WARNING]
    assert len(warned) == 1 and warned[0].startswith("could not write the sparse weight cache under")


def test_a_write_failing_at_the_join_encodes_each_chunk_once(tiny_model, tmp_path, monkeypatch):
    want = _run(tiny_model, cache=False)[1]
    save = sparse_cache._save

    def full_at_join(path, rows):
        if path.name == "weights.npz":
            raise OSError(errno.ENOSPC, "No space left on device")
        save(path, rows)

    monkeypatch.setattr(sparse_cache, "_save", full_at_join)
    calls = []
    r = SparseRetriever(model=str(tiny_model), device="cpu", cache_chunk_size=2, batch_size=2,
                        cache_dir=str(tmp_path / "sparse"))
    encode = r.model.encode
    r.model.encode = lambda texts, role: (calls.append(role), encode(texts, role))[1]
    r.index(CORPUS)
    assert r.search(QUERIES, 4).to_dict() == want
    assert calls == ["document", "document", "query"]  # 2 chunks, each encoded once
    assert r.stats()["cache"] == "built, not cached (No space left on device)"
    assert r.stats()["documents_from_parts"] == 0
    # a later run on the same full disk takes the parts the first left
    calls.clear()
    r2 = SparseRetriever(model=str(tiny_model), device="cpu", cache_chunk_size=2, batch_size=2,
                         cache_dir=str(tmp_path / "sparse"))
    encode2 = r2.model.encode
    r2.model.encode = lambda texts, role: (calls.append(role), encode2(texts, role))[1]
    r2.index(CORPUS)
    assert r2.search(QUERIES, 4).to_dict() == want
    assert calls == ["query"]
    stats = r2.stats()
    assert (stats["cache"], stats["documents_from_parts"]) == ("resumed, not cached (No space left on device)", 4)


def test_cli_run_on_an_unwritable_cache_root(tiny_model, tmp_path):
    folder = tmp_path / "ds"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n"
                                                 for i, t in zip(CORPUS.ids, CORPUS.texts)))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n"
                                                  for q, t in zip(QUERIES.ids, QUERIES.texts)))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td4\t1\n")
    (tmp_path / "a-file").write_text("")
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "a-file" / "cache"), "HARNESS_PROGRESS": "0"}
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "-d", str(folder), "-r", "sparse", "-p",
                           f"model={tiny_model}", "-p", "device=cpu", "--k", "1,3", "-o", str(tmp_path / "out"), "-q"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"results written to {tmp_path / 'out' / 'ds' / 'sparse'}\n"
    stats = json.loads((tmp_path / "out" / "ds" / "sparse" / "metrics.json").read_text())["retriever_stats"]
    assert stats["cache"] == "built, not cached (Not a directory)"


def test_a_damaged_entry_on_a_read_only_cache_is_encoded_without_it(tiny_model, tmp_path, monkeypatch):
    """A complete entry whose weights.npz is damaged, on a cache that has since become read-only: its
    removal fails (EROFS), as every write; the documents are encoded without the cache (before, the
    failed removal stopped the run: ``error: ...: Read-only file system``)."""
    want = _run(tiny_model, cache=False)[1]
    _run(tiny_model, cache_dir=str(tmp_path / "sparse"))  # a complete entry
    (weights,) = (tmp_path / "sparse").glob("doc-*/weights.npz")
    data = bytearray(weights.read_bytes())
    data[100:102] = b"XX"
    weights.write_bytes(bytes(data))
    read_only = OSError(errno.EROFS, "Read-only file system")

    def refused(*args, **kwargs):
        raise read_only

    monkeypatch.setattr(sparse_cache.SparseWeightCache, "discard", refused)
    monkeypatch.setattr(sparse_cache, "_save", refused)
    r, run = _run(tiny_model, cache_dir=str(tmp_path / "sparse"))
    assert run == want
    assert r.stats()["cache"] == "rebuilt, not cached (Read-only file system)"

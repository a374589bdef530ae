"""A build killed (SIGKILL: a cancelled CI job) while another process finishes the same cache entry left
its temporary folder or file for good: the caches removed a dead process's temporaries only when the
next build (or write) of the entry started, and once another process has finished the entry every
later run is a hit, which never builds (retrievers/bm25/cache.py load, retrievers/dense/cache.py
load_complete, harness/datasets/corpus_cache.py load_or_build).

Seen with real processes: two ``harness run -d <50 MB corpus> -r bm25`` on one empty
``$HARNESS_CACHE_DIR``, one killed with SIGKILL after 1.5 s, 2.5 s or 3.5 s: the other finished the
entry, and ``bm25/.<key>.<pid>-<host>.<random>.tmp`` (25 MB here, the index's size: 3.2 GB of postings
at MS MARCO's 8.8M passages) stayed after any number of later runs (all hits). Expected: the first
load of the entry after the kill removes it (its process is gone), and the hit is unchanged."""

from __future__ import annotations

import json

import numpy as np

from harness.atomic import writer_tag
from retrievers.dense.cache import EmbeddingCache
from tests.retrievers.test_bm25_cache import entry, run_once
from tests.retrievers.test_interrupt_review_caches import N, dead_pid, dense_rows


def _killed_writers(folder, name: str) -> str:
    """The temporary name a process that is gone (``dead_pid``) of this host gave ``name``'s output."""
    host = writer_tag().split("-", 1)[1]
    return f".{name}.{dead_pid()}-{host}.ab12cd34.tmp"


def test_a_bm25_hit_removes_a_killed_builds_staging_folder(tmp_path):
    status, expected = run_once(tmp_path)
    assert status == "built"
    folder = entry(tmp_path)
    staging = folder.parent / _killed_writers(folder.parent, folder.name)
    staging.mkdir()
    (staging / "indices.npy").write_bytes(b"\0" * 4096)  # (the killed build's mapped postings)
    live = folder.parent / f".{folder.name}.{writer_tag()}.cd34ef56.tmp"  # a running build's: kept
    live.mkdir()
    status, found = run_once(tmp_path)
    assert (status, found) == ("hit", expected)
    assert sorted(p.name for p in folder.parent.iterdir()) == sorted([folder.name, live.name])


def test_a_dense_hit_removes_a_killed_joins_temporary_matrix(tmp_path):
    order = np.arange(N)
    cache = EmbeddingCache(tmp_path / "entry", N, order, 4, {"kind": "t"})
    cache.build(dense_rows)  # complete (another process finished the entry)
    stale = cache.folder / _killed_writers(cache.folder, "embeddings.npy")
    stale.write_bytes(b"\0" * 4096)
    again = EmbeddingCache(tmp_path / "entry", N, order, 4, {"kind": "t"}).load_complete()
    np.testing.assert_array_equal(again, dense_rows(order))
    assert sorted(p.name for p in cache.folder.iterdir()) == ["embeddings.npy", "meta.json"]


def test_a_corpus_cache_hit_removes_a_killed_loads_stream_file(tmp_path, monkeypatch):
    from harness.datasets.beir import load_corpus

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "corpus.jsonl"
    source.write_text("".join(json.dumps({"_id": f"d{i}", "text": "word " * 5}) + "\n" for i in range(50)))
    first = load_corpus(source, cache=True)
    corpora = tmp_path / "cache" / "corpora"
    stale = corpora / _killed_writers(corpora, "stream")
    stale.write_bytes(b"\0" * 4096)
    again = load_corpus(source, cache=True)
    assert list(again.ids) == list(first.ids) and list(again.texts) == list(first.texts)
    assert not stale.exists()
    assert len(list(corpora.glob("*.arrow"))) == 1

"""``retriever_stats.cache`` says what happened to the BM25 index cache (retrievers/bm25/lucene_backend.py).

The entry is written on a background thread; when that write fails (a read-only cache, a full disk, a
cache root under a file), the failure was logged and ``stats()`` still said ``cache: built``, which
reads as "cached for the next run". Found with ``HARNESS_CACHE_DIR`` on a read-only bind mount
(``mount -o bind,ro``): ``harness run -d scifact`` wrote ``"retriever_stats": {"cache": "built"}``.
Now it is ``built, not cached (<strerror>)``; the run's results are those of a cached run."""

from __future__ import annotations

import errno

from harness.datasets.corpus import Corpus, Queries
from retrievers.bm25 import BM25Retriever
from retrievers.bm25 import cache as index_cache

CORPUS = Corpus([f"d{i}" for i in range(20)], [""] * 20, [f"doc {i} topic{i % 5} item{i % 3}" for i in range(20)])
QUERIES = Queries(["q1", "q2"], ["topic1 item2", "item0 doc"])


def _run(cache_dir):
    r = BM25Retriever(cache_dir=cache_dir)
    r.index(CORPUS)
    return r.stats(), r.search(QUERIES, 5).to_dict()


def test_an_unwritable_cache_root_is_reported_not_cached(tmp_path):
    (tmp_path / "a-file").write_text("")
    stats, run = _run(tmp_path / "a-file" / "cache")  # mkdir fails: ENOTDIR, as EROFS on a read-only mount
    assert stats["cache"] == "built, not cached (Not a directory)"
    assert "index_bytes" not in stats
    assert run == _run(tmp_path / "cache")[1]  # the same run as with a cache


def test_a_full_disk_is_reported_not_cached(tmp_path, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(index_cache, "save", full)
    stats, _ = _run(tmp_path / "cache")
    assert stats["cache"] == "built, not cached (No space left on device)"


def test_a_written_entry_is_still_built_then_hit(tmp_path):
    assert _run(tmp_path / "cache")[0]["cache"] == "built"
    index_cache.wait()
    assert _run(tmp_path / "cache")[0]["cache"] == "hit"

"""The chunked embedding cache: complete entries, resume after an interruption, corrupt parts."""

from __future__ import annotations

import numpy as np
import pytest

from harness.cache import cache_dir, cache_root
from retrievers.dense.cache import EmbeddingCache, cache_key
from retrievers.dense.texts import content_hash, document_texts, length_order
from harness.datasets.corpus import Corpus

N, DIM = 10, 3


def rows_encoder(calls: list, fail_on_call: int | None = None):
    """Embedding of row i = [i, 2i, 3i]; records each call's rows; raises on call ``fail_on_call``."""
    def encode(rows):
        calls.append(rows.tolist())
        if fail_on_call is not None and len(calls) == fail_on_call:
            raise KeyboardInterrupt("simulated interruption")
        return np.outer(rows, [1.0, 2.0, 3.0]).astype(np.float32)
    return encode


def expected():
    return np.outer(np.arange(N), [1.0, 2.0, 3.0]).astype(np.float32)


def make(folder, chunk=4):
    order = np.arange(N)[::-1].copy()
    return EmbeddingCache(folder, N, order, chunk, {"kind": "test"})


def test_build_then_load_complete(tmp_path):
    calls = []
    cache = make(tmp_path / "e")
    assert cache.load_complete() is None
    out, reused = cache.build(rows_encoder(calls))
    np.testing.assert_array_equal(out, expected())
    assert reused == 0
    assert calls == [[9, 8, 7, 6], [5, 4, 3, 2], [1, 0]]  # chunks follow the given order
    assert sorted(p.name for p in (tmp_path / "e").iterdir()) == ["embeddings.npy", "meta.json"]
    loaded = make(tmp_path / "e").load_complete()
    np.testing.assert_array_equal(loaded, expected())


def test_build_joins_the_parts_on_disk_and_returns_a_read_only_map(tmp_path):
    # The complete matrix is written into a memory-mapped file (RAM: one chunk at a time), not
    # assembled in memory: build() hands back the same read-only map a later load_complete() gives.
    out, _ = make(tmp_path / "e", chunk=3).build(rows_encoder([]))
    assert isinstance(out, np.memmap) and not out.flags.writeable
    np.testing.assert_array_equal(out, expected())
    assert not list((tmp_path / "e").glob(".*tmp")), "the joined file is renamed into place"


def test_interrupted_build_resumes_with_the_missing_chunks_only(tmp_path):
    calls = []
    with pytest.raises(KeyboardInterrupt):
        make(tmp_path / "e").build(rows_encoder(calls, fail_on_call=3))
    assert (tmp_path / "e" / "part-4-000000.npy").is_file() and (tmp_path / "e" / "part-4-000001.npy").is_file()
    assert not (tmp_path / "e" / "part-4-000002.npy").exists()
    assert not list((tmp_path / "e").glob("*.tmp")), "an interrupted write must leave no temporary file"
    assert make(tmp_path / "e").load_complete() is None
    assert make(tmp_path / "e").cached_rows() == 8

    resumed_calls, progress = [], []
    out, reused = make(tmp_path / "e").build(rows_encoder(resumed_calls), on_progress=progress.append)
    assert resumed_calls == [[1, 0]]
    assert reused == 8 and progress == [2]
    np.testing.assert_array_equal(out, expected())


def test_parts_left_beside_a_complete_matrix_are_removed_when_it_is_loaded(tmp_path):
    # A builder killed between the rename of embeddings.npy and the removal of its parts left them for
    # good (at MS MARCO size a second copy of the matrix, ~13 GB at 384 dims): every later run loaded
    # the complete matrix and never looked at them. Expected: the next load serves the same rows
    # (the complete matrix, not the parts) and the folder holds embeddings.npy and meta.json only.
    cache = make(tmp_path / "e", chunk=4)
    cache.build(rows_encoder([]))
    for i in range(cache.n_chunks):  # the parts as the builder wrote them, put back as the kill left them
        np.save(cache.part_path(i), np.outer(cache.chunk_rows(i), [1.0, 2.0, 3.0]).astype(np.float32))
    np.save(tmp_path / "e" / "part-2-000000.npy", np.zeros((2, DIM), np.float32))  # another chunk size's, stale too
    loaded = make(tmp_path / "e", chunk=4).load_complete()
    np.testing.assert_array_equal(loaded, expected())
    assert sorted(p.name for p in (tmp_path / "e").iterdir()) == ["embeddings.npy", "meta.json"]


def test_a_complete_matrix_on_a_read_only_cache_is_served_with_parts_beside_it(tmp_path, monkeypatch):
    # A shared cache mounted read-only (EROFS; EACCES for another user's folder) holding a complete
    # matrix and parts a killed builder left: before the leftover-part cleanup, load_complete()
    # served the matrix (it only reads); the cleanup's unlink raised OSError out of it, so every run
    # on that cache crashed. Expected: the same rows as the complete matrix (expected()), parts kept.
    from pathlib import Path

    cache = make(tmp_path / "e", chunk=4)
    cache.build(rows_encoder([]))
    for i in range(cache.n_chunks):
        np.save(cache.part_path(i), np.zeros((len(cache.chunk_rows(i)), DIM), np.float32))
    unlink = Path.unlink

    def read_only(path, *args, **kwargs):
        if path.parent == tmp_path / "e":
            raise OSError(30, "Read-only file system", str(path))
        return unlink(path, *args, **kwargs)

    monkeypatch.setattr(Path, "unlink", read_only)
    loaded = make(tmp_path / "e", chunk=4).load_complete()
    np.testing.assert_array_equal(loaded, expected())
    assert len(list((tmp_path / "e").glob("part-*.npy"))) == cache.n_chunks


def test_corrupt_or_mismatched_part_is_reencoded(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        make(tmp_path / "e").build(rows_encoder([], fail_on_call=3))
    (tmp_path / "e" / "part-4-000001.npy").write_bytes(b"\x93NUMPY garbage")
    calls = []
    out, reused = make(tmp_path / "e").build(rows_encoder(calls))
    assert calls == [[5, 4, 3, 2], [1, 0]] and reused == 4
    np.testing.assert_array_equal(out, expected())


def test_changed_chunk_size_starts_over(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        make(tmp_path / "e", chunk=4).build(rows_encoder([], fail_on_call=2))
    calls = []
    out, reused = make(tmp_path / "e", chunk=5).build(rows_encoder(calls))
    assert reused == 0 and len(calls) == 2
    np.testing.assert_array_equal(out, expected())


def test_complete_entry_serves_any_chunk_size(tmp_path):
    make(tmp_path / "e", chunk=4).build(rows_encoder([]))
    np.testing.assert_array_equal(make(tmp_path / "e", chunk=3).load_complete(), expected())


def test_cache_key_depends_on_every_field():
    base = {"model_sha256": "m", "max_seq_length": 256, "prompt": None, "normalize": False, "content_sha256": "c"}
    keys = {cache_key(base)}
    for field, other in [("model_sha256", "m2"), ("max_seq_length", 512), ("prompt", "query: "),
                         ("normalize", True), ("content_sha256", "c2")]:
        keys.add(cache_key({**base, field: other}))
    assert len(keys) == 6
    assert cache_key(dict(reversed(list(base.items())))) == cache_key(base)  # order-independent


def test_content_hash_distinguishes_order_and_boundaries():
    h = content_hash(["a", "b"], ["x", "y"])
    assert h != content_hash(["b", "a"], ["y", "x"])
    assert content_hash(["a"], ["bc"]) != content_hash(["ab"], ["c"])
    assert h == content_hash(["a", "b"], ["x", "y"])


def test_document_texts_join_title_and_text_as_mteb():
    corpus = Corpus(["1", "2", "3"], ["Title", "", " T "], ["body ", " lone body", "x"])
    # MTEB: (title + " " + text).strip()
    assert document_texts(corpus) == ["Title body", "lone body", "T  x"]


def test_length_order_is_longest_first_and_stable():
    assert length_order(["aa", "b", "cccc", "dd"]).tolist() == [2, 0, 3, 1]


def test_cache_root_env_override(monkeypatch, tmp_path):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "root"))
    assert cache_root() == tmp_path / "root"
    assert cache_dir("embeddings") == tmp_path / "root" / "embeddings"
    monkeypatch.delenv("HARNESS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # platformdirs honours it on Linux
    assert cache_root() == tmp_path / "xdg" / "retrieval-harness"

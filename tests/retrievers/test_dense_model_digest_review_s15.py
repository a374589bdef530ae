"""Review (s15, bench cell reuse): the model digest memo must not be fooled by a model file rewritten in place
with its old size and mtime. Fails without the fix."""

from __future__ import annotations

import hashlib
import os
import time

from retrievers.dense.model import folder_digest


def test_a_model_file_rewritten_with_its_old_size_and_mtime_gets_a_new_digest(tmp_path):
    # The memo (<cache>/embeddings/model-digests.json) was keyed by each file's size and mtime only: a
    # checkpoint rewritten in place (same size: same shapes) whose mtime was set back (touch -r, tar, rsync -a)
    # kept the old digest, so the dense retriever's params() (model_sha256), its embedding cache key and a
    # bench cell's fingerprint named the old model: `harness bench` reused the cell (NDCG@3 0.9751 where the
    # edited model gives 0.4299) and even --force read the old embeddings back.
    folder = tmp_path / "model"
    folder.mkdir()
    weights, config = folder / "model.safetensors", folder / "config.json"
    weights.write_bytes(b"A" * 64)
    config.write_text("{}")
    memo = tmp_path / "model-digests.json"
    first = folder_digest(folder, memo)
    # the digest of the folder (see folder_digest): sha256 over "relative path NUL sha256 of content" lines
    expected = hashlib.sha256("".join(f"{p.name}\0{hashlib.sha256(p.read_bytes()).hexdigest()}\n"
                                      for p in (config, weights)).encode()).hexdigest()
    assert first == expected and memo.is_file()

    stamp = os.stat(weights)
    time.sleep(0.05)  # (past the file system's timestamp granularity: the rewrite gets a later ctime)
    with open(weights, "r+b") as handle:  # the same path, inode and size, other content
        handle.write(b"B" * 64)
    os.utime(weights, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # its old mtime, as touch -r sets it
    assert os.stat(weights).st_size == stamp.st_size and os.stat(weights).st_mtime_ns == stamp.st_mtime_ns

    assert folder_digest(folder, memo) == folder_digest(folder) != first

"""Review (s15 final): the cross-encoder's ``model_sha256`` (c6479eb) is remembered across instances and processes
in the dense retriever's memo (``<cache>/embeddings/model-digests.json``), as the dense and sparse retrievers'
model digests are.

Without the memo every new ``CrossEncoderReranker`` (each ``harness run`` of a pipeline, each benchmark cell, a
benchmark's plan) read and hashed the whole model folder in ``params()``, also when its rerank stage or cell was
cached and the model never loaded (2.3 GB for bge-reranker-v2-m3, about 2 s at this machine's 1.2 GB/s sha256).
Expected digest (worked example, :func:`retrievers.dense.model.folder_digest`): sha256 over the lines
``<relative path> NUL <sha256 of the file's content> LF`` of the folder's files in path order. No model is
loaded: ``params()`` reads the folder's files only.
"""

from __future__ import annotations

import hashlib
import os
import time

import retrievers.dense.model as dense_model
from harness.cache import ENV_VAR
from retrievers.rerank.cross_encoder import CrossEncoderReranker


def _expected(folder) -> str:
    files = sorted(p for p in folder.iterdir() if p.is_file())
    return hashlib.sha256("".join(f"{p.name}\0{hashlib.sha256(p.read_bytes()).hexdigest()}\n"
                                  for p in files).encode()).hexdigest()


def test_a_new_cross_encoder_instance_reuses_the_remembered_digest(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "cache"))
    folder = tmp_path / "ce"
    folder.mkdir()
    (folder / "config.json").write_text('{"architectures": ["BertForSequenceClassification"]}')
    weights = folder / "model.safetensors"
    weights.write_bytes(b"A" * 4096)
    first = CrossEncoderReranker(model=str(folder)).params()["model_sha256"]
    assert first == _expected(folder)
    assert (tmp_path / "cache" / "embeddings" / "model-digests.json").is_file()

    hashed = []
    real = dense_model.sha256
    monkeypatch.setattr(dense_model, "sha256", lambda path: hashed.append(path) or real(path))
    # a new instance (a new process, a benchmark's next cell): the folder is unchanged, nothing is read
    assert CrossEncoderReranker(model=str(folder)).params()["model_sha256"] == first
    assert hashed == []  # before the fix: both files hashed again by every new instance

    # the model rewritten in place with its old size and mtime: hashed again, the new digest
    stamp = os.stat(weights)
    time.sleep(0.05)  # (past the file system's timestamp granularity: the rewrite gets a later ctime)
    with open(weights, "r+b") as handle:
        handle.write(b"B" * 4096)
    os.utime(weights, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    second = CrossEncoderReranker(model=str(folder)).params()["model_sha256"]
    assert second == _expected(folder) != first and hashed


def test_a_cross_encoder_path_to_a_file_is_named_as_no_folder(tmp_path):
    # as ModelHandle.resolve names a dense or sparse model path (c6479eb): a path that exists but is a file is
    # "is not a folder"; the cross-encoder said "does not exist" of a file that is there
    import pytest

    pytest.importorskip("sentence_transformers")
    file = tmp_path / "model.safetensors"
    file.write_bytes(b"x")
    with pytest.raises(ValueError, match=rf"^cross-encoder model folder '{file}' is not a folder$"):
        CrossEncoderReranker(model=str(file), device="cpu").load()
    with pytest.raises(ValueError, match=rf"^cross-encoder model folder '{tmp_path / 'none'}' does not exist$"):
        CrossEncoderReranker(model=str(tmp_path / "none"), device="cpu").load()

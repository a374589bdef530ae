"""The Ray encoder's actors check the model folder they load against the driver's digest.

The embedding cache entry is keyed by the sha256 of the driver's model folder; each actor loads the
model from the same path on its own node. A node whose copy holds other files (another checkpoint, or
the folder rewritten after the driver hashed it) had its embeddings cached under the driver's digest,
served to every later run of the driver's model. Now the actor hashes the files it loaded and refuses
a mismatch: one line naming the folder, no part written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import HarnessError
from tests.retrievers.test_dense_ray import (  # noqa: F401 (fixtures)
    CORPUS, FakeEncoder, FakeModel, model_dir, retriever, use_encoder)


class OtherCopyEncoder(FakeEncoder):
    """An actor on a node whose model folder (same path) holds another checkpoint."""

    @staticmethod
    def load_model(job):
        (Path(job.model_folder) / "model.safetensors").write_bytes(b"other weights")
        return FakeModel(job.model_name, Path(job.model_folder))


def test_an_actor_whose_model_folder_differs_from_the_drivers_is_refused(ray_local, model_dir, tmp_path,
                                                                          use_encoder):
    use_encoder(OtherCopyEncoder)
    run = retriever(model_dir, tmp_path / "cache", encoder="ray", ray_workers=1)
    driver_digest = run.model_sha256
    with pytest.raises(HarnessError) as info:
        run.index(CORPUS)
    entry = next((tmp_path / "cache").glob("documents-*"))
    message = str(info.value)
    assert message.startswith(f"Ray encoder failed on chunk 0 of {entry} (5 of 5 chunks failed): loading model "
                              f"'fake': model folder {model_dir} on this node holds other files than the driver "
                              "hashed (sha256 ")
    assert f", {driver_digest[:12]} there)" in message and "\n" not in message
    assert not list(entry.glob("part-*")) and not (entry / "embeddings.npy").exists()


def test_an_actor_with_the_drivers_files_encodes(ray_local, model_dir, tmp_path, use_encoder):
    """The same files (the memo in the shared cache root spares the hash): the encode goes through."""
    use_encoder(FakeEncoder)
    run = retriever(model_dir, tmp_path / "cache", encoder="ray", ray_workers=1)
    run.index(CORPUS)
    assert run.stats()["documents_encoded"] == 40
    assert (tmp_path / "cache" / "model-digests.json").is_file()


def test_an_actor_reads_the_drivers_digest_memo_but_never_writes_it(tmp_path):
    """A node's copy of the model has its own inodes and times: an actor's memo entry replaced the driver's
    (one entry per folder path), and each hashed the model again on its next run. Actors read the memo only
    (``remember=False``)."""
    from retrievers.dense.model import folder_digest

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"weights")
    memo = tmp_path / "model-digests.json"
    digest = folder_digest(folder, memo, remember=False)
    assert not memo.exists()
    assert folder_digest(folder, memo) == digest and memo.is_file()
    before = memo.read_bytes()
    (folder / "model.safetensors").write_bytes(b"weights")  # (same bytes, new times: "another node's copy")
    assert folder_digest(folder, memo, remember=False) == digest
    assert memo.read_bytes() == before  # the driver's entry kept

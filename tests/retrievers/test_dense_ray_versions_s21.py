"""A Ray encode records the library versions of the actors that encoded the rows, not the driver's.

The driver recorded its own versions (computed_with(ENCODER_LIBRARIES)) in the entry's versions.json before
the actors wrote their parts, so a cluster whose nodes ran another transformers or torch (a Ray cluster runs
its own environment) was recorded as the driver's, and a later run reusing the embeddings warned of nothing.
Now each actor returns its process's versions with the chunks it wrote and the driver records those. Here
the actors report a made-up transformers 9.9.9 (an actor class whose ``library_versions`` says so): the
entry must record it, and not the driver's own.
"""

from __future__ import annotations

import json
from importlib.metadata import version

from tests.retrievers.test_dense_ray import CORPUS, FakeEncoder, model_dir, retriever, use_encoder  # noqa: F401

ACTORS = {"sentence-transformers": "7.7.7", "torch": "8.8.8", "transformers": "9.9.9"}


class OtherNodeEncoder(FakeEncoder):
    """The fake encoder on a node whose environment has other library versions."""

    @staticmethod
    def library_versions():
        return dict(ACTORS)


def test_the_entry_records_the_actors_versions(ray_local, model_dir, tmp_path, use_encoder):  # noqa: F811
    assert version("transformers") != "9.9.9"
    use_encoder(OtherNodeEncoder)
    run = retriever(model_dir, tmp_path / "cache", encoder="ray", ray_workers=2)
    run.index(CORPUS)
    entry = next((tmp_path / "cache").glob("documents-*"))
    assert json.loads((entry / "versions.json").read_text()) == {name: [v] for name, v in ACTORS.items()}
    assert run.stats()["documents_versions"] == {name: [v] for name, v in ACTORS.items()}


def test_parts_a_dead_drivers_actors_wrote_are_recorded_with_their_versions(ray_local, model_dir, tmp_path,
                                                                           use_encoder):  # noqa: F811
    # An earlier job's actors wrote chunks 0 and 3, then its driver died before recording their versions
    # (it records them once the actors are done). Each actor writes its versions into the records of the
    # parts it writes, so the job that resumes the entry records them: before, versions.json said
    # "unknown" beside this job's versions for every library.
    from retrievers.dense.cache import EmbeddingCache, cache_key
    from retrievers.dense.texts import content_hash, document_texts, length_order
    from tests.retrievers.test_dense_ray import CHUNK, N_DOCS, fake_encode

    use_encoder(OtherNodeEncoder)
    run = retriever(model_dir, tmp_path / "cache", encoder="ray", ray_workers=2)
    texts = document_texts(CORPUS)
    fields = {"kind": "documents", "model_sha256": run.model_sha256, "max_seq_length": 128, "prompt": None,
              "normalize": False, "content_sha256": content_hash(CORPUS.ids, texts), "rows": N_DOCS}
    entry = EmbeddingCache(tmp_path / "cache" / f"documents-{cache_key(fields)}", N_DOCS, length_order(texts),
                           CHUNK, fields)
    entry.prepare()
    earlier = {"sentence-transformers": "7.7.0", "torch": "8.8.8", "transformers": "9.9.0"}
    for i in (0, 3):  # as ChunkEncoder writes them, on the nodes of the earlier job
        entry.write_part(i, fake_encode([texts[r] for r in entry.chunk_rows(i)]), earlier)
    assert not (entry.folder / "versions.json").exists()
    run.index(CORPUS)
    both = {"sentence-transformers": ["7.7.0", "7.7.7"], "torch": ["8.8.8"], "transformers": ["9.9.0", "9.9.9"]}
    assert json.loads((entry.folder / "versions.json").read_text()) == both
    assert run.stats()["documents_versions"] == both

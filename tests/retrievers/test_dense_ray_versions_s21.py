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

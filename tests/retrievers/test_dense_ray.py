"""Dense encoding sharded over Ray (retrievers/dense/distributed.py), with a fake model (no torch).

The fake encodes a text as counts of its words hashed into 16 buckets (exact small integers, so the
embeddings of a Ray encode and a local encode are bitwise equal). Checked: the actors write the
cache entry a later local run finds complete (a hit, the same run); an interrupted job resumes from
its parts; an actor that dies (os._exit) on one chunk costs only that chunk.
"""

from __future__ import annotations

import json
import os
import zlib
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest

from harness.datasets.corpus import Corpus, Queries
from harness.errors import HarnessError
from retrievers.dense import DenseRetriever
from retrievers.dense import distributed
from retrievers.dense.distributed import ChunkEncoder, plan_workers
from retrievers.dense.model import ModelHandle

N_DOCS, CHUNK = 40, 8  # 5 chunks


def fake_encode(texts, prompt=None):
    out = np.zeros((len(texts), 16), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in ((prompt or "") + text).lower().split():
            out[row, zlib.crc32(word.encode()) % 16] += 1.0
    return out


class FakeModel(ModelHandle):
    def load(self):
        self.device = "cpu"
        return self

    def encode(self, texts, *, prompt, batch_size, normalize, max_seq_length):
        return fake_encode(list(texts), prompt)


class FakeEncoder(ChunkEncoder):
    @staticmethod
    def load_model(job):
        return FakeModel(job.model_name, Path(job.model_folder))


class DieOnceEncoder(FakeEncoder):
    """Kills its own process the first time it is handed chunk 2 (a marker file makes it once)."""

    def encode_chunk(self, chunk, texts):
        marker = Path(self.job.cache_folder).parent / "died-once"
        if chunk == 2 and not marker.exists():
            marker.write_text("x")
            os._exit(1)
        return super().encode_chunk(chunk, texts)


@pytest.fixture
def model_dir(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128}))
    (folder / "model.safetensors").write_bytes(b"fake weights")
    return folder


CORPUS = Corpus(ids=[f"d{i:02d}" for i in range(N_DOCS)], titles=[""] * N_DOCS,
                texts=[f"doc {i} topic{i % 5} " + "filler " * (i % 7) for i in range(N_DOCS)])
QUERIES = Queries(ids=["q1", "q2"], texts=["topic3 filler", "doc 7"])


def retriever(model_dir, cache_dir, **params):
    return DenseRetriever(FakeModel("fake", model_dir), cache_dir=str(cache_dir), cache_chunk_size=CHUNK,
                          progress=False, **params)


@pytest.fixture
def use_encoder(monkeypatch):
    """Make the Ray path use ``cls`` as its actor class (the fake model, maybe dying once)."""
    def use(cls):
        real = distributed.encode_missing
        monkeypatch.setattr(distributed, "encode_missing", lambda *a, **kw: real(*a, **kw, encoder_cls=cls))
    return use


def test_ray_encode_fills_the_cache_a_local_run_hits(ray_local, model_dir, tmp_path, use_encoder):
    use_encoder(FakeEncoder)
    ray_run = retriever(model_dir, tmp_path / "cache", encoder="ray", ray_workers=2)
    ray_run.index(CORPUS)
    stats = ray_run.stats()
    assert (stats["documents_cache"], stats["documents_encoded"], stats["documents_ray_actors"]) == ("miss", 40, 2)
    # the actors encoded the same texts as a local encode would (title + text, each row in place)
    np.testing.assert_array_equal(np.asarray(ray_run._docs), fake_encode([t for t in CORPUS.texts]))

    local = retriever(model_dir, tmp_path / "cache")
    local.index(CORPUS)
    assert local.stats()["documents_cache"] == "hit" and local.stats()["documents_encoded"] == 0
    assert local.search(QUERIES, 5).to_dict() == ray_run.search(QUERIES, 5).to_dict()
    # and a local run with no cache at all ranks identically
    fresh = retriever(model_dir, tmp_path / "other")
    fresh.index(CORPUS)
    assert fresh.stats()["documents_cache"] == "miss"
    assert fresh.search(QUERIES, 5).to_dict() == ray_run.search(QUERIES, 5).to_dict()


def test_ray_encode_resumes_from_existing_parts(ray_local, model_dir, tmp_path, use_encoder):
    use_encoder(FakeEncoder)
    first = retriever(model_dir, tmp_path / "cache", encoder="ray")
    # an interrupted earlier job: meta.json and the parts of chunks 0 and 3 only
    from retrievers.dense.cache import EmbeddingCache, cache_key
    from retrievers.dense.texts import content_hash, document_texts, length_order

    texts = document_texts(CORPUS)
    fields = {"kind": "documents", "model_sha256": first.model_sha256, "max_seq_length": 128, "prompt": None,
              "normalize": False, "content_sha256": content_hash(CORPUS.ids, texts), "rows": N_DOCS}
    order = length_order(texts)
    entry = EmbeddingCache(tmp_path / "cache" / f"documents-{cache_key(fields)}", N_DOCS, order, CHUNK, fields)
    entry.prepare()
    for i in (0, 3):
        entry.write_part(i, fake_encode([texts[r] for r in entry.chunk_rows(i)]))
    first.index(CORPUS)
    stats = first.stats()
    assert (stats["documents_cache"], stats["documents_from_cache"], stats["documents_encoded"]) == ("resumed", 16, 24)
    np.testing.assert_array_equal(np.asarray(first._docs), fake_encode(texts))
    assert not list(entry.folder.glob("part-*")) and entry.load_complete() is not None


def test_a_worker_dying_midway_costs_only_its_chunk(ray_local, model_dir, tmp_path, use_encoder):
    use_encoder(DieOnceEncoder)
    run = retriever(model_dir, tmp_path / "cache", encoder="ray", ray_workers=2)
    run.index(CORPUS)
    assert (tmp_path / "cache" / "died-once").is_file()  # the actor did die once
    np.testing.assert_array_equal(np.asarray(run._docs), fake_encode(list(CORPUS.texts)))
    entry = next((tmp_path / "cache").glob("documents-*"))
    # no stray temp files (devices.json: the kinds of device that encoded it, the actors' cpu; versions.json: the
    # versions of the libraries that encoded it, the actors': this environment's, on a local Ray)
    assert sorted(p.name for p in entry.iterdir()) == ["devices.json", "embeddings.npy", "meta.json", "versions.json"]
    assert run.stats()["documents_devices"] == ["cpu"]
    assert run.stats()["documents_versions"]["transformers"] == [version("transformers")]


def test_encoder_ray_needs_the_cache(model_dir):
    with pytest.raises(ValueError, match="needs cache=true"):
        DenseRetriever(FakeModel("fake", model_dir), encoder="ray", cache=False)
    with pytest.raises(ValueError, match="encoder must be one of local, ray"):
        DenseRetriever(FakeModel("fake", model_dir), encoder="spark")


@pytest.mark.parametrize("device, encoder, cluster, expected", [
    ("cuda", "local", {"CPU": 8}, {"num_gpus": 1}),
    ("cuda:0", "local", {"CPU": 8, "GPU": 2}, {"num_gpus": 1}),
    ("auto", "local", {"CPU": 8, "GPU": 2}, {"num_gpus": 1}),
    ("auto", "local", {"CPU": 8}, {}),
    ("cpu", "local", {"CPU": 8, "GPU": 2}, {}),
    ("cuda", "ray", {"CPU": 8, "GPU": 2}, {"num_cpus": 0}),  # the actors hold the GPUs and CPUs, not the cell
    ("cpu", "ray", {"CPU": 8}, {"num_cpus": 0}),
])
def test_a_dense_cell_asks_for_a_gpu_when_its_model_runs_on_one(model_dir, device, encoder, cluster, expected):
    model = FakeModel("fake", model_dir, device=device)
    assert DenseRetriever(model, encoder=encoder).resources(cluster) == expected


class FakeRay:
    def __init__(self, resources):
        self.resources = resources

    def cluster_resources(self):
        return self.resources


def test_actor_plan():
    assert plan_workers(FakeRay({"CPU": 6.0}), "auto", None) == (6, 0.0, "cpu")
    assert plan_workers(FakeRay({"CPU": 6.0}), "cpu", 2) == (2, 0.0, "cpu")
    assert plan_workers(FakeRay({"CPU": 6.0, "GPU": 4.0}), "auto", None) == (4, 1.0, "cuda")  # one actor per GPU
    assert plan_workers(FakeRay({"CPU": 6.0, "GPU": 4.0}), "cuda", 2) == (2, 1.0, "cuda")
    with pytest.raises(HarnessError, match="asks for GPUs but the Ray cluster has none"):
        plan_workers(FakeRay({"CPU": 6.0}), "cuda", None)


class FailOnChunk3Encoder(FakeEncoder):
    def encode_chunk(self, chunk, texts):
        if chunk == 3:
            raise RuntimeError("CUDA out of memory\n(a second line)")
        return super().encode_chunk(chunk, texts)


class NoModelEncoder(FakeEncoder):
    @staticmethod
    def load_model(job):
        raise OSError(f"no model files in {job.model_folder}")


def test_an_actor_error_is_one_line_naming_the_chunk_and_the_reason(ray_local, model_dir, tmp_path, use_encoder):
    """An exception on an actor reached the user as Ray's own error, whose first line (the one a
    benchmark cell records) held no reason: 'RayTaskError(UserCodeException): ray::MapWorker(...)
    .submit() (pid=..., ...)'. Now one line names the chunk and the reason; the other chunks' parts
    are kept, so a rerun encodes chunk 3 only."""
    use_encoder(FailOnChunk3Encoder)
    run = retriever(model_dir, tmp_path / "cache", encoder="ray", ray_workers=2)
    with pytest.raises(HarnessError) as info:
        run.index(CORPUS)
    entry = next((tmp_path / "cache").glob("documents-*"))
    assert str(info.value) == (f"Ray encoder failed on chunk 3 of {entry} (1 of 5 chunks failed): "
                               "RuntimeError: CUDA out of memory")
    local = retriever(model_dir, tmp_path / "cache")
    local.index(CORPUS)
    assert (local.stats()["documents_from_cache"], local.stats()["documents_encoded"]) == (32, 8)
    np.testing.assert_array_equal(np.asarray(local._docs), fake_encode(list(CORPUS.texts)))


def test_a_model_that_does_not_load_on_the_actors_is_one_line(ray_local, model_dir, tmp_path, use_encoder):
    """(Ray's error began 'ActorDiedError: The actor died because of an error raised in its creation
    task, ray::MapWorker(...).__init__() (pid=...)': the OSError only on a later line.)"""
    use_encoder(NoModelEncoder)
    with pytest.raises(HarnessError) as info:
        retriever(model_dir, tmp_path / "cache", encoder="ray", ray_workers=1).index(CORPUS)
    entry = next((tmp_path / "cache").glob("documents-*"))
    assert str(info.value) == (f"Ray encoder failed on chunk 0 of {entry} (5 of 5 chunks failed): "
                               f"loading model 'fake': OSError: no model files in {model_dir}")


def test_a_ray_filled_entry_equals_a_local_one_byte_for_byte(ray_local, model_dir, tmp_path, use_encoder):
    """The entry's files, meta.json included: the Ray path left ``"dim": null`` in meta.json (a local
    encode records the dimension with its first part), so the two entries differed."""
    use_encoder(FakeEncoder)
    retriever(model_dir, tmp_path / "ray", encoder="ray", ray_workers=1).index(CORPUS)
    retriever(model_dir, tmp_path / "local").index(CORPUS)
    on_ray, local = (next((tmp_path / name).glob("documents-*")) for name in ("ray", "local"))
    assert on_ray.name == local.name
    assert json.loads((on_ray / "meta.json").read_text())["dim"] == 16  # fake_encode's 16 buckets
    for name in ("meta.json", "embeddings.npy"):
        assert (on_ray / name).read_bytes() == (local / name).read_bytes()


def test_stats_describe_the_latest_corpus_only(ray_local, model_dir, tmp_path, use_encoder):
    """The local bench executor reuses one retriever across datasets: after a Ray encode of corpus A
    (2 actors), indexing corpus B from the cache recorded documents_ray_actors 2 in B's
    retriever_stats, though no actor ran for B. Expected: B's stats hold a cache hit, 0 documents
    encoded, and no Ray actors."""
    use_encoder(FakeEncoder)
    other = Corpus(ids=[f"b{i}" for i in range(10)], titles=[""] * 10, texts=[f"other {i}" for i in range(10)])
    retriever(model_dir, tmp_path / "cache").index(other)  # B cached by a local run
    shared = retriever(model_dir, tmp_path / "cache", encoder="ray", ray_workers=2)
    shared.index(CORPUS)
    assert shared.stats()["documents_ray_actors"] == 2
    shared.index(other)
    stats = shared.stats()
    assert (stats["documents"], stats["documents_cache"], stats["documents_encoded"]) == (10, "hit", 0)
    assert "documents_ray_actors" not in stats

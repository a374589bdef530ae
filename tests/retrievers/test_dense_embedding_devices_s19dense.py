"""The embedding cache records which kinds of device encoded an entry (devices.json), and the dense
retriever's and the bi-encoder's stats report them (``documents_devices`` / ``queries_devices``): the
device is in no embedding key (docs/dense.md), so a ``device=cuda`` run can be served embeddings a
cpu run computed, and its numbers are then the cpu's. Before, nothing in metrics.json said so
(``device: not loaded`` only). Expected values are worked by hand: the only device that ever encoded
here is the CPU (no GPU is lent; a cuda run whose embeddings are all cached loads no model)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")

from harness.datasets.corpus import Corpus, Queries  # noqa: E402
from harness.run import Run  # noqa: E402
from retrievers.dense import DenseRetriever  # noqa: E402
from retrievers.dense.cache import EmbeddingCache  # noqa: E402
from retrievers.rerank.bi_encoder import BiEncoderReranker  # noqa: E402
from tests.retrievers.tiny_models import sentence_transformer  # noqa: E402

CORPUS = Corpus(ids=[f"d{i}" for i in range(6)], titles=[""] * 6,
                texts=["abc def", "xyz", "abc abc", "q r s", "k l", "m n o p"])
QUERIES = Queries(["q1", "q2"], ["abc", "xyz"])


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    return sentence_transformer(tmp_path_factory.mktemp("model"))


def _run(model: Path, cache_dir: Path, device: str, **params):
    r = DenseRetriever(model=str(model), device=device, cache_dir=str(cache_dir), cache_chunk_size=2, **params)
    r.index(CORPUS)
    return r, r.search(QUERIES, 3).to_dict()


def test_cuda_run_served_cpu_embeddings_says_so(tiny_model, tmp_path):
    cpu, cpu_run = _run(tiny_model, tmp_path, "cpu")
    stats = cpu.stats()
    assert (stats["device"], stats["documents_cache"], stats["queries_cache"]) == ("cpu", "miss", "miss")
    assert stats["documents_devices"] == ["cpu"] and stats["queries_devices"] == ["cpu"]
    # the entry records it, beside meta.json
    entries = sorted(f for f in tmp_path.iterdir() if f.is_dir() and f.name.startswith(("documents-", "queries-")))
    assert len(entries) == 2
    assert [EmbeddingCache(f, 0, np.arange(0), 2, {}).devices() for f in entries] == [["cpu"], ["cpu"]]
    for device in ("cuda", "cuda:1", "auto"):  # every embedding cached: no model loaded, no GPU needed
        other, run = _run(tiny_model, tmp_path, device)
        stats = other.stats()
        assert run == cpu_run
        assert (stats["device"], stats["documents_cache"], stats["queries_cache"]) == ("not loaded", "hit", "hit")
        assert stats["documents_devices"] == ["cpu"] and stats["queries_devices"] == ["cpu"]


def test_uncached_run_reports_its_own_device(tiny_model, tmp_path):
    r, _ = _run(tiny_model, tmp_path, "cpu", cache=False)
    stats = r.stats()
    assert stats["documents_cache"] == "off"
    assert stats["documents_devices"] == ["cpu"] and stats["queries_devices"] == ["cpu"]


def test_entry_written_before_devices_were_recorded(tiny_model, tmp_path):
    """A complete entry with no devices.json is reported as not recorded (null); parts with no record
    that an encode resumes count as ``unknown`` beside the device that finishes it."""
    _run(tiny_model, tmp_path, "cpu")
    for record in tmp_path.glob("*/devices.json"):
        record.unlink()
    r, _ = _run(tiny_model, tmp_path, "cuda")
    assert r.stats()["documents_devices"] is None and r.stats()["documents_cache"] == "hit"

    entry = EmbeddingCache(tmp_path / "partial", 4, np.arange(4), 2, {"k": 1})
    entry.prepare()
    entry.write_part(0, np.ones((2, 3), dtype=np.float32))  # an older version's part: no record
    entry.add_device("cpu")
    assert entry.devices() == ["cpu", "unknown"]
    fresh = EmbeddingCache(tmp_path / "fresh", 4, np.arange(4), 2, {"k": 2})
    fresh.prepare()
    fresh.add_device("cuda")
    fresh.add_device("cuda")
    assert fresh.devices() == ["cuda"]


def test_bi_encoder_reports_the_devices_of_the_embeddings_it_scored(tiny_model, tmp_path):
    _run(tiny_model, tmp_path, "cpu")  # the dense run encodes corpus and queries on the CPU
    reranker = BiEncoderReranker(model=str(tiny_model), device="cuda", cache_dir=str(tmp_path), cache_chunk_size=2)
    first = Run.from_dict({"q1": {"d0": 2.0, "d1": 1.0, "d2": 0.5}, "q2": {"d1": 1.0, "d3": 0.5}})
    reranker.rerank(first, QUERIES, CORPUS, 3)
    stats = reranker.stats()
    assert (stats["device"], stats["documents_cache"], stats["queries_cache"]) == ("not loaded", "hit", "hit")
    assert stats["documents_devices"] == ["cpu"] and stats["queries_devices"] == ["cpu"]

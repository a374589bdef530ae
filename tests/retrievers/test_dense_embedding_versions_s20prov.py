"""The embedding cache records the versions of the libraries that encoded an entry (versions.json), the dense
retriever's stats report them (``documents_versions`` / ``queries_versions``), and a run that reuses an entry
encoded under other versions says so in one warning line (metrics.json ``warnings``, printed by ``harness run``).

No library version is in an embedding key (decided: an upgrade would encode everything again; the cache's
FORMAT_VERSION guards what an entry holds), so after ``pip install -U transformers`` a run reused the old
version's embeddings while its metrics.json named only the new version: nothing said what computed them.
The versions are faked by replacing ``harness.versions.versions`` (the one lookup every record and check reads);
the expected values are the fake ones, worked by hand. Tiny model built at test time (tests/retrievers/tiny_models.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")

import harness.versions  # noqa: E402
from harness.datasets import Dataset  # noqa: E402
from harness.datasets.corpus import Corpus, Queries  # noqa: E402
from harness.evaluation import Evaluator  # noqa: E402
from harness.experiment import run_experiment  # noqa: E402
from harness.qrels import Qrels  # noqa: E402
from retrievers.dense import DenseRetriever  # noqa: E402
from retrievers.dense.cache import EmbeddingCache  # noqa: E402
from tests.retrievers.tiny_models import sentence_transformer  # noqa: E402

CORPUS = Corpus(ids=[f"d{i}" for i in range(6)], titles=[""] * 6,
                texts=["abc def", "xyz", "abc abc", "q r s", "k l", "m n o p"])
QUERIES = Queries(["q1", "q2"], ["abc", "xyz"])
REAL = harness.versions.versions()


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    return sentence_transformer(tmp_path_factory.mktemp("model"))


def _fake(monkeypatch, transformers: str, torch: str = "2.0") -> None:
    fake = {**REAL, "sentence-transformers": "3.0", "torch": torch, "transformers": transformers}
    monkeypatch.setattr(harness.versions, "versions", lambda: dict(fake))


def _experiment(model: Path, cache_dir: Path):
    dataset = Dataset(name="tiny", corpus=CORPUS, queries=QUERIES,
                      qrels=Qrels.from_dict({"q1": {"d0": 1}, "q2": {"d1": 1}}), split="test")
    retriever = DenseRetriever(model=str(model), device="cpu", cache_dir=str(cache_dir), cache_chunk_size=2,
                               progress=False)
    exp = run_experiment(dataset, retriever, Evaluator(["NDCG@3"]), [3])
    return exp.document.retriever_stats, [w for w in exp.document.warnings or () if "library versions" in w]


def test_entry_encoded_under_1_0_reused_under_2_0_reports_1_0_and_warns_once(tiny_model, tmp_path, monkeypatch):
    _fake(monkeypatch, "1.0")
    stats, warned = _experiment(tiny_model, tmp_path)
    recorded = {"sentence-transformers": ["3.0"], "torch": ["2.0"], "transformers": ["1.0"]}
    assert (stats["documents_cache"], stats["queries_cache"]) == ("miss", "miss")
    assert stats["documents_versions"] == recorded and stats["queries_versions"] == recorded
    assert warned == []
    entries = sorted(f for f in tmp_path.iterdir() if f.is_dir() and f.name.startswith(("documents-", "queries-")))
    assert [json.loads((f / "versions.json").read_text()) for f in entries] == [recorded, recorded]

    _fake(monkeypatch, "2.0")  # pip install -U transformers
    stats, warned = _experiment(tiny_model, tmp_path)
    assert (stats["documents_cache"], stats["queries_cache"]) == ("hit", "hit")
    assert stats["documents_versions"] == recorded and stats["queries_versions"] == recorded  # 1.0, not 2.0
    assert len(warned) == 1 and "\n" not in warned[0]
    assert "documents_versions transformers 1.0 (this process: 2.0)" in warned[0]
    assert "queries_versions transformers 1.0 (this process: 2.0)" in warned[0]
    assert "torch" not in warned[0]  # (the same 2.0 both times)


def test_entry_reused_under_the_same_versions_gives_no_warning(tiny_model, tmp_path, monkeypatch):
    _fake(monkeypatch, "1.0")
    _experiment(tiny_model, tmp_path)
    stats, warned = _experiment(tiny_model, tmp_path)
    assert stats["documents_cache"] == "hit" and stats["documents_versions"]["transformers"] == ["1.0"]
    assert warned == []


def test_entry_written_before_versions_were_recorded_reports_null(tiny_model, tmp_path, monkeypatch):
    _fake(monkeypatch, "1.0")
    _experiment(tiny_model, tmp_path)
    for record in tmp_path.glob("*/versions.json"):
        record.unlink()  # as the entries of an older harness
    _fake(monkeypatch, "2.0")
    stats, warned = _experiment(tiny_model, tmp_path)
    assert stats["documents_cache"] == "hit"
    assert stats["documents_versions"] is None and stats["queries_versions"] is None
    assert warned == []


def test_resumed_parts_of_other_versions_are_all_listed(tmp_path, monkeypatch):
    """Parts without a record (an older harness's) count as ``unknown``; a resume under another version
    lists both, as devices.json lists both devices."""
    entry = EmbeddingCache(tmp_path / "partial", 4, np.arange(4), 2, {"k": 1})
    entry.prepare()
    entry.write_part(0, np.ones((2, 3), dtype=np.float32))
    entry.add_versions({"transformers": "2.0"})
    assert entry.versions() == {"transformers": ["2.0", "unknown"]}
    entry.add_versions({"transformers": "1.0"})
    assert entry.versions() == {"transformers": ["1.0", "2.0", "unknown"]}
    _fake(monkeypatch, "2.0")
    # (its rows were encoded by both: both are named)
    assert harness.versions.version_changes(entry.versions()) == ["transformers 1.0, 2.0 (this process: 2.0)"]
    fresh = EmbeddingCache(tmp_path / "fresh", 4, np.arange(4), 2, {"k": 2})
    fresh.prepare()
    fresh.add_versions({"transformers": "2.0"})
    assert fresh.versions() == {"transformers": ["2.0"]}
    assert harness.versions.version_changes(fresh.versions()) == []


def test_uncached_run_reports_its_own_versions(tiny_model, tmp_path, monkeypatch):
    _fake(monkeypatch, "2.0")
    r = DenseRetriever(model=str(tiny_model), device="cpu", cache=False, progress=False)
    r.index(CORPUS)
    assert r.stats()["documents_versions"] == {"sentence-transformers": ["3.0"], "torch": ["2.0"],
                                               "transformers": ["2.0"]}


def test_harness_run_prints_the_warning_once(tiny_model, tmp_path):
    """From the command line: an entry whose versions.json names transformers 1.0 (as one written before an
    upgrade) is reused, and ``harness run`` prints one warning line naming both versions."""
    ds = tmp_path / "ds"
    (ds / "qrels").mkdir(parents=True)
    (ds / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n"
                                             for i, t in zip(CORPUS.ids, CORPUS.texts)))
    (ds / "queries.jsonl").write_text('{"_id": "q1", "text": "abc"}\n')
    (ds / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td0\t1\n")
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache"), "HARNESS_PROGRESS": "0"}
    command = [sys.executable, "-m", "harness", "run", "-d", str(ds), "-r", "dense", "-p", f"model={tiny_model}",
               "-p", "device=cpu", "--k", "3", "-o", str(tmp_path / "out")]
    first = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    assert "library versions" not in first.stderr
    records = sorted((tmp_path / "cache" / "embeddings").glob("documents-*/versions.json"))
    assert len(records) == 1
    now = REAL["transformers"]
    records[0].write_text(json.dumps({**json.loads(records[0].read_text()), "transformers": ["1.0"]}))
    second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    lines = [line for line in second.stderr.splitlines() if "library versions" in line]
    assert lines == [f"warning: retriever_stats: cached work computed under other library versions was reused "
                     f"(documents_versions transformers 1.0 (this process: {now})): versions are in no cache key; "
                     "give the retriever a cache_dir of its own (or cache=false) to compute it again"]
    metrics = json.loads((tmp_path / "out" / "ds" / "dense" / "metrics.json").read_text())
    assert metrics["retriever_stats"]["documents_versions"]["transformers"] == ["1.0"]
    assert metrics["versions"]["transformers"] == now


def test_faiss_index_built_under_1_0_reused_under_2_0_reports_1_0_and_warns_once(tiny_model, tmp_path,
                                                                                monkeypatch):
    """The faiss index file beside an embedding entry (keyed by factory and score only) records the faiss-cpu
    version that built it; ``faiss_versions`` reports it, null for an index written before."""
    pytest.importorskip("faiss", reason="faiss-cpu not installed")
    fake = {**REAL, "sentence-transformers": "3.0", "torch": "2.0", "transformers": "1.0"}
    dataset = Dataset(name="tiny", corpus=CORPUS, queries=QUERIES,
                      qrels=Qrels.from_dict({"q1": {"d0": 1}, "q2": {"d1": 1}}), split="test")

    def experiment(faiss_version: str):
        monkeypatch.setattr(harness.versions, "versions", lambda: {**fake, "faiss-cpu": faiss_version})
        retriever = DenseRetriever(model=str(tiny_model), device="cpu", cache_dir=str(tmp_path), cache_chunk_size=2,
                                   progress=False, index="faiss", faiss_factory="Flat")
        exp = run_experiment(dataset, retriever, Evaluator(["NDCG@3"]), [3])
        return exp.document.retriever_stats, [w for w in exp.document.warnings or () if "library versions" in w]

    stats, warned = experiment("1.0")
    assert stats["faiss_index"]["cache"] == "miss" and stats["faiss_versions"] == {"faiss-cpu": "1.0"}
    assert warned == []
    stats, warned = experiment("2.0")
    assert stats["faiss_index"]["cache"] == "hit" and stats["faiss_versions"] == {"faiss-cpu": "1.0"}
    assert len(warned) == 1 and "faiss_versions faiss-cpu 1.0 (this process: 2.0)" in warned[0]
    (record,) = tmp_path.glob("documents-*/faiss-*.index.json")
    record.write_text(json.dumps({k: v for k, v in json.loads(record.read_text()).items() if k != "versions"}))
    stats, warned = experiment("2.0")
    assert stats["faiss_index"]["cache"] == "hit" and stats["faiss_versions"] is None and warned == []

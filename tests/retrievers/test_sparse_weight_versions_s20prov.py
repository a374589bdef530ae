"""The learned sparse retriever's document-weight cache records the versions of the libraries that encoded an
entry (versions.json, as the embedding cache), its stats report them (``documents_versions``), and a run that
reuses an entry encoded under other versions says so in one warning line (metrics.json ``warnings``).

No library version is in the entry's key (an upgrade would encode the corpus again), so after
``pip install -U transformers`` a run reused the old version's weights while metrics.json named only the new
one. Versions are faked by replacing ``harness.versions.versions``; the expected values are the fake ones.
Tiny SPLADE model built at test time (tests/retrievers/test_sparse_encoder.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("sentence_transformers.sparse_encoder")

import harness.versions  # noqa: E402
from harness.datasets import Dataset  # noqa: E402
from harness.datasets.corpus import Corpus, Queries  # noqa: E402
from harness.evaluation import Evaluator  # noqa: E402
from harness.experiment import run_experiment  # noqa: E402
from harness.qrels import Qrels  # noqa: E402
from retrievers.sparse.retriever import SparseRetriever  # noqa: E402
from tests.retrievers.test_sparse_encoder import WORDS, tiny_model  # noqa: E402,F401  (fixture)

REAL = harness.versions.versions()
TEXTS = [" ".join(WORDS[5 + i:9 + i]) for i in range(6)]
CORPUS = Corpus(ids=[f"d{i}" for i in range(6)], titles=[""] * 6, texts=TEXTS)
QUERIES = Queries(["q1", "q2"], [TEXTS[0], TEXTS[3]])


def _fake(monkeypatch, transformers: str) -> None:
    fake = {**REAL, "sentence-transformers": "3.0", "torch": "2.0", "transformers": transformers}
    monkeypatch.setattr(harness.versions, "versions", lambda: dict(fake))


def _experiment(model, cache_dir, **params):
    dataset = Dataset(name="tiny", corpus=CORPUS, queries=QUERIES, split="test",
                      qrels=Qrels.from_dict({"q1": {"d0": 1}, "q2": {"d3": 1}}))
    retriever = SparseRetriever(model=str(model), device="cpu", cache_dir=str(cache_dir), cache_chunk_size=2,
                                **params)
    exp = run_experiment(dataset, retriever, Evaluator(["NDCG@3"]), [3])
    return exp.document.retriever_stats, [w for w in exp.document.warnings or () if "library versions" in w]


def test_weights_encoded_under_1_0_reused_under_2_0_report_1_0_and_warn_once(tiny_model, tmp_path,  # noqa: F811
                                                                            monkeypatch):
    _fake(monkeypatch, "1.0")
    stats, warned = _experiment(tiny_model, tmp_path)
    recorded = {"sentence-transformers": ["3.0"], "torch": ["2.0"], "transformers": ["1.0"]}
    assert stats["cache"] == "built" and stats["documents_versions"] == recorded and warned == []
    _fake(monkeypatch, "2.0")
    stats, warned = _experiment(tiny_model, tmp_path)
    assert stats["cache"] == "hit" and stats["documents_versions"] == recorded
    assert len(warned) == 1 and "documents_versions transformers 1.0 (this process: 2.0)" in warned[0]
    _fake(monkeypatch, "1.0")
    stats, warned = _experiment(tiny_model, tmp_path)
    assert stats["cache"] == "hit" and warned == []


def test_entry_written_before_versions_were_recorded_reports_null(tiny_model, tmp_path, monkeypatch):  # noqa: F811
    _fake(monkeypatch, "1.0")
    _experiment(tiny_model, tmp_path)
    for record in tmp_path.glob("*/versions.json"):
        record.unlink()
    _fake(monkeypatch, "2.0")
    stats, warned = _experiment(tiny_model, tmp_path)
    assert stats["cache"] == "hit" and stats["documents_versions"] is None and warned == []


def test_uncached_weights_report_this_process(tiny_model, tmp_path, monkeypatch):  # noqa: F811
    _fake(monkeypatch, "2.0")
    stats, warned = _experiment(tiny_model, tmp_path, cache=False)
    assert stats["cache"] == "off" and stats["documents_versions"]["transformers"] == ["2.0"] and warned == []

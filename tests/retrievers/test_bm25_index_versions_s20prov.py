"""A BM25 index cache entry records the versions of the libraries that built it (manifest.json ``versions``:
the harness, numpy, regex with the standard tokenizer, PyStemmer with one of its stemmers), the retriever's
stats report them (``index_versions``), and a run that reuses an entry built under other versions says so in
one warning line (metrics.json ``warnings``, printed by ``harness run``).

No library version is in the index key (decided: an upgrade would rebuild every index; FORMAT_VERSION and
ANALYSIS_VERSION guard what an entry holds), so after ``pip install -U PyStemmer`` a run reused the index the
old stemmer built while metrics.json named only the new version. Versions are faked by replacing
``harness.versions.versions``; the expected values are the fake ones, worked by hand."""

from __future__ import annotations

import json

import harness.versions
from harness.datasets import Dataset
from harness.datasets.corpus import Corpus, Queries
from harness.evaluation import Evaluator
from harness.experiment import run_experiment
from harness.qrels import Qrels
from retrievers.bm25 import BM25Retriever

REAL = harness.versions.versions()
CORPUS = Corpus(ids=["d0", "d1", "d2"], titles=["", "", ""],
                texts=["running runners run", "the cat sat", "walking walkers walked"])
QUERIES = Queries(["q1", "q2"], ["runner", "walk"])


def _fake(monkeypatch, stemmer: str, harness_version: str = "0.1.0") -> None:
    fake = {**REAL, "PyStemmer": stemmer, "retrieval-harness": harness_version, "numpy": "2.0", "regex": "2024.1"}
    monkeypatch.setattr(harness.versions, "versions", lambda: dict(fake))


def _experiment(cache_dir, stemmer: str = "english"):
    dataset = Dataset(name="tiny", corpus=CORPUS, queries=QUERIES,
                      qrels=Qrels.from_dict({"q1": {"d0": 1}, "q2": {"d2": 1}}), split="test")
    exp = run_experiment(dataset, BM25Retriever(stemmer=stemmer, cache_dir=str(cache_dir)), Evaluator(["NDCG@3"]), [3])
    return exp.document.retriever_stats, [w for w in exp.document.warnings or () if "library versions" in w]


def test_index_built_under_pystemmer_1_reused_under_2_reports_1_and_warns_once(tmp_path, monkeypatch):
    _fake(monkeypatch, "1.0")
    stats, warned = _experiment(tmp_path)
    built = {"retrieval-harness": "0.1.0", "numpy": "2.0", "regex": "2024.1", "PyStemmer": "1.0"}
    assert stats["cache"] == "built" and stats["index_versions"] == built and warned == []
    (manifest,) = tmp_path.glob("bm25/*/manifest.json")
    assert json.loads(manifest.read_text())["versions"] == built

    _fake(monkeypatch, "2.0")  # pip install -U PyStemmer
    stats, warned = _experiment(tmp_path)
    assert stats["cache"] == "hit" and stats["index_versions"] == built  # 1.0, not 2.0
    assert warned == ["retriever_stats: cached work computed under other library versions was reused "
                      "(index_versions PyStemmer 1.0 (this process: 2.0)): versions are in no cache key; "
                      "give the retriever a cache_dir of its own (or cache=false) to compute it again"]


def test_index_reused_under_the_same_versions_gives_no_warning(tmp_path, monkeypatch):
    _fake(monkeypatch, "1.0")
    _experiment(tmp_path)
    stats, warned = _experiment(tmp_path)
    assert stats["cache"] == "hit" and stats["index_versions"]["PyStemmer"] == "1.0" and warned == []


def test_lucene_porter_records_no_pystemmer(tmp_path, monkeypatch):
    """The default stemmer is the harness's own Lucene porter: PyStemmer builds nothing there, so its version
    is not recorded, and an upgrade of it warns of nothing."""
    _fake(monkeypatch, "1.0")
    stats, _ = _experiment(tmp_path, stemmer="porter")
    assert stats["index_versions"] == {"retrieval-harness": "0.1.0", "numpy": "2.0", "regex": "2024.1"}
    _fake(monkeypatch, "2.0")
    stats, warned = _experiment(tmp_path, stemmer="porter")
    assert stats["cache"] == "hit" and warned == []


def test_index_written_before_versions_were_recorded_reports_null(tmp_path, monkeypatch):
    _fake(monkeypatch, "1.0")
    _experiment(tmp_path)
    (manifest,) = tmp_path.glob("bm25/*/manifest.json")
    record = json.loads(manifest.read_text())
    del record["versions"]  # as an older harness wrote it
    manifest.write_text(json.dumps(record))
    _fake(monkeypatch, "2.0")
    stats, warned = _experiment(tmp_path)
    assert stats["cache"] == "hit" and stats["index_versions"] is None and warned == []


def test_uncached_index_reports_this_process(tmp_path, monkeypatch):
    _fake(monkeypatch, "2.0")
    r = BM25Retriever(stemmer="english", cache=False)
    r.index(CORPUS)
    assert r.stats()["index_versions"]["PyStemmer"] == "2.0"

"""A pipeline stage's cached run records the versions of the process that computed it (``stages[].computed_with``)
and, through the component's stats, of the libraries that computed its numbers (a cross-encoder's
``scores_versions``: sentence-transformers, transformers, torch); a run served the stage from the cache under
other versions of those says so in one warning line per stage (metrics.json ``warnings``).

No library version is in a stage key (decided: an upgrade would compute every stage again; RUNS_VERSION guards
the harness's code), so after ``pip install -U transformers`` a pipeline reused the cross-encoder scores of the
old version while metrics.json named only the new one. Versions are faked by replacing
``harness.versions.versions``; the expected values are the fake ones, worked by hand. Tiny cross-encoder built
at test time (tests/retrievers/test_rerank_cross_encoder.py)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("sentence_transformers")

import harness.versions  # noqa: E402
from harness.datasets import Dataset  # noqa: E402
from harness.evaluation import Evaluator  # noqa: E402
from harness.pipeline import StageCache, parse_pipeline, run_pipeline  # noqa: E402
from harness.qrels import Qrels  # noqa: E402
from tests.retrievers.test_rerank_cross_encoder import CORPUS, QUERIES, tiny_model  # noqa: E402,F401

REAL = harness.versions.versions()


def _fake(monkeypatch, transformers: str) -> None:
    fake = {**REAL, "sentence-transformers": "3.0", "torch": "2.0", "transformers": transformers}
    monkeypatch.setattr(harness.versions, "versions", lambda: dict(fake))


def _pipeline(tmp_path, model):
    spec = parse_pipeline({"stages": [
        {"name": "bm25", "type": "retrieve", "retriever": "bm25", "params": {"cache_dir": str(tmp_path / "bm25")}},
        {"name": "ce", "type": "rerank", "input": "bm25", "reranker": "cross-encoder",
         "params": {"model": str(model), "device": "cpu"}, "depth": 3}]}, "p.toml", check_components=False)
    dataset = Dataset(name="tiny", corpus=CORPUS, queries=QUERIES, split="test",
                      qrels=Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d3": 1}, "q3": {"d6": 1}}))
    exp, outcomes = run_pipeline(dataset, spec, Evaluator(["NDCG@3"]), [3], cache=StageCache(tmp_path / "stages"))
    stages = {record["name"]: record for record in exp.document.stages}
    return stages, [w for w in exp.document.warnings or () if "library versions" in w]


def test_stage_scored_under_1_0_served_under_2_0_reports_1_0_and_warns_once(tiny_model, tmp_path,  # noqa: F811
                                                                            monkeypatch):
    _fake(monkeypatch, "1.0")
    stages, warned = _pipeline(tmp_path, tiny_model)
    scored = {"sentence-transformers": "3.0", "transformers": "1.0", "torch": "2.0"}
    assert stages["ce"]["cache"] == "miss" and stages["ce"]["stats"]["scores_versions"] == scored
    assert stages["ce"]["computed_with"]["transformers"] == "1.0" and warned == []

    _fake(monkeypatch, "2.0")  # pip install -U transformers
    stages, warned = _pipeline(tmp_path, tiny_model)
    assert (stages["bm25"]["cache"], stages["ce"]["cache"]) == ("hit", "hit")
    assert stages["ce"]["stats"]["scores_versions"] == scored  # 1.0, not 2.0
    assert stages["ce"]["computed_with"]["transformers"] == "1.0"
    assert warned == ["stage 'ce': cached work computed under other library versions was reused (scores_versions "
                      "transformers 1.0 (this process: 2.0)): versions are in no cache key; use a fresh cache root "
                      "(HARNESS_CACHE_DIR; and a fresh cache_dir where the stage names one) to compute it again"]


def test_stage_served_under_the_same_versions_gives_no_warning(tiny_model, tmp_path, monkeypatch):  # noqa: F811
    _fake(monkeypatch, "1.0")
    _pipeline(tmp_path, tiny_model)
    stages, warned = _pipeline(tmp_path, tiny_model)
    assert stages["ce"]["cache"] == "hit" and stages["ce"]["stats"]["scores_versions"]["transformers"] == "1.0"
    assert warned == []


def test_stage_stored_before_versions_were_recorded_reports_null(tiny_model, tmp_path, monkeypatch):  # noqa: F811
    _fake(monkeypatch, "1.0")
    _pipeline(tmp_path, tiny_model)
    for path in (tmp_path / "stages").glob("*/*.json"):  # as an older harness stored them
        meta = json.loads(path.read_text())
        meta["info"].pop("computed_with")
        meta["info"].get("stats", {}).pop("scores_versions", None)
        meta["info"].get("stats", {}).pop("index_versions", None)
        path.write_text(json.dumps(meta))
    _fake(monkeypatch, "2.0")
    stages, warned = _pipeline(tmp_path, tiny_model)
    assert stages["ce"]["cache"] == "hit" and stages["ce"]["computed_with"] is None
    assert "scores_versions" not in stages["ce"]["stats"] and warned == []

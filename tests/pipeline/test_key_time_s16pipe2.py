"""The time spent on a stage's cache key (hashing the model folder or run file its ``params()`` name) is in
its timings (``key_s``) and in the result's ``timings.stages_s``.

A stage's key holds its component's resolved ``params()``: the run-file retriever's sha256 of its file, a
model's checksum of its folder (seconds for a 2 GB model). It was computed outside every timed region: a
cache hit recorded only its load (``cache_load_s``), and ``stages_s``, "the time this run spent on its
stages" (docs/pipelines.md), left it out. Timed here on a clock that moves only inside ``params()``
(``tests.pipeline.fakes.Clock``: 5 s a call, nothing else moves it), so the expected values are exact
(worked example):

* a miss computes the key twice (the lookup, then again from what the run read: docs/pipelines.md):
  ``key_s`` = 2 x 5 = 10; index, search and evaluation take 0 on that clock, so ``stages_s`` = 10;
* a hit computes it once: ``key_s`` = 5, ``cache_load_s`` = 0, ``stages_s`` = 5 (a hit counts its key and
  its load, not the recorded compute times of the run that made it).
"""

from __future__ import annotations

import json
import types

from harness.datasets import load_dataset
from harness.evaluation import Evaluator
from harness.pipeline import StageCache, parse_pipeline, run_pipeline
from harness.pipeline import run as pipeline_run
from tests.pipeline.fakes import write_three_docs, Clock


def _dataset(tmp_path):
    ds = write_three_docs(tmp_path)
    return load_dataset(str(ds), "test")


def test_key_time_is_in_the_stage_timings_and_stages_s(tmp_path, monkeypatch):
    (tmp_path / "a.trec").write_text("q1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq2 Q0 d2 1 1.0 a\n")
    pipeline = parse_pipeline({"name": "p", "stages": [
        {"name": "rf", "type": "retrieve", "retriever": "tests.pipeline.fakes:SlowKeyRunFile",
         "params": {"path": str(tmp_path / "a.trec")}},
        {"name": "rf2", "type": "retrieve", "retriever": "run-file", "params": {"path": str(tmp_path / "a.trec")},
         "depth": 1},
        {"name": "f", "type": "fuse", "inputs": ["rf", "rf2"]}]}, "p.toml")
    monkeypatch.setattr(pipeline_run, "time", types.SimpleNamespace(perf_counter=Clock.perf_counter))
    dataset, cache = _dataset(tmp_path), StageCache(tmp_path / "cache")
    for status, key_s in (("miss", 10.0), ("hit", 5.0)):
        exp, outcomes = run_pipeline(dataset, pipeline, Evaluator(["NDCG@10"]), [10], cache=cache,
                                     output_dir=tmp_path / status)
        timings = {o.stage.name: o.timings for o in outcomes}
        assert [o.status for o in outcomes] == [status] * 3
        assert timings["rf"]["key_s"] == key_s
        assert timings["rf2"]["key_s"] == timings["f"]["key_s"] == 0.0  # (their params() take no time here)
        if status == "hit":
            assert timings["rf"]["cache_load_s"] == 0.0
        assert exp.document.timings["stages_s"] == key_s
        written = json.loads((tmp_path / status / "metrics.json").read_text())
        assert written["stages"][0]["timings"]["key_s"] == key_s
        assert written["timings"]["stages_s"] == key_s
    stored = json.loads(next((tmp_path / "cache").rglob("*.json")).read_text())
    assert "key_s" not in stored["timings"]  # (this run's: a hit records its own, not the computing run's)

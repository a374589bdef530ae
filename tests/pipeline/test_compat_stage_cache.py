"""Pipeline stage runs cached by earlier versions of this release, read by this one
(harness/pipeline/cache.py).

A stage's key named what its run is computed from but nothing of the code computing it, and no version
at all, so a run cached before a fix that moved it was a hit after it: the harness of 1f129d1 ran
rank-bm25 with k1 = 0 with NaN scores for every document lacking a query term (dropped from the
ranking; fixed in 3e160c5), and a HEAD pipeline over that cache read the stage back ("hit"): NDCG@10
0.1 on a 300-document SciFact slice where a cold run gives 0.8481, and the RRF stage over it 0.9011
for 0.8910. Keys now name the harness's version and :data:`harness.pipeline.cache.RUNS_VERSION`.

Worked example: 7 documents, q1 = "apple banana", d1 = "apple" (judged relevant), d2 = "banana",
d3 = "apple banana cherry", d4-d7 other words. rank-bm25 with k1 = 0 gives each term a document holds
its idf (tf (k1 + 1) / (tf + 0) = 1): idf(apple) = idf(banana) = ln((7 - 2 + 0.5) / (2 + 0.5)) > 0, so
d3 (both terms) ranks first, then d2 and d1 tied (ties by id descending): d1 at rank 3, NDCG@10 =
1 / log2(4) = 0.5. 1f129d1 scored d1 and d2 NaN (0 / 0 for the term each lacks) and kept d3 alone:
NDCG@10 0.0; that run, stored under 1f129d1's key for the stage (the formula below), was read back.
"""

from __future__ import annotations

import hashlib
import json

from harness.datasets import load_dataset
from harness.evaluation import Evaluator
from harness.pipeline import StageCache, parse_pipeline, run_pipeline
from harness.pipeline import run as pipeline_run
from harness.run import Run

DOCS = {"d1": "apple", "d2": "banana", "d3": "apple banana cherry", "d4": "fig", "d5": "grape", "d6": "kiwi",
        "d7": "lemon"}


def stage_key_1f129d1(blob: dict) -> str:
    """harness.pipeline.cache.stage_key from 1f129d1 to 6d57aee (before this fix)."""
    text = json.dumps(blob, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def dataset(folder):
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n"
                                                 for d, t in DOCS.items()))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "apple banana"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return load_dataset(str(folder))


def ndcg(ds, pipeline, cache) -> tuple[float, str]:
    exp, outcomes = run_pipeline(ds, pipeline, Evaluator(["NDCG@10"]), [10], depth=10, cache=cache)
    return exp.document.metrics["NDCG@10"], outcomes[-1].status


def test_a_stage_run_cached_by_an_earlier_build_of_the_release_is_computed_again(tmp_path, monkeypatch):
    ds = dataset(tmp_path / "ds")
    pipeline = parse_pipeline({"name": "p", "stages": [
        {"name": "rb0", "type": "retrieve", "retriever": "bm25",
         "params": {"backend": "rank-bm25", "k1": 0.0, "b": 0.4}}]}, "p.toml")
    with monkeypatch.context() as patch:  # the entry as 1f129d1 left it: its key, its run (d3 alone)
        patch.setattr(pipeline_run, "stage_key", stage_key_1f129d1)
        _, outcomes = run_pipeline(ds, pipeline, Evaluator(["NDCG@10"]), [10], depth=10,
                                   cache=StageCache(tmp_path / "cache"))
        StageCache(tmp_path / "cache").store(outcomes[-1].key, Run.from_dict({"q1": {"d3": 1.0}}), {})
        assert ndcg(ds, pipeline, StageCache(tmp_path / "cache")) == (0.0, "hit")  # (the stale run)
    assert ndcg(ds, pipeline, StageCache(tmp_path / "cache")) == (0.5, "miss")  # (was (0.0, "hit"))
    assert ndcg(ds, pipeline, StageCache(tmp_path / "cache")) == (0.5, "hit")

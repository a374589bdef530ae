"""A run file rewritten while a pipeline runs (between its stage's cache lookup and the read) must
not be cached under the old content's key (harness/pipeline/run.py, run_stage).

Worked example: one query q1 whose only relevant document is d1. Run file A ranks d1 first
(NDCG@10 = 1.0); run file B ranks d2, d3 (NDCG@10 = 0.0). The first pipeline run looks its stage
up with A's sha256, then the file becomes B and B is read and scored (0.0, correct). The stage
was stored under A's key, so the next run with A back in place was a cache "hit" scoring 0.0
instead of 1.0."""

from __future__ import annotations

import json

from harness.datasets import load_dataset
from harness.evaluation import Evaluator
from harness.pipeline import StageCache, parse_pipeline, run_pipeline

A = "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\n"
B = "q1 Q0 d2 1 2.0 b\nq1 Q0 d3 2 1.0 b\n"


def dataset(folder):
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "title": "", "text": f"text {i}"}) + "\n"
                                                 for i in (1, 2, 3)))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "text"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return load_dataset(str(folder))


def ndcg(ds, pipeline, cache, hook=None) -> tuple[float, str]:
    if hook is not None:
        lookup = cache.load

        def load(key):
            found = lookup(key)
            hook()  # the file is rewritten after the lookup, before the stage reads it
            return found
        cache.load = load
    exp, outcomes = run_pipeline(ds, pipeline, Evaluator(["NDCG@10"]), [10], depth=10, cache=cache)
    return exp.document.metrics["NDCG@10"], outcomes[-1].status


def test_a_run_file_rewritten_during_the_stage_is_not_cached_under_the_old_contents_key(tmp_path):
    ds = dataset(tmp_path / "ds")
    path = tmp_path / "r.trec"
    pipeline = parse_pipeline({"name": "p", "stages": [
        {"name": "rf", "type": "retrieve", "retriever": "run-file", "params": {"path": str(path)}}]}, "p.toml")
    cache = StageCache(tmp_path / "cache")
    path.write_text(A)
    assert ndcg(ds, pipeline, cache, lambda: path.write_text(B)) == (0.0, "miss")  # B was read and scored
    path.write_text(A)
    assert ndcg(ds, pipeline, StageCache(tmp_path / "cache")) == (1.0, "miss")  # (was (0.0, "hit"): B's run)
    assert ndcg(ds, pipeline, StageCache(tmp_path / "cache")) == (1.0, "hit")
    path.write_text(B)
    assert ndcg(ds, pipeline, StageCache(tmp_path / "cache")) == (0.0, "hit")  # B's run, stored under B's key

"""A pipeline fuse stage ``method = "rrf"`` with ``norm`` set ran RRF (ranks only) without a word that the
normalisation changed nothing; it now warns among the result's warnings, as ``harness fuse --norm`` with
rrf does (tests/fusion/test_rrf_norm_review.py), and its run is the one ``harness fuse`` writes.

Worked example (3 documents; q1 = "apple banana"): BM25 with two k1 values ranks d3 (both terms) first;
the RRF of the two runs is what :func:`harness.fusion.fuse` gives for the stages' runs.
"""

from __future__ import annotations

import json

from harness.datasets import load_dataset
from harness.evaluation import Evaluator
from harness.fusion import fuse
from harness.pipeline import StageCache, parse_pipeline, run_pipeline

DOCS = {"d1": "apple", "d2": "banana", "d3": "apple banana cherry", "d4": "fig", "d5": "grape"}


def dataset(folder):
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n"
                                                 for d, t in DOCS.items()))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "apple banana"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return load_dataset(str(folder))


def stages(**fusion):
    return {"name": "p", "stages": [
        {"name": "a", "type": "retrieve", "retriever": "bm25"},
        {"name": "b", "type": "retrieve", "retriever": "bm25", "params": {"k1": 0.6}},
        {"name": "rrf", "type": "fuse", "inputs": ["a", "b"], **fusion}]}


def test_rrf_stage_with_norm_warns_and_runs_rrf(tmp_path):
    ds = dataset(tmp_path / "ds")
    cache = StageCache(tmp_path / "cache")
    exp, outcomes = run_pipeline(ds, parse_pipeline(stages(method="rrf", norm="min-max"), "p.toml"),
                                 Evaluator(["NDCG@10"]), [10], depth=10, cache=cache)
    assert [w for w in exp.document.warnings or [] if "norm" in w] == [
        "stage 'rrf': norm = 'min-max' has no effect with rrf, which uses each run's ranks only (every "
        "normalisation keeps a run's order); the fused run is rrf's without it"]  # before: no warning
    by_name = {o.stage.name: o for o in outcomes}
    expected = fuse([by_name["a"].run, by_name["b"].run], "rrf", depth=1000)
    assert exp.run.to_dict() == expected.to_dict() and len(expected) == 3
    plain, _ = run_pipeline(ds, parse_pipeline(stages(method="rrf"), "p.toml"), Evaluator(["NDCG@10"]), [10],
                            depth=10, cache=cache)
    assert not [w for w in plain.document.warnings or [] if "norm" in w]
    assert plain.run.to_dict() == exp.run.to_dict()

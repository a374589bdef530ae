"""metrics.json's record of a retrieve stage holds the depth it kept, also when it is the run's.

docs/pipelines.md: each stage's record has ``depth`` (documents kept per query). A retrieve stage with
no ``depth`` of its own keeps the run's (``--depth``, else the largest cutoff of ``--k`` and ``-m``),
which is part of its cache key and changes its run, yet its record had no ``depth`` at all (the
stage's table as in the file): the result did not say how deep its first stage searched. Expected
(worked example): ``--k 10`` -> 10; ``--depth 30`` -> 30; a stage's own ``depth = 50`` -> 50, on a
cache miss and on a hit alike; the run's one stage of each run keeps that many documents per query.
"""

from __future__ import annotations

import numpy as np

from harness.datasets import load_dataset
from harness.evaluation import Evaluator
from harness.pipeline import StageCache, parse_pipeline, run_pipeline

PIPELINE = parse_pipeline({"name": "p", "stages": [
    {"name": "bm25", "type": "retrieve", "retriever": "bm25"},
    {"name": "bm25b", "type": "retrieve", "retriever": "bm25", "params": {"k1": 1.2}, "depth": 50},
    {"name": "rrf", "type": "fuse", "inputs": ["bm25", "bm25b"]},
]}, "p.toml")


def test_retrieve_stage_records_the_depth_it_kept(tmp_path):
    dataset, cache = load_dataset("scifact"), StageCache(tmp_path)
    for depth, expected, status in ((None, 10, "miss"), (None, 10, "hit"), (30, 30, "miss")):
        exp, outcomes = run_pipeline(dataset, PIPELINE, Evaluator(k_values=[10]), [10], depth=depth, cache=cache)
        records = exp.document.stages
        assert [(r["name"], r["cache"], r.get("depth")) for r in records] == [
            ("bm25", status, expected), ("bm25b", "hit" if depth or status == "hit" else "miss", 50),
            ("rrf", status, 1000)]
        assert int(np.diff(outcomes[0].run.offsets).max()) == expected
        assert int(np.diff(outcomes[1].run.offsets).max()) == 50
    assert "depth" not in PIPELINE.stages[0].to_dict()  # (the parsed pipeline, as recorded in retriever.params)

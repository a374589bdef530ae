"""The run-file retriever cuts a run at the depth in the evaluator's order: under trec_eval-9 (the
default) scores equal in float32 tie and the larger document id ranks first, so a replay at a
depth smaller than the file's equals evaluating the file itself at that cutoff."""

from __future__ import annotations

import numpy as np
import pytest
import pytrec_eval

from harness.datasets import load_dataset
from harness.evaluation import Evaluator
from harness.evaluation.semantics import top_depth
from harness.experiment import run_experiment
from harness.formats.trec import read_run
from harness.run import Run
from retrievers.run_file import RunFileRetriever

from .bench_helpers import QRELS, write_tiny

# q1: d1 and d2 tie in float32 (1.00000001 rounds to 1.0), so trec_eval 9 ranks d2 (the larger id)
# first; d2 is relevant, d1 is not. q2: 1e39 and 5e38 are both +inf in float32 (a tie again: d4,
# relevant, first); as doubles d3 (not judged relevant) is first.
RUN = ("q1 Q0 d1 1 1.00000001 s\nq1 Q0 d2 2 1.0 s\nq1 Q0 d3 3 0.5 s\n"
       "q2 Q0 d3 1 1e39 s\nq2 Q0 d4 2 5e38 s\n")


@pytest.fixture
def tiny(tmp_path):
    folder = write_tiny(tmp_path / "tiny")
    (tmp_path / "run.trec").write_text(RUN)
    return load_dataset(str(folder), "test"), tmp_path / "run.trec"


def pytrec_p1(path) -> float:
    """P@1 of the whole file by pytrec_eval (trec_eval 9: float32 scores), averaged over the qrels' queries."""
    qrels = {}
    for q, d, g in QRELS:
        qrels.setdefault(q, {})[d] = g
    run = read_run(path).to_dict()
    values = pytrec_eval.RelevanceEvaluator(qrels, {"P_1"}).evaluate(run)
    return float(np.mean([values[q]["P_1"] for q in qrels]))


@pytest.mark.parametrize("ignore_identical_ids", [True, False])  # search k = depth + 1, or depth
@pytest.mark.parametrize("semantics, expected", [("trec_eval-9", 1.0), ("trec_eval-10", 0.0)])
def test_replay_at_depth_one_ranks_as_the_evaluator(tiny, ignore_identical_ids, semantics, expected):
    dataset, path = tiny
    evaluator = Evaluator(["P@1"], k_values=[1], ignore_identical_ids=ignore_identical_ids, semantics=semantics)
    exp = run_experiment(dataset, RunFileRetriever(str(path)), evaluator, [1])
    # trec_eval-9: d2 and d4 first (float32 ties, larger id); trec_eval-10: d1 and d3 (larger doubles).
    assert exp.result.means["P@1"] == expected
    assert exp.result.means["P@1"] == evaluator.evaluate(read_run(path), dataset.qrels).means["P@1"]
    if semantics == "trec_eval-9":
        assert expected == pytrec_p1(path)  # the oracle, on the uncut file
    kept = {q: list(docs.items()) for q, docs in exp.run.to_dict().items()}
    assert kept == ({"q1": [("d2", 1.0)], "q2": [("d4", 5e38)]} if semantics == "trec_eval-9"
                    else {"q1": [("d1", 1.00000001)], "q2": [("d3", 1e39)]})  # full scores kept


def test_search_outside_an_experiment_keeps_the_canonical_order(tiny):
    _, path = tiny
    from harness.datasets.corpus import Queries

    run = RunFileRetriever(str(path)).search(Queries(["q1"], [""]), k=1)
    assert run.to_dict() == {"q1": {"d1": 1.00000001}}


def test_top_depth_keeps_full_scores_in_canonical_order():
    run = Run.from_dict({"a": {"x": 1.00000001, "y": 1.0, "z": 1.00000002, "w": 0.5}, "b": {"x": 2.0}})
    top = top_depth(run, 2, "trec_eval-9")  # float32: x, y, z tie -> z, y first (ids descending)
    assert top.to_dict() == {"a": {"z": 1.00000002, "y": 1.0}, "b": {"x": 2.0}} and top.is_canonical()
    assert top_depth(run, 2, "trec_eval-10").to_dict() == {"a": {"z": 1.00000002, "x": 1.00000001}, "b": {"x": 2.0}}
    assert top_depth(run, 2).to_dict() == top_depth(run, 2, "trec_eval-10").to_dict()


@pytest.mark.parametrize("semantics, expected", [("trec_eval-9", 1.0), ("trec_eval-10", 0.0)])
def test_a_pipeline_retrieve_stage_over_a_run_file_cuts_as_the_evaluator(tiny, tmp_path, semantics, expected):
    """The same worked example as a pipeline's retrieve stage at depth 1: the stage's run, and the
    pipeline's P@1, are those of the evaluator's order under each semantics (before, the stage cut the
    float64 order whatever the semantics: P@1 0.0 under trec_eval-9). The semantics is part of the
    stage's cache key, so the second semantics does not reuse the first one's cut."""
    from harness.pipeline import StageCache, parse_pipeline, run_pipeline

    dataset, path = tiny
    pipeline = parse_pipeline({"name": "replay", "stages": [
        {"name": "file", "type": "retrieve", "retriever": "run-file", "params": {"path": str(path)}}]},
        "p.toml", base=tmp_path)
    evaluator = Evaluator(["P@1"], k_values=[1], semantics=semantics)
    cache = StageCache(tmp_path / "cache")  # one cache for both semantics: their keys differ
    exp, outcomes = run_pipeline(dataset, pipeline, evaluator, [1], depth=1, output_dir=tmp_path / "out", cache=cache)
    assert exp.result.means["P@1"] == expected == evaluator.evaluate(read_run(path), dataset.qrels).means["P@1"]
    other = "trec_eval-10" if semantics == "trec_eval-9" else "trec_eval-9"
    again, _ = run_pipeline(dataset, pipeline, Evaluator(["P@1"], k_values=[1], semantics=other), [1], depth=1,
                            output_dir=tmp_path / "out2", cache=cache)
    assert again.result.means["P@1"] == 1.0 - expected

"""The Python fusion API refuses what is not its input with one clear exception, as ``evaluate`` does.

``fuse``, ``fuse_runs`` and ``optimize`` took BEIR's ``{query: {doc: score}}`` dicts, a single run, a
settings dict or BEIR's qrels dict and failed deep inside (``AttributeError: 'dict' object has no
attribute 'without_identical_ids'``); ``FusionSpec.create(weights="37")`` read the str as the weights
3 and 7 and fused with them, a wrong number without a word.
"""

from __future__ import annotations

import pytest

from harness.fusion import FusionSpec, fuse, fuse_runs, optimize
from harness.qrels import Qrels
from harness.run import Run

BM25 = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0}}
DENSE = {"q1": {"d2": 0.9, "d3": 0.5}, "q2": {"d3": 0.7, "d1": 0.1}}
QRELS = {"q1": {"d2": 1}, "q2": {"d3": 1}}


def runs() -> list[Run]:
    return [Run.from_dict(BM25), Run.from_dict(DENSE)]


def test_fuse_refuses_beir_dicts_naming_run_from_dict():
    with pytest.raises(TypeError, match=r"fuse\(runs, \.\.\.\) takes a list of harness Runs; run 1 is dict: .*Run\.from_dict"):
        fuse([BM25, DENSE])


def test_fuse_refuses_one_run_and_a_dict_of_named_runs():
    with pytest.raises(TypeError, match="takes a list of harness Runs, got one Run"):
        fuse(runs()[0])
    with pytest.raises(TypeError, match="takes a list of harness Runs, got one dict"):
        fuse({"bm25": runs()[0], "dense": runs()[1]})


def test_fuse_runs_refuses_a_settings_dict_for_the_spec():
    spec = FusionSpec.create("wsum", weights=[0.7, 0.3])
    with pytest.raises(TypeError, match=r"fuse_runs\(runs, spec\) takes a FusionSpec, got dict: .*FusionSpec\.from_dict"):
        fuse_runs(runs(), spec.to_dict())
    with pytest.raises(TypeError, match="run 2 is dict"):
        fuse_runs([runs()[0], DENSE], spec)
    assert fuse_runs(runs(), FusionSpec.from_dict(spec.to_dict())).to_dict() == fuse_runs(runs(), spec).to_dict()


def test_optimize_refuses_beir_qrels_and_a_method_name_for_the_spec():
    with pytest.raises(TypeError, match=r"takes a harness Qrels, got dict: .*Qrels\.from_dict"):
        optimize(runs(), QRELS, FusionSpec.create("wsum"), "NDCG@10", split="dev")
    with pytest.raises(TypeError, match="takes a FusionSpec, got str"):
        optimize(runs(), Qrels.from_dict(QRELS), "wsum", "NDCG@10", split="dev")
    with pytest.raises(TypeError, match="run 1 is dict"):
        optimize([BM25, DENSE], Qrels.from_dict(QRELS), FusionSpec.create("wsum"), "NDCG@10", split="dev")


@pytest.mark.parametrize("weights", ["37", "0.7,0.3", 0.5, b"37", ["0.7", "0.3"]])
def test_weights_that_are_no_list_of_numbers_are_refused(weights):
    """A str of digits was iterated: weights="37" fused with the weights (3.0, 7.0)."""
    with pytest.raises(ValueError, match="weights must be"):
        FusionSpec.create("wsum", weights=weights)
    with pytest.raises(ValueError, match="weights must be"):
        FusionSpec.from_dict({"method": "wsum", "weights": weights})


def test_weights_as_numbers_are_taken_as_before():
    assert FusionSpec.create("wsum", weights=(7, 3)).weights == (7.0, 3.0)
    assert FusionSpec.create("rrf", weights=[1, 2.5]).weights == (1.0, 2.5)


def test_a_pipeline_fuse_stage_with_weights_as_a_str_is_refused_not_read_digit_by_digit():
    """`weights = "37"` in a pipeline TOML fused the two inputs with weights 3 and 7 (to_dict: [3.0, 7.0])."""
    from harness.errors import HarnessError
    from harness.pipeline.spec import parse_pipeline

    stages = [{"name": "a", "type": "retrieve", "retriever": "bm25"},
              {"name": "b", "type": "retrieve", "retriever": "bm25", "params": {"k1": 1.2}},
              {"name": "fused", "type": "fuse", "inputs": ["a", "b"], "method": "wsum", "weights": "37"}]
    with pytest.raises(HarnessError, match=r"stages\[2\]: weights must be a list of numbers, one per run, got '37'"):
        parse_pipeline({"stages": stages}, "p.toml", check_components=False)
    stages[-1]["weights"] = [3, 7]
    assert parse_pipeline({"stages": stages}, "p.toml", check_components=False).final.fusion.weights == (3.0, 7.0)

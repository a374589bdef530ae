"""Fusion and normalisation on small runs, with expected values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.errors import HarnessError
from harness.fusion import FusionSpec, fuse
from harness.fusion.normalize import normalize
from harness.fusion.optimize import check_split, optimize, weight_grid
from harness.qrels import Qrels
from harness.run import Run

# Run A ranks d1 > d2 > d3, run B ranks d2 > d4 > d3; d1 is only in A, d4 only in B.
A = Run.from_dict({"q": {"d1": 3.0, "d2": 2.0, "d3": 1.0}})
B = Run.from_dict({"q": {"d2": 4.0, "d4": 2.0, "d3": 0.0}})


def ranking(run: Run, i: int = 0) -> list[tuple[str, float]]:
    start, end = run.offsets[i], run.offsets[i + 1]
    return list(zip(run.doc_ids(i), run.scores[start:end].tolist()))


def test_rrf_worked_example():
    # d1: 1/(60+1); d2: 1/(60+2) + 1/(60+1); d3: 1/(60+3) + 1/(60+3); d4: 1/(60+2)
    assert ranking(fuse([A, B], "rrf", k=60)) == [
        ("d2", 1 / 62 + 1 / 61), ("d3", 1 / 63 + 1 / 63), ("d1", 1 / 61), ("d4", 1 / 62)]
    # k = 0: d2 = 1/2 + 1 = 1.5, d1 = 1, d3 = 2/3, d4 = 1/2
    assert ranking(fuse([A, B], "rrf", k=0)) == [("d2", 1.5), ("d1", 1.0), ("d3", 1 / 3 + 1 / 3), ("d4", 0.5)]


def test_weighted_rrf():
    # weights (2, 1): d2 = 2/62 + 1/61, d1 = 2/61, d3 = 2/63 + 1/63, d4 = 1/62
    fused = ranking(fuse([A, B], "rrf", weights=[2, 1]))
    assert fused == [("d2", 2 / 62 + 1 / 61), ("d3", 2 / 63 + 1 / 63), ("d1", 2 / 61), ("d4", 1 / 62)]


def test_combmnz_worked_example():
    # min-max: A -> d1 1, d2 0.5, d3 0; B -> d2 1, d4 0.5, d3 0.
    # CombMNZ = (number of runs with d) x sum: d2 2 x 1.5 = 3, d1 1 x 1 = 1, d4 1 x 0.5 = 0.5, d3 2 x 0 = 0
    assert ranking(fuse([A, B], "combmnz")) == [("d2", 3.0), ("d1", 1.0), ("d4", 0.5), ("d3", 0.0)]
    # without normalisation: d2 2 x (2 + 4) = 12, d3 2 x (1 + 0) = 2, d1 3, d4 2; d4 and d3 tie at 2
    assert ranking(fuse([A, B], "combmnz", norm="none")) == [("d2", 12.0), ("d1", 3.0), ("d4", 2.0), ("d3", 2.0)]


def test_other_methods_worked_example():
    assert ranking(fuse([A, B], "combsum")) == [("d2", 1.5), ("d1", 1.0), ("d4", 0.5), ("d3", 0.0)]
    # CombMAX d1 = max(1, missing) = 1 = d2 = max(0.5, 1): tie, document id descending puts d2 first
    assert ranking(fuse([A, B], "combmax")) == [("d2", 1.0), ("d1", 1.0), ("d4", 0.5), ("d3", 0.0)]
    # CombMIN d1 = min(1, missing) = 1; d2 = min(0.5, 1) ties with d4 = 0.5: d4 first
    assert ranking(fuse([A, B], "combmin")) == [("d1", 1.0), ("d4", 0.5), ("d2", 0.5), ("d3", 0.0)]
    assert ranking(fuse([A, B], "wsum", weights=[0.25, 0.75])) == [
        ("d2", 0.25 * 0.5 + 0.75 * 1.0), ("d4", 0.75 * 0.5), ("d1", 0.25), ("d3", 0.0)]
    assert ranking(fuse([A, B], "wsum")) == ranking(fuse([A, B], "wsum", weights=[0.5, 0.5]))  # default 1/n


def test_ties_follow_the_evaluator_rule():
    # RRF gives the two top documents 1/61 each: document id descending ("b" > "a")
    one, two = Run.from_dict({"q": {"a": 1.0}}), Run.from_dict({"q": {"b": 1.0}})
    assert ranking(fuse([one, two], "rrf")) == [("b", 1 / 61), ("a", 1 / 61)]


def test_norms_worked_example():
    # scores 4, 2, 1, 1 (x and w tie at 1: canonical order x before w)
    run = Run.from_dict({"q": {"w": 1.0, "y": 2.0, "x": 1.0, "z": 4.0}})
    assert run.canonical().doc_ids(0) == ["z", "y", "x", "w"]
    expected = {
        "none": [4, 2, 1, 1],
        "min-max": [1, 1 / 3, 0, 0],               # (s - 1) / (4 - 1)
        "max": [1, 0.5, 0.25, 0.25],               # s / 4
        "sum": [0.75, 0.25, 0, 0],                 # (s - 1) / (8 - 4 x 1)
        "zmuv": [2 / math.sqrt(1.5), 0, -1 / math.sqrt(1.5), -1 / math.sqrt(1.5)],  # mean 2, var 6/4
        "rank": [1, 0.75, 0.5, 0.25],              # 1 - i/4
    }
    for norm, values in expected.items():
        np.testing.assert_allclose(normalize(run.canonical(), norm), values, rtol=1e-15, atol=0, err_msg=norm)


def test_floors_keep_equal_scores_finite():
    run = Run.from_dict({"q": {"a": 2.0, "b": 2.0}, "r": {"c": -3.0}}).canonical()
    assert normalize(run, "min-max").tolist() == [0.0, 0.0, 0.0]  # 0 / max(0, 1e-9)
    assert normalize(run, "zmuv").tolist() == [0.0, 0.0, 0.0]
    assert normalize(run, "max").tolist() == [2.0 / 2.0, 1.0, -3.0 / 1e-9]  # max -3 < 1e-9: divided by 1e-9


def test_queries_of_either_run_are_kept_and_depth_cuts():
    a = Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 1.0}})
    b = Run.from_dict({"q3": {"d9": 5.0}, "q1": {"d3": 1.0}})
    fused = fuse([a, b], "rrf", depth=2)
    assert fused.query_ids.tolist() == ["q1", "q2", "q3"]
    assert fused.doc_ids(0) == ["d3", "d1"]  # d3 and d1 both 1/61; d2 (1/62) cut by depth 2
    assert fused.doc_ids(2) == ["d9"]


def test_fusion_spec_round_trip_and_defaults():
    spec = FusionSpec.create("sum", norm="z-score")
    assert (spec.method, spec.norm, spec.k, spec.weights, spec.depth) == ("combsum", "zmuv", None, None, 1000)
    assert FusionSpec.create("rrf").to_dict() == {"method": "rrf", "norm": "none", "k": 60, "weights": None,
                                                   "depth": 1000}
    weighted = FusionSpec.create("wsum", norm="minmax", weights=[0.7, 0.3], depth=100)
    assert weighted.norm == "min-max" and FusionSpec.from_dict(weighted.to_dict()) == weighted
    assert weighted.replace(weights=[0.2, 0.8]).weights == (0.2, 0.8)


@pytest.mark.parametrize("kwargs,message", [
    ({"method": "borda"}, "unknown fusion method 'borda'"),
    ({"norm": "l2"}, "unknown score normalisation 'l2'"),
    ({"k": -1}, "RRF k must be an integer >= 0"),
    ({"k": 2.5}, "RRF k must be an integer >= 0"),
    ({"method": "combsum", "k": 60}, "k applies to rrf only"),
    ({"method": "combmnz", "weights": [1, 2]}, "weights apply to rrf and wsum only"),
    ({"method": "wsum", "weights": [1, -2]}, "weights must be finite numbers >= 0"),
    ({"depth": 0}, "depth must be an integer >= 1"),
])
def test_fusion_spec_refuses_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        FusionSpec.create(**kwargs)


def test_weight_count_and_run_count_are_checked():
    with pytest.raises(ValueError, match="3 weights given for 2 runs"):
        fuse([A, B], "wsum", weights=[0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match="at least two runs"):
        fuse([A], "rrf")
    with pytest.raises(ValueError, match="unknown fusion setting"):
        FusionSpec.from_dict({"method": "rrf", "alpha": 1})


def test_weight_grid():
    assert weight_grid(2) == [(i / 10, (10 - i) / 10) for i in range(11)]
    assert len(weight_grid(3)) == 66 and all(math.isclose(sum(w), 1.0) for w in weight_grid(3))
    assert weight_grid(2, 0.25) == [(0.0, 1.0), (0.25, 0.75), (0.5, 0.5), (0.75, 0.25), (1.0, 0.0)]
    for step in (0.3, 0, -0.1, 2):
        with pytest.raises(ValueError, match="must divide 1"):
            weight_grid(2, step)


def test_optimize_picks_the_better_run_and_refuses_the_test_split():
    # q's only relevant document is d4, which run B ranks 2nd and run A never retrieves.
    qrels = Qrels.from_dict({"q": {"d4": 1, "d1": 0}})
    result = optimize([A, B], qrels, FusionSpec.create("wsum"), "NDCG@1", split="dev")
    # NDCG@1 is 1 only when d4 is first: w_B * 0.5 > w_A * 1 + ... never beats d2 (w_A 0.5 + w_B); all 0,
    # so the last trial wins (ranx's rule: score >= best)
    assert result.score == 0.0 and result.spec.weights == (1.0, 0.0)
    result = optimize([A, B], qrels, FusionSpec.create("wsum"), "NDCG@3", split="dev")
    # NDCG@3: d2 = 0.5 w_A + w_B always first, then d4 = 0.5 w_B at rank 2 when it beats d1 = w_A
    # (w_A < 1/3: NDCG 1/log2(3)), else at rank 3 (NDCG 0.5); the last best trial is (0.3, 0.7)
    assert result.trials[0] == ((0.0, 1.0), pytest.approx(1 / math.log2(3)))
    assert [s for _, s in result.trials] == pytest.approx([1 / math.log2(3)] * 4 + [0.5] * 7)
    assert result.spec.weights == (0.3, 0.7) and result.score == pytest.approx(1 / math.log2(3))
    assert result.to_dict()["chosen"] == {"weights": list(result.spec.weights)}
    with pytest.raises(HarnessError, match="refusing to optimise fusion on the test split"):
        optimize([A, B], qrels, FusionSpec.create("rrf"), "NDCG@10", split="test")
    assert optimize([A, B], qrels, FusionSpec.create("rrf"), "NDCG@10", split="test",
                    allow_test_split=True).parameter == "k"
    check_split("dev", False)
    with pytest.raises(ValueError, match="no parameter to optimise"):
        optimize([A, B], qrels, FusionSpec.create("combsum"), "NDCG@10", split="dev")
    with pytest.raises(ValueError, match="one metric"):
        optimize([A, B], qrels, FusionSpec.create("rrf"), "NDCG", split="dev")

"""nDCG@k with linear gains (``trec``, ``jarvelin``) stays a finite number for grades near the
largest double, where the plain discounted sums overflow and the ratio was inf / inf = NaN (written
as NaN into metrics.json), or the ideal alone overflowed and nDCG was finite / inf = 0. nDCG is
scale-invariant, so qrels grades 4, 4, 2, 4 times 2^1021 must give exactly what grades 4, 4, 2, 4
give (a power-of-two scale is exact in floating point)."""

from __future__ import annotations

import math

import pytest

from harness.evaluation import Evaluator
from harness.qrels import Qrels
from harness.run import Run

RUN = Run.from_dict({"q": {"c": 3.0, "a": 2.0, "x": 1.5, "b": 1.0}, "p": {"y": 1.0, "z": 0.5}})
SMALL = {"q": {"a": 4, "b": 4, "c": 2, "d": 4}, "p": {"z": 1}}
HUGE = {"q": {doc: grade * 2.0**1021 for doc, grade in SMALL["q"].items()}, "p": {"z": 1}}


@pytest.mark.parametrize("metric", ["NDCG@3", "NDCG@10", "NDCG_jarvelin@3", "NDCG_jarvelin@10"])
def test_grades_near_the_largest_double_give_the_scaled_values(metric):
    small = Evaluator([metric]).evaluate(RUN, Qrels.from_dict(SMALL)).values[metric]
    huge = Evaluator([metric]).evaluate(RUN, Qrels.from_dict(HUGE)).values[metric]
    assert huge.tolist() == small.tolist()  # was [0.0, 1.0] (finite / inf) or [nan, 1.0]
    assert all(math.isfinite(v) for v in huge)


def test_worked_value_of_the_huge_grades():
    # q's ranking c, a, x, b with gains 2, 4, 0, 4 (in units of 2^1021): DCG@10 = 2/log2(2) + 4/log2(3)
    # + 4/log2(5) (about 6.25, finite); the ideal 4, 4, 4, 2: 4 + 4/log2(3) + 4/log2(4) + 2/log2(5)
    # (about 9.38 units: past 2^1024, the largest double, unscaled).
    dcg = 2 + 4 / math.log2(3) + 4 / math.log2(5)
    ideal = 4 + 4 / math.log2(3) + 4 / 2 + 2 / math.log2(5)
    value = Evaluator(["NDCG@10"]).evaluate(RUN, Qrels.from_dict(HUGE)).values["NDCG@10"][0]
    assert value == pytest.approx(dcg / ideal, rel=1e-15)

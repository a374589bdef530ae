"""Second evaluator review (against the trec_eval 9.0.7 / 10.0-rc3 binaries, pytrec_eval, ir_measures and a
plain reference), each case with its expected value and source.

* ``exp`` gains of float grades below 1: g = 2^rel - 1 computed as 2^rel minus 1 lost its bits to
  cancellation (every bit below rel 1.1e-16: NDCG_exp@2 of a perfect ranking was 0.0, DCG_exp 0.0). The
  expected values come from the definition, 2^rel - 1 to 60 digits (``decimal``).
* ``depth_warning``: a cutoff of ``k_values`` that no metric takes is no value computed on a cut ranking,
  so no warning (it warned "values at cutoffs past 10 () are computed on the top 10 documents only").
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import pytest

from harness.evaluation import Evaluator, depth_warning
from harness.qrels import Qrels
from harness.run import Run


def _exp_gain(grade: float) -> Decimal:
    """2^grade - 1 of the grade's exact binary value, to 60 digits."""
    with localcontext() as ctx:
        ctx.prec = 60
        return Decimal(2) ** Decimal(grade) - 1


def _dcg(grades: list[float]) -> Decimal:
    """sum_i g(rel_i) / log2(i + 1) over 1-based ranks (log2 as a double: exact enough at these ranks)."""
    with localcontext() as ctx:
        ctx.prec = 60
        return sum((_exp_gain(g) / Decimal(math.log2(i + 1)) for i, g in enumerate(grades, 1)), Decimal(0))


@pytest.mark.parametrize("small", [1e-17, 1e-13, 1e-10, 1e-6, 0.3])
def test_exp_gains_of_small_float_grades_follow_the_definition(small):
    # ranked a (small), b (2 * small); ideal: b, a; a third judged document c (grade 0.9) not retrieved
    run = Run.from_dict({"q": {"a": 2.0, "b": 1.0}})
    grades = {"a": small, "b": 2 * small, "c": 0.9}
    qrels = Qrels.from_dict({"q": grades})
    evaluator = Evaluator(["NDCG_exp@2", "DCG_exp@2", "NDCG_exp@3"], relevance_threshold=small)
    got = evaluator.evaluate(run, qrels).per_query()["q"]
    dcg2 = _dcg([grades["a"], grades["b"]])
    assert got["DCG_exp@2"] == pytest.approx(float(dcg2), rel=1e-13, abs=0)
    assert got["NDCG_exp@2"] == pytest.approx(float(dcg2 / _dcg([0.9, 2 * small])), rel=1e-13, abs=0)
    assert got["NDCG_exp@3"] == pytest.approx(float(dcg2 / _dcg([0.9, 2 * small, small])), rel=1e-13, abs=0)


def test_exp_gains_of_tiny_grades_alone_give_the_perfect_ranking_one():
    # every grade below 1.1e-16: 2^rel - 1 was 0.0 for each, so NDCG_exp@2 was 0 / 0 = 0.0 for a perfect ranking
    run = Run.from_dict({"q": {"b": 2.0, "a": 1.0}})
    qrels = Qrels.from_dict({"q": {"a": 1e-17, "b": 2e-17}})
    got = Evaluator(["NDCG_exp@2", "DCG_exp@2"], relevance_threshold=1e-17).evaluate(run, qrels).per_query()["q"]
    assert got["NDCG_exp@2"] == pytest.approx(1.0, rel=1e-15, abs=0)
    # 2^rel - 1 = rel ln 2 (1 + O(rel)): ln 2 * (2e-17 + 1e-17 / log2 3)
    assert got["DCG_exp@2"] == pytest.approx(math.log(2) * (2e-17 + 1e-17 / math.log2(3)), rel=1e-15, abs=0)


def test_integer_exp_gains_stay_exact():
    # 2^rel - 1 of integer grades is exact (trec_eval's ndcg with gains 1=1,2=3,3=7): DCG_exp@1 of grade 3 is 7
    run = Run.from_dict({"q": {"a": 1.0}})
    qrels = Qrels.from_dict({"q": {"a": 3, "b": 1}})
    assert Evaluator(["DCG_exp@1"]).evaluate(run, qrels).per_query()["q"]["DCG_exp@1"] == 7.0


def test_no_depth_warning_for_a_cutoff_no_metric_takes():
    evaluator = Evaluator(["P@5"], k_values=[1, 10, 100])
    assert depth_warning(10, [1, 10, 100], evaluator.metrics) is None
    # a metric past the depth is still named
    evaluator = Evaluator(["P@5", "Recall@100"], k_values=[1, 10, 100])
    assert depth_warning(10, [1, 10, 100], evaluator.metrics) == (
        "depth 10 is below the largest cutoff 100: values at cutoffs past 10 (Recall@100) are computed on the "
        "top 10 documents only")

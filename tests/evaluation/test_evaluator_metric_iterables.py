"""``metrics`` given as any iterable of names is read once: a generator or ``map()`` (one-shot iterators) and a
NumPy array of names score as the same list does.

Regression of c19aefb (the check that every item is a name or a Metric): it iterated ``metrics`` before the
evaluator read it, so a generator or ``map(str.strip, "NDCG@10, MAP".split(","))`` reached the reader used up
("ValueError: no metrics to compute"), and ``metrics or ()`` on a NumPy array raised "The truth value of an
array with more than one element is ambiguous". All three scored before that commit.

Worked example: one query, its one relevant document d2 at rank 2: NDCG@2 = (1 / log2(3)) / 1 =
0.6309297535714575, P@2 = 1/2 (as tests/test_api_input_types.py states)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.evaluation import Evaluator, evaluate
from harness.qrels import Qrels
from harness.run import Run

RUN = Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0}})
QRELS = Qrels.from_dict({"q1": {"d2": 1}})


@pytest.mark.parametrize("given", [
    lambda: (name for name in ("P", "NDCG")),
    lambda: map(str.strip, " P, NDCG".split(",")),
    lambda: np.array(["P", "NDCG"]),
    lambda: ("P", "NDCG"),
])
def test_metrics_from_any_iterable_of_names_score_as_the_list(given):
    assert [m.name for m in Evaluator(given(), k_values=[2]).metrics] == ["P@2", "NDCG@2"]
    values = evaluate(RUN, QRELS, given(), k_values=[2]).means
    assert values["P@2"] == 0.5 and values["NDCG@2"] == pytest.approx(0.6309297535714575, abs=1e-15)


def test_a_non_name_in_a_generator_is_still_named():
    with pytest.raises(ValueError, match=r"^metrics are names such as 'NDCG@10' or Metric values, got 5 \(int\)"):
        Evaluator(m for m in ("NDCG", 5))

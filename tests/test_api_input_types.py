"""The Python API's input types: a wrong type is one exception naming what was given, not an error from deep
inside (the s16 review of the Python API: ``Run.from_dict([...])`` raised ``AttributeError: 'list' object has no
attribute 'values'``, ``evaluate(..., k_values="10")`` said ``got ['1', '0']``, ``evaluate(run, qrels, [5])`` a
``TypeError: expected string or bytes-like object`` from ``re``)."""

from __future__ import annotations

import pytest

from harness.evaluation import evaluate
from harness.qrels import Qrels
from harness.run import Run

RUN = Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0}})
QRELS = Qrels.from_dict({"q1": {"d2": 1}})


@pytest.mark.parametrize("build, given, message", [
    (Run.from_dict, [("q1", "d1", 1.0)], "Run.from_dict takes BEIR's {query_id: {doc_id: score}} dict, got list"),
    (Run.from_dict, {"q1": ["d1", "d2"]}, "Run.from_dict takes BEIR's {query_id: {doc_id: score}} dict; query 'q1' "
                                         "holds list ['d1', 'd2'], not a {doc_id: value} dict"),
    (Qrels.from_dict, [("q1", "d1", 1)], "Qrels.from_dict takes BEIR's {query_id: {doc_id: grade}} dict, got list"),
    (Qrels.from_dict, {"q1": 1}, "Qrels.from_dict takes BEIR's {query_id: {doc_id: grade}} dict; query 'q1' holds "
                                 "int 1, not a {doc_id: value} dict"),
])
def test_from_dict_of_another_shape_is_a_type_error_naming_it(build, given, message):
    with pytest.raises(TypeError) as err:
        build(given)
    assert str(err.value) == message


def test_k_values_as_a_string_and_a_cutoff_among_the_metrics_are_named():
    with pytest.raises(ValueError, match=r"^k values must be a list of integers >= 1, such as \[1, 10\], got '10'$"):
        evaluate(RUN, QRELS, ["NDCG"], k_values="10")
    with pytest.raises(ValueError, match=r"^metrics are names such as 'NDCG@10' or Metric values, got 5 \(int\); "
                                         r"cutoffs go in k_values$"):
        evaluate(RUN, QRELS, [5])
    # the valid forms still score as before: d2 (relevant) at rank 2, P@2 = 1/2, NDCG@2 = (1/log2(3)) / 1
    values = evaluate(RUN, QRELS, ["P", "NDCG"], k_values=[2]).means
    assert values["P@2"] == 0.5 and values["NDCG@2"] == pytest.approx(0.6309297535714575, abs=1e-15)

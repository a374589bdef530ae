"""``Run.from_rows``: a run from (query_id, doc_id, score) rows in any order, as ``Qrels.from_rows`` takes
judgments (ir_measures' ScoredDoc, a DataFrame's columns zipped). Worked example below; pytrec_eval's value
for q2 is the same formula (trec_eval ndcg_cut: gain = grade, discount log2(rank + 1))."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from harness.evaluation import Evaluator
from harness.qrels import Qrels
from harness.run import Run

ROWS = [("q2", "a", 1.0), ("q1", "b", 2), ("q2", "c", np.float32(3.5)), ("q1", "a", 0.5)]
QRELS = Qrels.from_rows([("q1", "b", 1), ("q2", "a", 2), ("q2", "c", 0)])


def test_rows_in_any_order_make_the_run_of_the_same_dict():
    run = Run.from_rows(ROWS)
    assert list(run.query_ids) == ["q2", "q1"]  # first seen
    assert run.to_dict() == {"q2": {"a": 1.0, "c": 3.5}, "q1": {"b": 2.0, "a": 0.5}}
    shuffled = list(ROWS)
    random.Random(3).shuffle(shuffled)
    assert Run.from_rows(shuffled).to_dict() == run.to_dict()


def test_worked_example():
    # q1 ranks b (2.0) then a: its relevant b first: NDCG@10 1, P@1 1, MRR 1. q2 ranks c (3.5, grade 0) then a
    # (grade 2): DCG = 0 + 2/log2(3), ideal 2/log2(2): NDCG@10 = 1/log2(3) = 0.6309298, P@1 0, MRR 1/2.
    result = Evaluator(["NDCG@10", "P@1", "MRR@10"]).evaluate(Run.from_rows(ROWS), QRELS)
    assert result.means["NDCG@10"] == pytest.approx((1 + 0.6309298) / 2, abs=1e-7)
    assert result.means["NDCG@10"] == pytest.approx((1 + 1 / math.log2(3)) / 2, abs=1e-15)
    assert result.means["P@1"] == 0.5 and result.means["MRR@10"] == 0.75


def test_ir_measures_scored_docs():
    ir_measures = pytest.importorskip("ir_measures")
    rows = [ir_measures.ScoredDoc(q, d, float(s)) for q, d, s in ROWS]
    assert Run.from_rows(rows).to_dict() == Run.from_rows(ROWS).to_dict()


@pytest.mark.parametrize("rows, error, message", [
    ([("q1", "a", 1.0), ("q2", "b", 1.0), ("q1", "a", 2.0)], ValueError,
     "run rows list document 'a' for query 'q1' twice"),
    ([("q1", 7, 1.0)], TypeError, "run document"),
    ([(1, "a", 1.0)], TypeError, "run query"),
    ([("q1", "a", "1.0")], TypeError, "run score of query 'q1', document 'a' is not a number"),
])
def test_refusals_name_the_row(rows, error, message):
    with pytest.raises(error, match=message):
        Run.from_rows(rows)


def test_no_rows_is_an_empty_run():
    run = Run.from_rows([])
    assert run.n_queries == 0 and len(run) == 0

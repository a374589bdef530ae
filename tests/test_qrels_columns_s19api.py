"""Qrels built from columns directly, ``Qrels(query_ids, doc_ids, grades)``, as an ir_measures or pandas user
builds them from a DataFrame's columns: checked as ``Qrels.from_rows`` checks rows. Before, int query ids
(a DataFrame read with default dtypes) never matched the run's str ids and every judged query scored 0 without
a word; a pair given twice counted as two relevant documents (a perfect one-document run: Recall@10 = AP = 0.5);
list or pandas columns failed with AttributeError "'list' object has no attribute 'tolist'"."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from harness.evaluation import Evaluator
from harness.qrels import Qrels
from harness.run import Run

RUN = Run.from_dict({"1": {"a": 2.0, "b": 1.0}, "2": {"c": 1.0}})
METRICS = ["P@1", "Recall@10", "AP", "NDCG@10"]


def values(qrels):
    return Evaluator(METRICS).evaluate(RUN, qrels).per_query()


def test_columns_of_a_data_frame_or_lists_evaluate_as_the_dict():
    frame = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"], "relevance": [1, 0, 2]})
    expected = values(Qrels.from_dict({"1": {"a": 1, "b": 0}, "2": {"c": 2}}))
    # worked: each query's one relevant document is ranked first: 1.0 everywhere
    assert expected == {q: {m: 1.0 for m in METRICS} for q in ("1", "2")}
    for columns in ([frame[c] for c in frame], [frame[c].values for c in frame], [frame[c].to_numpy() for c in frame],
                    [frame[c].tolist() for c in frame], [np.array(frame[c].tolist()) for c in frame]):
        qrels = Qrels(*columns)
        assert values(qrels) == expected
        assert qrels.query_ids.dtype == object and qrels.grades.dtype == np.float64
        assert qrels.to_dict() == {"1": {"a": 1, "b": 0}, "2": {"c": 2}}


def test_int_ids_are_a_type_error_naming_the_id():
    with pytest.raises(TypeError, match="qrels query ids must be str, got int 1"):
        Qrels(np.array([1, 1, 2]), np.array(["a", "b", "c"], dtype=object), np.array([1.0, 0.0, 2.0]))
    with pytest.raises(TypeError, match="qrels document ids must be str, got int 7"):
        Qrels(["1"], [7], [1])


def test_a_pair_given_twice_is_refused_naming_it():
    with pytest.raises(ValueError, match="qrels judge document 'a' of query '1' twice"):
        Qrels(np.array(["1", "1"], dtype=object), np.array(["a", "a"], dtype=object), np.array([1.0, 1.0]))


@pytest.mark.parametrize("grade, error, shown", [("1", TypeError, "is not a number: str '1'"),
                                                 (None, TypeError, "is not a number: NoneType None"),
                                                 (math.nan, ValueError, "is not a finite number: nan"),
                                                 (math.inf, ValueError, "is not a finite number: inf")])
def test_a_grade_that_is_no_finite_number_is_refused_naming_the_pair(grade, error, shown):
    with pytest.raises(error, match=f"qrels grade of query '2', document 'c' {shown}"):
        Qrels(["1", "2"], ["a", "c"], [1, grade])


def test_from_rows_and_the_readers_still_give_the_same_columns(tmp_path):
    qrels = Qrels.from_rows([("1", "a", 1), ("1", "a", 1), ("2", "c", 2)])  # (the same grade twice: kept once)
    assert qrels.query_ids.tolist() == ["1", "2"] and qrels.grades.tolist() == [1.0, 2.0]
    path = tmp_path / "test.tsv"
    path.write_text("query-id\tcorpus-id\tscore\n1\ta\t1\n1\tb\t0\n2\tc\t2\n", encoding="utf-8")
    from harness.formats.trec import read_qrels

    assert read_qrels(path).to_dict() == {"1": {"a": 1, "b": 0}, "2": {"c": 2}}

"""Runs and qrels built in Python (BEIR dicts, rows, numpy / pandas columns): what the API refuses
instead of computing a wrong number, each case with its expected value and source.

* Qrels grades: pytrec_eval refuses a grade that is not an int (``TypeError: Expected relevance to be
  integer``) and the qrels readers refuse NaN and infinite grades (docs/evaluation.md); ``Qrels.from_dict``
  read ``"1"``, ``b"1"`` as 1, ``None`` as NaN (a judged non-relevant document), and ``inf`` gave
  nDCG = inf / inf = NaN. Float grades stay accepted (the project's float relevance).
* A (query, document) pair given twice in ``Qrels.from_rows`` (rows from a data frame): counted twice,
  R = 2 for one relevant document, so Recall@10 was 0.5 for a run that retrieves it. The readers keep
  a repeat with the same grade once and refuse a conflicting one; so does ``from_rows`` now.
* ``Run.from_arrays`` over columns as a data frame holds them (``doc_vocab`` = every entry's id, codes
  0..n-1): a document id at two codes was looked up at one of them only, so a judged document was
  found in one query and missed in the other (P@1 0 for a query that ranks its relevant document first).
  Refused now, as are non-str ids, codes outside the vocabulary (a -1 read the last id) and offsets that
  do not start at 0 or decrease.
* ``Evaluator(relevance_threshold="2")`` failed with numpy's "ufunc 'isfinite' not supported" TypeError;
  ``k_values=[True]`` with "cannot parse metric name 'P@True'".
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.evaluation import Evaluator, evaluate
from harness.qrels import Qrels
from harness.run import Run

RUN = {"q": {"a": 2.0, "b": 1.0}}


@pytest.mark.parametrize("grade, error, shown", [
    ("1", TypeError, "not a number: str '1'"),
    (b"1", TypeError, "not a number: bytes b'1'"),
    (None, TypeError, "not a number: NoneType None"),
    (1 + 0j, TypeError, "not a number: complex"),
    (float("nan"), ValueError, "not a finite number: nan"),
    (float("inf"), ValueError, "not a finite number: inf"),
    (np.float64("-inf"), ValueError, "not a finite number"),
    (2**1100, ValueError, "past a double's range"),
])
def test_qrels_grades_that_are_no_finite_number_are_refused_by_name(grade, error, shown):
    with pytest.raises(error, match=r"qrels grade of query 'q', document 'a' is " + shown.replace("(", r"\(")):
        Qrels.from_dict({"q": {"b": 1, "a": grade}})


def test_qrels_grades_beir_users_pass_are_taken_as_numbers():
    # int, float (the project's float relevance), bool and numpy grades: the documents "a" (rank 1) and
    # "b" (rank 2) with grades g_a, g_b give nDCG@10 = 1 whenever g_a >= g_b (ideal order = run order).
    for grades in ({"a": 2, "b": 1}, {"a": 1.5, "b": 0.5}, {"a": True, "b": False}, {"a": np.int64(3), "b": np.int32(1)},
                   {"a": np.float32(2.5), "b": np.float16(1)}):
        qrels = Qrels.from_dict({"q": grades})
        assert qrels.grades.dtype == np.float64
        assert evaluate(Run.from_dict(RUN), qrels, ["NDCG@10"]).per_query() == {"q": {"NDCG@10": 1.0}}


def test_a_pair_given_twice_with_its_grade_counts_once():
    # R = 1 (one relevant document, "a", retrieved at rank 1): Recall@10 = 1 and nDCG@10 = 1 (was 0.5 and
    # 1 / (1 + 1/log2 2) = 0.613: the repeat counted as a second relevant document).
    qrels = Qrels.from_rows([("q", "a", 1), ("q", "b", 0), ("q", "a", 1.0)])
    assert len(qrels) == 2 and qrels.to_dict() == {"q": {"a": 1, "b": 0}}
    values = evaluate(Run.from_dict(RUN), qrels, ["Recall@10", "NDCG@10"]).per_query()
    assert values == {"q": {"Recall@10": 1.0, "NDCG@10": 1.0}}


def test_a_pair_given_twice_with_different_grades_is_refused():
    with pytest.raises(ValueError, match=r"document 'a' of query 'q' twice, with different grades \(1 and 0\)"):
        Qrels.from_rows([("q", "a", 1), ("q", "a", 0)])


def test_from_arrays_over_data_frame_columns_refuses_an_id_at_two_codes():
    # Long format (one row per entry): q1 and q2 both rank "a" first, "a" relevant for both: P@1 = 1 each
    # (from_dict of the same entries). With doc_vocab = the id column, q1 got P@1 = 0.
    qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"a": 1}})
    expected = evaluate(Run.from_dict({"q1": {"a": 1.0}, "q2": {"a": 1.0}}), qrels, ["P@1"]).per_query()
    assert expected == {"q1": {"P@1": 1.0}, "q2": {"P@1": 1.0}}
    column = np.array(["a", "a"], dtype=object)
    for vocab in (column, column.tolist()):
        with pytest.raises(ValueError, match=r"document id 'a' is in doc_vocab twice"):
            Run.from_arrays(["q1", "q2"], [0, 1, 2], np.arange(2), [1.0, 1.0], vocab)
    # The same columns with the ids factorised (numpy.unique): the expected values.
    vocab, codes = np.unique(column, return_inverse=True)
    run = Run.from_arrays(["q1", "q2"], [0, 1, 2], codes, [1.0, 1.0], vocab)
    assert evaluate(run, qrels, ["P@1"]).per_query() == expected


@pytest.mark.parametrize("arrays, error, message", [
    ((["q"], [0, 1], [0], [1.0], [1]), TypeError, "run document ids must be str, got int 1"),
    (([1], [0, 1], [0], [1.0], ["a"]), TypeError, "run query ids must be str, got int 1"),
    ((["q"], [0, 1], [-1], [1.0], ["a"]), ValueError, r"document code -1 is not an index of doc_vocab \(1 ids\)"),
    ((["q"], [0, 1], [5], [1.0], ["a"]), ValueError, "document code 5 is not an index"),
    ((["q"], [1, 2], [0, 0], [1.0, 2.0], ["a"]), ValueError, "offsets must start at 0 and never decrease"),
    ((["q", "r"], [0, 2, 1], [0, 0], [1.0, 2.0], ["a"]), ValueError, "offsets must start at 0 and never decrease"),
    ((["q"], [0, 1], [[0]], [[1.0]], ["a"]), ValueError, "must be 1-d arrays"),
])
def test_from_arrays_refuses_columns_that_are_no_run(arrays, error, message):
    with pytest.raises(error, match=message):
        Run.from_arrays(*arrays)


def test_from_arrays_keeps_taking_a_producers_vocabulary_unchecked_and_numpy_scores():
    # vocab_index given (a retriever's corpus ids): the vocabulary is the producer's, not scanned again.
    run = Run.from_arrays(["q"], [0, 2], [1, 0], np.array([0.5, 0.25], dtype=np.float32), ["x", "y"], {"x": 0, "y": 1})
    assert run.to_dict() == {"q": {"y": 0.5, "x": 0.25}}
    assert math.isclose(evaluate(run, Qrels.from_dict({"q": {"x": 1}}), ["MRR@10"]).means["MRR@10"], 0.5)


@pytest.mark.parametrize("threshold, shown", [("2", "'2'"), (None, "None"), (float("nan"), "nan"), (0, "0")])
def test_a_relevance_threshold_that_is_no_positive_number_is_named(threshold, shown):
    with pytest.raises(ValueError, match=f"relevance threshold must be a positive number, got {shown}$"):
        Evaluator(["P@1"], relevance_threshold=threshold)
    assert Evaluator(["P@1"], relevance_threshold=np.float32(2)).relevance_threshold == 2.0


def test_k_values_refuse_bools():
    with pytest.raises(ValueError, match=r"k values must be integers >= 1, got \[True\]"):
        Evaluator(["P"], k_values=[True])
    assert [m.name for m in Evaluator(["P"], k_values=[np.int64(3)]).metrics] == ["P@3"]

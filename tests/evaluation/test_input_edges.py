"""Evaluator inputs at the edges of the contract, each with its expected value and source.

* NaN scores: refused wherever they stand in a query (the TREC readers refuse them; a NaN has no rank).
* Cutoffs beyond int64: a ValueError (the CLI's one-line error), not an OverflowError traceback.
* One metric name given as a string: that metric, not one metric per character.
* Ids holding a NUL: Python's string order and exact id matching on every path (numpy's fixed-width
  strings drop trailing NULs, so "a\\0" would equal "a").
* nDCG_exp with float grades past 1023 (click or vote counts): finite, from its definition.
* Ids that are not str: refused, as pytrec_eval refuses them (an int 1 never matches the id "1").
* -0.0 and 0.0 tie: the canonical order moves each document with its own score's sign.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from harness.evaluation import Evaluator, parse_metric
from harness.evaluation.metrics import NDCG
from harness.qrels import Qrels
from harness.run import Run

NAN = float("nan")


@pytest.mark.parametrize("scores", [
    {"b": 1.0, "a": NAN},             # last in its query (was ranked last, silently)
    {"a": NAN},                       # the query's only entry (was ranked first, silently)
    {"c": 2.0, "b": 1.0, "a": NAN},
    {"a": NAN, "b": 1.0},             # first (refused before too)
])
@pytest.mark.parametrize("semantics", ["trec_eval-9", "trec_eval-10"])
def test_nan_scores_are_refused_wherever_they_stand(scores, semantics):
    run = Run.from_dict({"p": {"x": 1.0}, "q": scores})
    qrels = Qrels.from_dict({"q": {"a": 1, "b": 1}})
    with pytest.raises(ValueError, match=r"NaN \(query 'q'\)"):
        Evaluator(["P@1"], semantics=semantics).evaluate(run, qrels)


def test_cutoffs_beyond_int64_are_a_value_error():
    run, qrels = Run.from_dict({"q": {"a": 2.0, "b": 1.0}}), Qrels.from_dict({"q": {"b": 1}})
    for name in ("Judged@18446744073709551616", "R_cap@9223372036854775808", "P@99999999999999999999"):
        with pytest.raises(ValueError, match="too large"):
            parse_metric(name)
    with pytest.raises(ValueError, match="too large"):
        Evaluator(k_values=[10**20])
    # The largest int64 cutoff is a cutoff past any ranking: R_cap = 1/min(R=1, k), Judged = 1/min(2, k).
    big = 2**63 - 1
    values = Evaluator([f"R_cap@{big}", f"Judged@{big}"]).evaluate(run, qrels).per_query()["q"]
    assert values == {f"R_cap@{big}": 1.0, f"Judged@{big}": 0.5}


def test_one_metric_name_as_a_string():
    assert Evaluator("NDCG@10").metrics == [NDCG(10)]
    assert Evaluator(NDCG(10)).metrics == [NDCG(10)]


def test_ids_holding_a_nul_follow_python_string_order():
    # Tie between "a\0" and "a": Python's "a" < "a\0", so "a\0" ranks first (id descending).
    # Ranking b, a\0, a with a\0 relevant: P@2 = 1/2, MRR = 1/2 (the reference sort below agrees).
    scores = {"a\0": 1.0, "a": 1.0, "b": 2.0}
    assert [d for _, d in sorted(((s, d) for d, s in scores.items()), reverse=True)] == ["b", "a\0", "a"]
    qrels = Qrels.from_dict({"q": {"a\0": 1}})
    values = Evaluator(["P@2", "MRR@10"]).evaluate(Run.from_dict({"q": scores}), qrels).per_query()["q"]
    assert values == {"P@2": 0.5, "MRR@10": 0.5}
    # A run whose vocabulary is in string order (as the TREC readers build it) holds "a", not "a\0".
    sorted_run = Run.from_arrays(["q"], [0, 2], [0, 1], [2.0, 1.0], ["a", "b"], vocab_sorted=True)
    assert sorted_run.codes_of(["a\0", "a", "b\0\0"]).tolist() == [-1, 0, -1]
    assert Evaluator(["P@1"]).evaluate(sorted_run, qrels).per_query()["q"] == {"P@1": 0.0}


def test_ndcg_exp_with_grades_past_1023_is_finite():
    # Grades 1100 and 1, ranked 1 then 1100: nDCG_exp@2 = (g(1)/1 + g(1100)/log2 3) / (g(1100)/1 + g(1)/log2 3),
    # g(rel) = 2^rel - 1, computed here exactly in integers (2^1100 overflows a double).
    run = Run.from_dict({"q": {"low": 2.0, "high": 1.0}, "p": {"high": 2.0, "low": 1.0}})
    qrels = Qrels.from_dict({"q": {"low": 1, "high": 1100}, "p": {"low": 1, "high": 1100}})
    g_high, g_low = Fraction(2**1100 - 1), Fraction(1)
    d2 = Fraction(math.log2(3))
    expected = float((g_low + g_high / d2) / (g_high + g_low / d2))
    values = Evaluator(["NDCG_exp@2", "NDCG_exp@1", "NDCG@2"]).evaluate(run, qrels).per_query()
    assert values["q"]["NDCG_exp@2"] == pytest.approx(expected, rel=1e-12)
    assert values["q"]["NDCG_exp@1"] == pytest.approx(float(g_low / g_high), abs=1e-300)  # 2^-1100: 0 in double
    assert values["p"] == pytest.approx({"NDCG_exp@2": 1.0, "NDCG_exp@1": 1.0, "NDCG@2": 1.0}, rel=1e-12)
    # Grades up to 960 are not rescaled: the same values as 2^rel - 1 computed directly.
    qrels_small = Qrels.from_dict({"q": {"low": 1, "high": 900}})
    direct = (1 + (2.0**900 - 1) / np.log2(3)) / ((2.0**900 - 1) + 1 / np.log2(3))
    assert Evaluator(["NDCG_exp@2"]).evaluate(run, qrels_small).values["NDCG_exp@2"][0] == direct


def test_ids_that_are_not_strings_are_refused():
    # pytrec_eval (the oracle) refuses {doc: score} maps whose ids are not str with a TypeError too.
    with pytest.raises(TypeError, match="run document ids must be str, got int 1"):
        Run.from_dict({"q": {1: 1.0}})
    with pytest.raises(TypeError, match="run query ids must be str"):
        Run.from_dict({7: {"a": 1.0}})
    with pytest.raises(TypeError, match="qrels document ids must be str"):
        Qrels.from_dict({"q": {1: 1}})
    with pytest.raises(TypeError, match="qrels query ids must be str"):
        Qrels.from_rows([(1, "a", 1.0)])


def test_canonical_order_keeps_each_documents_signed_zero():
    """-0.0 == 0.0, so a and b tie and are ordered by id descending (b, a); each keeps its own score's
    sign, so that a written run (repr "-0.0") or a cached one is the run it came from, bit for bit.
    Before: the ids moved and the scores stayed, giving b -0.0 and a 0.0."""
    for given in ({"a": -0.0, "b": 0.0, "c": 1.0}, {"c": 1.0, "a": -0.0, "b": 0.0}):
        run = Run.from_dict({"q1": given}).canonical()
        assert run.doc_ids(0) == ["c", "b", "a"]
        assert [np.signbit(s) for s in run.scores] == [False, False, True]

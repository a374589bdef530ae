"""The trec_eval semantics the evaluator reproduces, and the fixed cases of issue 13, each with its source.

* trec_eval 9 (``trec_format.h``: ``float sim``) ranks by the float32 value of each score, so
  1.0000000001 and 1.0 tie and the tie goes to the document id descending; pytrec_eval (trec_eval 9
  in-process) shows it. trec_eval 10 (``double sim``) ranks by the double.
* Judged@k divides by min(k, retrieved), as ir_measures' ``Judged@k`` (``judged_provider.py``: the
  cutoff is reset to the run's length when the run is shorter).
"""

from __future__ import annotations

import pytest

from harness.evaluation import Evaluator
from harness.evaluation.semantics import parse_semantics
from harness.qrels import Qrels
from harness.run import Run

FLOAT32_TIE_RUN = {"q": {"a": 1.0000000001, "b": 1.0}}  # equal as float32, not as float64
FLOAT32_TIE_QRELS = {"q": {"a": 0, "b": 1}}


def _values(run: dict, qrels: dict, metrics: list[str], **options) -> dict[str, float]:
    result = Evaluator(metrics, **options).evaluate(Run.from_dict(run), Qrels.from_dict(qrels))
    return result.per_query()["q"]


def test_float32_only_tie_goes_to_doc_id_descending_by_default():
    # Issue 13: trec_eval 9, pytrec_eval, BEIR and ir_measures give P@1 = 1, MRR = 1 ("b" > "a" wins the tie).
    assert _values(FLOAT32_TIE_RUN, FLOAT32_TIE_QRELS, ["P@1", "MRR@10"]) == {"P@1": 1.0, "MRR@10": 1.0}


def test_float32_only_tie_matches_pytrec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier (dev extra) is the test oracle")
    theirs = pytrec_eval.RelevanceEvaluator(FLOAT32_TIE_QRELS, {"P.1", "recip_rank"}).evaluate(FLOAT32_TIE_RUN)["q"]
    assert (theirs["P_1"], theirs["recip_rank"]) == (1.0, 1.0)
    ours = _values(FLOAT32_TIE_RUN, FLOAT32_TIE_QRELS, ["P@1", "MRR@1000"])
    assert (ours["P@1"], ours["MRR@1000"]) == (theirs["P_1"], theirs["recip_rank"])


def test_trec_eval_10_ranks_by_double():
    # trec_eval 10.0 holds ``double sim``: "a" (1.0000000001) ranks first, the relevant "b" second.
    values = _values(FLOAT32_TIE_RUN, FLOAT32_TIE_QRELS, ["P@1", "MRR@10"], semantics="trec_eval-10")
    assert values == {"P@1": 0.0, "MRR@10": 0.5}


def test_float32_ranking_keeps_full_scores_in_the_run():
    run = Run.from_dict(FLOAT32_TIE_RUN)
    Evaluator(["P@1"]).evaluate(run, Qrels.from_dict(FLOAT32_TIE_QRELS))
    assert sorted(run.scores.tolist()) == [1.0, 1.0000000001]


def test_scores_beyond_float32_range_rank_as_infinity():
    # float(1e39) is +inf in trec_eval 9: it ties with 3e39, and the id decides ("b" first).
    run = {"q": {"a": 3e39, "b": 1e39, "c": 1.0}}
    assert _values(run, {"q": {"b": 1}}, ["P@1"]) == {"P@1": 1.0}
    assert _values(run, {"q": {"b": 1}}, ["P@1"], semantics="trec_eval-10") == {"P@1": 0.0}


def test_judged_at_k_divides_by_retrieved_when_shorter():
    # Issue 13 / ir_measures: two judged documents retrieved, k = 5 -> 2 / min(5, 2) = 1.0 (was 0.4).
    values = _values({"q": {"a": 2.0, "b": 1.0}}, {"q": {"a": 1, "b": 0}}, ["Judged@5", "Judged@1"])
    assert values == {"Judged@5": 1.0, "Judged@1": 1.0}


def test_judged_at_k_matches_ir_measures():
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures (dev extra) is the test oracle")
    run = {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}
    qrels = {"q": {"a": 1, "b": 0, "c": 2}}
    theirs = {str(m.measure): m.value for m in ir_measures.iter_calc(
        [ir_measures.Judged @ 1, ir_measures.Judged @ 2, ir_measures.Judged @ 10], qrels, run)}
    ours = _values(run, qrels, ["Judged@1", "Judged@2", "Judged@10"])
    assert ours == {"Judged@1": 1.0, "Judged@2": 0.5, "Judged@10": 2 / 3}
    assert theirs == pytest.approx({"Judged@1": 1.0, "Judged@2": 0.5, "Judged@10": 2 / 3})


def test_judged_counts_negative_grades_as_unjudged_under_trec_eval_10():
    # trec_eval 10's unj (m_unjudged.c): a qrels value below 0 is RELVALUE_UNJUDGED.
    run, qrels = {"q": {"a": 2.0, "b": 1.0}}, {"q": {"a": 1, "b": -1}}
    assert _values(run, qrels, ["Judged@2"]) == {"Judged@2": 1.0}
    assert _values(run, qrels, ["Judged@2"], semantics="trec_eval-10") == {"Judged@2": 0.5}


def test_settings_record_the_semantics():
    run, qrels = Run.from_dict(FLOAT32_TIE_RUN), Qrels.from_dict(FLOAT32_TIE_QRELS)
    assert Evaluator(["P@1"]).evaluate(run, qrels).settings["semantics"] == "trec_eval-9"
    assert Evaluator(["P@1"], semantics="trec_eval-10").evaluate(run, qrels).settings["semantics"] == "trec_eval-10"


def test_unknown_semantics_is_refused():
    with pytest.raises(ValueError, match="unknown semantics 'trec_eval-8'; known: trec_eval-9, trec_eval-10"):
        parse_semantics("trec_eval-8")

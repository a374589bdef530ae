"""Metric names as users of ranx, ir_measures and pytrec_eval write them (second Python-API review).

Each ranx spelling parses to the metric README's "Names from trec_eval, ir_measures and ranx" table names,
and its per-query values equal ranx's. Source of the expected values: ranx 0.3.21,
``evaluate(Qrels.from_dict(QRELS), Run.from_dict(RUN), names, return_mean=False, make_comparable=True)``
(``-l2`` appended for the relevance level 2), recorded here because ranx's numba start costs ~30 s; the
runs have no tied scores (ranx keeps insertion order on ties, the evaluator trec_eval's id descending).
ranx scores q4 (grade-0 judgments only) 0 where the evaluator leaves it out (README: queries with no
relevant judgment); q5 is judged and missing from the run: 0 in both.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from harness.evaluation import Evaluator, evaluate, parse_metric
from harness.qrels import Qrels
from harness.run import Run

QRELS = {"q0": {"d1": 3, "d5": 3, "d8": 3, "d9": 1, "d11": 0, "d7": 0},
         "q1": {"d5": 2, "d11": 0, "d6": 2, "d8": 2, "d1": 3, "d10": 1},
         "q2": {"d6": 1, "d9": 1, "d7": 0, "d8": 0, "d0": 3, "d4": 3},
         "q3": {"d8": 1, "d10": 2, "d11": 2, "d7": 0, "d6": 0, "d3": 1},
         "q4": {"d1": 0, "d2": 0}, "q5": {"d3": 2}}
RUN = {"q0": {"d4": 87.0, "d1": 41.0, "d7": 27.0, "d0": 51.0, "d9": 33.0},
       "q1": {"d4": 15.0, "d0": 55.0, "d5": 65.0, "d9": 97.0, "d7": 77.0, "d3": 63.0, "d10": 51.0, "d6": 68.0,
              "d11": 34.0},
       "q2": {"d7": 70.0, "d3": 33.0, "d1": 72.0, "d11": 52.0, "d8": 86.0, "d5": 40.0},
       "q3": {"d7": 66.0, "d8": 99.0, "d11": 64.0, "d5": 56.0, "d3": 72.0, "d2": 85.0, "d10": 5.0, "d9": 38.0,
              "d4": 41.0},
       "q4": {"d1": 2.0}}
QUERIES = ["q0", "q1", "q2", "q3", "q5"]

# ranx name -> (the spelling given here: ranx's own where accepted, metric name, ranx's values for QUERIES)
RANX = {
    "ndcg@5": ("ndcg@5", "NDCG@5", [0.28294661530471193, 0.28591926394768896, 0.0, 0.5423222553368242, 0.0]),
    "ndcg@10": ("ndcg@10", "NDCG@10", [0.28294661530471193, 0.3371220263301387, 0.0, 0.6859250728111922, 0.0]),
    "dcg@5": ("dcg@5", "DCG@5", [1.9306765580733931, 1.8613531161467862, 0.0, 2.2737056144690833, 0.0]),
    "ndcg_burges@5": ("NDCG_exp@5", "NDCG_exp@5",
                      [0.25611710556861733, 0.2312877399131874, 0.0, 0.45686855637069007, 0.0]),
    "dcg_burges@5": ("DCG_exp@5", "DCG_exp@5", [3.930676558073393, 2.7920296742201796, 0.0, 2.660558421703625, 0.0]),
    "map@5": ("map@5", "MAP@5", [0.20833333333333331, 0.16666666666666666, 0.0, 0.5666666666666667, 0.0]),
    "map": ("map", "AP", [0.20833333333333331, 0.2523809523809524, 0.0, 0.6777777777777778, 0.0]),
    "mrr@3": ("mrr@3", "MRR@3", [1 / 3, 1 / 3, 0.0, 1.0, 0.0]),
    "mrr": ("mrr@10", "MRR@10", [1 / 3, 1 / 3, 0.0, 1.0, 0.0]),  # the whole ranking: every run is <= 10 long
    "recall@5": ("recall@5", "Recall@5", [0.5, 0.4, 0.0, 0.75, 0.0]),
    "precision@5": ("precision@5", "P@5", [0.4, 0.4, 0.0, 0.6, 0.0]),
    "precision@20": ("precision@20", "P@20", [0.1, 0.15, 0.0, 0.2, 0.0]),  # k past the ranking: / k
    "hit_rate@1": ("hit_rate@1", "Success@1", [0.0, 0.0, 0.0, 1.0, 0.0]),
    "hit_rate@3": ("hit_rate@3", "Success@3", [1.0, 1.0, 0.0, 1.0, 0.0]),
    "r-precision": ("r-precision", "R-Prec", [0.5, 0.4, 0.0, 0.5, 0.0]),
}
# ranx's relevance level 2 (name-l2) -> the evaluator with relevance_threshold=2
RANX_L2 = {
    "map@5-l2": ("map@5", "MAP@5", [1 / 9, 0.20833333333333331, 0.0, 0.1, 0.0]),
    "mrr@3-l2": ("mrr@3", "MRR@3", [1 / 3, 1 / 3, 0.0, 0.0, 0.0]),
    "recall@5-l2": ("recall@5", "Recall@5", [1 / 3, 0.5, 0.0, 0.5, 0.0]),
    "precision@5-l2": ("precision@5", "P@5", [0.2, 0.4, 0.0, 0.2, 0.0]),
    "hit_rate@3-l2": ("hit_rate@3", "Success@3", [1.0, 1.0, 0.0, 0.0, 0.0]),
    "r-precision-l2": ("r-precision", "R-Prec", [1 / 3, 0.5, 0.0, 0.0, 0.0]),
}


@pytest.mark.parametrize("table, threshold", [(RANX, 1), (RANX_L2, 2)])
def test_ranx_spellings_parse_to_the_documented_metric_and_give_ranx_values(table, threshold):
    metrics = [parse_metric(spelling) for spelling, _, _ in table.values()]  # (in a list, "map" is MAP@k)
    result = evaluate(Run.from_dict(RUN), Qrels.from_dict(QRELS), metrics, relevance_threshold=threshold)
    assert result.query_ids.tolist() == QUERIES and result.n_without_relevant == 1  # q4: grade 0 only
    for ranx_name, (spelling, name, expected) in table.items():
        assert parse_metric(spelling).name == name, ranx_name
        assert result.values[name].tolist() == pytest.approx(expected, abs=1e-12), ranx_name
    assert [m.name for m in Evaluator(["map", "mrr"], k_values=[5]).metrics] == ["MAP@5", "MRR@5"]  # families


def test_ranx_hit_rate_is_success():
    # ranx's hit_rate@k (1 if a relevant document is in the top k) was refused as an unknown metric.
    assert parse_metric("hit_rate@10").name == "Success@10"
    assert [m.name for m in Evaluator(["hit_rate"], k_values=[1, 3]).metrics] == ["Success@1", "Success@3"]


def test_ranx_hits_is_refused_not_read_as_success():
    # ranx's hits@k counts the relevant documents in the top k (2.0 for q3 at k = 3), a different number.
    with pytest.raises(ValueError, match=r"^unknown metric 'hits@3'; known: 11pt_avg, AP, DCG, Judged, MAP, MRR, "
                                         r"NDCG, NDCG_all, P, "):
        parse_metric("hits@3")


# (iprec_at_recall_0.10 is a metric now: tests/evaluation/test_trec_eval_official_measures.py)
@pytest.mark.parametrize("text", ["f1@10", "P@10.5", "iprec_at_recall_0.1.0", "NDCG@10@10", "map@-1"])
def test_a_name_that_cannot_be_parsed_is_refused_with_the_known_families(text):
    # The message was "cannot parse metric name 'f1@10' (expected e.g. NDCG@10)", without the accepted names.
    message = f"cannot parse metric name {text!r} (expected e.g. NDCG@10); known: 11pt_avg, AP, DCG, Judged, " \
              "MAP, MRR, NDCG, NDCG_all, P, R-Prec, RR, R_cap, Recall, Rndcg, Rprec_mult, Success, bpref, " \
              "iprec_at_recall, ndcg_rel, num_nonrel_judged_ret, num_rel, num_rel_ret, num_ret, set_F, set_P, " \
              "set_map, set_recall, set_relative_P"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        parse_metric(text)


@pytest.mark.parametrize("text, level", [("ndcg@10-l2", "2"), ("precision@5-l2", "2"), ("map-l3", "3"),
                                         ("r-precision-l2", "2")])
def test_ranx_relevance_level_suffix_names_the_relevance_threshold(text, level):
    # ranx's -l2 was "cannot parse metric name ... (expected e.g. NDCG@10)": nothing said where the level goes.
    with pytest.raises(ValueError, match=re.escape(
            f"cannot parse metric name {text!r}: ranx's relevance level suffix -l{level} is not supported; binary "
            f"metrics take their relevance level from the relevance threshold (--relevance-threshold {level}; "
            f"relevance_threshold={level} in Python or a bench config)")):
        parse_metric(text)


def test_beir_accuracy_is_success_not_ir_measures_accuracy():
    # README: Accuracy@k is BEIR's name for Success@k. ir_measures' Accuracy@10 is another measure: on this
    # ranking (non-relevant b above relevant a) ir_measures 0.4.3 gives Accuracy@10 = 0.0, Success@10 = 1.0.
    qrels, run = {"q": {"a": 1, "b": 0}}, {"q": {"b": 2.0, "a": 1.0}}
    assert evaluate(Run.from_dict(run), Qrels.from_dict(qrels), ["Accuracy@10"]).means == {"Success@10": 1.0}


@pytest.mark.parametrize("arguments, shown", [
    ("dicts", "got dict and dict: build them from BEIR's dicts with Run.from_dict(results) and "
              "Qrels.from_dict(qrels)"),
    ("swapped", "got Qrels and Run: the run comes first here (pytrec_eval, ir_measures and ranx take the "
                "qrels first)"),
])
def test_dicts_or_swapped_arguments_are_a_type_error_naming_the_order(arguments, shown):
    # Both were AttributeError: 'dict' / 'Qrels' object has no attribute 'refuse_nan', from inside judge().
    run, qrels = Run.from_dict(RUN), Qrels.from_dict(QRELS)
    given = (RUN, QRELS) if arguments == "dicts" else (qrels, run)
    message = f"evaluate(run, qrels) takes a harness Run and a Qrels, in that order; {shown}"
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        evaluate(*given, ["P@5"])
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        Evaluator(["P@5"]).judge(*given)
    assert evaluate(run, qrels, ["P@5"]).means["P@5"] == pytest.approx((0.4 + 0.4 + 0.0 + 0.6 + 0.0) / 5)


@pytest.mark.parametrize("value", [None, "false", "False", 0, 1, "yes"])
def test_ignore_identical_ids_takes_a_bool_only(value):
    # bool() read None and 0 as False (identical ids kept: P@1 = 0 below, where the default gives BEIR's 1.0)
    # and "false" as True, silently.
    with pytest.raises(TypeError, match=f"^ignore_identical_ids must be True or False, got {re.escape(repr(value))}$"):
        Evaluator(["P@1"], ignore_identical_ids=value)
    run, qrels = Run.from_dict({"q": {"q": 2.0, "a": 1.0}}), Qrels.from_dict({"q": {"a": 1}})
    assert evaluate(run, qrels, ["P@1"]).means == {"P@1": 1.0}  # "q" dropped: "a" first (BEIR's default)
    assert evaluate(run, qrels, ["P@1"], ignore_identical_ids=False).means == {"P@1": 0.0}
    assert Evaluator(["P@1"], ignore_identical_ids=np.bool_(False)).ignore_identical_ids is False

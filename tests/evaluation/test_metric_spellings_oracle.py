"""Every accepted spelling of a metric name, evaluated, against the oracles' own names.

Source of the expected values: ir_measures (``parse_measure`` + ``iter_calc``: the measure named in
ir_measures' syntax, relevance level as ``(rel=N)``) and pytrec_eval (trec_eval 9 names, with
``relevance_level=N``), on random runs without score ties (ties are checked elsewhere; here the
point is that each spelling resolves to the measure, cutoff and relevance level it names).
"""

from __future__ import annotations

import random

import pytest

from harness.evaluation import Evaluator, metrics_for, parse_metric
from harness.qrels import Qrels
from harness.run import Run

# Harness spelling -> ir_measures measure ({k}: the cutoff, {rel}: the relevance threshold).
IR_MEASURES = {
    "NDCG@{k}": "nDCG@{k}", "nDCG@{k}": "nDCG@{k}", "ndcg_cut_{k}": "nDCG@{k}", "ndcg_cut.{k}": "nDCG@{k}",
    "P@{k}": "P(rel={rel})@{k}", "P_{k}": "P(rel={rel})@{k}", "P.{k}": "P(rel={rel})@{k}",
    "precision@{k}": "P(rel={rel})@{k}",
    "Recall@{k}": "R(rel={rel})@{k}", "R@{k}": "R(rel={rel})@{k}", "recall_{k}": "R(rel={rel})@{k}",
    "recall.{k}": "R(rel={rel})@{k}",
    "MAP@{k}": "AP(rel={rel})@{k}", "AP@{k}": "AP(rel={rel})@{k}", "map_cut_{k}": "AP(rel={rel})@{k}",
    "map_cut.{k}": "AP(rel={rel})@{k}",
    "AP": "AP(rel={rel})", "map": "AP(rel={rel})",
    "MRR@{k}": "RR(rel={rel})@{k}", "RR@{k}": "RR(rel={rel})@{k}", "recip_rank@{k}": "RR(rel={rel})@{k}",
    "R-Prec": "Rprec(rel={rel})", "Rprec": "Rprec(rel={rel})",
    "bpref": "Bpref(rel={rel})", "Bpref": "Bpref(rel={rel})",
    "Success@{k}": "Success(rel={rel})@{k}", "success_{k}": "Success(rel={rel})@{k}",
    "success.{k}": "Success(rel={rel})@{k}", "Accuracy@{k}": "Success(rel={rel})@{k}",
    "Judged@{k}": "Judged@{k}",
}

# trec_eval 9 name (pytrec_eval) -> the harness metric it becomes in a metric list with k = 1000 (map and
# ndcg, also BEIR's MAP and NDCG families, expand over k: trec_eval's whole-ranking map and ndcg equal
# their @1000 here, every ranking being at most 30 long; recip_rank is RR, the whole ranking).
TREC_EVAL = {"P_5": "P@5", "ndcg_cut_10": "NDCG@10", "recall_100": "Recall@100", "map_cut_1000": "MAP@1000",
             "map": "MAP@1000", "Rprec": "R-Prec", "bpref": "bpref", "success_1": "Success@1",
             "recip_rank": "RR", "ndcg": "NDCG@1000"}

def _case(rng: random.Random):
    """Random qrels (grades -1..3) and a run without score ties. Every query gets a judgment >= 0:
    pytrec_eval crashes (segfault or hang) on a query whose only judgments are negative when bpref is
    asked together with map or Rprec (pytrec_eval-terrier 0.5.11)."""
    qrels, run = {}, {}
    n_docs = rng.randint(2, 30)
    for q in range(rng.randint(1, 8)):
        judged = rng.sample(range(n_docs), rng.randint(1, n_docs))
        grades = [rng.choice([-1, 0, 0, 1, 2, 3]) for _ in judged]
        grades[0] = max(grades[0], 0)
        qrels[f"q{q}"] = {f"d{d}": g for d, g in zip(judged, grades)}
        retrieved = rng.sample(range(n_docs), rng.randint(1, n_docs))
        run[f"q{q}"] = {f"d{d}": rng.random() for d in retrieved}  # distinct scores: no ties
    return qrels, run


def _harness(spellings, k, rel, qrels, run):
    evaluator = Evaluator(list(spellings), k_values=[k], relevance_threshold=rel, ignore_identical_ids=False)
    return evaluator.evaluate(Run.from_dict(run), Qrels.from_dict(qrels)).per_query()


def test_every_spelling_matches_ir_measures():
    ir_measures = pytest.importorskip("ir_measures")
    rng = random.Random(20261126)
    compared = 0
    for _ in range(60):
        qrels, run = _case(rng)
        k, rel = rng.choice([1, 2, 3, 5, 10, 20, 100]), rng.choice([1, 2, 3])
        spelled = {s.format(k=k): ir_measures.parse_measure(m.format(k=k, rel=rel)) for s, m in IR_MEASURES.items()}
        ours = _harness(spelled, k, rel, qrels, run)
        theirs = {(m.query_id, str(m.measure)): m.value
                  for m in ir_measures.iter_calc(list(set(spelled.values())), qrels, run)}
        for query, row in ours.items():  # the queries with a relevant document (at this threshold)
            for spelling, measure in spelled.items():
                assert row[parse_metric(spelling).name] == pytest.approx(
                    theirs.get((query, str(measure)), 0.0), abs=1e-12), (spelling, str(measure), query)
                compared += 1
    assert compared > 2000


def test_trec_eval_names_match_pytrec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = random.Random(7)
    for _ in range(40):
        qrels, run = _case(rng)
        rel = rng.choice([1, 2, 3])
        ours = _harness(TREC_EVAL, 1000, rel, qrels, run)
        theirs = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_EVAL), relevance_level=rel).evaluate(run)
        for query, row in ours.items():
            for trec_name, name in TREC_EVAL.items():
                assert [m.name for m in metrics_for([trec_name], [1000])] == [name]
                assert row[name] == pytest.approx(theirs[query][trec_name], abs=1e-12), trec_name

@pytest.mark.parametrize("names, expected", [
    (["P@5", "P_5", "p.5", "precision@5", "P @ 5"], ["P@5"]),  # one metric, however often it is named
    (["MAP@10", "AP@10", "map_cut_10"], ["MAP@10"]),
    (["NDCG_exp", "ndcg_exp_cut_3"], ["NDCG_exp@1", "NDCG_exp@3"]),  # family over k, then a duplicate
    (["NDCG_trec@3", "NDCG@3"], ["NDCG@3"]),  # the default scheme's suffix is left out of the name
])
def test_duplicates_collapse_to_one_name(names, expected):
    assert [m.name for m in metrics_for(names, [1, 3])] == expected


def test_fractional_threshold_with_integer_grades_is_the_next_grade():
    # grade >= 1.5 on integer grades is grade >= 2: pytrec_eval's relevance_level=2 is the oracle.
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = random.Random(3)
    for _ in range(20):
        qrels, run = _case(rng)
        ours = _harness(["P@5", "bpref", "AP", "R-Prec"], 5, 1.5, qrels, run)
        oracle = pytrec_eval.RelevanceEvaluator(qrels, {"P_5", "bpref", "map", "Rprec"}, relevance_level=2)
        theirs = oracle.evaluate(run)
        for query, row in ours.items():
            assert [row["P@5"], row["bpref"], row["AP"], row["R-Prec"]] == pytest.approx(
                [theirs[query][m] for m in ("P_5", "bpref", "map", "Rprec")], abs=1e-12)

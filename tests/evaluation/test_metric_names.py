"""Metric names (canonical, aliases, scheme suffixes, cutoff rules), input validation, float grades
from a BEIR qrels file, and the no-relevant-query corner."""

from __future__ import annotations

import numpy as np
import pytest

from harness.datasets.beir import load_qrels_tsv
from harness.evaluation import Evaluator, metrics_for, parse_metric
from harness.evaluation.metrics import AP, DCG, MAP, NDCG, Bpref, Judged, RPrecision, Success
from harness.qrels import Qrels
from harness.run import Run


@pytest.mark.parametrize("text, expected, canonical", [
    ("NDCG@10", NDCG(10), "NDCG@10"),
    ("ndcg_cut_10", NDCG(10), "NDCG@10"),
    ("NDCG_trec@10", NDCG(10), "NDCG@10"),
    ("nDCG_exp@10", NDCG(10, "exp"), "NDCG_exp@10"),
    ("ndcg_jarvelin_cut_5", NDCG(5, "jarvelin"), "NDCG_jarvelin@5"),
    ("DCG@3", DCG(3), "DCG@3"),
    ("DCG_jarvelin@10", DCG(10, "jarvelin"), "DCG_jarvelin@10"),
    ("AP", AP(), "AP"),
    ("map", AP(), "AP"),  # trec_eval's map: no cutoff
    ("MAP@100", MAP(100), "MAP@100"),
    ("AP@10", MAP(10), "MAP@10"),
    ("map_cut.1000", MAP(1000), "MAP@1000"),
    ("Rprec", RPrecision(), "R-Prec"),
    ("R-Prec", RPrecision(), "R-Prec"),
    ("bpref", Bpref(), "bpref"),
    ("success_1", Success(1), "Success@1"),
    ("Accuracy@10", Success(10), "Success@10"),  # BEIR's name
    ("Judged@10", Judged(10), "Judged@10"),
])
def test_names(text, expected, canonical):
    metric = parse_metric(text)
    assert metric == expected and metric.name == canonical
    assert parse_metric(canonical) == metric  # canonical names round-trip


@pytest.mark.parametrize("text, message", [
    ("NDCG_foo@10", "unknown metric"),
    ("NDCG", "needs a cutoff"),
    ("DCG_exp", "needs a cutoff"),
    ("bpref@10", "takes no cutoff"),
    ("R-Prec@5", "takes no cutoff"),
    ("Success@0", "needs a cutoff k >= 1"),
    ("P_exp@10", "unknown metric"),  # only the DCG family has schemes
])
def test_bad_names(text, message):
    with pytest.raises(ValueError, match=message):
        parse_metric(text)


def test_bad_scheme_object():
    with pytest.raises(ValueError, match="unknown DCG scheme"):
        NDCG(10, "log")


def test_metric_lists_expand_families_over_k():
    names = [m.name for m in metrics_for(["NDCG_exp", "MAP", "AP", "bpref", "P@3", "NDCG_exp@1"], [1, 10])]
    assert names == ["NDCG_exp@1", "NDCG_exp@10", "MAP@1", "MAP@10", "AP", "bpref", "P@3"]
    evaluator = Evaluator(["Success", "R-Prec"], k_values=[1, 5])
    assert [m.name for m in evaluator.metrics] == ["Success@1", "Success@5", "R-Prec"]


@pytest.mark.parametrize("threshold", [0, -1, float("nan"), float("inf")])
def test_threshold_must_be_positive_and_finite(threshold):
    with pytest.raises(ValueError, match="relevance threshold"):
        Evaluator(["P@1"], relevance_threshold=threshold)


def test_float_grades_from_a_beir_qrels_file(tmp_path):
    path = tmp_path / "test.tsv"
    path.write_text("query-id\tcorpus-id\tscore\r\nq1\td1\t0.75\r\nq1\td2\t0.25\r\nq2\td1\t1e-1\r\n")
    qrels = load_qrels_tsv(path)
    assert qrels.grades.tolist() == [0.75, 0.25, 0.1]
    run = Run.from_dict({"q1": {"d1": 1.0, "d2": 2.0}, "q2": {"d1": 1.0}})
    result = Evaluator(["P@1", "NDCG@2", "bpref"], relevance_threshold=0.5).evaluate(run, qrels)
    # Only q1 has a grade >= 0.5. Ranking d2 (0.25), d1 (0.75): P@1 = 0; nDCG@2 uses the floats:
    # (0.25 + 0.75 / log2 3) / (0.75 + 0.25 / log2 3); bpref: d1 has d2 (judged non-relevant) above.
    assert result.query_ids.tolist() == ["q1"]
    assert result.values["P@1"].tolist() == [0.0]
    expected = (0.25 + 0.75 / np.log2(3)) / (0.75 + 0.25 / np.log2(3))
    assert result.values["NDCG@2"][0] == pytest.approx(expected, abs=1e-12)
    assert result.values["bpref"].tolist() == [0.0]  # 1 - min(1, R=1) / min(N=1, R=1)


def test_no_query_with_a_relevant_judgment():
    run = Run.from_dict({"q1": {"d1": 1.0}})
    qrels = Qrels.from_rows([("q1", "d1", 1.0)])
    result = Evaluator(["NDCG@10", "bpref", "Judged@10"], relevance_threshold=2).evaluate(run, qrels)
    assert result.n_queries == 0 and result.n_without_relevant == 1
    assert result.means == {"NDCG@10": 0.0, "bpref": 0.0, "Judged@10": 0.0}


def test_judged_and_success_by_hand(ranking):
    # Ranking: judged 0, unjudged, judged 2, unjudged; 4 retrieved. Judged@10 divides by
    # min(10, 4) retrieved, as ir_measures' Judged@k.
    run, qrels = ranking({"q": [0, None, 2, None]})
    values = Evaluator(["Judged@1", "Judged@3", "Judged@10", "Success@2", "Success@3"]).evaluate(run, qrels)
    assert values.per_query()["q"] == pytest.approx(
        {"Judged@1": 1.0, "Judged@3": 2 / 3, "Judged@10": 2 / 4, "Success@2": 0.0, "Success@3": 1.0})


def test_a_family_without_cutoffs_to_expand_over_is_refused_not_dropped():
    # Evaluator(["NDCG", "P@5"], k_values=[]) computed P@5 alone: NDCG vanished without a word.
    with pytest.raises(ValueError, match=r"^NDCG is computed at every cutoff, and no cutoff is given"):
        Evaluator(["NDCG", "P@5"], k_values=[])
    assert [m.name for m in Evaluator(["AP", "P@5"], k_values=[]).metrics] == ["AP", "P@5"]

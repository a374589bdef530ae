"""The evaluator's contract beyond trec_eval: which queries count, identical ids, BEIR's MRR/R_cap."""

from __future__ import annotations

import pytest

from harness.evaluation import Evaluator, evaluate, parse_metric
from harness.qrels import Qrels
from harness.run import Run


def per_query(run: dict, qrels: dict, **options):
    result = evaluate(Run.from_dict(run), Qrels.from_dict(qrels), **options)
    return result, result.per_query()


def test_mrr_from_metric_examples_b5():
    # shared/metric-examples.md B5: first relevant at rank 3 (q1) and rank 1 (q2) -> MRR@5 = (1/3 + 1) / 2.
    qrels = {"q1": {"c": 1}, "q2": {"x": 1}}
    run = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 2.0, "y": 1.0}}
    result, _ = per_query(run, qrels, metrics=["MRR@5"])
    assert result.means["MRR@5"] == pytest.approx(0.666667, abs=1e-6)


def test_recall_and_rcap_from_metric_examples_b6():
    # B6: R,R,R,N,N,R,R,R,N,R with 7 relevant: Recall@5 = 3/7 = 0.428571, R_cap@5 = 3/min(5,7) = 0.6.
    pattern = "RRRNNRRRNR"
    run = {"q": {f"d{i}": float(10 - i) for i in range(10)}}
    qrels = {"q": {f"d{i}": 1 for i, c in enumerate(pattern) if c == "R"}}
    _, values = per_query(run, qrels, metrics=["Recall@5", "R_cap@5", "R_cap@10"])
    assert values["q"]["Recall@5"] == pytest.approx(0.428571, abs=1e-6)
    assert values["q"]["R_cap@5"] == pytest.approx(0.6)
    assert values["q"]["R_cap@10"] == pytest.approx(1.0)  # 7 found / min(10, 7)


def test_mrr_ignores_relevant_documents_beyond_k():
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    qrels = {"q": {"c": 2}}
    _, values = per_query(run, qrels, metrics=["MRR@2", "MRR@3"])
    assert values["q"] == {"MRR@2": 0.0, "MRR@3": pytest.approx(1 / 3)}


def test_query_missing_from_run_scores_zero_and_stays_in_the_mean():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}}
    result, values = per_query(run, qrels, metrics=["NDCG@10", "P@1"])
    assert values["q2"] == {"NDCG@10": 0.0, "P@1": 0.0}
    assert result.means["NDCG@10"] == pytest.approx(0.5)
    assert result.n_missing_from_run == 1


def test_query_without_relevant_judgment_is_left_out():
    qrels = {"q1": {"a": 1}, "q2": {"b": 0}}
    run = {"q1": {"a": 1.0}, "q2": {"b": 1.0}}
    result, values = per_query(run, qrels, metrics=["NDCG@10"])
    assert set(values) == {"q1"} and result.n_without_relevant == 1
    assert result.means["NDCG@10"] == 1.0


def test_identical_ids_dropped_by_default_and_kept_on_request():
    qrels = {"q": {"a": 1}}
    run = {"q": {"q": 2.0, "a": 1.0}}
    _, dropped = per_query(run, qrels, metrics=["P@1"])
    _, kept = per_query(run, qrels, metrics=["P@1"], ignore_identical_ids=False)
    assert dropped["q"]["P@1"] == 1.0 and kept["q"]["P@1"] == 0.0


def test_ndcg_uses_unretrieved_judged_grades_in_the_ideal():
    # metric-examples G5: ranking 3,2,3,0,1,2 plus unretrieved grades 3 and 2 -> nDCG@6 = 0.785002.
    grades = [3, 2, 3, 0, 1, 2]
    run = {"q": {f"d{i}": float(10 - i) for i in range(6)}}
    qrels = {"q": {**{f"d{i}": g for i, g in enumerate(grades)}, "u1": 3, "u2": 2}}
    _, values = per_query(run, qrels, metrics=["NDCG@6"])
    assert values["q"]["NDCG@6"] == pytest.approx(0.785002, abs=1e-6)


def test_runs_read_in_any_order_are_ranked_canonically():
    shuffled = Run.from_dict({"q": {"a": 1.0, "c": 3.0, "b": 3.0}})
    assert not shuffled.is_canonical()
    assert shuffled.canonical().doc_ids(0) == ["c", "b", "a"]


@pytest.mark.parametrize("name,canonical", [("nDCG@10", "NDCG@10"), ("ndcg_cut_10", "NDCG@10"),
                                            ("P_5", "P@5"), ("recall.100", "Recall@100"), ("mrr@10", "MRR@10"),
                                            ("R_cap@3", "R_cap@3"), ("map_cut.1000", "MAP@1000")])
def test_metric_names_parse_to_canonical_names(name, canonical):
    assert parse_metric(name).name == canonical


@pytest.mark.parametrize("bad", ["NDCG", "foo@10", "P@0", "@10"])
def test_bad_metric_names_are_refused(bad):
    with pytest.raises(ValueError):
        parse_metric(bad)


def test_evaluator_refuses_bad_options():
    with pytest.raises(ValueError):
        Evaluator(k_values=[0])
    with pytest.raises(ValueError):
        Evaluator(relevance_threshold=0)


@pytest.mark.parametrize("distinct_scores", [2, 50, 10_000])
def test_canonical_order_matches_a_reference_sort(distinct_scores):
    # Exercises both tie paths (few groups: per-group sort; many groups: vocabulary ranks) and uneven lengths.
    import random

    rng = random.Random(distinct_scores)
    results = {f"q{q}": {f"d{rng.randrange(5000)}": float(rng.randrange(distinct_scores))
                         for _ in range(rng.choice([1, 5, 300]))} for q in range(40)}
    run = Run.from_dict(results).canonical()
    assert run.is_canonical()
    for i, qid in enumerate(run.query_ids.tolist()):
        expected = sorted(results[qid], key=lambda d: (results[qid][d], d), reverse=True)
        assert run.doc_ids(i) == expected


def test_ties_among_non_ascii_ids_follow_python_string_order():
    # Code-point order, as trec_eval's strcmp on UTF-8 bytes: "é" (U+00E9) > "z" > "Z" > "B" > "9" > "10".
    ids = ["10", "9", "B", "Z", "z", "é", "ab", "a"]
    run = Run.from_dict({"q": {d: 1.0 for d in ids}}).canonical()
    assert run.doc_ids(0) == sorted(ids, reverse=True) == ["é", "z", "ab", "a", "Z", "B", "9", "10"]

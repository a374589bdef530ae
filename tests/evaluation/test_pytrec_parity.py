"""BEIR's six metrics at k in {1, 3, 5, 10, 100, 1000} against pytrec_eval, per query, to 1e-9.

Oracle: pytrec_eval (trec_eval 9) on the same run after our identical-id rule, on random runs with
heavy score ties (broken by doc id in string order), graded qrels, unjudged and unretrieved
documents. trec_eval has no MRR@k and no R_cap@k: MRR@k is checked as ``recip_rank`` of the run cut
to its top k, R_cap@k as ``P.k * k / min(num_rel, k)``; both also on hand-checked cases below.
pytrec_eval reports only the run's queries; we compare on the queries both report.
"""

from __future__ import annotations

import numpy as np
import pytest

from harness.evaluation import DEFAULT_FAMILIES, Evaluator, metrics_for

K = (1, 3, 5, 10, 100, 1000)
TOL = 1e-9

CASES = {
    "dense": dict(seed=1, n_queries=80, n_docs=40, max_depth=40),
    "deep": dict(seed=2, n_queries=24, n_docs=1500, max_depth=1300, score_levels=40),
    "binary": dict(seed=3, n_queries=80, n_docs=60, max_depth=60, grades=(0, 1)),
}


def _compare(ours, theirs, pairs) -> int:
    """Assert our per-query values equal theirs for (our name, function of their row) pairs."""
    common = [q for q in ours.query_ids.tolist() if q in theirs]
    index = {q: i for i, q in enumerate(ours.query_ids.tolist())}
    for name, expected in pairs:
        got = np.array([ours.values[name][index[q]] for q in common])
        want = np.array([expected(theirs[q]) for q in common])
        bad = np.flatnonzero(np.abs(got - want) > TOL)
        assert not bad.size, f"{name}: query {common[bad[0]]} ours {got[bad[0]]!r} pytrec_eval {want[bad[0]]!r}"
    return len(common)


@pytest.mark.parametrize("threshold", [1, 2])
@pytest.mark.parametrize("case", sorted(CASES))
def test_six_metrics_match_pytrec_eval(case, threshold, make_case, pytrec):
    run, qrels = make_case(**CASES[case])
    if case == "binary" and threshold == 2:
        pytest.skip("no grade 2 in binary qrels")
    ours = Evaluator(metrics_for(DEFAULT_FAMILIES, K), relevance_threshold=threshold).evaluate(run, qrels)
    measures = {f"{m}.{','.join(map(str, K))}" for m in ("ndcg_cut", "map_cut", "recall", "P")} | {"num_rel"}
    theirs = pytrec(run, qrels, measures, relevance_level=threshold)
    pairs = []
    for k in K:
        pairs += [
            (f"NDCG@{k}", lambda r, k=k: r[f"ndcg_cut_{k}"]),
            (f"MAP@{k}", lambda r, k=k: r[f"map_cut_{k}"]),
            (f"Recall@{k}", lambda r, k=k: r[f"recall_{k}"]),
            (f"P@{k}", lambda r, k=k: r[f"P_{k}"]),
            (f"R_cap@{k}", lambda r, k=k: r[f"P_{k}"] * k / min(r["num_rel"], k)),
        ]
    n_common = _compare(ours, theirs, pairs)
    assert n_common >= 15, "too few queries in common to mean anything"
    # Judged queries the run lacks (or empties by the identical-id rule) score 0 everywhere.
    missing = ~np.isin(ours.query_ids, list(theirs))
    assert missing.any() or case == "deep"
    for values in ours.values.values():
        assert np.all(values[missing] == 0)


@pytest.mark.parametrize("case", sorted(CASES))
def test_mrr_at_k_is_reciprocal_rank_of_the_top_k(case, make_case, pytrec):
    run, qrels = make_case(**CASES[case])
    ours = Evaluator([f"MRR@{k}" for k in K]).evaluate(run, qrels)
    dropped = run.without_identical_ids()
    for k in K:
        theirs = pytrec(dropped.truncated(k), qrels, {"recip_rank"}, ignore_identical_ids=False)
        assert _compare(ours, theirs, [(f"MRR@{k}", lambda r: r["recip_rank"])]) >= 15


def test_identical_ids_kept_when_asked(make_case, pytrec):
    run, qrels = make_case(seed=4, n_queries=80, n_docs=40, max_depth=40)
    assert len(run.without_identical_ids()) < len(run), "the case must contain identical ids"
    ours = Evaluator(["NDCG@10", "P@5"], ignore_identical_ids=False).evaluate(run, qrels)
    theirs = pytrec(run, qrels, {"ndcg_cut.10", "P.5"}, ignore_identical_ids=False)
    assert _compare(ours, theirs, [("NDCG@10", lambda r: r["ndcg_cut_10"]), ("P@5", lambda r: r["P_5"])]) >= 15


# Hand-checked cases (worked by hand from the definitions, not by any tool).

def test_mrr_at_k_by_hand(ranking):
    # q1: first relevant at rank 4; q2: at rank 1; q3: none retrieved relevant; q4: grade 2 at rank 2.
    run, qrels = ranking({"q1": [0, None, 0, 1, 1], "q2": [1, 0], "q3": [0, None], "q4": [None, 2, 1]},
                         {"q3": [1]})
    result = Evaluator(["MRR@1", "MRR@3", "MRR@4", "MRR@10"]).evaluate(run, qrels)
    values = result.per_query()
    assert values["q1"] == {"MRR@1": 0.0, "MRR@3": 0.0, "MRR@4": 0.25, "MRR@10": 0.25}
    assert values["q2"] == {"MRR@1": 1.0, "MRR@3": 1.0, "MRR@4": 1.0, "MRR@10": 1.0}
    assert values["q3"] == {"MRR@1": 0.0, "MRR@3": 0.0, "MRR@4": 0.0, "MRR@10": 0.0}
    assert values["q4"] == {"MRR@1": 0.0, "MRR@3": 0.5, "MRR@4": 0.5, "MRR@10": 0.5}
    assert result.means["MRR@10"] == pytest.approx((0.25 + 1 + 0 + 0.5) / 4, abs=1e-12)
    # With threshold 2 only q4's grade-2 document is relevant; q1-q3 have none and are not evaluated.
    strict = Evaluator(["MRR@10"], relevance_threshold=2).evaluate(run, qrels)
    assert strict.query_ids.tolist() == ["q4"] and strict.values["MRR@10"].tolist() == [0.5]


def test_r_cap_at_k_by_hand(ranking):
    # q1: 7 relevant, 3 in the top 5 -> R_cap@5 = 3 / min(7, 5) = 0.6, Recall@5 = 3/7.
    # q2: 2 relevant, both at ranks 4 and 9 -> R_cap@5 = 1 / min(2, 5) = 0.5, R_cap@10 = 2/2.
    run, qrels = ranking({"q1": [1, 1, 0, 1, 0, 1, 1, 1, 0, 0], "q2": [0, None, 0, 1, 0, 0, 0, 0, 1]},
                         {"q1": [1]})
    values = Evaluator(["R_cap@5", "R_cap@10", "Recall@5"]).evaluate(run, qrels).per_query()
    assert values["q1"]["R_cap@5"] == pytest.approx(0.6, abs=1e-12)
    assert values["q1"]["R_cap@10"] == pytest.approx(6 / 7, abs=1e-12)  # 6 of 7 found, min(7, 10) = 7
    assert values["q1"]["Recall@5"] == pytest.approx(3 / 7, abs=1e-12)
    assert values["q2"] == pytest.approx({"R_cap@5": 0.5, "R_cap@10": 1.0, "Recall@5": 0.5}, abs=1e-12)

"""Every worked example of /work/shared/metric-examples.md (G1-G11, B1-B7, F1-F6), reproduced as a run
and qrels and evaluated end to end. Expected values are the table's, to the digits it shows
(abs tol 1e-6); each was also re-derived by hand from the formula named in its row.
"""

from __future__ import annotations

from collections import Counter

import pytest

from harness.evaluation import Evaluator
from harness.qrels import Qrels
from harness.run import Run

TOL = 1e-6


def _value(ranking, grades_by_rank, metric, unretrieved=(), threshold=1.0, query="q"):
    run, qrels = ranking({query: grades_by_rank}, {query: list(unretrieved)})
    result = Evaluator([metric], relevance_threshold=threshold).evaluate(run, qrels)
    return result.per_query()[query][metric]


def _unretrieved(ranked, judged):
    """Grades judged for the query but absent from the ranking (multiset difference)."""
    rest = Counter(judged) - Counter(g for g in ranked if g is not None)
    return sorted(rest.elements(), reverse=True)


G1 = [5, 2, 4, 0, 1]
G6 = [1, 0, 1, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 3]
G6_JUDGED = [3, 3, 3, 2, 2, 2, 1, 1, 1, 1]
G9, G9_JUDGED = [2, 1, 2, 0], [2, 2, 1, 0]

GRADED = [
    # id, ranking, extra judged grades not retrieved, metric, expected
    ("G1", G1, [], "DCG@5", 8.648712),
    ("G2", [2, 0, 5, 1, 4], [], "DCG@5", 6.478088),
    ("G3", [5, 2, 4], [], "NDCG@3", 0.969279),
    ("G4", G1, [], "NDCG@5", 0.965862),
    ("G5", [3, 2, 3, 0, 1, 2], [3, 2], "DCG@6", 6.861127),
    ("G5", [3, 2, 3, 0, 1, 2], [3, 2], "NDCG@6", 0.785002),
    ("G6", G6, _unretrieved(G6, G6_JUDGED), "NDCG_jarvelin@10", 0.286765),
    ("G7", G6, _unretrieved(G6, G6_JUDGED), "NDCG@10", 0.315332),
    ("G7", G6, _unretrieved(G6, G6_JUDGED), "NDCG@15", 0.390489),
    ("G8", G6, _unretrieved(G6, G6_JUDGED), "DCG_jarvelin@15", 4.161422),
    ("G9", G9, _unretrieved(G9, G9_JUDGED), "DCG_jarvelin@4", 4.261860),
    ("G9", G9, _unretrieved(G9, G9_JUDGED), "NDCG_jarvelin@4", 0.920303),
    ("G10", G9, _unretrieved(G9, G9_JUDGED), "NDCG@4", 0.965195),
    ("G11", [3, 2, 3, 0, 0, 1, 2, 2, 3, 0], [], "DCG_jarvelin@10", 9.605118),
]


@pytest.mark.parametrize("example, ranked, unretrieved, metric, expected", GRADED,
                         ids=[f"{row[0]}-{row[3]}" for row in GRADED])
def test_graded_examples(example, ranked, unretrieved, metric, expected, ranking):
    assert _value(ranking, ranked, metric, unretrieved) == pytest.approx(expected, abs=TOL)


def test_g5_ideal_dcg(ranking):
    # G5's IDCG@6 = 8.740262: the DCG@6 of the ideal ranking of all judged grades (3,3,3,2,2,2,1,0),
    # checked as the DCG of a run in that order, and as DCG@6 / nDCG@6 of the actual run.
    judged = [3, 2, 3, 0, 1, 2, 3, 2]
    assert _value(ranking, sorted(judged, reverse=True), "DCG@6") == pytest.approx(8.740262, abs=TOL)
    run, qrels = ranking({"q": [3, 2, 3, 0, 1, 2]}, {"q": [3, 2]})
    values = Evaluator(["DCG@6", "NDCG@6"]).evaluate(run, qrels).per_query()["q"]
    assert values["DCG@6"] / values["NDCG@6"] == pytest.approx(8.740262, abs=TOL)


def test_g6_unretrieved_grades_are_the_judged_remainder():
    # Guard on the example's construction: retrieved 1,1,3,2,3 plus unretrieved = judged grades.
    assert _unretrieved(G6, G6_JUDGED) == [3, 2, 2, 1, 1]
    assert _unretrieved(G9, G9_JUDGED) == []


# Binary relevance. R = 1, N = 0, U = unjudged.
B2 = [1 if r in (1, 3, 6, 10, 15) else 0 for r in range(1, 16)]
B2_MISSING = [1] * 5  # 10 relevant in the collection, 5 retrieved
B6 = [1, 1, 1, 0, 0, 1, 1, 1, 0, 1]
B7 = [0, 1, None, 1, None, 0, 0, 0, 1, 0, 1]

BINARY = [
    ("B1", [1, 1, 1, 0, 0], [], "P@5", 0.6),
    ("B1", [0, 0, 1, 1, 1], [], "P@5", 0.6),
    ("B2", B2, B2_MISSING, "P@3", 0.666667),
    ("B2", B2, B2_MISSING, "P@10", 0.4),
    ("B2", B2, B2_MISSING, "Recall@15", 0.5),
    ("B3", B2, B2_MISSING, "AP", 0.29),
    ("B3", B2, B2_MISSING, "MAP@15", 0.29),  # all relevant retrieved are within 15
    ("B4", B2, B2_MISSING, "R-Prec", 0.4),
    ("B6", B6, [], "Recall@5", 0.428571),
    ("B6", B6, [], "R_cap@5", 0.6),
    ("B7", B7, [], "bpref", 0.375),
]


@pytest.mark.parametrize("example, ranked, unretrieved, metric, expected", BINARY,
                         ids=[f"{row[0]}-{row[3]}-{i}" for i, row in enumerate(BINARY)])
def test_binary_examples(example, ranked, unretrieved, metric, expected, ranking):
    assert _value(ranking, ranked, metric, unretrieved) == pytest.approx(expected, abs=TOL)


def test_b1_both_rankings_in_one_run(ranking):
    run, qrels = ranking({"a": [1, 1, 1, 0, 0], "b": [0, 0, 1, 1, 1]})
    result = Evaluator(["P@5"]).evaluate(run, qrels)
    assert result.values["P@5"].tolist() == pytest.approx([0.6, 0.6], abs=TOL)


def test_b5_mrr(ranking):
    run, qrels = ranking({"q1": [0, 0, 1, 0, 0], "q2": [1, 0, 0, 0, 0]})
    result = Evaluator(["MRR@5"]).evaluate(run, qrels)
    assert result.per_query() == {"q1": pytest.approx({"MRR@5": 1 / 3}), "q2": {"MRR@5": 1.0}}
    assert result.means["MRR@5"] == pytest.approx(0.666667, abs=TOL)


def test_b6_has_seven_relevant(ranking):
    # The known slip divides Recall@5 by 8; the ranking holds 7 relevant documents.
    run, qrels = ranking({"q": B6})
    assert Evaluator(["Recall@5"]).judge(run, qrels).n_relevant.tolist() == [7]


def test_b7_bpref_terms(ranking):
    # bpref = (0.75 + 0.75 + 0 + 0) / 4: N = 5 judged non-relevant, so min(N, R) = 4; the unjudged
    # documents at ranks 3 and 5 are skipped. Removing the unjudged ones leaves bpref unchanged;
    # judging them non-relevant lowers it (the relevant at rank 4 then has 2 non-relevant above).
    assert _value(ranking, B7, "bpref") == pytest.approx(0.375, abs=TOL)
    assert _value(ranking, [g for g in B7 if g is not None], "bpref") == pytest.approx(0.375, abs=TOL)
    judged_nonrel = [0 if g is None else g for g in B7]
    assert _value(ranking, judged_nonrel, "bpref") == pytest.approx((0.75 + 0.5 + 0 + 0) / 4, abs=TOL)


# Float relevance: three queries, each ranking d1, d2, d3, d4.
FLOAT_GRADES = {
    "q1": {"d1": 1.0, "d2": 0.5, "d3": 0.3, "d4": 0.1},
    "q2": {"d1": 0.7, "d2": 1.0, "d3": 0.2, "d4": 0.1},
    "q3": {"d1": 0.4, "d2": 0.2, "d3": 1.0, "d4": 0.1},
}
FLOAT = [
    ("F1", "NDCG@2", [1.0, 0.923198, 0.420152], 0.781117),
    ("F2", "NDCG_exp@2", [1.0, 0.900587, 0.343984], 0.748190),
    ("F3", "P@2", [1.0, 1.0, 0.0], 0.666667),
    ("F4", "MRR@2", [1.0, 1.0, 0.0], 0.666667),
    ("F5", "Recall@2", [1.0, 1.0, 0.0], 0.666667),
    ("F6", "MAP@2", [1.0, 1.0, 0.0], 0.666667),
]


def _float_case() -> tuple[Run, Qrels]:
    run = Run.from_dict({q: {"d1": 4.0, "d2": 3.0, "d3": 2.0, "d4": 1.0} for q in FLOAT_GRADES})
    return run, Qrels.from_dict(FLOAT_GRADES)


@pytest.mark.parametrize("example, metric, per_query, mean", FLOAT, ids=[row[0] for row in FLOAT])
def test_float_relevance_examples(example, metric, per_query, mean):
    run, qrels = _float_case()
    result = Evaluator([metric], relevance_threshold=0.5).evaluate(run, qrels)
    assert result.query_ids.tolist() == ["q1", "q2", "q3"]
    assert result.values[metric].tolist() == pytest.approx(per_query, abs=TOL)
    assert result.means[metric] == pytest.approx(mean, abs=TOL)


def test_float_threshold_changes_binary_metrics_only():
    # At the default threshold 1 only grade-1.0 documents are relevant: q3's d3 is at rank 3, so
    # P@2 = (0.5, 0.5, 0); the nDCG@2 gains are the float grades either way.
    run, qrels = _float_case()
    result = Evaluator(["P@2", "NDCG@2"]).evaluate(run, qrels)
    assert result.values["P@2"].tolist() == pytest.approx([0.5, 0.5, 0.0], abs=TOL)
    assert result.values["NDCG@2"].tolist() == pytest.approx([1.0, 0.923198, 0.420152], abs=TOL)

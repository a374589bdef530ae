"""Per-query parity with pytrec_eval (trec_eval 9), the oracle for BEIR's published numbers.

pytrec_eval reports only queries that are in the run; our evaluator keeps queries with at least one
relevant judgment (and scores absent ones 0). Values are compared on queries present in both.

The second half checks BEIR's six metrics at k in {1, 3, 5, 10, 100, 1000} at relevance thresholds
1 and 2 on random runs with heavy score ties, graded qrels, identical ids and unjudged/unretrieved
documents (cases from ``conftest.random_case``). trec_eval has no MRR@k and no R_cap@k: MRR@k is
checked as ``recip_rank`` of the run cut to its top k, R_cap@k as ``P.k * k / min(num_rel, k)``;
both also on hand-checked cases.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from harness.evaluation import DEFAULT_FAMILIES, Evaluator, evaluate, metrics_for
from harness.qrels import Qrels
from harness.run import Run

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier (dev extra) is the test oracle")

K = (1, 3, 5, 10, 100, 1000)
TREC_NAMES = {"NDCG": "ndcg_cut", "MAP": "map_cut", "Recall": "recall", "P": "P"}


def pytrec_values(qrels: dict, run: dict) -> dict:
    measures = {f"{name}.{','.join(map(str, K))}" for name in TREC_NAMES.values()}
    no_self = {q: {d: s for d, s in docs.items() if d != q} for q, docs in run.items()}
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(no_self)


def assert_parity(qrels: dict, run: dict) -> int:
    ours = evaluate(Run.from_dict(run), Qrels.from_dict(qrels), k_values=K).per_query()
    reference = pytrec_values(qrels, run)
    compared = 0
    for qid, values in reference.items():
        if not any(g >= 1 for g in qrels[qid].values()):
            assert qid not in ours  # no relevant judgment: left out by contract
            continue
        for family, trec in TREC_NAMES.items():
            for k in K:
                assert ours[qid][f"{family}@{k}"] == pytest.approx(values[f"{trec}_{k}"], abs=1e-9), (qid, family, k)
                compared += 1
    return compared


def random_case(seed: int, n_queries: int = 150, n_docs: int = 400):
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        judged = {f"d{rng.randrange(n_docs)}" for _ in range(rng.randrange(1, 30))}
        qrels[qid] = {d: rng.choice([0, 1, 1, 2, 3]) for d in judged}
        if rng.random() < 0.1:
            continue  # a judged query missing from the run
        coarse = rng.random() < 0.5  # few distinct scores -> heavy ties
        docs = {f"d{rng.randrange(n_docs)}" for _ in range(rng.randrange(1, 1200))}
        run[qid] = {d: float(rng.randrange(4)) / 2 if coarse else rng.random() for d in docs}
        if rng.random() < 0.2:
            run[qid][qid] = 5.0  # identical id: dropped on both sides
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_tie_heavy_graded_runs_match_pytrec_eval(seed):
    qrels, run = random_case(seed)
    assert assert_parity(qrels, run) > 2000


def test_ties_are_broken_by_document_id_descending():
    # Three documents tie; trec_eval ranks them c, b, a (id descending). Only "a" is relevant.
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    values = evaluate(Run.from_dict(run), Qrels.from_dict(qrels), k_values=[1, 3]).per_query()["q"]
    assert values["MRR@3"] == pytest.approx(1 / 3)
    assert values["P@1"] == 0.0
    assert_parity(qrels, run)


def _bm25_parity(folder, bm25_top1000):
    ds, run = bm25_top1000(folder)
    return assert_parity(ds.qrels.to_dict(), run.to_dict())


def test_bm25_run_on_scifact_matches_pytrec_eval(scifact_dir, bm25_top1000):
    assert _bm25_parity(scifact_dir, bm25_top1000) == 300 * 4 * len(K)


def test_bm25_run_on_nfcorpus_matches_pytrec_eval(nfcorpus_dir, bm25_top1000):
    assert _bm25_parity(nfcorpus_dir, bm25_top1000) == 323 * 4 * len(K)


def test_float32_scores_keep_their_ties():
    # Scores one float32 ulp apart stay apart under float32 ranking (trec_eval 9's float sim).
    qrels = {"q": {"a": 1}}
    s = np.float32(0.1)
    run = {"q": {"a": float(s), "b": float(np.nextafter(s, np.float32(1)))}}
    values = evaluate(Run.from_dict(run), Qrels.from_dict(qrels), k_values=[1]).per_query()["q"]
    assert values["P@1"] == 0.0  # b scores higher by one float32 ulp
    assert_parity(qrels, run)


# --- thresholds, MRR@k, R_cap@k ------------------------------------------------------------------

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


THRESHOLD_CASES = [(case, t) for case in sorted(CASES) for t in (1, 2) if (case, t) != ("binary", 2)]  # no grade 2


@pytest.mark.parametrize("case, threshold", THRESHOLD_CASES)
def test_six_metrics_match_pytrec_eval(case, threshold, make_case, pytrec):
    run, qrels = make_case(**CASES[case])
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

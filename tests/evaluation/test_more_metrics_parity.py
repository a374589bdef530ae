"""R-Prec, bpref, Success@k, AP and nDCG@k against pytrec_eval, and the exp scheme against trec_eval's
``ndcg`` with gain parameters; the metrics trec_eval lacks (DCG@k, the jarvelin scheme, Judged@k)
against a plain-Python reference written from their definitions. Per query, to 1e-9.

Oracle: pytrec_eval (trec_eval 9) measures ``Rprec``, ``bpref``, ``success``, ``map``, ``ndcg_cut``
on the run after our identical-id rule, on random tie-heavy runs with graded qrels (one case with
negative grades, trec_eval's "in the pool, not judged"), and on a run of random tied scores over the
real SciFact qrels and document ids (ids of different lengths, so string-order tie-breaking
matters). pytrec_eval reports only the run's queries; we compare on the queries both report.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.evaluation import Evaluator
from harness.qrels import Qrels
from harness.run import Run

TOL = 1e-9
SUCCESS_K = (1, 3, 5, 10, 100)
NDCG_K = (1, 5, 10, 100)

CASES = {
    "dense": dict(seed=11, n_queries=80, n_docs=40, max_depth=40),
    "deep": dict(seed=12, n_queries=24, n_docs=1500, max_depth=1300, score_levels=40),
    "binary": dict(seed=13, n_queries=80, n_docs=60, max_depth=60, grades=(0, 1)),
    "negative": dict(seed=14, n_queries=80, n_docs=40, max_depth=40, grades=(-1, 0, 1, 2)),
    "few-nonrelevant": dict(seed=15, n_queries=80, n_docs=40, max_depth=40, grades=(0, 1, 1, 1, 2, 3)),
}

OUR_NAMES = ["R-Prec", "bpref", "AP", *(f"Success@{k}" for k in SUCCESS_K), *(f"NDCG@{k}" for k in NDCG_K)]
PYTREC_MEASURES = {"Rprec", "bpref", "map", f"success.{','.join(map(str, SUCCESS_K))}",
                   f"ndcg_cut.{','.join(map(str, NDCG_K))}"}


def _their_name(ours: str) -> str:
    if ours.startswith("Success@"):
        return "success_" + ours.split("@")[1]
    if ours.startswith("NDCG@"):
        return "ndcg_cut_" + ours.split("@")[1]
    return {"R-Prec": "Rprec", "bpref": "bpref", "AP": "map"}[ours]


def _assert_parity(result, theirs, names, their_name=_their_name) -> int:
    common = [q for q in result.query_ids.tolist() if q in theirs]
    index = {q: i for i, q in enumerate(result.query_ids.tolist())}
    for name in names:
        got = np.array([result.values[name][index[q]] for q in common])
        want = np.array([theirs[q][their_name(name)] for q in common])
        bad = np.flatnonzero(np.abs(got - want) > TOL)
        assert not bad.size, f"{name}: query {common[bad[0]]} ours {got[bad[0]]!r} pytrec_eval {want[bad[0]]!r}"
    return len(common)


@pytest.mark.parametrize("case, threshold",
                         [(c, t) for c in sorted(CASES) for t in (1, 2) if (c, t) != ("binary", 2)])  # no grade 2
def test_trec_eval_metrics_match_pytrec_eval(case, threshold, make_case, pytrec):
    run, qrels = make_case(**CASES[case])
    result = Evaluator(OUR_NAMES, relevance_threshold=threshold).evaluate(run, qrels)
    theirs = pytrec(run, qrels, PYTREC_MEASURES, relevance_level=threshold)
    assert _assert_parity(result, theirs, OUR_NAMES) >= 10
    # The cases must exercise bpref's min(N, R): some queries with fewer judged non-relevant than relevant.
    if case == "few-nonrelevant" and threshold == 1:
        judged = Evaluator(["bpref"]).judge(run, qrels)
        assert np.any(judged.n_nonrelevant < judged.n_relevant)


def _random_run_over_scifact(seed: int, depth: int = 1000) -> tuple[Run, Qrels]:
    """Random scores with heavy ties over SciFact's real document ids, for each judged query."""
    from harness.datasets import load_dataset

    dataset = load_dataset("scifact")  # bundled with the package
    rng = np.random.default_rng(seed)
    doc_ids = np.array(dataset.corpus.ids, dtype=object)
    relevant: dict[str, list[str]] = {}
    for q, d in zip(dataset.qrels.query_ids.tolist(), dataset.qrels.doc_ids.tolist()):
        relevant.setdefault(q, []).append(d)
    results = {}
    for q, rel_docs in relevant.items():
        picked = set(doc_ids[rng.choice(len(doc_ids), size=depth, replace=False)].tolist())
        picked.update(d for d in rel_docs if rng.random() < 0.8)
        scores = rng.integers(0, 30, size=len(picked)) / 10.0
        results[q] = dict(zip(sorted(picked), scores.tolist()))
    # Grade some judged documents 2 and add grade-0 judgments, so graded and non-relevant cases occur.
    rows = []
    for q, d, g in zip(dataset.qrels.query_ids.tolist(), dataset.qrels.doc_ids.tolist(), dataset.qrels.grades.tolist()):
        rows.append((q, d, g + float(rng.random() < 0.3)))
    for q, docs in results.items():
        ranked = list(docs)
        for d in rng.choice(ranked, size=5, replace=False).tolist():
            if d not in relevant[q]:
                rows.append((q, d, 0.0))
    return Run.from_dict(results), Qrels.from_rows(rows)


def test_parity_on_random_run_over_scifact(pytrec):
    run, qrels = _random_run_over_scifact(seed=21)
    names = OUR_NAMES + ["NDCG@1000", "P@10", "Recall@100", "MAP@1000"]
    extra = {"P@10": "P_10", "Recall@100": "recall_100", "MAP@1000": "map_cut_1000", "NDCG@1000": "ndcg_cut_1000"}
    result = Evaluator(names).evaluate(run, qrels)
    theirs = pytrec(run, qrels, PYTREC_MEASURES | {"P.10", "recall.100", "map_cut.1000", "ndcg_cut.1000"})
    n_common = _assert_parity(result, theirs, names, lambda name: extra.get(name) or _their_name(name))
    assert n_common == result.n_queries == 300  # SciFact test: 300 judged queries, all in this run
    assert 0.0 < result.means["bpref"] < 1.0 and 0.0 < result.means["R-Prec"] < 1.0


@pytest.mark.parametrize("dataset", ["scifact", "nfcorpus"])
def test_parity_on_bm25_runs(dataset, bm25_top1000, pytrec, request):
    # NFCorpus has grades 1 and 2, so threshold 2 is a real case there.
    ds, run = bm25_top1000(request.getfixturevalue(f"{dataset}_dir"))
    for threshold in (1, 2):
        result = Evaluator(OUR_NAMES, relevance_threshold=threshold).evaluate(run, ds.qrels)
        if not result.n_queries:
            continue  # SciFact has no grade 2
        theirs = pytrec(run, ds.qrels, PYTREC_MEASURES, relevance_level=threshold)
        # Queries BM25 returns nothing for are absent from pytrec_eval's output (ours: 0, as checked elsewhere).
        assert _assert_parity(result, theirs, OUR_NAMES) == result.n_queries - result.n_missing_from_run > 100


@pytest.mark.parametrize("case", ["dense", "deep", "few-nonrelevant"])
def test_ndcg_exp_matches_trec_eval_ndcg_with_gain_parameters(case, make_case):
    """trec_eval's ``ndcg`` (whole ranking) takes a relevance -> gain map, ``ndcg.1=1,2=3,3=7``: with
    gains 2^rel - 1 it is nDCG_exp over the whole ranking, which NDCG_exp@k is once k exceeds every
    ranking and every query's number of positive grades. pytrec_eval's Python wrapper refuses the
    ``=`` syntax, so this calls its extension module directly (on the run after our identical-id rule).
    """
    ext = pytest.importorskip("pytrec_eval_ext", reason="pytrec_eval (the test oracle) is not installed")
    run, qrels = make_case(**CASES[case])
    k = 100_000
    assert k > max(np.diff(run.offsets)) and k > len(qrels)  # beyond any ranking and any query's judgments
    grades = sorted({int(g) for g in qrels.grades.tolist() if g > 0})
    measure = "ndcg." + ",".join(f"{g}={2 ** g - 1}" for g in grades)
    judged = {q: docs for q, docs in qrels.to_dict().items() if docs}
    results = {q: docs for q, docs in run.without_identical_ids().to_dict().items() if docs}
    theirs = ext.RelevanceEvaluator(judged, {measure}, 1, False).evaluate(results)
    result = Evaluator([f"NDCG_exp@{k}"]).evaluate(run, qrels)
    values = result.per_query()
    common = [q for q in values if q in theirs]
    assert len(common) >= 10
    for q in common:
        assert values[q][f"NDCG_exp@{k}"] == pytest.approx(theirs[q]["ndcg"], abs=TOL), q


# --- plain-Python reference for the metrics trec_eval does not have ---------------------------------

def _reference(run: Run, qrels: Qrels, k: int, scheme: str, threshold: float = 1.0) -> dict[str, dict[str, float]]:
    """DCG@k, nDCG@k and Judged@k per query from the definitions, one document at a time."""
    def gain(g):
        return (2.0 ** g - 1.0) if scheme == "exp" else g

    def disc(i):
        return max(1.0, math.log2(i)) if scheme == "jarvelin" else math.log2(i + 1)

    judgments = qrels.to_dict()
    out = {}
    for q, docs in run.to_dict().items():
        grades = judgments.get(q)
        if not grades or not any(g >= threshold for g in grades.values()):
            continue
        ranked = sorted(((s, d) for d, s in docs.items() if d != q), reverse=True)[:k]  # ties: id desc
        dcg = sum(gain(grades[d]) / disc(i) for i, (_, d) in enumerate(ranked, 1) if grades.get(d, 0) > 0)
        ideal = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
        idcg = sum(gain(g) / disc(i) for i, g in enumerate(ideal, 1))
        judged = sum(d in grades for _, d in ranked)
        out[q] = {"DCG": dcg, "NDCG": dcg / idcg if idcg else 0.0, "Judged": judged / len(ranked) if ranked else 0.0}
    return out


@pytest.mark.parametrize("scheme", ["trec", "exp", "jarvelin"])
@pytest.mark.parametrize("case", ["dense", "negative", "deep"])
def test_dcg_schemes_and_judged_match_reference(case, scheme, make_case):
    run, qrels = make_case(**CASES[case])
    for k in (1, 2, 3, 10, 100):
        suffix = "" if scheme == "trec" else f"_{scheme}"
        result = Evaluator([f"DCG{suffix}@{k}", f"NDCG{suffix}@{k}", f"Judged@{k}"]).evaluate(run, qrels)
        want = _reference(run, qrels, k, scheme)
        assert len(want) >= 10
        got = result.per_query()
        for q, row in want.items():
            assert got[q][f"DCG{suffix}@{k}"] == pytest.approx(row["DCG"], abs=TOL), (q, k)
            assert got[q][f"NDCG{suffix}@{k}"] == pytest.approx(row["NDCG"], abs=TOL), (q, k)
            assert got[q][f"Judged@{k}"] == pytest.approx(row["Judged"], abs=TOL), (q, k)


def test_float_grades_match_reference(make_case):
    """Float grades (e.g. click rates): gains are the floats; the threshold decides relevance."""
    run, qrels = make_case(**CASES["dense"])
    rng = np.random.default_rng(5)
    floats = Qrels(qrels.query_ids, qrels.doc_ids, np.round(rng.random(len(qrels)) * 2.0, 3))
    for scheme in ("trec", "exp", "jarvelin"):
        suffix = "" if scheme == "trec" else f"_{scheme}"
        result = Evaluator([f"NDCG{suffix}@10", f"DCG{suffix}@10"], relevance_threshold=0.75).evaluate(run, floats)
        want = _reference(run, floats, 10, scheme, threshold=0.75)
        got = result.per_query()
        assert set(got) >= set(want) and len(want) >= 10
        for q, row in want.items():
            assert got[q][f"NDCG{suffix}@10"] == pytest.approx(row["NDCG"], abs=TOL)
            assert got[q][f"DCG{suffix}@10"] == pytest.approx(row["DCG"], abs=TOL)

"""Per-query parity with pytrec_eval (trec_eval 9), the oracle for BEIR's published numbers.

pytrec_eval reports only queries that are in the run; our evaluator keeps queries with at least one
relevant judgment (and scores absent ones 0). Values are compared on queries present in both.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from harness.evaluation import evaluate
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


def _bm25_parity(folder):
    from harness.datasets.beir import load_beir_folder
    from retrievers import create

    ds = load_beir_folder(folder)
    retriever = create("bm25", backend="rank-bm25")
    retriever.index(ds.corpus)
    run = retriever.search(ds.queries, 1000)
    return assert_parity(ds.qrels.to_dict(), run.to_dict())


def test_bm25_run_on_scifact_matches_pytrec_eval(scifact_dir):
    assert _bm25_parity(scifact_dir) == 300 * 4 * len(K)


def test_bm25_run_on_nfcorpus_matches_pytrec_eval(nfcorpus_dir):
    assert _bm25_parity(nfcorpus_dir) == 323 * 4 * len(K)


def test_float32_scores_keep_their_ties():
    # Scores that differ in float64 but tie after float32 rounding: we rank the values as given.
    qrels = {"q": {"a": 1}}
    s = np.float32(0.1)
    run = {"q": {"a": float(s), "b": float(np.nextafter(s, np.float32(1)))}}
    values = evaluate(Run.from_dict(run), Qrels.from_dict(qrels), k_values=[1]).per_query()["q"]
    assert values["P@1"] == 0.0  # b scores higher by one float32 ulp
    assert_parity(qrels, run)

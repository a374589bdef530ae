"""Randomized per-query parity with trec_eval 9 (pytrec_eval, in-process) on the cases issue 13 names.

Each case mixes: scores equal in float32 but not in float64 (trec_eval 9 ties them; document id
descending wins), integer-score ties, short rankings (fewer documents than the cutoffs), graded
qrels with negative grades, judged queries missing from the run (trec_eval ``-c``: 0 here; pytrec_eval
leaves them out, so they are checked to be 0) and identical query/document ids (dropped on both
sides). Runs go through a TREC file and both readers, as users evaluate them.
"""

from __future__ import annotations

import random

import pytest

from harness.evaluation import Evaluator
from harness.formats.columnar import read_run_columns
from harness.formats.trec import read_run, read_run_lines, write_run
from harness.qrels import Qrels
from harness.run import Run

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier (dev extra) is the test oracle")

K = (1, 3, 5, 10, 100)
CUT = {"NDCG": "ndcg_cut", "MAP": "map_cut", "Recall": "recall", "P": "P", "Success": "success"}
WHOLE = {"AP": "map", "R-Prec": "Rprec", "bpref": "bpref", "MRR@1000": "recip_rank"}


def random_case(seed: int, n_queries: int = 120, n_docs: int = 300):
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        judged = sorted({f"d{rng.randrange(n_docs)}" for _ in range(rng.randrange(1, 25))})  # sorted: same case every run
        qrels[qid] = {d: rng.choice([-1, 0, 0, 1, 1, 2, 3]) for d in judged}
        if rng.random() < 0.1:
            continue  # judged, missing from the run
        depth = rng.choice([rng.randrange(1, 6), rng.randrange(1, 400)])  # short rankings often
        docs = sorted({f"d{rng.randrange(n_docs)}" for _ in range(depth)})
        kind = rng.choice(["float32", "integer", "float"])
        if kind == "float32":  # a few float32 values, each nudged in float64 below float32's resolution
            run[qid] = {d: float(rng.randrange(5)) + 1.0 + rng.randrange(1, 50) * 1e-10 for d in docs}
        elif kind == "integer":
            run[qid] = {d: float(rng.randrange(4)) for d in docs}
        else:
            run[qid] = {d: rng.random() for d in docs}
        if rng.random() < 0.15:
            run[qid][qid] = 9.0  # identical id
    return qrels, run


def pytrec_values(qrels: dict, run: dict) -> dict:
    measures = {f"{name}.{','.join(map(str, K))}" for name in CUT.values()} | set(WHOLE.values())
    no_self = {q: {d: s for d, s in docs.items() if d != q} for q, docs in run.items()}
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate({q: d for q, d in no_self.items() if d})


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_random_cases_match_trec_eval_9_per_query(seed, tmp_path):
    qrels, run = random_case(seed)
    path = tmp_path / "run.trec"
    write_run(Run.from_dict(run), path)
    data = path.read_bytes()
    runs = [read_run(path), read_run_lines(data, path), read_run_columns(lambda: data)]
    assert runs[2] is not None  # plain ASCII file: the columnar reader takes it
    theirs = pytrec_values(qrels, run)
    names = [f"{f}@{k}" for f in CUT for k in K] + list(WHOLE)
    float32_ties = 0
    for ranking in runs:
        result = Evaluator(names).evaluate(ranking, Qrels.from_dict(qrels))
        ours = result.per_query()
        compared = 0
        for qid, values in ours.items():
            if qid not in theirs:
                assert set(values.values()) == {0.0}, qid  # judged but missing (or emptied): 0 everywhere
                continue
            want = {f"{f}@{k}": theirs[qid][f"{t}_{k}"] for f, t in CUT.items() for k in K}
            want.update({name: theirs[qid][t] for name, t in WHOLE.items()})
            assert values == pytest.approx(want, abs=1e-12), qid
            compared += len(want)
        assert compared > 2000
    for docs in run.values():
        scores = sorted(docs.values())
        float32_ties += sum(a != b and abs(a - b) < 1e-8 for a, b in zip(scores, scores[1:]))
    assert float32_ties > 100  # the float32-only ties are really there

"""Fused values equal ranx's ``fuse`` (and chosen parameters its ``optimize_fusion``) on the same runs.

ranx is a test-only oracle (the ``dev`` extra); it runs in a subprocess (see ``ranx_oracle.py``).
The random runs (fixed seeds) have documents retrieved by one run only, queries with one document,
a query whose scores are all equal (min-max / sum floors), all-negative scores (max-norm floor) and
integer scores full of ties.

Input ties: ranx ranks a run with numpy's unstable argsort, so the order of equal scores (and with
it RRF's ranks and the ``rank`` normalisation) is arbitrary there; the harness ranks them by
document id descending, as trec_eval. For RRF and ``rank`` ranx is therefore given the harness's
ranking as strictly decreasing scores (the same ranking), and must then agree exactly.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.fusion import FusionSpec, fuse
from harness.fusion.optimize import RRF_K_GRID, optimize, weight_grid
from harness.qrels import Qrels
from harness.run import Run

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ranx") is None,
                                reason="ranx is not installed (pip install -e '.[dev]'): it is the fusion test oracle")

METHODS = {"rrf": "rrf", "combsum": "sum", "combmnz": "mnz", "combmax": "max", "combmin": "min", "wsum": "wsum"}
NORMS = {"none": None, "min-max": "min-max", "max": "max", "sum": "sum", "zmuv": "zmuv", "rank": "rank"}
WEIGHTS = [0.5, 0.2, 0.3]
CASES = [(m, n) for m in METHODS for n in NORMS if m != "rrf" or n in ("none", "min-max")]


def random_run(rng: np.random.Generator, n_queries: int = 25, pool: int = 80, kind: str = "normal",
               special: bool = True) -> dict:
    """Random scores; ``special``: q0 has one document and q1 equal scores only."""
    run = {}
    for q in range(n_queries):
        n = 1 if special and q == 0 else int(rng.integers(1 if special else 20, 40))
        docs = rng.choice(pool, size=n, replace=False)
        if kind == "ties":
            scores = np.round(rng.normal(size=n) * 2)  # integers: many equal scores
        elif kind == "negative":
            scores = -rng.exponential(size=n)  # max < 0: max-norm divides by its 1e-9 floor
        else:
            scores = rng.normal(size=n) * 3 + 5
        if special and q == 1:
            scores[:] = 2.5  # all equal: min-max and sum hit their 1e-9 floors
        run[f"q{q}"] = {f"d{d}": float(s) for d, s in zip(docs, scores)}
    return run


def as_ranking(run: Run) -> dict:
    """The harness's ranking of ``run`` as strictly decreasing scores (n, n-1, ..., 1)."""
    run = run.canonical()
    return {q: {d: float(len(run.doc_ids(i)) - j) for j, d in enumerate(run.doc_ids(i))}
            for i, q in enumerate(run.query_ids.tolist())}


def random_qrels(rng: np.random.Generator, runs: list[dict]) -> dict:
    qrels = {}
    for q in runs[0]:
        retrieved = sorted({d for run in runs for d in run[q]})
        judged = rng.choice(retrieved, size=min(len(retrieved), 8), replace=False)
        grades = rng.integers(0, 3, size=len(judged))
        grades[0] = max(grades[0], 1)  # every query has a relevant document
        qrels[q] = {str(d): int(g) for d, g in zip(judged, grades)}
    return qrels


def ask_ranx(job: dict) -> dict:
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    proc = subprocess.run([sys.executable, str(Path(__file__).with_name("ranx_oracle.py"))], input=json.dumps(job),
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(16)
    runs = [random_run(rng), random_run(rng, kind="ties"), random_run(rng, kind="negative")]
    ranked = [as_ranking(Run.from_dict(r)) for r in runs]
    opt_rng = np.random.default_rng(7)
    opt_runs = [random_run(opt_rng, n_queries=30, special=False) for _ in range(3)]
    qrels = random_qrels(opt_rng, opt_runs)
    job = {"fuse": [], "optimize": []}
    for method, norm in CASES:
        rank_based = method == "rrf" or norm == "rank"
        job["fuse"].append({"id": f"{method}/{norm}", "runs": ranked if rank_based else runs, "norm": NORMS[norm],
                            "method": METHODS[method], "params": {"weights": WEIGHTS} if method == "wsum" else {}})
    job["optimize"] = [
        {"id": "wsum2", "runs": opt_runs[:2], "qrels": qrels, "norm": "min-max", "method": "wsum",
         "metric": "ndcg@10", "grid": [{"weights": list(w)} for w in weight_grid(2)], "trec_ties": True},
        {"id": "wsum3", "runs": opt_runs, "qrels": qrels, "norm": "min-max", "method": "wsum",
         "metric": "ndcg@10", "grid": [{"weights": list(w)} for w in weight_grid(3)], "trec_ties": True},
        {"id": "rrf", "runs": [as_ranking(Run.from_dict(r)) for r in opt_runs], "qrels": qrels, "norm": None,
         "method": "rrf", "metric": "ndcg@10", "grid": [{"k": k} for k in RRF_K_GRID], "trec_ties": True},
    ]
    return {"runs": runs, "opt_runs": opt_runs, "qrels": qrels, "ranx": ask_ranx(job)}


def test_inputs_cover_the_edge_cases(data):
    a, b, _ = data["runs"]
    assert any(set(a[q]) - set(b[q]) and set(b[q]) - set(a[q]) for q in a)  # documents in one run only
    assert any(len(set(docs.values())) < len(docs) for q, docs in b.items() if q != "q1")  # score ties
    assert all(len(run["q0"]) == 1 for run in data["runs"])


@pytest.mark.parametrize("method,norm", CASES)
def test_fused_scores_equal_ranx(data, method, norm):
    expected = data["ranx"]["fuse"][f"{method}/{norm}"]
    ours = fuse([Run.from_dict(r) for r in data["runs"]], method, norm=norm,
                weights=WEIGHTS if method == "wsum" else None, depth=10_000)
    assert ours.is_canonical()
    got = ours.to_dict()
    assert list(got) == list(data["runs"][0])  # every query, in input order (ranx sorts query ids)
    for q, docs in expected.items():
        assert set(got[q]) == set(docs), q
        want = np.array([docs[d] for d in got[q]])
        have = np.array(list(got[q].values()))
        if norm == "zmuv":
            # ranx's numba kernels sum the mean / variance sequentially, as the harness does (equal
            # bit for bit); its pure-Python mode used here calls numpy's pairwise np.mean / np.std.
            np.testing.assert_allclose(have, want, rtol=1e-13, atol=1e-13, err_msg=q)
        else:
            np.testing.assert_array_equal(have, want, err_msg=q)


def test_depth_keeps_the_top_of_the_full_fusion(data):
    runs = [Run.from_dict(r) for r in data["runs"]]
    full = fuse(runs, "combmnz", depth=10_000)
    top5 = fuse(runs, "combmnz", depth=5)
    for i in range(full.n_queries):
        assert top5.doc_ids(i) == full.doc_ids(i)[:5]
        np.testing.assert_array_equal(top5.scores[top5.offsets[i]:top5.offsets[i + 1]],
                                      full.scores[full.offsets[i]:full.offsets[i] + len(top5.doc_ids(i))])


def _ours(data, method, n_runs, **kwargs):
    spec = FusionSpec.create(method, **kwargs)
    return optimize([Run.from_dict(r) for r in data["opt_runs"][:n_runs]], Qrels.from_dict(data["qrels"]), spec,
                    "NDCG@10", split="dev")


def test_optimize_wsum_two_runs_chooses_ranx_weights(data):
    ranx = data["ranx"]["optimize"]["wsum2"]
    ours = _ours(data, "wsum", 2)
    assert [list(v) for v, _ in ours.trials] == [g for g in map(list, weight_grid(2))]
    np.testing.assert_allclose([s for _, s in ours.trials], ranx["scores"], rtol=1e-12)
    assert list(ours.spec.weights) == ranx["best"]["weights"]
    assert ours.score == pytest.approx(max(ranx["scores"]), rel=1e-12)


def test_optimize_wsum_three_runs_scores_ranx_configs_alike(data):
    """Three runs: the exact grid has 66 vectors (ranx's optimize_fusion tries 62 of them: float sums)."""
    ranx = data["ranx"]["optimize"]["wsum3"]
    ours = _ours(data, "wsum", 3)
    assert len(ours.trials) == 66
    np.testing.assert_allclose([s for _, s in ours.trials], ranx["scores"], rtol=1e-12)
    assert ours.score >= max(ranx["scores"]) - 1e-12


def test_optimize_rrf_k_scores_equal_ranx_with_trec_tie_order(data):
    ranx = data["ranx"]["optimize"]["rrf"]
    ours = _ours(data, "rrf", 3)
    assert [k for k, _ in ours.trials] == list(RRF_K_GRID)
    np.testing.assert_allclose([s for _, s in ours.trials], ranx["scores"], rtol=1e-12)
    best = max(ranx["scores"])
    last_best_k = [k for k, s in zip(RRF_K_GRID, ranx["scores"]) if s >= best - 1e-12][-1]  # ranx: score >= best
    assert ours.spec.k == last_best_k

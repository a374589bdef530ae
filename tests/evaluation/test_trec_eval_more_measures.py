"""More of trec_eval's ``-m all_trec`` measures: ``11pt_avg``, ``set_F`` with a weight (``set_F.0.5``),
``set_map``, ``set_relative_P``, ``relative_P`` (``R_cap@k``), ``num_nonrel_judged_ret``, ``ndcg_rel``,
``Rndcg``, ``Rprec_mult``.

Sources of the expected values: the worked examples are printed by the trec_eval 9.0.8 and 10.0 binaries
(``trec_eval -q -c -m 11pt_avg -m set_F.0.5 ...``, built from github usnistgov/trec_eval, tag v9.0.8 and
commit f425365), each also worked by hand from the formula in the measure's docstring; the random cases
compare per query with pytrec_eval (pytrec-eval-terrier 0.5.11, trec_eval 9 in-process) to 1e-12.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys

import numpy as np
import pytest

from harness.evaluation import Evaluator, metrics_for, parse_metric
from harness.qrels import Qrels
from harness.run import Run

MULTIPLES = [f"{m / 10:.2f}" for m in range(2, 21, 2)]
REL_P_K = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
# ours -> trec_eval's printed name
MEASURES = {"11pt_avg": "11pt_avg", "set_map": "set_map", "set_relative_P": "set_relative_P",
            "num_nonrel_judged_ret": "num_nonrel_judged_ret", "ndcg_rel": "ndcg_rel", "Rndcg": "Rndcg",
            **{f"R_cap@{k}": f"relative_P_{k}" for k in REL_P_K},
            **{f"Rprec_mult_{m}": f"Rprec_mult_{m}" for m in MULTIPLES}}

# q1: judged d1 1, d2 0, d3 2, d4 -1 (in the pool, not judged); ranked d2, d9 (unjudged), d3, d4.
# q2: judged d1 1, d5 3, d6 0; missing from the run (trec_eval -c: 0 everywhere, both binaries).
EXAMPLE_QRELS = [("q1", "d1", 1), ("q1", "d2", 0), ("q1", "d3", 2), ("q1", "d4", -1),
                 ("q2", "d1", 1), ("q2", "d5", 3), ("q2", "d6", 0)]
EXAMPLE_RUN = {"q1": {"d2": 3.0, "d9": 2.0, "d3": 1.0, "d4": 0.5}}
IDEAL = 2 + 1 / math.log2(3)  # IDCG of q1's grades 2, 1


def _example(names, semantics=None):
    result = Evaluator(names, semantics=semantics).evaluate(
        Run.from_dict(EXAMPLE_RUN), Qrels.from_rows([(q, d, float(g)) for q, d, g in EXAMPLE_QRELS]))
    return result.per_query()


def test_worked_example_equals_both_binaries():
    # trec_eval 9.0.8 and 10.0 -q -c print for q1 (q2 0.0000 / 0 for every measure):
    # Rprec_mult_0.20 ... 2.00 0 0 0 0 0 0.3333 0.3333 0.25 0.25 0.25, ndcg_rel 0.3801, Rndcg 0.1267,
    # relative_P_1 0, relative_P_2 0, relative_P_10 0.5, set_relative_P 0.5, set_map 0.125, set_F_0.5 0.3,
    # num_nonrel_judged_ret 1; 11pt_avg 0.1818 (9.0.8) and 0.2424 (10.0).
    names = ["11pt_avg", "set_F.0.5", "set_map", "set_relative_P", "relative_P_1", "relative_P_2",
             "relative_P_10", "num_nonrel_judged_ret", "ndcg_rel", "Rndcg", "Rprec_mult"]
    for semantics, eleven in (("trec_eval-9", 2 / 11), ("trec_eval-10", 8 / 33)):
        ours = _example(names, semantics)
        assert set(ours) == {"q1", "q2"}
        q1 = ours["q1"]
        # R = 2, num_ret = 4, num_rel_ret = 1 (d3), judged non-relevant retrieved: d2 (d4's -1 is not judged).
        assert q1["set_map"] == 1 / 8 and q1["set_relative_P"] == 1 / 2 and q1["num_nonrel_judged_ret"] == 1
        # set_F_0.5: P = 1/4, R = 1/2: 1.5 * 1/8 / (0.5 * 1/4 + 1/2) = 0.3
        assert q1["set_F_0.50"] == pytest.approx(0.3, abs=1e-15)
        assert (q1["R_cap@1"], q1["R_cap@2"], q1["R_cap@10"]) == (0.0, 0.0, 0.5)
        # 11pt_avg: iprec is 1/3 at every level whose cutoff c is 1 (c 2: not reached); c = floor(2p + 0.9)
        # is 1 for p <= 0.5 (6 levels) under 9, lround(2p) is <= 1 for p <= 0.7 (8 levels) under 10.
        assert q1["11pt_avg"] == pytest.approx(eleven, abs=1e-15)
        # ndcg_rel: d3 at rank 3, DCG@3 / IDCG@3 = 1 / IDEAL; d1 not retrieved: DCG / IDCG = 1 / IDEAL.
        assert q1["ndcg_rel"] == pytest.approx(1 / IDEAL, abs=1e-15)
        # Rndcg: boundaries b = 1, 2 (grades 2, 1): DCG 0 at both; n = 4 >= R+ + 2: DCG / IDCG = 1 / IDEAL.
        assert q1["Rndcg"] == pytest.approx(1 / IDEAL / 3, abs=1e-15)
        # Rprec_mult_m = P@c, c = floor(2m + 0.9) = 1 1 2 2 2 3 3 4 4 4; d3 at rank 3.
        assert [q1[f"Rprec_mult_{m}"] for m in MULTIPLES] == [0.0] * 5 + [1 / 3] * 2 + [1 / 4] * 3
        assert all(v == 0.0 for v in ours["q2"].values())


def test_rndcg_final_point_only_past_r_plus_one():
    # m_Rndcg.c adds DCG / IDCG of the whole ranking only when its loop has a document left past rank R+ + 1.
    # Judged d1 2, d2 1 (R+ = 2). a: d9, d1, d2 (n = 3 = R+ + 1); b: d9, d1, d2, d8 (n = 4); c: d9.
    # Both binaries -q: Rndcg a 0.2398, b 0.3831, c 0; ndcg_rel a 0.5746, b 0.5746, c 0.
    qrels = Qrels.from_rows([(q, d, g) for q in "abc" for d, g in (("d1", 2.0), ("d2", 1.0))])
    run = Run.from_dict({"a": {"d9": 3, "d1": 2, "d2": 1}, "b": {"d9": 3, "d1": 2, "d2": 1, "d8": 0.5},
                         "c": {"d9": 3}})
    ours = Evaluator(["Rndcg", "ndcg_rel"]).evaluate(run, qrels).per_query()
    at2, at3 = (2 / math.log2(3)) / IDEAL, (2 / math.log2(3) + 1 / math.log2(4)) / IDEAL
    assert ours["a"]["Rndcg"] == pytest.approx((0 + at2) / 2, abs=1e-15)  # no point at n = 3
    assert ours["b"]["Rndcg"] == pytest.approx((0 + at2 + at3) / 3, abs=1e-15)
    assert ours["c"]["Rndcg"] == 0.0 and ours["c"]["ndcg_rel"] == 0.0
    # ndcg_rel: d1 at rank 2 (DCG@2 / IDCG@2), d2 at rank 3 (DCG@3 / IDCG@3 = IDCG).
    assert ours["a"]["ndcg_rel"] == ours["b"]["ndcg_rel"] == pytest.approx((at2 + at3) / 2, abs=1e-15)
    assert round(ours["a"]["Rndcg"], 4) == 0.2398 and round(ours["b"]["Rndcg"], 4) == 0.3831
    assert round(ours["a"]["ndcg_rel"], 4) == 0.5746


def _random_case(seed: int, n_queries: int = 150, n_docs: int = 1500):
    """Graded qrels (negative grades, R from 1 to ~40 for every recall cutoff's rounding), rankings from 1 to
    1,300 documents with integer, float32-only and distinct score ties, judged queries missing from the run."""
    import random

    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        n_judged = rng.choice([rng.randrange(1, 8), rng.randrange(1, 45)])
        judged = sorted({f"d{rng.randrange(n_docs)}" for _ in range(n_judged)})
        qrels[qid] = {d: rng.choice([-1, 0, 0, 1, 1, 2, 3, 4]) for d in judged}
        if rng.random() < 0.08:
            continue
        depth = rng.choice([rng.randrange(1, 6), rng.randrange(1, 120), rng.randrange(1000, 1300)])
        docs = sorted({f"d{rng.randrange(n_docs)}" for _ in range(depth)} | set(rng.sample(judged, len(judged) // 2)))
        kind = rng.choice(["float32", "integer", "float"])
        if kind == "float32":
            run[qid] = {d: float(rng.randrange(5)) + 1.0 + rng.randrange(1, 50) * 1e-10 for d in docs}
        elif kind == "integer":
            run[qid] = {d: float(rng.randrange(4)) for d in docs}
        else:
            run[qid] = {d: rng.random() for d in docs}
    return qrels, run


@pytest.mark.parametrize("seed, threshold", [(0, 1), (1, 2), (2, 1)])
def test_random_runs_equal_pytrec_eval(seed, threshold):
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier (dev extra) is the test oracle")
    qrels, run = _random_case(seed)
    theirs = pytrec_eval.RelevanceEvaluator(
        qrels, {"11pt_avg", "set_map", "set_relative_P", "num_nonrel_judged_ret", "ndcg_rel", "Rndcg", "relative_P",
                "Rprec_mult"}, relevance_level=threshold).evaluate(run)
    names = list(MEASURES)
    result = Evaluator(names, relevance_threshold=threshold, ignore_identical_ids=False).evaluate(
        Run.from_dict(run), Qrels.from_dict(qrels))
    ours = result.per_query()
    compared = 0
    for q, values in ours.items():
        if q not in run:  # trec_eval -c: nothing retrieved, 0 (num_rel aside, every measure here)
            assert all(v == 0.0 for v in values.values()), q
            continue
        for name, their_name in MEASURES.items():
            assert values[name] == pytest.approx(theirs[q][their_name], abs=1e-12, rel=0), (q, name)
            compared += 1
    assert compared > 2500
    # set_F with weights: trec_eval takes one weight per run (set_F.x), printed as set_F.
    for weight in ("0.5", "0.25", "2", "0"):
        their = pytrec_eval.RelevanceEvaluator(qrels, {f"set_F.{weight}"}, relevance_level=threshold).evaluate(run)
        mine = Evaluator([f"set_F.{weight}"], relevance_threshold=threshold, ignore_identical_ids=False).evaluate(
            Run.from_dict(run), Qrels.from_dict(qrels))
        (name, column), = mine.values.items()
        for q, value in zip(mine.query_ids.tolist(), column.tolist()):
            if q in their:
                assert value == pytest.approx(their[q]["set_F"], abs=1e-12, rel=0), (q, weight)
    # The branches the values hinge on are there: Rndcg's final point taken and not (n = R+ + 1), unretrieved
    # positive documents (ndcg_rel), rankings shorter than Rprec_mult's c.
    j = Evaluator(["Rndcg"], relevance_threshold=threshold, ignore_identical_ids=False).judge(
        Run.from_dict(run), Qrels.from_dict(qrels))
    positive = np.bincount(j.ideal_query, minlength=j.n_queries)
    assert ((j.n_retrieved >= positive + 2) & j.in_run).sum() > 10 and (j.n_retrieved == positive + 1).sum() >= 1
    assert (j.n_retrieved < 2 * j.n_relevant).sum() > 10


PYTREC_MEASURES = {"11pt_avg", "set_map", "set_relative_P", "num_nonrel_judged_ret", "ndcg_rel", "Rndcg", "relative_P",
                   "Rprec_mult", "set_F.0.5"}
THEIRS = {**MEASURES, "set_F_0.50": "set_F"}


def _assert_pytrec_parity(result, theirs) -> int:
    compared = 0
    for q, values in result.per_query().items():
        if q not in theirs:  # (pytrec_eval scores the run's queries only)
            continue
        for name, their_name in THEIRS.items():
            assert values[name] == pytest.approx(theirs[q][their_name], abs=1e-12, rel=0), (q, name)
            compared += 1
    return compared


@pytest.mark.parametrize("threshold", [1, 2])
def test_tie_heavy_runs_with_identical_ids_equal_pytrec_eval(threshold, make_case, pytrec):
    # conftest's random case: 4 score levels (ties broken by id in string order), queries retrieving a document
    # with their own id (dropped first, pytrec_eval given the run without it), unjudged and unretrieved documents.
    run, qrels = make_case(seed=21, n_queries=120, n_docs=80, max_depth=80)
    result = Evaluator(list(THEIRS), relevance_threshold=threshold).evaluate(run, qrels)
    assert _assert_pytrec_parity(result, pytrec(run, qrels, PYTREC_MEASURES, relevance_level=threshold)) > 2000


def test_bm25_run_on_nfcorpus_equals_pytrec_eval(nfcorpus_dir, bm25_top1000, pytrec):
    # Real graded qrels (grades 0, 1, 2) and a BM25 top-1000 run: 323 evaluated queries, 15 of them with an
    # empty ranking (0 here, absent from pytrec_eval's input), 26 values each.
    dataset, run = bm25_top1000(nfcorpus_dir)
    result = Evaluator(list(THEIRS)).evaluate(run, dataset.qrels)
    assert (result.n_queries, result.n_missing_from_run) == (323, 15)
    assert _assert_pytrec_parity(result, pytrec(run, dataset.qrels, PYTREC_MEASURES)) == 308 * len(THEIRS)


def test_names():
    assert [parse_metric(n).name for n in ("11pt_avg", "11-PT_AVG", "set_F", "set_F.1", "set_F_1.0", "set_F.0.5",
                                           "set_F_0.50", "SetF@0.25", "set_F_0")] == \
        ["11pt_avg", "11pt_avg", "set_F", "set_F", "set_F", "set_F_0.50", "set_F_0.50", "set_F_0.25", "set_F_0.00"]
    assert [parse_metric(n).name for n in ("relative_P_10", "relative_P.5", "relative_P@100")] == \
        ["R_cap@10", "R_cap@5", "R_cap@100"]
    assert [parse_metric(n).name for n in ("Rprec_mult_0.20", "Rprec_mult.1.2", "Rprec_mult@2", "Rprec_mult_1")] == \
        ["Rprec_mult_0.20", "Rprec_mult_1.20", "Rprec_mult_2.00", "Rprec_mult_1.00"]
    assert [parse_metric(n).name for n in ("set_map", "set_relative_P", "num_nonrel_judged_ret", "ndcg_rel",
                                           "Rndcg", "rndcg")] == \
        ["set_map", "set_relative_P", "num_nonrel_judged_ret", "ndcg_rel", "Rndcg", "Rndcg"]
    # In a metric list: Rprec_mult alone is trec_eval's 10 multiples, set_F alone weight 1, relative_P every k.
    assert [m.name for m in metrics_for(["Rprec_mult"], [10])] == [f"Rprec_mult_{m}" for m in MULTIPLES]
    assert [m.name for m in metrics_for(["set_F", "set_F_0.5", "11pt_avg", "relative_P"], [5, 10])] == \
        ["set_F", "set_F_0.50", "11pt_avg", "R_cap@5", "R_cap@10"]
    for name, message in (("set_F_0.555", "set_F weight must be a multiple of 0.01 from 0 to 100, got 0.555"),
                          ("Rprec_mult", "Rprec_mult needs a multiple of R, e.g. Rprec_mult_0.20"),
                          ("Rprec_mult_0.125", "Rprec_mult multiple must be a multiple of 0.01"),
                          ("ndcg_rel@10", "ndcg_rel takes no cutoff"), ("Rndcg_5", "Rndcg takes no cutoff"),
                          # trec_eval's parameters that are not provided: one line naming them
                          ("11pt_avg.0.2", "cannot parse metric name '11pt_avg.0.2': 11pt_avg takes no cutoff or "
                                           "level (trec_eval's default levels only)"),
                          ("11pt_avg@10", "11pt_avg takes no cutoff or level"),
                          ("ndcg_rel.1=3.5", "cannot parse metric name 'ndcg_rel.1=3.5': gain parameters (1=3.5) are "
                                             "not supported: ndcg_rel's gain is the grade, trec_eval's default"),
                          ("Rndcg.2=9.0", "gain parameters (2=9.0) are not supported: Rndcg's gain is the grade")):
        with pytest.raises(ValueError, match=re.escape(message)):
            parse_metric(name)


def test_existing_set_f_value_unchanged():
    # set_F (weight 1) is computed as (x + 1) P R / (x P + R) now; for x = 1 that is 2 P R / (P + R) bit for bit.
    rng = np.random.default_rng(0)
    p, r = rng.random(1000), rng.random(1000)
    assert np.array_equal((1.0 + 1.0) * p * r / (1.0 * p + r), 2.0 * p * r / (p + r))


def test_cli_takes_the_names(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in EXAMPLE_QRELS))
    run = tmp_path / "run.trec"
    run.write_text("".join(f"q1 Q0 {d} {i} {s} x\n" for i, (d, s) in enumerate(EXAMPLE_RUN["q1"].items(), 1)))
    out = subprocess.run([sys.executable, "-m", "harness", "evaluate", "--qrels", str(qrels), "--run", str(run),
                          "--k", "10", "-m", "11pt_avg,set_F.0.5,set_map,set_relative_P,relative_P,Rprec_mult",
                          "-m", "num_nonrel_judged_ret,ndcg_rel,Rndcg", "--json", str(tmp_path / "m.json")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    import json

    means = json.loads((tmp_path / "m.json").read_text())["metrics"]
    # the mean over q1 and q2 (q2 missing from the run: 0)
    assert means["11pt_avg"] == pytest.approx(1 / 11, abs=1e-15)
    assert means["set_F_0.50"] == pytest.approx(0.15, abs=1e-15) and means["set_map"] == 1 / 16
    assert means["R_cap@10"] == 0.25 and means["Rprec_mult_1.60"] == 1 / 8 and means["num_nonrel_judged_ret"] == 0.5
    assert means["ndcg_rel"] == pytest.approx(1 / IDEAL / 2, abs=1e-15)


def test_graded_measures_stay_finite_for_huge_grades():
    # Grades 2, 1.9, 1.8 scaled by 2^1022 (near the largest double: their IDCG, 4.1 * 2^1022, overflows, and
    # DCG / IDCG was inf / inf) give the values of the unscaled grades exactly: each query's gains are scaled
    # back by a power of two, as NDCG@k's (linear_shift).
    def values(scale):
        qrels = Qrels.from_rows([(q, d, g * scale) for q in "ab" for d, g in (("d1", 2.0), ("d2", 1.9), ("d3", 1.8))])
        run = Run.from_dict({"a": {"d9": 3, "d1": 2, "d2": 1, "d8": 0.5, "d7": 0.2}, "b": {"d3": 1, "d2": 0.5}})
        return Evaluator(["ndcg_rel", "Rndcg", "NDCG_all"]).evaluate(run, qrels).per_query()

    small, huge = values(1.0), values(2.0 ** 1022)
    assert huge == small and all(0 < v < 1 for row in huge.values() for v in row.values())

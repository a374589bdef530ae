"""trec_eval's ``-m official`` measures the evaluator lacked, whole-ranking nDCG and the set measures, against
trec_eval 9.

Measures: ``recip_rank`` (RR), ``ndcg`` (NDCG_all), ``num_ret``, ``num_rel``, ``num_rel_ret``,
``iprec_at_recall_0.00 ... 1.00``, ``set_P``, ``set_recall``, ``set_F``. Source of the expected values:
pytrec_eval (pytrec-eval-terrier 0.5.11, trec_eval 9 in-process), per query and summarised as trec_eval
summarises (``compute_aggregated_measure``: the sum for ``num_*``, the mean otherwise) over the same queries,
to 1e-12, on random graded runs with integer ties, float32-only ties, rankings past 1000 documents, judged
queries missing from the run (scored as ``trec_eval -c``) and queries without a relevant judgment (left out,
as every metric here). The trec_eval-10 cases (recall cutoffs rounded, scores as doubles) are worked examples
whose values the trec_eval 9.0.8 and 10.0 binaries print (built from github usnistgov/trec_eval, tag v9.0.8
and commit f425365; benchmarks/trec_eval_binaries.py compares them on random cases).
"""

from __future__ import annotations

import random
import re
import subprocess
import sys

import numpy as np
import pytest

from harness.evaluation import Evaluator, metrics_for, parse_metric
from harness.qrels import Qrels
from harness.run import Run

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier (dev extra) is the test oracle")

LEVELS = [f"{p / 10:.2f}" for p in range(11)]
# ours -> trec_eval 9's name
MEASURES = {"RR": "recip_rank", "NDCG_all": "ndcg", "num_ret": "num_ret", "num_rel": "num_rel",
            "num_rel_ret": "num_rel_ret", **{f"iprec_at_recall_{p}": f"iprec_at_recall_{p}" for p in LEVELS},
            "set_P": "set_P", "set_recall": "set_recall", "set_F": "set_F"}


def random_case(seed: int, n_queries: int = 150, n_docs: int = 1500):
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        n_judged = rng.choice([rng.randrange(1, 8), rng.randrange(1, 45)])  # R from 1 to ~40: every cutoff rounding
        judged = sorted({f"d{rng.randrange(n_docs)}" for _ in range(n_judged)})
        no_relevant = rng.random() < 0.08
        qrels[qid] = {d: (rng.choice([-1, 0]) if no_relevant else rng.choice([-1, 0, 0, 1, 1, 2, 3])) for d in judged}
        if rng.random() < 0.08:
            continue  # judged, missing from the run
        depth = rng.choice([rng.randrange(1, 6), rng.randrange(1, 120), rng.randrange(1000, 1300)])
        docs = sorted({f"d{rng.randrange(n_docs)}" for _ in range(depth)} | set(rng.sample(judged, len(judged) // 2)))
        kind = rng.choice(["float32", "integer", "float"])
        if kind == "float32":  # a few float32 values, each nudged in float64 below float32's resolution
            run[qid] = {d: float(rng.randrange(5)) + 1.0 + rng.randrange(1, 50) * 1e-10 for d in docs}
        elif kind == "integer":
            run[qid] = {d: float(rng.randrange(4)) for d in docs}
        else:
            run[qid] = {d: rng.random() for d in docs}
        if depth >= 1000 and rng.random() < 0.5:  # the relevant documents ranked past 1000 only: RR != MRR@1000
            relevant = [d for d, g in qrels[qid].items() if g >= 1]
            run[qid].update({d: -1.0 - i for i, d in enumerate(relevant)})
            run[qid].update({f"x{i}": 0.5 for i in range(1000)})
    return qrels, run


def theirs_for(qrels, run, threshold):
    measures = {"recip_rank", "ndcg", "num_ret", "num_rel", "num_rel_ret", "iprec_at_recall", "set_P", "set_recall",
                "set_F"}
    return pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=threshold).evaluate(run)


@pytest.mark.parametrize("seed, threshold", [(0, 1), (1, 1), (2, 2), (3, 1)])
def test_per_query_and_summary_equal_trec_eval_9(seed, threshold):
    qrels, run = random_case(seed)
    theirs = theirs_for(qrels, run, threshold)
    result = Evaluator(list(MEASURES), relevance_threshold=threshold, ignore_identical_ids=False).evaluate(
        Run.from_dict(run), Qrels.from_dict(qrels))
    ours = result.per_query()
    assert list(result.values) == list(MEASURES)
    # Evaluated: the queries with a relevant judgment (at this threshold); the others are left out.
    relevant = {q for q, docs in qrels.items() if any(g >= threshold for g in docs.values())}
    assert set(ours) == relevant and result.n_without_relevant == len(qrels) - len(relevant) > 0
    missing = [q for q in ours if q not in run]
    assert missing and result.n_missing_from_run == len(missing)
    compared = 0
    for q, values in ours.items():
        if q in missing:  # trec_eval -c: nothing retrieved; num_rel is still R (trec_eval 10 -c prints it so)
            r = sum(g >= threshold for g in qrels[q].values())
            assert values == {name: (float(r) if name == "num_rel" else 0.0) for name in MEASURES}, q  # set_P: 0/0
            continue
        for name, their_name in MEASURES.items():
            assert values[name] == pytest.approx(theirs[q][their_name], abs=1e-12, rel=0), (q, name)
            compared += 1
    assert compared > 1500
    # trec_eval's summary over these queries (missing ones as -c fills them): sums for num_*, means otherwise.
    for name, their_name in MEASURES.items():
        column = [theirs[q][their_name] if q in theirs else ours[q][name] for q in ours]
        summary = pytrec_eval.compute_aggregated_measure(their_name, column)
        if name.startswith("num_"):
            assert float(result.values[name].sum()) == summary, name  # exact: counts
            assert result.means[name] == pytest.approx(summary / result.n_queries, abs=1e-12, rel=0), name
        else:
            assert result.means[name] == pytest.approx(summary, abs=1e-12, rel=0), name
    # Cases the values hinge on are really there.
    rr, mrr = Evaluator(["RR", "MRR@1000"], ignore_identical_ids=False).evaluate(
        Run.from_dict(run), Qrels.from_dict(qrels)).values.values()
    assert (rr != mrr).sum() > 0  # a first relevant document past rank 1000
    float32_ties = sum(a != b and abs(a - b) < 1e-8 for docs in run.values()
                       for a, b in zip(sorted(docs.values()), sorted(docs.values())[1:]))
    assert float32_ties > 100


def test_trec_eval_10_equals_trec_eval_9_where_they_agree():
    # Under trec_eval-10 the measures are trec_eval 9's wherever 9's float32 scores rank as the doubles do (no
    # float32-only tie) and, for iprec_at_recall_p, where the two recall cutoffs agree: (long)(p R + 0.9) in 9,
    # lround(p R) in 10. Oracle: pytrec_eval (trec_eval 9) on those queries and levels.
    qrels, run = random_case(5)
    theirs = theirs_for(qrels, run, 1)
    result = Evaluator(list(MEASURES), semantics="trec_eval-10", ignore_identical_ids=False).evaluate(
        Run.from_dict(run), Qrels.from_dict(qrels))
    compared = skipped_levels = 0
    for q, values in result.per_query().items():
        scores = list(run.get(q, {}).values())
        if q not in theirs or len(set(scores)) != len(set(np.float32(scores).tolist())):
            continue
        r = sum(g >= 1 for g in qrels[q].values())
        for name, their_name in MEASURES.items():
            if name.startswith("iprec"):
                x = float(name.rpartition("_")[2]) * r
                if int(x + 0.9) != int(np.floor(x)) + (x - np.floor(x) >= 0.5):
                    skipped_levels += 1
                    continue
            assert values[name] == pytest.approx(theirs[q][their_name], abs=1e-12, rel=0), (q, name)
            compared += 1
    assert compared > 1000 and skipped_levels > 50


def test_trec_eval_10_scores_as_doubles():
    # semantics table in docs/evaluation.md: q a 1.0000000001 vs q b 1.0, only b relevant. trec_eval 9 (float
    # sim) ties them, b first by id descending: recip_rank 1 (pytrec_eval agrees); trec_eval 10 (double sim)
    # ranks a first: recip_rank 0.5, ndcg 1/log2(3); the counts do not depend on the order.
    qrels, run = {"q": {"a": 0, "b": 1}}, {"q": {"a": 1.0000000001, "b": 1.0}}
    theirs = theirs_for(qrels, run, 1)["q"]
    names = ["RR", "NDCG_all", "iprec_at_recall_0.00", "num_ret", "num_rel", "num_rel_ret"]
    nine, ten = (Evaluator(names, semantics=s).evaluate(Run.from_dict(run), Qrels.from_dict(qrels)).per_query()["q"]
                 for s in ("trec_eval-9", "trec_eval-10"))
    assert nine == {"RR": theirs["recip_rank"], "NDCG_all": theirs["ndcg"], "iprec_at_recall_0.00": 1.0,
                    "num_ret": 2.0, "num_rel": 1.0, "num_rel_ret": 1.0} == {**nine, "RR": 1.0, "NDCG_all": 1.0}
    assert ten == {"RR": 0.5, "NDCG_all": 1 / np.log2(3), "iprec_at_recall_0.00": 0.5, "num_ret": 2.0,
                   "num_rel": 1.0, "num_rel_ret": 1.0}


def test_recall_cutoffs_round_as_each_trec_eval():
    # R = 3: r1 at rank 1, r2 at rank 10 (8 non-relevant between), r3 not retrieved. Level p stands for
    # c = (long)(p * 3 + 0.9) relevant documents in trec_eval 9 and lround(p * 3) in trec_eval 10
    # (m_iprec_at_recall.c), c = 0 read as 1; the value is max_{n >= c} n / r_n, 0 when c > 2 retrieved.
    # 0.4 * 3 = 1.2000000000000002: c = 2 (9) vs 1 (10); 0.8 * 3 = 2.4000000000000004: 3 vs 2;
    # 0.7 * 3 = 2.0999999999999996: 2 in both (2.1 would be 3 in 9). trec_eval 9.0.8 and 10.0 binaries,
    # -q: iprec_at_recall_0.00 ... 1.00 = 1 1 1 1 0.2 0.2 0.2 0.2 0 0 0 (9) and 1 1 1 1 1 0.2 0.2 0.2 0.2 0 0 (10).
    qrels = {"q": {"r1": 1, "r2": 1, "r3": 1, "n1": 0}}
    run = {"q": {"r1": 10.0, **{f"n{i}": 9.0 - i * 0.1 for i in range(1, 9)}, "r2": 1.0}}
    names = [f"iprec_at_recall_{p}" for p in LEVELS]
    expected = {"trec_eval-9": [1, 1, 1, 1, 0.2, 0.2, 0.2, 0.2, 0, 0, 0],
                "trec_eval-10": [1, 1, 1, 1, 1, 0.2, 0.2, 0.2, 0.2, 0, 0]}
    for semantics, values in expected.items():
        result = Evaluator(names, semantics=semantics).evaluate(Run.from_dict(run), Qrels.from_dict(qrels))
        assert [result.values[n][0] for n in names] == values, semantics
    theirs = theirs_for(qrels, run, 1)["q"]
    assert [theirs[n] for n in names] == expected["trec_eval-9"]


def test_names():
    # trec_eval's recip_rank and ir_measures' RR: the whole ranking, in a list too; RR@k is MRR@k; MRR and mrr
    # in a list are the MRR@k family (as MAP / map), alone RR (as map is AP).
    assert [m.name for m in metrics_for(["recip_rank", "RR", "MRR", "mrr"], [1, 10])] == ["RR", "MRR@1", "MRR@10"]
    assert [str(parse_metric(n)) for n in ("recip_rank", "RR", "MRR", "RR@10", "recip_rank_10", "mrr@3")] == \
        ["RR", "RR", "RR", "MRR@10", "MRR@10", "MRR@3"]
    # ndcg / nDCG / NDCG (case-insensitive) in a list: BEIR's NDCG@k family; alone refused, naming NDCG_all, the
    # whole ranking (trec_eval's ndcg) in any scheme; NDCG_all@k is NDCG@k.
    assert [m.name for m in metrics_for(["ndcg", "NDCG_all", "NDCG_all_exp"], [10])] == \
        ["NDCG@10", "NDCG_all", "NDCG_all_exp"]
    assert [str(parse_metric(n)) for n in ("NDCG_all", "nDCG_all@10", "NDCG_all_jarvelin", "NDCG_all_exp@5")] == \
        ["NDCG_all", "NDCG@10", "NDCG_all_jarvelin", "NDCG_exp@5"]
    # iprec_at_recall: trec_eval's printed names, its -m parameter syntax, ir_measures' IPrec@p; alone in a list, 11.
    assert [str(parse_metric(n)) for n in ("iprec_at_recall_0.10", "iprec_at_recall.0.1", "IPrec@0.1",
                                           "iprec_at_recall_1", "ipREC_at_recall_.05")] == \
        ["iprec_at_recall_0.10"] * 3 + ["iprec_at_recall_1.00", "iprec_at_recall_0.05"]
    assert [m.name for m in metrics_for(["iprec_at_recall"], [10])] == [f"iprec_at_recall_{p}" for p in LEVELS]
    assert [str(parse_metric(n)) for n in ("NumRet", "NumRel", "NumRelRet")] == ["num_ret", "num_rel", "num_rel_ret"]
    assert [str(parse_metric(n)) for n in ("SetP", "SetR", "SetF", "set_p")] == \
        ["set_P", "set_recall", "set_F", "set_P"]
    for text, message in [
            ("ndcg", "NDCG needs a cutoff k >= 1, e.g. NDCG@10 (over the whole ranking: NDCG_all)"),
            ("NDCG_exp", "NDCG_exp needs a cutoff k >= 1, e.g. NDCG_exp@10 (over the whole ranking: NDCG_all_exp)"),
            ("iprec_at_recall", "iprec_at_recall needs a recall level, e.g. iprec_at_recall_0.10"),
            ("iprec_at_recall_0.125", "iprec_at_recall recall level must be a multiple of 0.01 from 0 to 1, got 0.125"),
            ("IPrec@2", "iprec_at_recall recall level must be a multiple of 0.01 from 0 to 1, got 2.0"),
            ("num_ret@10", "num_ret takes no cutoff"),
            ("num_q", "metric 'num_q' is not computed: trec_eval's num_q counts the queries averaged over"),
            ("gm_map", "metric 'gm_map' is not computed: trec_eval's gm_map, exp(mean(log(max(AP, 0.00001)))), "
                       "is a geometric mean over queries")]:
        with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
            parse_metric(text)


def test_cli_takes_trec_eval_names(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q 0 r1 1\nq 0 r2 1\nq 0 r3 1\nq 0 n1 0\n")
    run.write_text("".join(f"q Q0 {d} {i} {10 - i} t\n" for i, d in enumerate(["n1", "r1", "x", "r2"], 1)))
    proc = subprocess.run([sys.executable, "-m", "harness", "evaluate", "--qrels", str(qrels), "--run", str(run),
                           "--k", "10", "-m", "recip_rank,NDCG_all,num_ret,num_rel,num_rel_ret,set_P,set_recall,set_F",
                           "-m", "iprec_at_recall", "--json", str(tmp_path / "m.json")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    import json
    means = json.loads((tmp_path / "m.json").read_text())["metrics"]
    # Worked by hand: first relevant at rank 2; 2 of R = 3 relevant retrieved at ranks 2 and 4 of 4.
    assert {n: means[n] for n in ("RR", "num_ret", "num_rel", "num_rel_ret")} == \
        {"RR": 0.5, "num_ret": 4.0, "num_rel": 3.0, "num_rel_ret": 2.0}
    assert means["NDCG_all"] == pytest.approx((1 / np.log2(3) + 1 / np.log2(5)) / (1 + 1 / np.log2(3) + 0.5),
                                              abs=1e-15)
    assert [means[f"iprec_at_recall_{p}"] for p in LEVELS] == [0.5] * 8 + [0.0] * 3  # c: 1,1,1,1,2,2,2,2,3,3,3
    # set_P 2/4, set_recall 2/3, set_F 2 * 1/2 * 2/3 / (1/2 + 2/3) = 4/7 (pytrec_eval: 0.5, 0.666..., 0.571...).
    assert (means["set_P"], means["set_recall"]) == (0.5, 2 / 3)
    assert means["set_F"] == pytest.approx(4 / 7, abs=1e-15)
    proc = subprocess.run([sys.executable, "-m", "harness", "evaluate", "--qrels", str(qrels), "--run", str(run),
                           "-m", "gm_map"], capture_output=True, text=True)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert proc.stderr.startswith("error: --metric: metric 'gm_map' is not computed: trec_eval's gm_map")

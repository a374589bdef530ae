"""Evaluator speed with the full metric family, against pytrec_eval computing the subset it has.

Synthetic run of MS MARCO dev size: 6,980 queries x 1,000 retrieved documents from an 8.8M-document
id space, about 1.1 relevant documents per query (1 or 2), half of them retrieved. Ours: every
metric (BEIR's six at k in {1,3,5,10,100,1000}, R-Prec, bpref, AP, Success@k, Judged@k, DCG@k
and nDCG@k in the trec, exp and jarvelin schemes). pytrec_eval: ndcg_cut, map_cut, recall, P,
recip_rank, Rprec, bpref, map, success at the same k. Both start from their native inputs, built
before the clocks start: pytrec_eval's dicts; our Run (with its doc-id -> code index, which a TREC
file reader or ``Run.from_dict`` builds while reading) and Qrels. ``--cold-index`` drops the index so
that our clock includes building it. Both times include ranking the run (``--shuffled``: scores not
already in ranked order, so ours sorts).

    PYTHONPATH=. python benchmarks/eval_all_metrics_speed.py [--queries 6980] [--depth 1000] [--shuffled]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from harness.evaluation import DEFAULT_FAMILIES, Evaluator, metrics_for
from harness.qrels import Qrels
from harness.run import Run

K = (1, 3, 5, 10, 100, 1000)
ALL_FAMILIES = (*DEFAULT_FAMILIES, "Success", "Judged", "DCG", "DCG_exp", "DCG_jarvelin", "NDCG_exp",
                "NDCG_jarvelin", "AP", "R-Prec", "bpref")
PYTREC_MEASURES = {f"{m}.{','.join(map(str, K))}" for m in ("ndcg_cut", "map_cut", "recall", "P", "success")} | {
    "recip_rank", "Rprec", "bpref", "map"}


def synthetic(n_queries: int, depth: int, shuffled: bool, seed: int = 0) -> tuple[Run, Qrels]:
    rng = np.random.default_rng(seed)
    n_space = 8_841_823
    block = n_space // depth  # rank-position blocks of the id space: no document twice in a query
    codes = rng.integers(0, block, size=(n_queries, depth)) + np.arange(depth) * block
    codes = rng.permuted(codes, axis=1)
    used, inverse = np.unique(codes, return_inverse=True)
    doc_codes = inverse.reshape(-1)
    scores = np.sort(rng.random((n_queries, depth)).astype(np.float32), axis=1)[:, ::-1].astype(np.float64)
    if shuffled:
        scores = rng.permuted(scores, axis=1)
    vocab = np.empty(len(used), dtype=object)
    vocab[:] = [str(c) for c in used.tolist()]
    query_ids = [f"q{i}" for i in range(n_queries)]
    run = Run.from_arrays(query_ids, np.arange(n_queries + 1) * depth, doc_codes, scores.reshape(-1), vocab)
    run = run.canonical()  # a retriever hands over its run in canonical order; --shuffled times the sort
    if shuffled:
        run = Run.from_arrays(query_ids, run.offsets, doc_codes, scores.reshape(-1), vocab)
    rows = []
    for i in range(n_queries):
        for j in range(1 + int(rng.random() < 0.1)):  # ~1.1 relevant per query
            if rng.random() < 0.5:  # retrieved, at a random rank
                doc = vocab[doc_codes[i * depth + rng.integers(0, depth)]]
            else:
                doc = str(n_space + i * 2 + j)  # never retrieved
            rows.append((query_ids[i], doc, 1.0))
    return run, Qrels.from_rows(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=6980)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--shuffled", action="store_true", help="scores not in ranked order (times the sort)")
    parser.add_argument("--cold-index", action="store_true", help="time building the run's doc-id index too")
    args = parser.parse_args()
    import pytrec_eval

    run, qrels = synthetic(args.queries, args.depth, args.shuffled)
    metrics = metrics_for(ALL_FAMILIES, K)
    print(f"{run.n_queries} queries x {args.depth} docs, {len(qrels)} judgments; ours: {len(metrics)} metrics")
    run_dict, qrels_dict = run.to_dict(), qrels.to_dict()
    if not args.cold_index:
        run.vocab_index  # built on first use, as a reader would have built it

    start = time.perf_counter()
    ours = Evaluator(metrics).evaluate(run, qrels)
    ours_s = time.perf_counter() - start

    start = time.perf_counter()
    theirs = pytrec_eval.RelevanceEvaluator(qrels_dict, PYTREC_MEASURES).evaluate(run_dict)
    theirs_s = time.perf_counter() - start
    n_theirs = len(next(iter(theirs.values())))

    # Same numbers on what both compute (guards the benchmark against timing a wrong answer).
    for ours_name, their_name in [("NDCG@10", "ndcg_cut_10"), ("bpref", "bpref"), ("R-Prec", "Rprec"),
                                  ("AP", "map"), ("Success@5", "success_5"), ("Recall@1000", "recall_1000")]:
        mine = ours.values[ours_name]
        want = np.array([theirs[q][their_name] for q in ours.query_ids.tolist()])
        assert np.allclose(mine, want, atol=1e-9, rtol=0), ours_name

    print(f"ours (all {len(metrics)} metrics):         {ours_s:8.2f} s")
    print(f"pytrec_eval ({n_theirs} values per query): {theirs_s:8.2f} s")
    print(f"ratio pytrec_eval / ours:            {theirs_s / ours_s:8.1f}x")


if __name__ == "__main__":
    main()

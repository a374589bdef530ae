"""Evaluator speed with the full metric family, against pytrec_eval computing the subset it has.

Synthetic run of MS MARCO dev size: 6,980 queries x 1,000 retrieved documents from an 8.8M-document
id space (distinct float32 scores, ~7M distinct doc ids), about 1.1 relevant documents per query
(1 or 2), half of them retrieved. Ours: every metric (BEIR's six at k in {1,3,5,10,100,1000},
R-Prec, bpref, AP, Success@k, Judged@k, DCG@k and nDCG@k in the trec, exp and jarvelin schemes).
pytrec_eval: ndcg_cut, map_cut, recall, P, success at the same k, recip_rank, Rprec, bpref, map.

Both start from their native inputs built before the clocks start (pytrec_eval's dicts; our Run
and Qrels) and both times include ranking the run. Ours is timed three ways: run in ranked order
with its doc-id index built (as ``Run.from_dict`` or a TREC reader leaves it); in ranked order
without the index (as a retriever hands it over); shuffled within each query, without the index.
The values both compute are checked equal before the times are printed. Garbage collection is
paused while timing either side, as ``timeit`` does; each time is the best of ``--repeat`` runs.

    PYTHONPATH=. python benchmarks/eval_all_metrics_speed.py [--queries 6980] [--depth 1000]
"""

from __future__ import annotations

import argparse
import gc
import time
from contextlib import contextmanager

import numpy as np

from harness.evaluation import DEFAULT_FAMILIES, Evaluator, metrics_for
from harness.qrels import Qrels
from harness.run import Run

K = (1, 3, 5, 10, 100, 1000)
ALL_FAMILIES = (*DEFAULT_FAMILIES, "Success", "Judged", "DCG", "DCG_exp", "DCG_jarvelin", "NDCG_exp",
                "NDCG_jarvelin", "AP", "R-Prec", "bpref")
PYTREC_MEASURES = {f"{m}.{','.join(map(str, K))}" for m in ("ndcg_cut", "map_cut", "recall", "P", "success")} | {
    "recip_rank", "Rprec", "bpref", "map"}
CHECKED = [("NDCG@10", "ndcg_cut_10"), ("MAP@1000", "map_cut_1000"), ("P@5", "P_5"), ("Recall@100", "recall_100"),
           ("bpref", "bpref"), ("R-Prec", "Rprec"), ("AP", "map"), ("Success@5", "success_5")]


def synthetic(n_queries: int, depth: int, seed: int = 0) -> tuple[Run, Run, Qrels]:
    """(run in ranked order, the same run shuffled within each query, qrels)."""
    rng = np.random.default_rng(seed)
    n_space = 8_841_823
    block = n_space // depth  # one block of the id space per rank position: no document twice in a query
    codes = rng.permuted(rng.integers(0, block, size=(n_queries, depth)) + np.arange(depth) * block, axis=1)
    used, inverse = np.unique(codes, return_inverse=True)
    doc_codes = inverse.reshape(n_queries, depth)
    scores = -np.sort(-rng.random((n_queries, depth)).astype(np.float32), axis=1).astype(np.float64)
    vocab = np.empty(len(used), dtype=object)
    vocab[:] = [str(c) for c in used.tolist()]
    query_ids = [f"q{i}" for i in range(n_queries)]
    offsets = np.arange(n_queries + 1) * depth
    ranked = Run.from_arrays(query_ids, offsets, doc_codes.reshape(-1), scores.reshape(-1), vocab).canonical()
    ranked = Run.from_arrays(query_ids, offsets, ranked.doc_codes, ranked.scores, vocab)  # ties by id, as top-k gives
    doc_codes, scores = ranked.doc_codes.reshape(n_queries, depth), ranked.scores.reshape(n_queries, depth)
    perm = rng.permuted(np.tile(np.arange(depth), (n_queries, 1)), axis=1)
    rows_ = np.arange(n_queries)[:, None]
    shuffled = Run.from_arrays(query_ids, offsets, doc_codes[rows_, perm].reshape(-1),
                               scores[rows_, perm].reshape(-1), vocab)
    rows = []
    for i in range(n_queries):
        for j in range(1 + int(rng.random() < 0.1)):  # ~1.1 relevant per query
            if rng.random() < 0.5:  # retrieved, at a random rank
                doc = vocab[doc_codes[i, rng.integers(0, depth)]]
            else:
                doc = str(n_space + i * 2 + j)  # never retrieved
            rows.append((query_ids[i], doc, 1.0))
    return ranked, shuffled, Qrels.from_rows(rows)


def _timed(evaluate, repeat: int):
    """(result, best wall time of ``repeat`` calls)."""
    best = float("inf")
    for _ in range(repeat):
        with _gc_paused():
            start = time.perf_counter()
            result = evaluate()
            best = min(best, time.perf_counter() - start)
    return result, best


@contextmanager
def _gc_paused():
    """Garbage collection off while timing (as ``timeit`` does): pytrec_eval's input dicts hold
    millions of objects, and a collection walking them would be charged to whichever side ran."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=6980)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many timings per side (default 3)")
    args = parser.parse_args()
    import pytrec_eval

    ranked, shuffled, qrels = synthetic(args.queries, args.depth)
    evaluator = Evaluator(metrics_for(ALL_FAMILIES, K))
    print(f"{ranked.n_queries} queries x {args.depth} docs, {len(ranked.doc_vocab)} distinct doc ids, "
          f"{len(qrels)} judgments; ours: {len(evaluator.metrics)} metrics")

    def fresh(run: Run) -> Run:  # without the doc-id index, as a retriever hands a run over
        return Run.from_arrays(run.query_ids, run.offsets, run.doc_codes, run.scores, run.doc_vocab)

    times, n = {}, args.repeat
    _, times["ours, shuffled, no doc-id index"] = _timed(lambda: evaluator.evaluate(fresh(shuffled), qrels), n)
    _, times["ours, ranked, no doc-id index"] = _timed(lambda: evaluator.evaluate(fresh(ranked), qrels), n)
    run_dict, qrels_dict = ranked.to_dict(), qrels.to_dict()  # builds ranked's doc-id index too
    ours, times["ours, ranked, doc-id index built"] = _timed(lambda: evaluator.evaluate(ranked, qrels), n)
    theirs, pytrec_s = _timed(lambda: pytrec_eval.RelevanceEvaluator(qrels_dict, PYTREC_MEASURES).evaluate(run_dict), n)
    n_theirs = len(next(iter(theirs.values())))

    for ours_name, their_name in CHECKED:
        want = np.array([theirs[q][their_name] for q in ours.query_ids.tolist()])
        assert np.allclose(ours.values[ours_name], want, atol=1e-9, rtol=0), ours_name

    print(f"pytrec_eval ({n_theirs} values per query): {pytrec_s:7.2f} s")
    for label, seconds in times.items():
        print(f"{label + ':':40s} {seconds:7.2f} s   pytrec_eval / ours = {pytrec_s / seconds:5.1f}x")


if __name__ == "__main__":
    main()

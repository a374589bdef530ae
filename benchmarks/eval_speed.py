"""Evaluation speed: the project's evaluator vs pytrec_eval on an MS MARCO-dev-size run, in one process.

Synthetic data shaped like MS MARCO passage dev: 6,980 queries x 1,000 retrieved documents from an
8.8M-document collection, ~1.1 relevant documents per query (1-2), half of them retrieved.

Each tool gets its native in-memory input, built outside the timed region: pytrec_eval its
dict-of-dicts, the project a columnar Run whose doc vocabulary index comes with the corpus (as for
any retriever's run). Timed: pytrec_eval = RelevanceEvaluator(...) + evaluate(...); project =
Evaluator.evaluate(...) on (a) a run already in canonical order (what retrievers produce; the
evaluator verifies the order), (b) the same run without its doc-id index (the evaluator then scans
the vocabulary for the judged ids instead) and (c) the same run shuffled within queries (the
evaluator sorts).

``--all-metrics``: the project computes every registered metric at every k and in every DCG scheme
(BEIR's six, R-Prec, bpref, AP, Success, Judged, DCG/nDCG in the trec, exp and jarvelin schemes),
pytrec_eval the subset trec_eval has (adding success, recip_rank, Rprec, bpref, map); the values
both compute are compared.

    python benchmarks/eval_speed.py [--queries 6980] [--depth 1000] [--all-metrics]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from harness.evaluation import Evaluator
from harness.qrels import Qrels
from harness.run import Run

K = (1, 3, 5, 10, 100, 1000)
TREC = {"NDCG": "ndcg_cut", "MAP": "map_cut", "Recall": "recall", "P": "P"}
TREC_ALL = {**TREC, "Success": "success"}  # at each k
TREC_UNCUT = {"R-Prec": "Rprec", "bpref": "bpref", "AP": "map"}  # whole ranking


def synthetic(n_queries: int, depth: int, n_docs: int = 8_841_823, seed: int = 0):
    rng = np.random.default_rng(seed)
    # Distinct documents within a query: block * depth + position.
    codes = (rng.integers(0, n_docs // depth, size=(n_queries, depth)) * depth + np.arange(depth)).ravel()
    scores = np.round(rng.normal(size=n_queries * depth), 4)  # 4 decimals: realistic ties
    query_ids = [str(1_000_000 + q) for q in range(n_queries)]
    offsets = np.arange(n_queries + 1) * depth
    # Canonical order within each query: score desc, then doc id desc (string order).
    vocab_codes, codes = np.unique(codes, return_inverse=True)
    vocab = np.array([str(c) for c in vocab_codes], dtype=object)
    qidx = np.repeat(np.arange(n_queries), depth)
    string_rank = np.empty(len(vocab), dtype=np.int64)
    string_rank[np.argsort(vocab)] = np.arange(len(vocab))
    order = np.lexsort((-string_rank[codes], -scores, qidx))
    codes, scores = codes[order], scores[order]
    index = {d: i for i, d in enumerate(vocab.tolist())}
    run = Run.from_arrays(query_ids, offsets, codes, scores, vocab, index)
    # Qrels: 1-2 relevant per query (mean ~1.1); about half of them retrieved somewhere in the top 1000.
    rows = []
    for q in range(n_queries):
        for r in range(1 if rng.random() < 0.9 else 2):
            if rng.random() < 0.5:
                doc = vocab[codes[q * depth + rng.integers(depth)]]
            else:
                doc = str(n_docs + q * 2 + r)
            rows.append((query_ids[q], doc, 1.0))
    return run, Qrels.from_rows(rows)


def shuffled_within_queries(run: Run, seed: int = 1) -> Run:
    rng = np.random.default_rng(seed)
    qidx = run.entry_query_index()
    order = np.lexsort((rng.random(len(run)), qidx))
    return Run(run.query_ids, run.offsets, run.doc_codes[order], run.scores[order], run.doc_vocab, run.vocab_index)


def best_of(repeats: int, fn):
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=6980)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--all-metrics", action="store_true", help="evaluate every registered metric family")
    args = parser.parse_args()

    import pytrec_eval

    run, qrels = synthetic(args.queries, args.depth)
    run_dict, qrels_dict = run.to_dict(), qrels.to_dict()
    cut = TREC_ALL if args.all_metrics else TREC
    uncut = TREC_UNCUT if args.all_metrics else {}
    measures = {f"{name}.{','.join(map(str, K))}" for name in cut.values()} | set(uncut.values())
    if args.all_metrics:
        measures.add("recip_rank")

    def with_pytrec():
        return pytrec_eval.RelevanceEvaluator(qrels_dict, measures).evaluate(run_dict)

    if args.all_metrics:
        from harness.evaluation.metrics import REGISTRY

        families = [f if not v or v == cls.variants[0] else f"{f}_{v}"
                    for f, cls in REGISTRY.items() for v in (cls.variants or (None,))]
        evaluator = Evaluator(metrics=families, k_values=K)  # families with a cutoff expand over K
    else:
        evaluator = Evaluator(k_values=K)
    t_ref, reference = best_of(args.repeats, with_pytrec)
    t_ours, ours = best_of(args.repeats, lambda: evaluator.evaluate(run, qrels))
    unsorted = shuffled_within_queries(run)
    t_unsorted, ours_unsorted = best_of(args.repeats, lambda: evaluator.evaluate(unsorted, qrels))

    def without_index():
        bare = Run.from_arrays(run.query_ids, run.offsets, run.doc_codes, run.scores, run.doc_vocab)
        return evaluator.evaluate(bare, qrels)

    t_bare, ours_bare = best_of(args.repeats, without_index)

    per_query = ours.per_query()
    worst = 0.0
    for qid, values in reference.items():
        for family, trec in cut.items():
            for k in K:
                worst = max(worst, abs(values[f"{trec}_{k}"] - per_query[qid][f"{family}@{k}"]))
        for name, trec in uncut.items():
            worst = max(worst, abs(values[trec] - per_query[qid][name]))
    same_unsorted = all(np.array_equal(ours.values[m], ours_unsorted.values[m]) and
                        np.array_equal(ours.values[m], ours_bare.values[m]) for m in ours.values)
    print(f"run: {args.queries} queries x {args.depth} docs = {len(run):,} entries; {len(qrels):,} judgments")
    n_theirs = len(next(iter(reference.values())))
    print(f"metrics: project {len(evaluator.metrics)}, pytrec_eval {n_theirs}")
    print(f"pytrec_eval                      {t_ref:8.3f} s")
    print(f"project (canonical run)          {t_ours:8.3f} s   {t_ref / t_ours:6.1f}x faster")
    print(f"project (canonical, no id index) {t_bare:8.3f} s   {t_ref / t_bare:6.1f}x faster")
    print(f"project (shuffled, sorts itself) {t_unsorted:8.3f} s   {t_ref / t_unsorted:6.1f}x faster")
    print(f"largest |difference| vs pytrec_eval over {len(reference)} queries: {worst:.3g}")
    print(f"shuffled run and run without id index give identical values: {same_unsorted}")


if __name__ == "__main__":
    main()

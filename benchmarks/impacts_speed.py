"""Search time over an impact index vs BM25 search time, same corpus, same postings, same query terms.

    PYTHONPATH=. python benchmarks/impacts_speed.py [--dataset /work/shared/datasets/nfcorpus]
        [--repeats 5] [--k 1000] [--copies 20] [--threads 2]

BM25 (lucene backend) indexes the corpus; its posting scores become an impact index's document
weights (the same term -> documents arrays), and each query's analysed terms become an impact
query (distinct terms, weight = count). Both searches then read the same postings for the same
terms: BM25 through ``compiled.Searcher(offsets, term ids)`` (repeated terms counted in C), impacts
through the same search with per-term float32 weights (retrievers/sparse/impact_index.py:
ImpactSearcher, the double-product path). Query analysis is excluded from both; the run assembly
(ids, canonical order) is included in both. The queries are repeated ``--copies`` times so that a
round lasts long enough to time; each time is the best of ``--repeats`` interleaved rounds.
The same is measured on the numpy path (``HARNESS_BM25_COMPILED=0``). Target (issue 17): impacts
within 2x of BM25.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from harness.datasets import load_dataset
from retrievers.bm25.search import DocOrder, search_python
from retrievers.sparse.impact_index import ImpactSearcher, build_impact_index, query_columns
from tests.retrievers.sparse_data import bm25_terms


def best_interleaved(fns, repeats: int) -> list[float]:
    """The best time of each of ``fns`` over ``repeats`` rounds, each round running them all in turn."""
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, out in zip(fns, times):
            started = time.perf_counter()
            fn()
            out.append(time.perf_counter() - started)
    return [min(t) for t in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="/work/shared/datasets/nfcorpus")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--k", type=int, default=1000)
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    dataset = load_dataset(args.dataset)
    _, index, offsets, term_ids = bm25_terms(dataset, args.threads)
    n_q = len(offsets) - 1
    # the queries repeated --copies times (ids made distinct)
    lengths = np.tile(np.diff(offsets), args.copies)
    big_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    big_terms = np.tile(term_ids, args.copies)
    qids = [f"{c}:{q}" for c in range(args.copies) for q in dataset.queries.ids]
    order = DocOrder.of(dataset.corpus)
    term_of_posting = np.repeat(np.arange(index.n_terms), np.diff(index.indptr))
    impact = build_impact_index(index.n_docs, index.indices, term_of_posting, index.data, index.terms)
    assert np.array_equal(impact.indptr, index.indptr) and np.array_equal(impact.data, index.data)
    q_off, q_terms, q_weights = query_columns(big_offsets, big_terms, np.ones(len(big_terms), np.float32))
    print(f"{dataset.name}: {index.n_docs} documents, {int(index.indptr[-1])} postings; {n_q} queries x "
          f"{args.copies} = {len(qids)}, {len(big_terms)} query terms ({len(q_terms)} once repeats within a query merge), "
          f"k={args.k}, {args.threads} threads, best of {args.repeats}")

    for compiled in ("1", "0"):
        os.environ["HARNESS_BM25_COMPILED"] = compiled
        impacts = ImpactSearcher(impact, order, args.threads)
        if compiled == "1":
            from retrievers.bm25 import compiled as c

            bm25_search = c.Searcher(index, order.rank, order.doc_of_rank)

            def bm25():
                hits, docs, scores = bm25_search(big_offsets, big_terms, args.k, None, args.threads)
                return order.run(qids, np.concatenate([[0], np.cumsum(hits)]), docs, scores)
        else:
            per_query = [(big_terms[s:e], None) for s, e in zip(big_offsets[:-1].tolist(), big_offsets[1:].tolist())]

            def bm25():
                return search_python(index, order, qids, per_query, args.k, args.threads)

        run_impacts = lambda: impacts(qids, q_off, q_terms, q_weights, args.k)  # noqa: E731
        a, b = bm25(), run_impacts()
        same = np.array_equal(a.doc_codes, b.doc_codes) and np.array_equal(a.offsets, b.offsets)
        t_bm25, t_imp = best_interleaved([bm25, run_impacts], args.repeats)
        path = "compiled" if compiled == "1" else "numpy"
        print(f"{path:9s} BM25 search {t_bm25 * 1000:8.1f} ms   impacts search {t_imp * 1000:8.1f} ms   "
              f"impacts / BM25 = {t_imp / t_bm25:.2f}x   same runs: {same}")


if __name__ == "__main__":
    main()

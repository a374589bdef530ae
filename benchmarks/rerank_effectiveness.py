"""BM25, MiniLM dense, and BM25's top 100 reranked by MiniLM (bi-encoder), on one dataset.

Prints NDCG@10 and Recall@100 of the three runs (project evaluator, trec_eval's rules; identical
query/document ids dropped as BEIR does) and checks that the reranked run equals the dense run
restricted to BM25's candidates: same ids, same order, float scores equal up to BLAS's last bits
(at most 1e-6 apart: a matrix product sums in an order that depends on its shapes; docs/rerank.md)
-- exit 1 otherwise; it prints whether they are bit-identical and the largest difference.

The dense run and the reranker share the embedding cache (HARNESS_CACHE_DIR): with the corpus
encoded once, the rerank encodes nothing. The same figures come from the CLI (docs/rerank.md).

    PYTHONPATH=. python benchmarks/rerank_effectiveness.py scifact
    PYTHONPATH=. python benchmarks/rerank_effectiveness.py /work/shared/datasets/nfcorpus
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import retrievers  # noqa: E402
from harness.datasets import load_dataset  # noqa: E402
from harness.evaluation import evaluate  # noqa: E402
from harness.experiment import search_run  # noqa: E402
from retrievers.dense import DenseRetriever  # noqa: E402
from retrievers.rerank.bi_encoder import BiEncoderReranker  # noqa: E402

METRICS = ["NDCG@10", "Recall@100"]


BLAS_ATOL = 1e-6


def restricted_difference(reranked, dense) -> float | None:
    """The largest score difference between each query of ``reranked`` and ``dense``'s entries for
    its documents (0.0: bit-identical), or None when the documents or their order differ."""
    position = {q: i for i, q in enumerate(dense.query_ids.tolist())}
    largest = 0.0
    for i, qid in enumerate(reranked.query_ids.tolist()):
        j = position[qid]
        rows = slice(reranked.offsets[i], reranked.offsets[i + 1])
        keep = np.isin(dense.doc_codes[dense.offsets[j]:dense.offsets[j + 1]], reranked.doc_codes[rows])
        codes = dense.doc_codes[dense.offsets[j]:dense.offsets[j + 1]][keep]
        scores = dense.scores[dense.offsets[j]:dense.offsets[j + 1]][keep]
        if not np.array_equal(codes, reranked.doc_codes[rows]):
            return None
        if len(scores):
            largest = max(largest, float(np.max(np.abs(scores - reranked.scores[rows]))))
    return largest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", help="bundled name (scifact) or BEIR folder (e.g. /work/shared/datasets/nfcorpus)")
    parser.add_argument("--depth", type=int, default=100, help="BM25 candidates reranked per query (default 100)")
    args = parser.parse_args(argv)

    ds = load_dataset(args.dataset)
    bm25 = retrievers.create("bm25")
    bm25.index(ds.corpus)
    first = search_run(bm25, ds, args.depth, ignore_identical_ids=True)
    dense = DenseRetriever(progress=False)
    dense.index(ds.corpus)
    full = dense.search(ds.queries, len(ds.corpus))  # every document: the oracle for the restriction
    reranker = BiEncoderReranker(progress=False)
    started = time.perf_counter()
    reranked = reranker.rerank(first, ds.queries, ds.corpus, args.depth)
    seconds = time.perf_counter() - started
    stats = reranker.stats()
    print(f"dataset {ds.name}: {len(ds.corpus)} docs, {len(ds.queries)} queries; rerank of BM25 top {args.depth}: "
          f"{seconds:.2f} s, documents cache {stats['documents_cache']}, queries cache {stats['queries_cache']}")
    runs = {"BM25": first, "MiniLM (dense)": search_run(dense, ds, 1000, ignore_identical_ids=True),
            f"BM25 top {args.depth} >> MiniLM (bi-encoder)": reranked}
    print(f"{'system':<36}" + "".join(f"{m:>12}" for m in METRICS))
    for label, run in runs.items():
        means = evaluate(run, ds.qrels, metrics=METRICS).means
        print(f"{label:<36}" + "".join(f"{means[m]:>12.5f}" for m in METRICS))
    diff = restricted_difference(reranked, full)
    same = diff is not None and diff <= BLAS_ATOL
    detail = "ids or order differ" if diff is None else ("bit-identical" if diff == 0 else f"largest score difference {diff:.3g}")
    print(f"reranked run == dense run restricted to the candidates (ids, order, scores): {'yes' if same else 'NO'} ({detail})")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

"""Fidelity of the dense retriever against MTEB's published all-MiniLM-L6-v2 scores.

Runs the default dense retriever (all-MiniLM-L6-v2, cosine, max_seq_length 256) on one dataset,
evaluates the run with the project evaluator and prints each metric next to MTEB's number
(/work/shared/datasets/REFERENCE_SCORES.md, section C: results repo commit f4cc6c8b, model
revision 8b3219a9, mteb 1.12.75) with the difference. nDCG@10 must be within +-0.0005.

A full encode takes minutes on a small CPU; embeddings are cached (HARNESS_CACHE_DIR or
--cache-dir), so a rerun takes seconds.

    PYTHONPATH=. python benchmarks/dense_effectiveness.py scifact
    PYTHONPATH=. python benchmarks/dense_effectiveness.py /work/shared/datasets/nfcorpus
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.datasets import load_dataset  # noqa: E402
from harness.evaluation import evaluate  # noqa: E402
from retrievers.dense import DenseRetriever  # noqa: E402

# MTEB results for sentence-transformers/all-MiniLM-L6-v2, test split (REFERENCE_SCORES.md, C).
MTEB = {
    "scifact": {"NDCG@10": 0.64508, "MAP@10": 0.59593, "MRR@10": 0.60472, "Recall@100": 0.92500, "P@10": 0.08833},
    "nfcorpus": {"NDCG@10": 0.31594, "MAP@10": 0.11048, "MRR@10": 0.50456, "Recall@100": 0.31151, "P@10": 0.24334},
}
TOLERANCE = 0.0005


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", help="bundled name (scifact) or BEIR folder (e.g. /work/shared/datasets/nfcorpus)")
    parser.add_argument("--k", type=int, default=1000, help="retrieval depth (default 1000, as MTEB)")
    parser.add_argument("--max-seq-length", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--cache-dir", default=None)
    parser.add_argument("--json", help="write the measured values to this file")
    args = parser.parse_args(argv)

    dataset = load_dataset(args.dataset)
    retriever = DenseRetriever(max_seq_length=args.max_seq_length, batch_size=args.batch_size,
                               cache_dir=args.cache_dir)
    started = time.perf_counter()
    retriever.index(dataset.corpus)
    run = retriever.search(dataset.queries, args.k)
    elapsed = time.perf_counter() - started
    result = evaluate(run, dataset.qrels, metrics=["NDCG@10", "MAP@10", "MRR@10", "Recall@100", "P@10"])
    means = result.means
    reference = MTEB.get(dataset.name.lower(), {})

    print(f"dataset {dataset.name}: {len(dataset.corpus)} docs, {len(dataset.queries)} queries, depth {args.k}, "
          f"{elapsed:.1f} s (index + search)")
    print(f"retriever: {json.dumps(retriever.params())}")
    print(f"stats: {json.dumps(retriever.stats())}")
    print(f"{'metric':<12}{'harness':>10}{'MTEB':>10}{'diff':>10}")
    for name, value in means.items():
        ref = reference.get(name)
        diff = f"{value - ref:+.5f}" if ref is not None else ""
        print(f"{name:<12}{value:>10.5f}{ref if ref is not None else '':>10}{diff:>10}")
    ok = True
    if "NDCG@10" in reference:
        delta = means["NDCG@10"] - reference["NDCG@10"]
        ok = abs(delta) <= TOLERANCE
        print(f"nDCG@10 within +-{TOLERANCE} of MTEB: {'yes' if ok else 'NO'} ({delta:+.5f})")
    if args.json:
        Path(args.json).write_text(json.dumps({"dataset": dataset.name, "means": means, "mteb": reference,
                                               "params": retriever.params(), "stats": retriever.stats()}, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Why MRR@10 on NFCorpus differs from MTEB's by -0.0005 while nDCG@10, MAP@10, R@100, P@10 agree.

NFCorpus holds duplicate documents (same text under different ids), which get identical
embeddings and therefore exactly tied scores. The evaluator (like trec_eval/pytrec_eval, which
MTEB uses for nDCG/MAP/recall/precision) orders ties by document id descending; MTEB's MRR is
BEIR's Python implementation, which sorts by score only and keeps ties in the order its search
heap produced them. This script lists the queries whose RR@10 depends on the tie order and finds
which choice of tie orders reproduces MTEB's published 0.50456.

Needs the NFCorpus embeddings in the cache (run benchmarks/dense_effectiveness.py on it first).

    PYTHONPATH=. python benchmarks/dense_nfcorpus_ties.py [/work/shared/datasets/nfcorpus]
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.datasets import load_dataset  # noqa: E402
from harness.evaluation import evaluate  # noqa: E402
from retrievers.dense import DenseRetriever  # noqa: E402

MTEB_MRR10 = 0.50456  # REFERENCE_SCORES.md, section C


def reciprocal_rank(ranked: list[str], relevant: set[str], k: int = 10) -> float:
    for rank, doc in enumerate(ranked[:k], 1):
        if doc in relevant:
            return 1.0 / rank
    return 0.0


def main(folder: str = "/work/shared/datasets/nfcorpus") -> int:
    ds = load_dataset(folder)
    retriever = DenseRetriever(progress=False)
    retriever.index(ds.corpus)
    run = retriever.search(ds.queries, 1000)
    qrels = ds.qrels.to_dict()
    harness_mrr = evaluate(run, ds.qrels, metrics=["MRR@10"]).means["MRR@10"]

    canonical, flipped = [], []  # RR@10 with ties by id descending / ascending
    for i, qid in enumerate(run.query_ids.tolist()):
        relevant = {d for d, g in qrels.get(qid, {}).items() if g > 0}
        ids = run.doc_ids(i)
        scores = run.scores[run.offsets[i]:run.offsets[i + 1]].tolist()
        ascending = [d for d, _ in sorted(sorted(zip(ids, scores)), key=lambda t: -t[1])]
        canonical.append(reciprocal_rank(ids, relevant))
        flipped.append(reciprocal_rank(ascending, relevant))
    n = len(canonical)
    depends = [i for i in range(n) if canonical[i] != flipped[i]]
    print(f"MRR@10: evaluator {harness_mrr:.5f}, ties by id desc {sum(canonical) / n:.5f}, "
          f"ties by id asc {sum(flipped) / n:.5f}, MTEB {MTEB_MRR10}")
    for i in depends:
        print(f"  query {run.query_ids[i]}: RR@10 {canonical[i]:.4f} (id desc) vs {flipped[i]:.4f} (id asc)")
    for m in range(len(depends) + 1):
        for subset in itertools.combinations(depends, m):
            value = (sum(canonical) + sum(flipped[i] - canonical[i] for i in subset)) / n
            if round(value, 5) == MTEB_MRR10:
                print(f"MTEB's value results when ties are flipped for: {[run.query_ids[i] for i in subset]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

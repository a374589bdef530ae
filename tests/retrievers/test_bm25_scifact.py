"""Effectiveness floor on the bundled SciFact test set.

Reference: Anserini's BEIR (v1.0.0) flat BM25 regression, nDCG@10 = 0.6789, R@100 = 0.9253
(/work/shared/datasets/REFERENCE_SCORES.md, table B). The run is deterministic; this backend
reproduces the reference to four decimals (0.67891, the same value Lucene's own run gives with
this evaluator), and the issue asks for +-0.003.
"""

from __future__ import annotations

from harness.datasets import load_dataset
from harness.evaluation import evaluate
from retrievers.bm25 import BM25Retriever


def test_scifact_matches_anserini_flat_bm25():
    dataset = load_dataset("scifact")
    retriever = BM25Retriever(cache=False)
    retriever.index(dataset.corpus)
    run = retriever.search(dataset.queries, 1000)
    means = evaluate(run, dataset.qrels, ["NDCG@10", "Recall@100"]).means
    assert abs(means["NDCG@10"] - 0.6789) <= 0.003
    assert means["NDCG@10"] >= 0.6759
    assert abs(means["Recall@100"] - 0.9253) <= 0.003

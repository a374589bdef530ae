"""Synthetic large input for the HTML report: 7,000 queries x 5 systems with rankings and judgments
(used by tests/reports/test_html_report.py and benchmarks/report_scale.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def big_inputs(root: Path, n_queries: int = 7000, n_systems: int = 5, n_docs: int = 20_000):
    """A BEIR folder (titled corpus, queries, 2 to 4 judgments per query) and result folders with a top 10."""
    rng = np.random.default_rng(0)
    data = root / "big-data"
    (data / "qrels").mkdir(parents=True)
    (data / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": f"d{i}", "title": f"Document {i} about topic {i % 97}", "text": "text"}) + "\n"
        for i in range(n_docs)))
    queries = [f"q{i}" for i in range(n_queries)]
    (data / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": f"question {q} on topic {i % 97}"}) + "\n"
                                                for i, q in enumerate(queries)))
    judged = {q: rng.choice(n_docs, size=rng.integers(2, 5), replace=False) for q in queries}
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\td{d}\t{rng.integers(0, 3)}\n" for q, docs in judged.items() for d in docs))
    base = rng.random(n_queries)
    for s in range(n_systems):
        folder = root / "big" / f"system-{s}"
        folder.mkdir(parents=True)
        moved = np.where(rng.random(n_queries) < 0.4, np.clip(base + rng.normal(0.02 * s, 0.2, n_queries), 0, 1), base)
        per_query = {q: {"NDCG@10": float(v), "Recall@100": float(min(1, v + 0.2)), "MRR@10": float(v ** 0.5)}
                     for q, v in zip(queries, moved)}
        doc = {"schema": "retrieval-harness/metrics/v1",
               "dataset": {"name": "big-data", "split": "test", "files": {}, "n_docs": n_docs, "n_queries": n_queries},
               "retriever": {"name": f"system-{s}", "params": {"s": s}}, "k_values": [10, 100],
               "settings": {"relevance_threshold": 1.0, "ignore_identical_ids": True, "depth": 10},
               "n_queries": n_queries, "metrics": {}, "per_query": per_query,
               "timings": {"index_s": 1.5 + s, "search_s": 2.0}, "created": "2026-01-01T00:00:00+00:00"}
        if s == 0:
            doc["efficiency"] = {"qps": 3500.0, "latency_ms": {"p50": 0.21, "p99": 1.4}, "peak_rss_mb": 812}
        (folder / "metrics.json").write_text(json.dumps(doc))
        (folder / "per_query.jsonl").write_text("".join(
            json.dumps({"query_id": q, "query": f"question {q} on topic {i % 97}"}) + "\n"
            for i, q in enumerate(queries)))
        top = rng.integers(0, n_docs, size=(n_queries, 10))
        with open(folder / "run.trec", "w") as handle:
            for q, docs in zip(queries, top):
                for r, d in enumerate(dict.fromkeys(docs.tolist())):
                    handle.write(f"{q} Q0 d{d} {r + 1} {10 - r} s{s}\n")
    return data, root / "big"

"""Write small result folders in the metrics.json layout of ``harness run`` (schema v1)."""

from __future__ import annotations

import json
from pathlib import Path

import harness
from harness.reports import MetricsDocument
from harness.versions import NUMBERS_VERSION, RUNS_VERSION

# metrics.json's versions as this build records them (harness.versions.recorded, without the git lookup)
BUILD = {"retrieval-harness": harness.__version__, "numbers_version": NUMBERS_VERSION, "runs_version": RUNS_VERSION}


def write_result(folder: Path, per_query: dict[str, dict[str, float]], texts: dict[str, str] | None = None,
                 rankings: dict[str, list[str]] | None = None, files: dict[str, str] | None = None,
                 settings: dict | None = None, efficiency: dict | None = None,
                 query_latency_ms: dict[str, float] | None = None, versions: dict | None = None) -> Path:
    """A result folder with metrics.json (+ per_query.jsonl when ``texts``, run.trec when ``rankings``);
    ``versions``: the build that computed it (default :data:`BUILD`, this one)."""
    folder.mkdir(parents=True, exist_ok=True)
    names = list(next(iter(per_query.values())))
    means = {m: sum(v[m] for v in per_query.values()) / len(per_query) for m in names}
    doc = MetricsDocument(
        dataset={"name": "toy", "split": "test", "files": files or {"qrels/test.tsv": "abc"},
                 "n_docs": 10, "n_queries": len(per_query)},
        retriever={"name": folder.name, "params": {}}, k_values=[1, 3, 5, 10],
        settings=settings or {"relevance_threshold": 1.0, "ignore_identical_ids": True, "depth": 10},
        n_queries=len(per_query), metrics=means, per_query=per_query, created="2025-01-01T00:00:00",
        efficiency=efficiency, query_latency_ms=query_latency_ms,
        versions=dict(BUILD if versions is None else versions))
    (folder / "metrics.json").write_text(json.dumps(doc.to_json()))
    if texts is not None:
        (folder / "per_query.jsonl").write_text("".join(
            json.dumps({"query_id": q, "query": texts.get(q), **v}) + "\n" for q, v in per_query.items()))
    if rankings is not None:
        (folder / "run.trec").write_text("".join(
            f"{q} Q0 {d} {r + 1} {float(len(docs) - r)} toy\n" for q, docs in rankings.items() for r, d in enumerate(docs)))
    return folder


def values(metric: str, column: list[float], prefix: str = "q") -> dict[str, dict[str, float]]:
    return {f"{prefix}{i}": {metric: v} for i, v in enumerate(column)}


def write_evaluated_result(folder: Path, run: Path, qrels: Path, metrics: tuple[str, ...] = ("P@1",)) -> Path:
    """A result folder whose metrics.json is ``run`` evaluated on ``qrels`` (its sha256 in dataset.files)."""
    from harness.checksums import sha256
    from harness.evaluation import Evaluator
    from harness.formats.trec import read_qrels, read_run

    result = Evaluator(list(metrics)).evaluate(read_run(run), read_qrels(qrels))
    document = MetricsDocument.build(result, dataset={"name": "q", "split": "test", "files": {str(qrels): sha256(qrels)}},
                                     retriever={"name": "x", "params": {}}, k_values=[1], depth=None, timings={})
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps(document.to_json()))
    return folder

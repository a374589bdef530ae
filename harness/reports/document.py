"""The metrics.json document: what was evaluated, how, and every value at full float precision."""

from __future__ import annotations

from datetime import datetime, timezone

from harness.evaluation import EvaluationResult
from harness.versions import versions

SCHEMA = "retrieval-harness/metrics/v1"


def metrics_document(
    result: EvaluationResult,
    *,
    dataset: dict,
    retriever: dict,
    k_values: list[int],
    depth: int | None,
    timings: dict[str, float],
    extra: dict | None = None,
) -> dict:
    """Assemble the metrics.json object (schema ``retrieval-harness/metrics/v1``)."""
    doc = {
        "schema": SCHEMA,
        "dataset": dataset,
        "retriever": retriever,
        "k_values": list(k_values),
        "settings": {**result.settings, "depth": depth},
        "n_queries": result.n_queries,
        "n_missing_from_run": result.n_missing_from_run,
        "n_without_relevant": result.n_without_relevant,
        "metrics": result.means,
        "per_query": result.per_query(),
        "timings": {name: round(seconds, 6) for name, seconds in timings.items()},
        "versions": versions(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    if extra:
        doc.update(extra)
    return doc

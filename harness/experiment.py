"""One experiment: index and search a loaded dataset with a retriever, evaluate, report."""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from harness import progress
from harness.datasets import Dataset
from harness.evaluation import EvaluationResult, Evaluator
from harness.reports import MetricsDocument, write_result_folder
from harness.retriever import Retriever
from harness.run import Run


@dataclass
class Timer:
    seconds: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def __call__(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = time.perf_counter() - start


@dataclass
class Experiment:
    dataset: Dataset
    run: Run
    result: EvaluationResult
    document: MetricsDocument
    folder: Path | None = None


def dataset_info(dataset: Dataset) -> dict:
    return {"name": dataset.name, "split": dataset.split, "files": dataset.files,
            "n_docs": len(dataset.corpus), "n_queries": len(dataset.queries)}


def search_run(retriever, dataset: Dataset, depth: int, ignore_identical_ids: bool) -> Run:
    """Search to ``depth`` (one more when identical ids will be dropped, so depth hits remain)."""
    run = retriever.search(dataset.queries, depth + 1 if ignore_identical_ids else depth)
    if ignore_identical_ids:
        run = run.without_identical_ids()
    return run.truncated(depth)


def run_experiment(
    dataset: Dataset,
    retriever: Retriever,
    evaluator: Evaluator,
    k_values: list[int],
    depth: int | None = None,
    output_dir: str | Path | None = None,
) -> Experiment:
    """Index, search, evaluate and report ``dataset``; ``timings.load_s`` is the time
    :func:`~harness.datasets.load_dataset` took to load it (``dataset.load_s``)."""
    timer = Timer({"load_s": dataset.load_s})
    depth = depth or max(k_values)
    with timer("index_s"), progress.task(f"indexing {len(dataset.corpus):,} documents ({retriever.name})"):
        retriever.index(dataset.corpus)
    with timer("search_s"), progress.task(f"searching {len(dataset.queries):,} queries ({retriever.name})"):
        run = search_run(retriever, dataset, depth, evaluator.ignore_identical_ids)
    with timer("evaluate_s"), progress.task("evaluating"):
        result = evaluator.evaluate(run, dataset.qrels)
    stats = getattr(retriever, "stats", None)
    document = MetricsDocument.build(
        result, dataset=dataset_info(dataset), retriever={"name": retriever.name, "params": retriever.params()},
        k_values=k_values, depth=depth, timings=timer.seconds, retriever_stats=stats() if callable(stats) else None,
        warnings=list(dataset.warnings) or None)
    folder = None
    if output_dir is not None:
        folder = write_result_folder(Path(output_dir), document, dataset.queries.as_dict(), run, tag=retriever.name)
    return Experiment(dataset, run, result, document, folder)

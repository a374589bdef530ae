"""One experiment: load a dataset, index and search it with a retriever, evaluate, report."""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from harness import progress
from harness.datasets import Dataset, load_dataset
from harness.evaluation import EvaluationResult, Evaluator
from harness.reports import metrics_document, write_result_folder
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
    document: dict
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
    dataset: str | Dataset,
    retriever,
    evaluator: Evaluator,
    k_values: list[int],
    split: str = "test",
    depth: int | None = None,
    output_dir: str | Path | None = None,
) -> Experiment:
    timer = Timer()
    with timer("load_s"):
        if isinstance(dataset, Dataset):
            ds = dataset
        else:
            with progress.task(f"loading {dataset}"):
                ds = load_dataset(dataset, split)
    depth = depth or max(k_values)
    with timer("index_s"), progress.task(f"indexing {len(ds.corpus):,} documents ({retriever.name})"):
        retriever.index(ds.corpus)
    with timer("search_s"), progress.task(f"searching {len(ds.queries):,} queries ({retriever.name})"):
        run = search_run(retriever, ds, depth, evaluator.ignore_identical_ids)
    with timer("evaluate_s"), progress.task("evaluating"):
        result = evaluator.evaluate(run, ds.qrels)
    stats = getattr(retriever, "stats", None)
    extra = {"retriever_stats": stats()} if callable(stats) else None
    document = metrics_document(
        result, dataset=dataset_info(ds), retriever={"name": retriever.name, "params": retriever.params()},
        k_values=k_values, depth=depth, timings=timer.seconds, extra=extra)
    if ds.warnings:
        document["warnings"] = list(ds.warnings)
    folder = None
    if output_dir is not None:
        folder = write_result_folder(Path(output_dir), document, ds.queries.as_dict(), run, tag=retriever.name)
    return Experiment(ds, run, result, document, folder)

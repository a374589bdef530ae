"""One experiment: index and search a loaded dataset with a retriever, evaluate, report."""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path


from harness import progress
from harness.datasets import Dataset
from harness.datasets.corpus import Queries
from harness.evaluation import EvaluationResult, Evaluator, default_depth, depth_warning
from harness.evaluation.semantics import Semantics, parse_semantics, top_depth
from harness.reports import MetricsDocument, efficiency, write_result_folder
from harness.reports.document import plain_json
from harness.retriever import Retriever
from harness.run import Run, concat_runs

SEARCH_BATCH = Retriever.search_batch_size  # queries per timed search() call (docs/efficiency.md)
MAX_TIMED_CALLS = 50  # larger batches beyond 50 x SEARCH_BATCH queries: bounds the per-call overhead


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


def search_run(retriever, dataset: Dataset, depth: int, ignore_identical_ids: bool,
               semantics: Semantics | str | None = None) -> Run:
    """Search to ``depth`` (one more when identical ids will be dropped, so depth hits remain).
    ``semantics``: the evaluator's (its order decides which documents the depth cut keeps, and the
    retriever is told it: ``Retriever.ranking_semantics``); None keeps the canonical float64 order."""
    if semantics is not None:
        retriever.ranking_semantics = parse_semantics(semantics)
    return _finish(retriever.search(dataset.queries, _search_k(depth, ignore_identical_ids)), depth,
                   ignore_identical_ids, semantics)


def _search_k(depth: int, ignore_identical_ids: bool) -> int:
    """(Within int64, as ranks and counts are: a depth of 2^63 - 1 is searched as deep as it is.)"""
    return min(depth + 1, 2**63 - 1) if ignore_identical_ids else depth


def _finish(run: Run, depth: int, ignore_identical_ids: bool, semantics: Semantics | str | None = None) -> Run:
    if ignore_identical_ids:
        run = run.without_identical_ids()
    return top_depth(run, depth, semantics)


@dataclass
class TimedSearch:
    run: Run
    latency_ms: dict[str, float]  # query id -> ms
    basis: str  # efficiency.PER_REQUEST or efficiency.PER_BATCH_SHARE
    batch_size: int | None = None
    warning: str | None = None  # why the retriever's own latencies were not used


def timed_search(retriever, queries: Queries, k: int, finish=None) -> TimedSearch:
    """Search ``queries`` and time each query; ``finish(run)`` (untimed), when given, is applied to
    each batch's run before they are joined (a per-query step such as :func:`_finish`: the joined
    run is then copied once, at its final size).

    A retriever that times its own requests (``measures_latency``; its ``stats()`` holds
    ``query_latency_ms``) searches all queries in one call and its latencies are kept ("per
    request"); any other searches batches of its ``search_batch_size`` queries (all in one call
    when None; larger batches when that would take more than ``MAX_TIMED_CALLS`` calls), each batch
    timed, and each query is given its batch's time divided by the batch's size ("per batch share").
    """
    finish = finish or (lambda run: run)
    if getattr(retriever, "measures_latency", False):
        started = time.perf_counter()
        run = retriever.search(queries, k)
        elapsed = time.perf_counter() - started
        run = finish(run)
        stats = getattr(retriever, "stats", None)
        measured, why = efficiency.measured_latencies((stats() if callable(stats) else {}).get("query_latency_ms"),
                                                      queries.ids)
        if measured is not None:
            return TimedSearch(run, measured, efficiency.PER_REQUEST)
        return TimedSearch(run, efficiency.batch_shares([(queries.ids, elapsed)]), efficiency.PER_BATCH_SHARE,
                           len(queries), warning=why)
    batch_size = getattr(retriever, "search_batch_size", SEARCH_BATCH) or len(queries)
    batch_size = max(1, batch_size, -(-len(queries) // MAX_TIMED_CALLS))
    parts, batches = [], []
    for start in range(0, len(queries), batch_size):
        batch = Queries(queries.ids[start:start + batch_size], queries.texts[start:start + batch_size])
        started = time.perf_counter()
        part = retriever.search(batch, k)
        batches.append((batch.ids, time.perf_counter() - started))
        parts.append(finish(part))
    return TimedSearch(concat_runs(parts), efficiency.batch_shares(batches), efficiency.PER_BATCH_SHARE, batch_size)


def check_run_file_ids(dataset: Dataset) -> None:
    """Fail before indexing when the run file of a result folder would be refused: every document id of
    the corpus and every query id is checked with the TREC writer's own rule
    (:func:`harness.formats.trec.check_writable_ids`: empty, ASCII whitespace, NUL; ``#`` leading a
    query id) and its message (ValueError, one line from the CLI). Vectorized over the corpus's Arrow
    ``_id`` column (1M ids: milliseconds), so a bad id costs seconds, not the whole index and search."""
    from harness.formats.trec import check_writable_ids, unwritable_ids, unwritable_message

    bad = unwritable_ids(dataset.corpus.id_column)
    if len(bad):  # where it is: the corpus's document number (its line, when the file has no blank line)
        position = int(bad[0])
        raise ValueError(f"{unwritable_message(dataset.corpus.ids[position], 'document id')}: document "
                         f"{position + 1:,} of {dataset.name}'s corpus, which run.trec could not hold")
    check_writable_ids(dataset.queries.ids, "query id", first_column=True)


def run_experiment(
    dataset: Dataset,
    retriever: Retriever,
    evaluator: Evaluator,
    k_values: list[int],
    depth: int | None = None,
    output_dir: str | Path | None = None,
) -> Experiment:
    """Index, search, evaluate and report ``dataset``; ``timings.load_s`` is the time
    :func:`~harness.datasets.load_dataset` took to load it (``dataset.load_s``). With ``output_dir``
    (a result folder with ``run.trec``), ids the run file could not hold fail first
    (:func:`check_run_file_ids`)."""
    from harness.fingerprint import prefetch

    if output_dir is not None:
        check_run_file_ids(dataset)

    prefetch()  # the result's machine and software facts, read on a thread while the run goes on
    timer = Timer({"load_s": dataset.load_s})
    depth = depth or default_depth(k_values, evaluator.metrics)
    retriever.ranking_semantics = evaluator.semantics  # a run-file cuts its ranking in the evaluator's order
    with timer("index_s"), progress.task(f"indexing {len(dataset.corpus):,} documents ({retriever.name})"):
        retriever.index(dataset.corpus)
    with timer("search_s"), progress.task(f"searching {len(dataset.queries):,} queries ({retriever.name})"):
        searched = timed_search(retriever, dataset.queries, _search_k(depth, evaluator.ignore_identical_ids),
                                finish=lambda part: _finish(part, depth, evaluator.ignore_identical_ids,
                                                            evaluator.semantics))
        run = searched.run
    with timer("evaluate_s"), progress.task("evaluating"):
        result = evaluator.evaluate(run, dataset.qrels)
    stats = getattr(retriever, "stats", None)
    stats = plain_json(stats()) if callable(stats) else None  # (a plugin's: may hold NaN, numpy values)
    document = MetricsDocument.build(
        result, dataset=dataset_info(dataset), retriever={"name": retriever.name, "params": retriever.params()},
        k_values=k_values, depth=depth, timings=timer.seconds, retriever_stats=stats,
        warnings=[*dataset.warnings, *filter(None, [depth_warning(depth, k_values, evaluator.metrics),
                                                     searched.warning])] or None)
    document.efficiency = efficiency.efficiency_block(
        timer.seconds, len(dataset.queries), searched.latency_ms, searched.basis, searched.batch_size,
        index_bytes=(stats or {}).get("index_bytes"))
    document.query_latency_ms = efficiency.query_latency_block(searched.latency_ms)
    folder = None
    if output_dir is not None:
        folder = write_result_folder(Path(output_dir), document, dataset.queries.as_dict(), run, tag=retriever.name)
    return Experiment(dataset, run, result, document, folder)

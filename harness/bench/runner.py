"""Run a benchmark: every (dataset x retriever) cell, skipping finished ones, then the leaderboard.

For each dataset (in config order) and each retriever: compute the cell's fingerprint (dataset
file checksums, retriever params, evaluation settings); if the cell's folder already records it,
reuse the cell; otherwise load the dataset (once, on first need), run the experiment and write the
cell's folder (metrics.json last). A cell that fails is recorded with its error and the others go
on (``fail_fast`` stops instead). Finally ``leaderboard.md``, ``leaderboard.json``, ``report.html`` and ``bench.json``
(the manifest: config, cells, status) are written, all atomically, bench.json last (an earlier run's removed
first: a folder holding one holds its run's files). Killing a benchmark midway leaves the finished cells
intact; running it again skips them.

Retrievers' own caches (BM25 indexes, embeddings) live under ``$HARNESS_CACHE_DIR``; a config's
``cache_dir`` sets it for the duration of the benchmark.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from harness import progress
from harness.atomic import file_lock, write_json, write_text
from harness.bench import leaderboard
from harness.bench.cells import (NUMBERS_VERSION, Cell, cells, dataset_checksums, evaluation_settings,
                                 fingerprint, is_finished, read_metrics)
from harness.bench.config import BenchConfig, DatasetSpec, RetrieverSpec
from harness.bench.leaderboard import CellOutcome
from harness.cache import ENV_VAR
from harness.errors import ConfigError, HarnessError
from harness.reports import MetricsDocument
from harness.reports.writer import LOCK, result_file_named
from harness.secrets import without_secrets

MANIFEST_SCHEMA = "retrieval-harness/bench/v1"
CHECKSUM_MEMO = ".checksums.json"  # file and content sha256s by path, size and mtime (see cells.file_sha256)


@dataclass
class BenchResult:
    config: BenchConfig
    outcomes: list[CellOutcome]
    board: dict
    folder: Path
    seconds: float
    counts: dict = field(default_factory=dict)

    @property
    def failed(self) -> list[CellOutcome]:
        return [o for o in self.outcomes if o.status == "failed"]

    def warnings(self, issued_only: bool = False) -> list[str]:
        """The cells' warnings as ``harness bench`` prints them after its cells (each ``warning: <line>``):
        one line per distinct warning, naming the cells that have it (:func:`leaderboard.grouped_warnings`),
        of every cell with a result, run or reused (:attr:`CellOutcome.warnings`: what ``harness run``
        prints for it). ``issued_only``: only the HarnessWarnings issued while cells ran (an http
        retriever's failed queries, the ones ``harness run -q`` still prints; a reused cell's: the failed
        requests its metrics.json records, :func:`leaderboard.recorded_failures`)."""
        return leaderboard.grouped_warnings([(o.cell.name, o.issued if issued_only else o.warnings)
                                             for o in self.outcomes])

    def summary(self) -> str:
        c = self.counts
        return (f"bench {self.config.name}: {len(self.outcomes)} cells ({c.get('run', 0)} run, "
                f"{c.get('reused', 0)} reused, {c.get('failed', 0)} failed) in {self.seconds:.1f} s; "
                f"leaderboard: {self.folder / 'leaderboard.md'}")


def metric_names(config: BenchConfig) -> list[str]:
    """What each cell evaluates: BEIR's six families at every k, plus leaderboard metrics beyond them."""
    from harness.evaluation import DEFAULT_FAMILIES, metrics_for

    names = [m.name for m in metrics_for(DEFAULT_FAMILIES, config.k)]
    return names + [m for m in config.metrics if m not in names]


@contextlib.contextmanager
def _cache_env(cache_dir: str | None):
    if cache_dir is None:
        yield
        return
    old = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = str(Path(os.path.expanduser(cache_dir)))
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(ENV_VAR, None)
        else:
            os.environ[ENV_VAR] = old


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    message = text[0] if text else ""
    return message if isinstance(exc, HarnessError) else f"{type(exc).__name__}: {message}"


_PLUGIN_KEYS = ("plugin_release", "plugin_code")


def _with_release(component) -> dict:
    """A component's ``params()``, with the release of the installed plugin it comes from (its entry
    point's distribution, :func:`harness.registry.plugin_versions`) under ``"plugin_release"`` and
    the digests of its package's code and its bases' (:func:`harness.plugin_code.plugin_code`) under
    ``"plugin_code"``: the cell's fingerprint then changes when the plugin is upgraded or its code edited, as it does
    with the harness's own version (a built-in's params are left as they are)."""
    from harness.plugin_code import plugin_code
    from harness.registry import plugin_versions

    identity = {"plugin_release": plugin_versions(type(component)), "plugin_code": plugin_code(type(component))}
    return {**component.params(), **{key: value for key, value in identity.items() if value}}


def _stages_as_run(planned: dict, outcomes) -> dict:
    """A pipeline's resolved params (:meth:`BenchRunner.pipeline_params`) with each stage's component
    params as the stage reported them once its run was made (or as its cache entry recorded them)."""
    resolved = dict(planned)
    for outcome in outcomes:
        params = outcome.info.get("resolved_params")
        if isinstance(params, dict) and outcome.stage.name in resolved:
            identity = {key: resolved[outcome.stage.name][key] for key in _PLUGIN_KEYS
                        if resolved[outcome.stage.name].get(key)}
            resolved[outcome.stage.name] = {**params, **identity}
    return resolved


def _refuse_stdin_on_ray(config: BenchConfig) -> None:
    """Refuse, before anything is read, a run-file entry replaying standard input (``path = "-"``) under
    the Ray executor: the driver read it for the plan, and each Ray task read its worker's own standard
    input, empty (every such cell failed with 'the run file is empty')."""
    from harness.bench.config import stdin_replays

    readers = stdin_replays(config.retrievers, config.pipelines)
    if readers:
        raise HarnessError(f'{config.source}: {readers[0]}: "-" (standard input) is read by this process, not by '
                           "the Ray executor's tasks; give the run as a file, or run the bench with --executor local")


def _refuse_main_on_ray(config: BenchConfig) -> None:
    """Refuse, before anything runs, a component named ``__main__:Class`` under the Ray executor: the class
    is the driver's script's (a bench driven from Python), and a Ray worker's ``__main__`` is its own (each
    such cell failed with "module '__main__' has no attribute ...", the class being right there in the script)."""
    named = [(f"retrievers[{i}].type", x.type) for i, x in enumerate(config.retrievers)]
    named += [(f"pipelines[{i}].stages[{j}].{'retriever' if stage.type == 'retrieve' else 'reranker'}",
               stage.component) for i, p in enumerate(config.pipelines) for j, stage in enumerate(p.stages)
              if stage.type != "fuse"]
    for key, spec in named:
        if isinstance(spec, str) and spec.partition(":")[0].strip() == "__main__":
            raise HarnessError(f"{config.source}: {key}: {spec!r} is a class of this process's script (__main__), "
                               "which a Ray worker does not import; move it into a module the workers can import, "
                               "or run the bench with --executor local")


class _Datasets:
    """Load each dataset on first need; keep only the current one in memory. Each of its cells
    records the one load's time (``Dataset.load_s``). A load that failed fails each of the dataset's
    cells with its error, without loading it again for each (a corpus broken at its end was parsed
    once per retriever)."""

    def __init__(self):
        self.spec: DatasetSpec | None = None
        self.dataset = None
        self.failed: tuple[DatasetSpec, str] | None = None  # the spec whose load failed, and its error

    def get(self, spec: DatasetSpec):
        if self.failed is not None and self.failed[0] == spec:
            raise HarnessError(self.failed[1])
        if self.spec != spec:
            from harness.datasets import load_dataset

            self.spec, self.dataset, self.failed = None, None, None  # set once loaded
            try:
                with progress.task(f"loading {spec.label}"):
                    dataset = load_dataset(spec.source, spec.split)
            except Exception as exc:  # (its one line only: the traceback would keep a partial corpus alive)
                self.failed = spec, _one_line(exc)
                raise
            self.spec, self.dataset = spec, dataset
        return self.dataset


class BenchRunner:
    def __init__(self, config: BenchConfig, *, force: bool = False, fail_fast: bool = False,
                 echo: Callable[[str], None] | None = None):
        self.config, self.force, self.fail_fast = config, force, fail_fast
        self.echo = echo or (lambda _line: None)
        self.metrics = metric_names(config)
        self.evaluation = evaluation_settings(config, self.metrics)
        self._retrievers: dict[str, object] = {}
        self._closed = False  # (close() closed those: the next cell makes new ones)
        self._retriever_errors: dict[str, str] = {}
        self._pipeline_params: dict[str, dict] = {}
        self._pipeline_unkeyed: dict[str, bool] = {}  # {pipeline label: a stage's class has no code digest}
        self._checksums: dict[DatasetSpec, dict | None] = {}
        self._planned: _Datasets | None = None  # the datasets loaded while planning (run())
        self._memo_path = config.folder / CHECKSUM_MEMO
        self._memo = self._read_memo()

    def _read_memo(self) -> dict:
        try:
            memo = json.loads(self._memo_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return memo if isinstance(memo, dict) else {}

    # ----------------------------------------------------------------- pieces
    def retriever(self, spec: RetrieverSpec):
        """One instance per retriever entry, reused across datasets (index() is called per dataset)."""
        if spec.label in self._retriever_errors:
            raise HarnessError(self._retriever_errors[spec.label])
        if self._closed:
            self._retrievers, self._closed = {}, False
        if spec.label not in self._retrievers:
            from harness.registry import create

            try:
                self._retrievers[spec.label] = create(spec.type, **spec.params)
            except (HarnessError, ValueError, TypeError, OSError) as exc:
                message = self._at(f"retrievers[{self.config.retrievers.index(spec)}].params",
                                   f"retriever {spec.label!r}: {_one_line(exc)}")
                self._retriever_errors[spec.label] = message
                raise HarnessError(message) from None
        return self._retrievers[spec.label]

    def _at(self, key: str, message: str) -> str:
        """``message`` behind the config file and the line of ``key`` (``<file>:<line>: <key>: <message>``)
        when the config was read from a TOML file: where to fix a value a constructor refused (``backend =
        "nope"``), which the config's reading could not check (the cell's error named no file or line)."""
        error = ConfigError(self.config.source, key, message)
        return str(error) if error.line is not None else message

    def checksums(self, spec: DatasetSpec, datasets: _Datasets) -> dict[str, str]:
        if spec not in self._checksums:
            with progress.task(f"checksums of {spec.label}"):
                self._checksums[spec] = dataset_checksums(spec, self._memo)
        files = self._checksums[spec]
        return files if files is not None else datasets.get(spec).identity()

    def _live(self, cell: Cell) -> bool:
        """Whether ``cell``'s retriever answers from a live service (its ``cache_runs`` false: the http
        retriever), whose cell runs again on every bench. Its params() hold the digest of the answers of its
        last search, and one instance serves every dataset: a plan made with them named the previous
        dataset's answers, and a cell whose recorded answers were the same (two datasets of the same queries)
        was reused without asking the service. (A pipeline's stages are made afresh for the plan: their
        digests are unknown there, and such a cell never matches.)"""
        return isinstance(cell.retriever, RetrieverSpec) and not getattr(self.retriever(cell.retriever),
                                                                          "cache_runs", True)

    def _unkeyed(self, cell: Cell) -> bool:
        """Whether a class of ``cell``'s retriever (or of a stage of its pipeline) is defined in ``__main__``
        without a source file (:func:`harness.plugin_code.unkeyed_code`: a notebook's): its cell runs again on
        every bench, since its fingerprint cannot tell the class from an edited one."""
        from harness.plugin_code import unkeyed_code

        if isinstance(cell.retriever, RetrieverSpec):
            return unkeyed_code(type(self.retriever(cell.retriever))) is not None
        self.pipeline_params(cell.retriever)
        return self._pipeline_unkeyed.get(cell.retriever.label, False)

    def resolved_params(self, spec) -> dict:
        """A retriever's resolved params; a pipeline's: each stage's (see :meth:`pipeline_params`)."""
        return _with_release(self.retriever(spec)) if isinstance(spec, RetrieverSpec) else self.pipeline_params(spec)

    def pipeline_params(self, pipeline) -> dict:
        """{stage name: what the parsed pipeline does not show of it}: a retrieve or rerank stage's
        component ``params()`` (a run file's sha256, a model's checksum), a fuse stage's optimisation
        qrels sha256; so that a changed file or model reruns the pipeline's cell, as it does a
        retriever's. Computed once per pipeline."""
        if pipeline.label not in self._pipeline_params:
            from harness.checksums import sha256
            from harness.plugin_code import unkeyed_code
            from harness.registry import create, create_reranker

            resolved, at = {}, f"pipelines[{self.config.pipelines.index(pipeline)}]"
            for j, stage in enumerate(pipeline.stages):
                try:
                    if stage.type != "fuse":
                        make = create if stage.type == "retrieve" else create_reranker
                        component = make(stage.component, **stage.params)
                        resolved[stage.name] = _with_release(component)
                        if unkeyed_code(type(component)) is not None:
                            self._pipeline_unkeyed[pipeline.label] = True
                    elif stage.optimize is not None:  # (and the rule choosing among tied trials, as the stage cache
                        # key names it: a cell optimised under another rule may hold another choice)
                        from harness.fusion.optimize import TIE_RULE

                        resolved[stage.name] = {"qrels_sha256": sha256(stage.optimize["qrels"]), "ties": TIE_RULE}
                except Exception as exc:  # noqa: BLE001 - reported as the cell's one-line error
                    key = f"{at}.stages[{j}].{'params' if stage.type != 'fuse' else 'optimize'}"
                    raise HarnessError(self._at(key, f"pipeline {pipeline.label!r}, stage {stage.name!r}: "
                                                     f"{_one_line(exc)}")) from None
            self._pipeline_params[pipeline.label] = resolved
        return self._pipeline_params[pipeline.label]

    def refuse_outputs_over_inputs(self, cell: Cell) -> None:
        """Refuse a cell whose folder's files (run.trec, ...) include one of its inputs: a run-file
        retriever's (or pipeline stage's) ``path``, an optimised fusion's qrels. Writing the cell would
        replace the user's file (``path = "results/b/scifact/rf/run.trec"``, to evaluate a run again
        with other cutoffs, cut it to the depth), as ``harness run`` refuses it too."""
        spec = cell.retriever
        if isinstance(spec, RetrieverSpec):
            named = [(f"retriever {spec.label!r}: params.{key}", value) for key, value in spec.params.items()]
        else:
            named = [(f"pipeline {spec.label!r}, stage {stage.name!r}: params.{key}", value) for stage in spec.stages
                     for key, value in stage.params.items()]
            named += [(f"pipeline {spec.label!r}, stage {stage.name!r}: optimize.qrels", stage.optimize.get("qrels"))
                      for stage in spec.stages if isinstance(stage.optimize, dict)]
        found = result_file_named(cell.folder, named)
        if found is not None:
            key, value, file = found
            raise HarnessError(f"{key} {value}: is this cell's own {file.name}, which running the cell "
                               "would replace; copy it elsewhere and name the copy")

    def cell_fingerprint(self, cell: Cell, datasets: _Datasets, as_written: bool = False) -> str | None:
        return fingerprint(self.checksums(cell.dataset, datasets), cell.dataset.split, cell.retriever,
                           self.resolved_params(cell.retriever), self.evaluation, as_written=as_written)

    def run_cell(self, cell: Cell, expected: str, datasets: _Datasets) -> MetricsDocument:
        from harness.evaluation import Evaluator
        from harness.experiment import check_run_file_ids, run_experiment
        from harness.reports import write_result_folder

        self.refuse_outputs_over_inputs(cell)  # (before anything of the folder is removed)
        stale = cell.folder / "metrics.json"
        if stale.exists():
            stale.unlink()  # the folder is being redone: never leave an old metrics.json beside new files
        if self._planned is not None and self._planned.spec == cell.dataset:
            datasets = self._planned  # loaded by the plan (for its checksums): not loaded a second time
        ds = datasets.get(cell.dataset)
        check_run_file_ids(ds)  # the cell writes run.trec: refuse ids it could not hold before indexing
        if ds.identity() != self._checksums.get(cell.dataset):  # checksums known only after loading
            expected = fingerprint(ds.identity(), cell.dataset.split, cell.retriever,
                                   self.resolved_params(cell.retriever), self.evaluation)
        evaluator = Evaluator(self.metrics, k_values=self.config.k, relevance_threshold=self.config.relevance_threshold,
                              ignore_identical_ids=self.config.ignore_identical_ids, semantics=self.config.semantics)
        if isinstance(cell.retriever, RetrieverSpec):
            exp = run_experiment(ds, self.retriever(cell.retriever), evaluator, list(self.config.k),
                                 depth=self.config.search_depth)
            resolved = self.resolved_params(cell.retriever)
        else:
            from harness.pipeline import run_pipeline

            exp, outcomes = run_pipeline(ds, cell.retriever, evaluator, list(self.config.k),
                                         depth=self.config.search_depth)
            resolved = _stages_as_run(self.pipeline_params(cell.retriever), outcomes)
        # the fingerprint of what the numbers were computed from: params() now describe what was read (a run
        # file rewritten since the plan: its new sha256), so that the cell is never reused for the old content
        expected = fingerprint(ds.identity(), cell.dataset.split, cell.retriever, resolved, self.evaluation)
        document = exp.document
        document.throughput = leaderboard.throughput(document)
        document.bench = {"name": self.config.name, "config_path": self.config.source,
                          "config": without_secrets(self.config.to_dict()),
                          "dataset": cell.dataset.to_dict(), "retriever": without_secrets(cell.retriever.to_dict()),
                          "evaluation": self.evaluation, "fingerprint": expected, "numbers": NUMBERS_VERSION}
        # (under the folder's lock, <cell folder>/.lock: two benches writing one cell at once, configs sharing
        # output_dir, name and labels, write the whole folder in turn, never one's metrics.json beside the
        # other's run.trec)
        write_result_folder(cell.folder, document, ds.queries.as_dict(), exp.run, tag=cell.retriever.label)
        return document

    def close(self) -> None:
        """Close the retrievers this runner made (:meth:`Retriever.close <harness.retriever.Retriever.close>`),
        each once; a cell run after it makes its retriever again."""
        from harness.closing import close_components

        if not self._closed:
            close_components(self._retrievers.values())
            self._closed = True

    # ----------------------------------------------------------------- the matrix
    def run(self, dry_run: bool = False) -> BenchResult:
        """Plan here (fingerprints, finished cells reused), then run the other cells on the
        config's executor (harness/bench/executors.py), collecting outcomes in plan order; the retrievers
        made for them are closed at the end (:meth:`close`), after the last cell, whatever happened."""
        try:
            return self._run(dry_run)
        finally:
            self.close()

    def _run(self, dry_run: bool) -> BenchResult:
        from harness.bench.config import check_dataset_folders, check_rerank_depths
        from harness.bench.executors import executor_for

        check_dataset_folders(self.config)
        check_rerank_depths(self.config)  # (load_config checks it too; a config parsed in Python, not read)
        started = time.perf_counter()
        plan = cells(self.config)
        outcomes: dict[int, CellOutcome] = {}
        executor = executor_for(self.config.executor)
        if executor.kind == "ray":
            _refuse_stdin_on_ray(self.config)
            _refuse_main_on_ray(self.config)
        # Here, each dataset's cells run right after they are planned, with the dataset the plan loaded (one
        # not in a local folder, irds:/hf:, is loaded to learn its files' checksums; was loaded again to run
        # its cells): one load per dataset, one in memory at a time. Ray gets every cell at once.
        groups: list[list[int]] = [list(range(len(plan)))]
        if executor.kind == "local":
            groups = [[i for i, cell in enumerate(plan) if cell.dataset == spec]
                      for spec in dict.fromkeys(cell.dataset for cell in plan)]
        datasets = self._planned = _Datasets()
        with _cache_env(self.config.cache_dir), progress.task(f"bench {self.config.name}", total=len(plan),
                                                              unit="cells") as bar:
            def record(index: int, outcome: CellOutcome) -> None:
                outcomes[index] = outcome
                self.echo(self.describe(index + 1, len(plan), outcome))
                bar.advance(1)

            for group in groups:
                todo: list[tuple[int, Cell, str]] = []
                for index in group:
                    cell = plan[index]
                    cell_started = time.perf_counter()
                    bar.update(description=f"bench {self.config.name}: {cell.name}")
                    try:
                        expected = self.cell_fingerprint(cell, datasets)
                        reusable = not self.force and not self._live(cell) and not self._unkeyed(cell)
                        if reusable and is_finished(cell.folder, expected, self.metrics,
                                                    self.cell_fingerprint(cell, datasets, as_written=True)):
                            document = read_metrics(cell.folder)
                            outcome = CellOutcome(cell, "reused", document,
                                                  issued=leaderboard.recorded_failures(document.efficiency))
                        else:
                            self.refuse_outputs_over_inputs(cell)  # before any cell runs: it would replace an input
                            if not dry_run:
                                todo.append((index, cell, expected))
                                continue
                            outcome = CellOutcome(cell, "pending")
                    except Exception as exc:  # one cell's failure (bad file, retriever bug) must not end the matrix
                        if self.fail_fast:
                            raise
                        outcome = CellOutcome(cell, "failed", error=_one_line(exc))
                    outcome.seconds = time.perf_counter() - cell_started
                    record(index, outcome)
                if executor.kind != "local":
                    datasets.spec, datasets.dataset = None, None  # (not needed on the driver while Ray runs)
                for done in executor.run(self, todo):
                    cell = plan[done.index]
                    outcome = CellOutcome(cell, "failed", error=done.error) if done.error is not None else \
                        CellOutcome(cell, "run", done.document, issued=done.issued)
                    outcome.seconds = done.seconds
                    record(done.index, outcome)
                datasets.spec, datasets.dataset = None, None  # before the next dataset is loaded
        self._planned = None
        ordered = [outcomes[i] for i in range(len(plan))]
        board = leaderboard.build(self.config, ordered)
        counts = {status: sum(1 for o in ordered if o.status == status)
                  for status in ("run", "reused", "failed", "pending")}
        result = BenchResult(self.config, ordered, board, self.config.folder, time.perf_counter() - started, counts)
        if not dry_run:
            self.write(result)
        return result

    def describe(self, number: int, total: int, outcome: CellOutcome) -> str:
        head = f"[{number}/{total}] {outcome.cell.name}: {outcome.status}"
        if outcome.status == "failed":
            return f"{head}: {outcome.error}"
        if outcome.document is None:
            return head
        metrics = outcome.document.metrics
        values = ", ".join(f"{m} {metrics[m]:.4f}" for m in self.config.metrics if m in metrics)
        speed = leaderboard.throughput(outcome.document)
        extra = ""
        if outcome.status == "run":
            parts = [f"index {speed['index_s']:.1f} s" if speed["index_s"] is not None else None,
                     f"{speed['queries_per_s']:,.0f} queries/s" if speed["queries_per_s"] else None]
            shown = [p for p in parts if p]
            extra = " (" + ", ".join(shown) + ")" if shown else ""
        return f"{head}, {values}{extra}"

    def write(self, result: BenchResult) -> None:
        """leaderboard.json, leaderboard.md, report.html, then bench.json, each atomically; an earlier run's
        bench.json is removed first, so that the manifest is there only beside the files of its own run: a
        benchmark killed (or failing: a full disk) between two of these writes left the earlier run's bench.json
        (its config, cells and counts) beside this run's leaderboard, and ``harness report`` read the
        benchmark's datasets from it. Under the folder's lock (``<folder>/.lock``, POSIX ``flock``), as a result
        folder's files are written."""
        folder = result.folder
        folder.mkdir(parents=True, exist_ok=True)
        with file_lock(folder / LOCK):  # (two benchmarks writing one folder: in turn, never one's bench.json beside
            self._write(result)         # the other's leaderboard; as a result folder's files, writer.py)

    def _write(self, result: BenchResult) -> None:
        folder = result.folder
        (folder / "bench.json").unlink(missing_ok=True)
        if self._memo:
            write_json(self._memo_path, self._memo)
        write_json(folder / "leaderboard.json", result.board)
        write_text(folder / "leaderboard.md", leaderboard.markdown(result.board, self.config.description))
        self.write_report(result)
        from harness.versions import versions

        write_json(folder / "bench.json", {
            "schema": MANIFEST_SCHEMA, "config_path": self.config.source, "config": without_secrets(self.config.to_dict()),
            "cwd": os.getcwd(),  # (the config's relative dataset folders were taken from it: harness report reads them)
            "evaluation": self.evaluation, "cells": result.board["cells"], "counts": result.counts,
            "seconds": round(result.seconds, 3), "versions": versions(), "created": result.board["created"]})

    def write_report(self, result: BenchResult) -> None:
        """report.html beside leaderboard.md; a failure costs the page (a warning), never the benchmark.
        Without a page of this run, an earlier run's page is removed: it would show numbers (cells,
        qrels) that the leaderboard beside it no longer has."""
        from harness.reports.html import Bench, write_bench_report

        page = result.folder / "report.html"
        if not any(o.status in ("run", "reused") for o in result.outcomes):
            _remove(page)
            return
        try:  # (from the leaderboard just written, as `harness report` over the folder reads it: one page)
            write_bench_report(page, Bench(result.folder, result.board,
                                           {d.label: d.source for d in self.config.datasets}))
        except Exception as exc:  # noqa: BLE001 - the leaderboard is written; the page is extra
            _remove(page)
            # (logged, as a cache not written is: bench -q hides it, as it hides every warning but the cells')
            logging.getLogger(__name__).warning("report.html not written: %s", _one_line(exc))


def _remove(path: Path) -> None:
    """Remove ``path`` if it can be (absent, or a read-only folder: left as it is)."""
    with contextlib.suppress(OSError):
        path.unlink()


def run_bench(config: BenchConfig, *, force: bool = False, fail_fast: bool = False, dry_run: bool = False,
              echo: Callable[[str], None] | None = None) -> BenchResult:
    """Run (or with ``dry_run`` only plan) every cell of ``config``; see the module docstring."""
    return BenchRunner(config, force=force, fail_fast=fail_fast, echo=echo).run(dry_run=dry_run)

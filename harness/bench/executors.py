"""Where a benchmark's cells run: here, one after another (``local``), or as Ray tasks (``ray``).

The runner decides which cells are finished (their fingerprints, computed here on the driver) and
hands the others to the executor chosen by :func:`executor_for` -- the one place where the local
or the Ray path is picked. Both run the same :meth:`BenchRunner.run_cell`, which writes the cell's
folder, so a cell's files are the same whichever ran it (timings aside).

The Ray executor submits one task per cell, asking for ``[executor] num_cpus`` CPUs and whatever
the retriever's optional ``resources(cluster)`` hook adds (the dense retriever: one GPU when its
model runs on one). Each task runs in the driver's working directory, with the driver's
``HARNESS_CACHE_DIR``, so relative paths in the config mean the same thing; on a multi-node cluster
that directory, the output folder and the cache must be on a filesystem every node mounts at the
same path (docs/ray.md). Ray is optional: ``pip install "retrieval-harness[ray]"``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

from harness import raycluster
from harness.bench.cells import Cell
from harness.cache import ENV_VAR
from harness.errors import HarnessError
from harness.reports.document import MetricsDocument

if TYPE_CHECKING:  # pragma: no cover
    from harness.bench.runner import BenchRunner


@dataclass
class CellResult:
    """What running one cell gave: its document, or the one-line error; its seconds; and the
    HarnessWarnings issued while it ran (:func:`issued_warnings`)."""

    index: int
    document: MetricsDocument | None
    error: str | None
    seconds: float
    issued: list[str] = field(default_factory=list)


@contextlib.contextmanager
def issued_warnings(every: bool = False) -> Iterator[list[str]]:
    """While the block runs, each :class:`~harness.errors.HarnessWarning` shown (an http retriever's
    failed queries, which ``harness run`` prints as ``warning: ...``) is added to the list yielded,
    not printed: the benchmark prints it after its cells, naming the cell (a line in the middle of
    the cells' progress named none). The filters decide as before which are shown (the CLI's:
    each), or with ``every`` each one is (a Ray task's: its worker has no CLI filters); other warnings
    are shown as before."""
    import warnings

    from harness.errors import HarnessWarning

    issued: list[str] = []
    with warnings.catch_warnings():  # (showwarning put back at the end)
        shown = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None):
            if issubclass(category, HarnessWarning):
                issued.append(str(message))
            else:
                shown(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        if every:
            warnings.filterwarnings("always", category=HarnessWarning)
        yield issued


class LocalExecutor:
    """Cells one after another in this process (datasets loaded once for consecutive cells)."""

    kind = "local"

    def run(self, runner: "BenchRunner", todo: list[tuple[int, Cell, str]]) -> Iterator[CellResult]:
        from harness.bench.runner import _Datasets, _one_line

        datasets = _Datasets()
        for index, cell, expected in todo:
            started = time.perf_counter()
            try:
                with issued_warnings() as issued:
                    document, error = runner.run_cell(cell, expected, datasets), None
            except Exception as exc:  # one cell's failure must not end the matrix
                if runner.fail_fast:
                    raise
                document, error = None, _one_line(exc)
            yield CellResult(index, document, error, time.perf_counter() - started, issued)


@contextlib.contextmanager
def _working_dir(path: str) -> Iterator[None]:
    old = os.getcwd()
    try:
        os.chdir(path)
    except OSError as exc:  # the driver's folder is not on this node: a user's setup, named in one line
        raise HarnessError(f"cannot enter the working directory {path} on the Ray node {socket.gethostname()} "
                           f"({exc.strerror}): run the bench from a folder every node mounts at the same "
                           "path (docs/ray.md)") from None
    try:
        yield
    finally:
        os.chdir(old)


def _run_cell_remote(config, cell: Cell, expected: str, cwd: str, cache_root: str | None,
                     started_here: bool = False) -> tuple[MetricsDocument | None, str | None, float, list[str]]:
    """The body of one Ray task: a fresh runner for ``config`` runs ``cell`` in ``cwd``, with the
    driver's cache root; ``started_here``: whether the Ray is the local one the driver started
    (:func:`harness.raycluster.started_here`, which the cell's Ray encoder consults). Returns the
    document (or the one-line error), the seconds and the HarnessWarnings issued (for the driver to print)."""
    from harness import progress
    from harness.bench.runner import BenchRunner, _cache_env, _Datasets, _one_line

    progress.disable()
    raycluster._started_here = started_here  # (this worker process never called raycluster.init)
    started = time.perf_counter()
    issued: list[str] = []  # (a working directory the node lacks fails before the block binds it)
    try:
        with _working_dir(cwd), _cache_env(cache_root), issued_warnings(every=True) as issued:
            runner = BenchRunner(config)
            try:
                document, error = runner.run_cell(cell, expected, _Datasets()), None
            finally:
                runner.close()  # (its retriever, made for this cell: closed in this worker)
    except Exception as exc:
        document, error = None, _one_line(exc)
    return document, error, time.perf_counter() - started, issued


def _task_error(exc: BaseException) -> str:
    """One line for a task that failed outside :func:`_run_cell_remote`'s own handling (its worker
    died, it could not be unpickled on the node, it raised before the cell ran): Ray's own message
    spans lines (a traceback, terminal colour codes), so: the cause's first line, else Ray's."""
    from harness.bench.runner import _one_line

    while isinstance(getattr(exc, "cause", None), BaseException) and exc.cause is not exc:
        exc = exc.cause  # a RayTaskError's cause: the exception the task raised
    return f"Ray task failed: {_one_line(exc)}"


class RayExecutor:
    """One Ray task per cell, with declared resources; results collected as they finish."""

    kind = "ray"

    def __init__(self, address: str | None, num_cpus: float):
        self.address, self.num_cpus = address, num_cpus

    def connect(self):
        try:
            import ray
        except ImportError:
            raise HarnessError('--executor ray needs Ray: pip install "retrieval-harness[ray]"') from None
        raycluster.init(ray, self.address)
        return ray

    def resources(self, runner: "BenchRunner", cell: Cell, cluster: dict) -> dict:
        """``num_cpus`` and what the retriever's ``resources(cluster)`` hook adds; a pipeline's cell:
        what its retrieve and rerank stages' components ask for (they run one after another in the
        task: each resource's largest request)."""
        from harness.bench.config import RetrieverSpec

        if isinstance(cell.retriever, RetrieverSpec):
            components = [runner.retriever(cell.retriever)]
        else:
            from harness.registry import create, create_reranker

            components = [(create if stage.type == "retrieve" else create_reranker)(stage.component, **stage.params)
                          for stage in cell.retriever.stages if stage.type != "fuse"]
        asked: dict = {}
        for component in components:
            hook: Callable[[dict], dict] | None = getattr(component, "resources", None)
            for key, value in (hook(cluster) if hook is not None else {}).items():
                if isinstance(value, dict):  # Ray's custom resources, {"resources": {"TPU": 1}}: per name
                    merged = dict(asked.get(key, {}))
                    for name, amount in value.items():
                        merged[name] = max(merged.get(name, amount), amount)
                    asked[key] = merged
                else:
                    asked[key] = max(asked.get(key, value), value)
        return {"num_cpus": self.num_cpus, **asked}

    def run(self, runner: "BenchRunner", todo: list[tuple[int, Cell, str]]) -> Iterator[CellResult]:
        if not todo:
            return
        ray = self.connect()
        cluster = ray.cluster_resources()
        task = ray.remote(_run_cell_remote)
        cwd, cache_root = str(Path.cwd()), os.environ.get(ENV_VAR)
        pending = {}
        for index, cell, expected in todo:
            options = {**self.resources(runner, cell, cluster), "max_retries": 1}
            short = raycluster.shortfall(options, cluster)
            if short is not None and raycluster.started_here():  # a local Ray never grows: it would wait forever
                error = (f"asks Ray for {short}: the local Ray started for this bench never has it "
                         "(lower [executor] num_cpus, run the model on cpu, or join a cluster with --address)")
                if runner.fail_fast:
                    raise HarnessError(f"{cell.name}: {error}")
                yield CellResult(index, None, error, 0.0)
                continue
            if short is not None:
                from harness import progress

                progress.echo(f"warning: {cell.name} asks Ray for {short}; it waits until a node that has it "
                              "joins (an autoscaler's), else stop the bench with Ctrl-C", err=True)
            pending[task.options(**options).remote(runner.config, cell, expected, cwd, cache_root,
                                                   raycluster.started_here())] = index, cell
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            index, cell = pending.pop(ready[0])
            try:
                document, error, seconds, issued = ray.get(ready[0])
            except Exception as exc:  # the task itself died (node lost, out of memory) after its retry
                document, error, seconds, issued = None, _task_error(exc), 0.0, []
            if error is not None and runner.fail_fast:
                for ref in pending:
                    ray.cancel(ref)
                raise HarnessError(f"{cell.name}: {error}")  # (no traceback from a task: name the cell)
            yield CellResult(index, document, error, seconds, issued)


def executor_for(spec) -> LocalExecutor | RayExecutor:
    """The executor a config's ``[executor]`` (with --executor / --address applied) names."""
    if spec.kind == "ray":
        return RayExecutor(spec.address, spec.num_cpus)
    return LocalExecutor()

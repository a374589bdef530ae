"""Benchmark configs: a TOML file naming datasets, retrievers, cutoffs and leaderboard metrics.

::

    name = "quickstart"              # required: results go to <output_dir>/<name>/
    k = [1, 10, 100]                 # cutoffs evaluated (default 1,3,5,10,100,1000)
    metrics = ["NDCG@10"]            # leaderboard metric(s) (default NDCG@10)

    [[datasets]]
    name = "scifact"                 # a dataset name, or path = "a/BEIR/folder"; split, label optional

    [[retrievers]]
    type = "bm25"                    # built-in or plugin name, or "module:Class"
    label = "bm25-rank"              # column / folder name (default: the type)
    params = { backend = "rank-bm25", k1 = 0.9 }

    [[pipelines]]                    # optional: a pipeline is one more column (its last stage)
    label = "bm25-rrf"               # column / folder name
    [[pipelines.stages]]             # stages as in a pipeline file (docs/pipelines.md)
    name = "bm25"
    type = "retrieve"
    retriever = "bm25"

A config needs at least one ``[[retrievers]]`` or ``[[pipelines]]`` entry.

Every problem is a :class:`ConfigError` naming the file and the key path, e.g.
``configs/x.toml:8: retrievers[1].params.k1: expected a number, got "abc"``. The parsed config is a
small frozen dataclass model; :meth:`BenchConfig.to_dict` gives it back as plain data (defaults
filled in), which is what results record.
"""

from __future__ import annotations

import math
import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from harness.params import check_retriever
from harness.errors import ConfigError, render
from harness.evaluation.metrics import DEFAULT_K

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

DEFAULT_METRICS = ("NDCG@10",)
INT64_MAX = 2**63 - 1  # the largest integer TOML has (and the evaluator takes as a cutoff)
RAY_UNITS = 10_000  # Ray's resource quantities are fixed point with 4 decimals
LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+=-]*$")
LABEL_RULE = "letters, digits and . _ + = - (starting with a letter or digit)"
# the files harness bench writes in <output_dir>/<name>/ beside the dataset folders (runner.py)
RESERVED_LABELS = ("bench.json", "leaderboard.json", "leaderboard.md", "report.html")


def safe_label(text: str) -> str:
    """A default label made from a name: characters outside LABEL become '-'."""
    out = re.sub(r"[^A-Za-z0-9._+=-]+", "-", text).strip("-.") or "x"
    return out if out[0].isalnum() else "x" + out


# --------------------------------------------------------------------------- model
@dataclass(frozen=True)
class DatasetSpec:
    """One dataset: ``source`` is a name (``kind='name'``) or a folder path (``kind='path'``)."""

    source: str
    kind: str
    split: str
    label: str

    def to_dict(self) -> dict:
        return {self.kind: self.source, "split": self.split, "label": self.label}


@dataclass(frozen=True)
class RetrieverSpec:
    """One retriever: ``type`` as :func:`retrievers.create` takes it, constructor ``params``."""

    type: str
    label: str
    params: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"type": self.type, "label": self.label, "params": dict(self.params)}


EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class ExecutorSpec:
    """Where cells run (``[executor]``): ``local`` (here, one after another) or ``ray`` (one Ray task
    per cell, on the cluster at ``address``, each asking for ``num_cpus`` CPUs, plus a GPU when the
    retriever runs on one). See harness/bench/executors.py and docs/ray.md."""

    kind: str = "local"
    address: str | None = None
    num_cpus: float = 1.0

    def to_dict(self) -> dict:
        out = {"kind": self.kind, "address": self.address, "num_cpus": self.num_cpus}
        return {key: value for key, value in out.items() if value is not None}


@dataclass(frozen=True)
class BenchConfig:
    name: str
    datasets: tuple[DatasetSpec, ...]
    retrievers: tuple[RetrieverSpec, ...]
    pipelines: tuple = ()  # harness.pipeline.Pipeline values (label = pipeline name)
    k: tuple[int, ...] = DEFAULT_K
    metrics: tuple[str, ...] = DEFAULT_METRICS
    depth: int | None = None
    split: str | None = None  # as given (None: each dataset's evaluation split; its DatasetSpec holds the one used)
    output_dir: str = "results"
    relevance_threshold: float = 1.0
    ignore_identical_ids: bool = True
    semantics: str = "trec_eval-9"
    cache_dir: str | None = None
    description: str = ""
    executor: ExecutorSpec = ExecutorSpec()
    source: str = field(default="<config>", compare=False)

    @property
    def folder(self) -> Path:
        """``<output_dir>/<name>``: where the leaderboard and the cell folders go."""
        return Path(self.output_dir) / self.name

    @property
    def search_depth(self) -> int:
        """``depth``, else the largest cutoff of ``k`` and of ``metrics``, at least 1000 with a metric of
        the whole ranking (``default_depth``)."""
        from harness.evaluation import default_depth, metrics_for

        return self.depth or default_depth(self.k, metrics_for(self.metrics, self.k))

    def to_dict(self) -> dict:
        out = {"name": self.name, "description": self.description, "output_dir": self.output_dir,
               "split": self.split, "k": list(self.k), "depth": self.depth, "metrics": list(self.metrics),
               "relevance_threshold": self.relevance_threshold, "ignore_identical_ids": self.ignore_identical_ids,
               "semantics": self.semantics, "cache_dir": self.cache_dir,
               "datasets": [d.to_dict() for d in self.datasets],
               "retrievers": [r.to_dict() for r in self.retrievers],
               "executor": self.executor.to_dict() if self.executor != ExecutorSpec() else None}
        if self.pipelines:
            out["pipelines"] = [p.to_dict("label") for p in self.pipelines]
        return {key: value for key, value in out.items() if value is not None}

    def with_output_dir(self, output_dir: str | Path) -> "BenchConfig":
        return replace(self, output_dir=str(output_dir))

    def with_executor(self, kind: str | None = None, address: str | None = None) -> "BenchConfig":
        """The config with ``--executor`` / ``--address`` from the command line applied."""
        if kind is not None and kind not in EXECUTORS:
            raise ConfigError("--executor", "", f"expected one of {', '.join(EXECUTORS)}, got {render(kind)}")
        spec = replace(self.executor, kind=kind or self.executor.kind, address=address or self.executor.address)
        return replace(self, executor=spec)


# --------------------------------------------------------------------------- reading
def _join(prefix: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{prefix}[{key}]"
    return f"{prefix}.{key}" if prefix else key


class _Reader:
    """Typed access to the parsed TOML that raises ConfigError with the key path."""

    def __init__(self, source: str):
        self.source = source

    def error(self, key: str, message: str) -> ConfigError:
        return ConfigError(self.source, key, message)

    def table(self, value: Any, key: str, required: set[str], optional: set[str]) -> dict:
        if not isinstance(value, dict):
            raise self.error(key, f"expected a table, got {render(value)}")
        allowed = required | optional
        for name in value:
            if name not in allowed:
                raise self.error(_join(key, name), f"unknown key (expected one of: {', '.join(sorted(allowed))})")
        for name in sorted(required):
            if name not in value:
                raise self.error(_join(key, name), "missing required key")
        return value

    def string(self, value: Any, key: str, pattern: re.Pattern | None = None, rule: str = "",
               allow_empty: bool = False) -> str:
        if not isinstance(value, str):
            raise self.error(key, f"expected a string, got {render(value)}")
        if not value.strip() and not allow_empty:
            raise self.error(key, "expected a non-empty string")
        if pattern is not None and not pattern.match(value):
            raise self.error(key, f"{render(value)} is not allowed here: use {rule}")
        return value

    def integer(self, value: Any, key: str, minimum: int = 1) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"expected an integer, got {render(value)}")
        if value < minimum:
            raise self.error(key, f"expected an integer >= {minimum}, got {value}")
        if value > INT64_MAX:  # (TOML's integers are 64-bit; a larger depth failed every cell with OverflowError)
            raise self.error(key, f"expected an integer <= {INT64_MAX}, got a larger one")
        return value

    def number(self, value: Any, key: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(key, f"expected a number, got {render(value)}")
        try:
            return float(value)
        except OverflowError:  # (an int past 1.8e308: was a traceback)
            raise self.error(key, "expected a finite number, got an integer past 1.8e308") from None

    def boolean(self, value: Any, key: str) -> bool:
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {render(value)}")
        return value

    def items(self, value: Any, key: str, read: Callable[[Any, str], Any], non_empty: bool = True) -> list:
        if not isinstance(value, list):
            raise self.error(key, f"expected a list, got {render(value)}")
        if non_empty and not value:
            raise self.error(key, "expected a non-empty list")
        return [read(item, _join(key, i)) for i, item in enumerate(value)]


TOP_REQUIRED = {"name", "datasets"}
TOP_OPTIONAL = {"description", "output_dir", "split", "k", "depth", "metrics", "relevance_threshold",
                "ignore_identical_ids", "semantics", "cache_dir", "executor", "retrievers", "pipelines"}


def _looks_like_path(text: str) -> bool:
    return "/" in text or "\\" in text or text.startswith((".", "~"))


def _dataset(r: _Reader, value: Any, key: str, default_split: str | None) -> DatasetSpec:
    """One ``datasets`` entry; its split is its own ``split``, else the config's, else the dataset's
    evaluation split (:func:`harness.datasets.default_split`: ``dev`` for msmarco or ``msmarco/``, else
    ``test``; a table's ``path`` is a folder: ``test``)."""
    if isinstance(value, str):
        source = r.string(value, key)
        kind = "path" if _looks_like_path(source) else "name"
        split, label = default_split, None
    else:
        table = r.table(value, key, set(), {"name", "path", "split", "label"})
        given = [k for k in ("name", "path") if k in table]
        if len(given) != 1:
            raise r.error(_join(key, "name"), "give exactly one of name or path" if given else
                          "missing required key (or path)")
        kind = given[0]
        source = r.string(table[kind], _join(key, kind))
        split = r.string(table["split"], _join(key, "split")) if "split" in table else default_split
        label = r.string(table["label"], _join(key, "label"), LABEL, LABEL_RULE) if "label" in table else None
    if split is None:
        from harness.datasets import default_split as evaluation_split

        split = evaluation_split(source) if kind == "name" or isinstance(value, str) else "test"
    given_label = label is not None
    if label is None:
        label = safe_label(Path(os.path.expanduser(source)).resolve().name if kind == "path" else source)
    if label.lower() in RESERVED_LABELS:  # its folder would take the place of the leaderboard or the manifest
        raise r.error(_join(key, "label") if given_label else key,
                      f"dataset label {render(label)} is the name of a file the benchmark writes "
                      f"({', '.join(RESERVED_LABELS)}); give the entry another label")
    return DatasetSpec(source=source, kind=kind, split=split, label=label)


def _retriever(r: _Reader, value: Any, key: str) -> RetrieverSpec:
    table = r.table(value, key, {"type"}, {"label", "params"})
    kind = r.string(table["type"], _join(key, "type"))
    if "label" in table:
        label = r.string(table["label"], _join(key, "label"), LABEL, LABEL_RULE)
    else:
        label = safe_label(kind.partition(":")[2] if ":" in kind else kind)
    params = table.get("params", {})
    if not isinstance(params, dict):
        raise r.error(_join(key, "params"), f"expected a table, got {render(params)}")
    return RetrieverSpec(type=kind, label=label, params=dict(params))


def _executor(r: _Reader, value: Any, key: str) -> ExecutorSpec:
    table = r.table(value, key, set(), {"kind", "address", "num_cpus"})
    kind = r.string(table["kind"], _join(key, "kind")) if "kind" in table else "local"
    if kind not in EXECUTORS:
        raise r.error(_join(key, "kind"), f"expected one of {', '.join(EXECUTORS)}, got {render(kind)}")
    address = r.string(table["address"], _join(key, "address")) if "address" in table else None
    num_cpus = r.number(table["num_cpus"], _join(key, "num_cpus")) if "num_cpus" in table else 1.0
    if not num_cpus > 0:
        raise r.error(_join(key, "num_cpus"), f"expected a positive number, got {render(num_cpus)}")
    if num_cpus == math.inf:  # (passed "> 0"; Ray then failed naming neither file nor key)
        raise r.error(_join(key, "num_cpus"), f"expected a finite number, got {render(num_cpus)}")
    units = num_cpus * RAY_UNITS  # Ray counts resources in units of 0.0001 (int64): refuses finer, fails past
    if abs(units - round(units)) > 1e-6 * max(1.0, units) or units > INT64_MAX:
        raise r.error(_join(key, "num_cpus"), f"expected a multiple of 0.0001 (Ray's precision) up to "
                                              f"{INT64_MAX // RAY_UNITS}, got {render(num_cpus)}")
    return ExecutorSpec(kind=kind, address=address, num_cpus=num_cpus)


def _metric(r: _Reader, value: Any, key: str) -> list[str]:
    """The names one ``metrics`` entry stands for, as ``harness compare -m`` reads it
    (:func:`harness.evaluation.metrics.evaluated_names`: ``nDCG@10`` is ``NDCG@10``, ``map`` is ``AP``,
    ``iprec_at_recall`` its 11 levels)."""
    from harness.evaluation.metrics import evaluated_names

    text = r.string(value, key)
    try:
        return evaluated_names(text)
    except ValueError as exc:
        raise r.error(key, str(exc)) from None


def stdin_replays(retrievers, pipelines) -> list[str]:
    """The key paths of the ``run-file`` entries (retrievers, pipeline stages) that replay standard input
    (``path = "-"``)."""
    readers = [f"retrievers[{i}].params.path" for i, x in enumerate(retrievers)
               if x.type == "run-file" and x.params.get("path") == "-"]
    readers += [f"pipelines[{i}].stages[{j}].params.path" for i, p in enumerate(pipelines)
                for j, stage in enumerate(p.stages)
                if stage.type == "retrieve" and stage.component == "run-file" and stage.params.get("path") == "-"]
    return readers


def _one_stdin_replay(r: _Reader, retrievers: list, pipelines: list) -> None:
    """At most one ``run-file`` entry (a retriever or a pipeline stage) replays standard input (``path =
    "-"``), refused before anything is read: it can be read once (a second entry found it at its end, a
    cell failed with 'the run file is empty')."""
    readers = stdin_replays(retrievers, pipelines)
    if len(readers) > 1:
        raise r.error(readers[1], f'"-" (standard input) is replayed by {readers[0]} too: standard input can be '
                                  "read once; give the other as a file")


def _unique(r: _Reader, labels: list[str], key: str, what: str, index: list[int] | None = None) -> None:
    """Labels are distinct; ``index``: the entry of the config each label came from (the position in ``key``)."""
    seen: dict[str, int] = {}
    for i, label in enumerate(labels):
        at = index[i] if index is not None else i
        if label in seen:
            raise r.error(_join(_join(key, at), "label"),
                          f"duplicate {what} label {render(label)} (also {key}[{seen[label]}]); "
                          f"give each entry a distinct label")
        seen[label] = at


def _forums(r: _Reader, datasets: list[DatasetSpec], given_labels: list[bool]) -> tuple[list[DatasetSpec], list[int]]:
    """A ``name`` entry naming a whole dataset of forums (``cqadupstack``) is its forums, one entry each
    (``cqadupstack/<forum>``, labelled by the forum, as a forum entry is by default), reported as one row of
    the leaderboard (harness/bench/leaderboard.py). A forum listed twice, a label on such an entry, and a
    dataset labelled with the name of a dataset whose forums are listed are refused. Returns the entries and,
    for each, the position of the config entry it came from."""
    from harness.datasets.registry import DatasetRef, forum_of

    out, index, seen = [], [], {}
    for i, spec in enumerate(datasets):
        ref = DatasetRef.parse(spec.source)
        whole = ref.all_forums and (spec.kind == "name" or not Path(os.path.expanduser(spec.source)).is_dir())
        if whole and given_labels[i]:
            raise r.error(_join(_join("datasets", i), "label"),
                          f"{ref.base} is {len(ref.info.subsets)} forums, each labelled by its forum name; to label "
                          f"them, list {ref.base}/<forum> entries")
        expanded = [DatasetSpec(f"{ref.base}/{forum}", "name", spec.split, forum) for forum in ref.info.subsets] \
            if whole else [spec]
        for one in expanded:
            forum = forum_of(one.source)
            if forum is not None:
                if forum in seen:
                    raise r.error(_join("datasets", i), f"{forum[0]} forum {render(forum[1])} is listed twice (also "
                                                        f"datasets[{seen[forum]}]); each forum is one part of the "
                                                        f"{forum[0]} row")
                seen[forum] = i
            out.append(one)
            index.append(i)
    groups = {forum[0] for forum in seen}
    for spec, i in zip(out, index):
        if spec.label in groups and forum_of(spec.source) is None:
            raise r.error(_join(_join("datasets", i), "label") if given_labels[i] else _join("datasets", i),
                          f"dataset label {render(spec.label)} is the leaderboard row of the {spec.label} forums "
                          f"this config lists; give the entry another label")
    return out, index


def parse_config(data: dict, source: str = "<config>") -> BenchConfig:
    """Validate parsed TOML (a dict) into a :class:`BenchConfig`; structure only, nothing imported."""
    r = _Reader(source)
    top = r.table(data, "", TOP_REQUIRED, TOP_OPTIONAL)
    name = r.string(top["name"], "name", LABEL, LABEL_RULE)
    split = r.string(top["split"], "split") if "split" in top else None
    k = tuple(sorted(set(r.items(top["k"], "k", r.integer)))) if "k" in top else DEFAULT_K
    metrics = tuple(dict.fromkeys(name for names in r.items(top["metrics"], "metrics",
                                                            lambda v, key: _metric(r, v, key)) for name in names)) \
        if "metrics" in top else DEFAULT_METRICS
    depth = r.integer(top["depth"], "depth") if "depth" in top else None
    threshold = r.number(top["relevance_threshold"], "relevance_threshold") if "relevance_threshold" in top else 1.0
    if not 0 < threshold < float("inf"):  # (inf passed "> 0"; every cell then failed in the evaluator)
        raise r.error("relevance_threshold", f"expected a positive finite number, got {render(threshold)}")
    datasets = r.items(top["datasets"], "datasets", lambda v, key: _dataset(r, v, key, split))
    if "retrievers" not in top and "pipelines" not in top:
        raise r.error("retrievers", "missing required key (or [[pipelines]])")
    retrievers = r.items(top["retrievers"], "retrievers", lambda v, key: _retriever(r, v, key)) \
        if "retrievers" in top else []
    pipelines = _pipelines(r, top["pipelines"]) if "pipelines" in top else []
    given_labels = [isinstance(v, dict) and "label" in v for v in top["datasets"]]
    datasets, origin = _forums(r, datasets, given_labels)
    _unique(r, [d.label for d in datasets], "datasets", "dataset", origin)
    _unique(r, [x.label for x in retrievers], "retrievers", "retriever")
    _unique(r, [p.name for p in pipelines], "pipelines", "pipeline")
    _one_stdin_replay(r, retrievers, pipelines)
    taken = {x.label for x in retrievers}
    for i, p in enumerate(pipelines):
        if p.name in taken:
            raise r.error(f"pipelines[{i}].label", f"{render(p.name)} is also a retriever label; labels name "
                                                   "leaderboard columns and must be distinct")
    return BenchConfig(
        name=name, datasets=tuple(datasets), retrievers=tuple(retrievers), pipelines=tuple(pipelines), k=k, metrics=metrics, depth=depth,
        split=split,
        output_dir=r.string(top["output_dir"], "output_dir") if "output_dir" in top else "results",
        relevance_threshold=threshold,
        ignore_identical_ids=r.boolean(top["ignore_identical_ids"], "ignore_identical_ids")
        if "ignore_identical_ids" in top else True,
        semantics=_semantics(r, top["semantics"]) if "semantics" in top else "trec_eval-9",
        cache_dir=r.string(top["cache_dir"], "cache_dir") if "cache_dir" in top else None,
        description=r.string(top["description"], "description", allow_empty=True) if "description" in top else "",
        executor=_executor(r, top["executor"], "executor") if "executor" in top else ExecutorSpec(),
        source=source)


def _semantics(r: "_Reader", value: object) -> str:
    from harness.evaluation.semantics import SEMANTICS

    name = r.string(value, "semantics")
    if name not in SEMANTICS:
        raise r.error("semantics", f"expected one of {', '.join(SEMANTICS)}, got {render(name)}")
    return name


def _pipelines(r: _Reader, value: Any) -> list:
    """``[[pipelines]]``: each a table with ``label`` and ``[[pipelines.stages]]`` (structure only)."""
    from harness.pipeline.spec import parse_pipeline

    def one(item: Any, key: str):
        if isinstance(item, dict) and "label" not in item:
            raise r.error(_join(key, "label"), "missing required key")
        return parse_pipeline(item, r.source, key, check_components=False)

    return r.items(value, "pipelines", one)


def read_toml(path: str | Path) -> dict:
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(str(path), "", f"cannot read config: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(str(path), "", f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at line {line}, "
                                         f"column {column})") from None
    try:  # (a leading byte-order mark, as Windows Notepad saves UTF-8, is no statement: tomllib refused line 1)
        return tomllib.loads(text.removeprefix("\ufeff"))
    except ValueError as exc:  # TOMLDecodeError; and an integer of over 4,300 digits (Python's int() limit)
        raise ConfigError(str(path), "", f"invalid TOML: {exc}") from None


def check_dataset_folders(config: BenchConfig) -> None:
    """A dataset given as a folder path that is no folder is refused before anything runs (the other
    datasets' cells ran first, then its cells failed naming it 'unknown dataset'), naming the directory
    a relative path is taken from. Registered names (``cqadupstack/android``), ``hf:`` and ``irds:``
    sources are resolved when loaded."""
    from harness.datasets.registry import DatasetRef

    for i, spec in enumerate(config.datasets):
        ref = DatasetRef.parse(spec.source)
        folder = Path(os.path.expanduser(spec.source))
        if spec.kind == "path" and ref.info is None and ref.remote is None and not folder.is_dir():
            where = ("" if folder.is_absolute() else
                     f" (a relative path is taken from the directory the command runs in, {Path.cwd()})")
            raise ConfigError(config.source, f"datasets[{i}]", f"no such folder {render(spec.source)}{where}")


def check_rerank_depths(config: BenchConfig) -> None:
    """A pipeline's rerank stage given a ``depth`` larger than its input holds with the config's search
    depth (:attr:`BenchConfig.search_depth`: ``depth``, else the largest cutoff of ``k`` and ``metrics``; a
    retrieve stage without a depth of its own keeps it) is refused before anything runs, with one line
    naming the file and ``pipelines[i].stages[j].depth`` (:func:`harness.pipeline.run.rerank_depths`). It
    failed the pipeline's cells only when they ran, the other cells running, naming ``stages[j].depth``
    and ``--depth``, which bench has not."""
    if not config.pipelines:
        return
    from harness.pipeline.run import rerank_depths

    for i, pipeline in enumerate(config.pipelines):
        rerank_depths(pipeline, config.search_depth, key=f"pipelines[{i}]", origin="bench")


def load_config(path: str | Path, check_retrievers: bool = True) -> BenchConfig:
    """Read and validate a config file.

    With ``check_retrievers`` (the default) each retriever type is also resolved to its class and
    its params are checked against the constructor's signature (see :mod:`harness.params`),
    so a typo fails before anything runs.
    """
    config = parse_config(read_toml(path), source=str(path))
    if check_retrievers:
        for i, spec in enumerate(config.retrievers):
            check_retriever(spec.type, spec.params, config.source, f"retrievers[{i}]")
        if config.pipelines:
            from harness.pipeline.spec import parse_pipeline

            data = read_toml(path)["pipelines"]
            for i, item in enumerate(data):
                parse_pipeline(item, config.source, f"pipelines[{i}]")
    check_rerank_depths(config)
    return config

"""The metrics.json document: what was evaluated, how, and every value at full float precision.

One typed value, :class:`MetricsDocument`, is written by ``harness run``, ``harness evaluate
--json`` and ``harness bench`` and read by ``compare``, ``check`` and ``bench``. Its JSON (schema
``retrieval-harness/metrics/v1``) has the keys, in this order::

    schema, dataset {name, split, files {file: sha256}, n_docs, n_queries}, retriever {name, params},
    k_values, settings {relevance_threshold, ignore_identical_ids, depth, ...}, n_queries,
    n_missing_from_run, n_without_relevant, metrics {metric: mean}, per_query {query: {metric: value}},
    timings {load_s, index_s, search_s, evaluate_s}, versions, created

then the optional blocks, written only when set: ``retriever_stats``, ``warnings``, ``throughput``
(bench), ``bench``, ``efficiency`` (stage times, queries/s, latency percentiles, index size, peak
RSS, hardware/software fingerprint; see harness/reports/efficiency.py and docs/efficiency.md) and
``query_latency_ms`` ({query id: ms}, the per-query latencies the latency gate resamples),
``stages`` (a pipeline's stages, docs/pipelines.md). ``settings`` is free-form (what the evaluator records). Keys this version
does not know (written by a newer one) are kept in ``extra`` and written back, so a file
round-trips. Reading is lenient about absent keys (older and hand-made files load with the
defaults) and strict about the per-query values, which the significance tests rely on.

``versions`` is the build that computed the values and its environment (:func:`harness.versions.recorded`:
``retrieval-harness``, ``numbers_version``, ``runs_version``, ``git`` {commit, dirty}, ``python``, the
libraries'; a plugin's distribution beside them); ``compare`` and ``check`` warn when two results differ
in ``numbers_version`` or one records none (:mod:`harness.compare.provenance`).
"""

from __future__ import annotations

import json
import math
import operator
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path

from harness.errors import InputError

SCHEMA = "retrieval-harness/metrics/v1"
SCHEMA_PREFIX = "retrieval-harness/metrics/"

# The JSON type of each key (``None`` for an optional block means absent).
_TYPES = {"dataset": dict, "retriever": dict, "k_values": list, "settings": dict, "n_queries": int,
          "n_missing_from_run": int, "n_without_relevant": int, "metrics": dict, "per_query": dict,
          "timings": dict, "versions": dict, "created": str, "retriever_stats": dict, "warnings": list,
          "throughput": dict, "bench": dict, "efficiency": dict, "query_latency_ms": dict, "stages": list}
_OPTIONAL = ("retriever_stats", "warnings", "throughput", "bench", "efficiency", "query_latency_ms", "stages")
_JSON_NAMES = {dict: "an object", list: "an array", int: "an integer", str: "a string"}


def plain_json(value: object, finite: bool = True) -> object:
    """``value`` (a retriever's ``stats()``: any plugin's) as strict JSON holds it: dicts (keys as
    str), lists (from tuples, sets and numpy arrays), str, bool, None, int, and finite floats; a NaN
    or infinite float becomes None (JSON has no such number: Python would write ``NaN``, which jq,
    JavaScript and Go refuse), a numpy scalar its Python value, anything else its ``str``. A set's
    items are sorted (by their JSON text where they do not compare, or where one holds a NaN, which
    compares neither below nor above anything: ``sorted`` left it where the set had it, and a NaN's
    place in a set follows its address): a set of str iterates in an order that changes with the
    process's hash seed, and its list would too. ``finite=False`` keeps a NaN or
    infinite float as it is (a fingerprint's JSON text: ``NaN``, ``Infinity`` and ``-Infinity`` stay
    apart from each other and from None)."""
    if isinstance(value, dict):
        return {str(k): plain_json(v, finite) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        items = [plain_json(v, finite) for v in value]
        try:
            if not any(map(_holds_nan, items)):
                return sorted(items)
        except TypeError:
            pass
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
    if isinstance(value, (list, tuple)):
        return [plain_json(v, finite) for v in value]
    if hasattr(value, "tolist") and hasattr(value, "dtype"):  # a numpy array or scalar
        return plain_json(value.tolist(), finite)
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) or not finite else None
    return str(value)


def _holds_nan(item: object) -> bool:
    """Whether a :func:`plain_json` value is or holds (in its lists) a NaN float."""
    if isinstance(item, float):
        return item != item
    return isinstance(item, list) and any(map(_holds_nan, item))


_PER_QUERY_BLOCKS = ("per_query", "query_latency_ms")  # a value per query: summarised by MetricsDocument's repr


@dataclass
class MetricsDocument:
    schema: str = SCHEMA
    dataset: dict = field(default_factory=dict)
    retriever: dict = field(default_factory=dict)
    k_values: list[int] = field(default_factory=list)
    settings: dict = field(default_factory=dict)
    n_queries: int = 0
    n_missing_from_run: int = 0
    n_without_relevant: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    per_query: dict[str, dict[str, float]] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    versions: dict = field(default_factory=dict)  # harness.versions.recorded(): str values, the *_version ints, git
    created: str = ""
    retriever_stats: dict | None = None
    warnings: list[str] | None = None
    throughput: dict | None = None
    bench: dict | None = None
    efficiency: dict | None = None
    query_latency_ms: dict[str, float] | None = None
    stages: list[dict] | None = None  # a pipeline's stages (harness.pipeline.run.StageOutcome.record)
    extra: dict = field(default_factory=dict)  # keys of a newer schema, kept as read

    def __repr__(self) -> str:
        """The dataclass's repr with the per-query blocks (``per_query``, ``query_latency_ms``) shown as
        their query counts (``per_query=<300 queries>``): printed whole they ran to 102,169 characters
        for SciFact's 300 queries, megabytes for MS MARCO's."""
        shown = [f"{f.name}=<{len(value):,} queries>" if f.name in _PER_QUERY_BLOCKS and isinstance(value, dict)
                 else f"{f.name}={value!r}" for f in fields(self) for value in [getattr(self, f.name)]]
        return f"MetricsDocument({', '.join(shown)})"

    @classmethod
    def build(cls, result, *, dataset: dict, retriever: dict, k_values: list[int], depth: int | None,
              timings: dict[str, float], **blocks) -> "MetricsDocument":
        """The document of an :class:`~harness.evaluation.EvaluationResult` (``blocks``: optional ones)."""
        from harness.versions import recorded

        # (operator.index: numpy's integers, which the evaluator and run_experiment take as cutoffs and depth,
        # as the ints JSON holds; json.dumps refused np.int64 when metrics.json was written, after the search)
        return cls(dataset=dataset, retriever=retriever, k_values=[operator.index(k) for k in k_values],
                   settings={**result.settings, "depth": None if depth is None else operator.index(depth)},
                   n_queries=result.n_queries,
                   n_missing_from_run=result.n_missing_from_run, n_without_relevant=result.n_without_relevant,
                   metrics=result.means, per_query=result.per_query(),
                   timings={name: round(seconds, 6) for name, seconds in timings.items()}, versions=recorded(),
                   created=datetime.now(timezone.utc).isoformat(timespec="seconds"), **blocks)

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        for name in _OPTIONAL:
            if out[name] is None:
                del out[name]
        return {**out, **self.extra}

    @classmethod
    def from_json(cls, obj: object, path: str | Path | None = None) -> "MetricsDocument":
        """Check and type a parsed metrics.json; problems are InputErrors naming ``path``."""
        if not isinstance(obj, dict):
            raise InputError("expected a JSON object (a metrics.json written by harness run / evaluate --json)", path)
        schema = obj.get("schema")
        if not (isinstance(schema, str) and schema.startswith(SCHEMA_PREFIX)):
            raise InputError(f"not a metrics file: schema is {schema!r}, expected '{SCHEMA}'", path)
        for name, kind in _TYPES.items():
            value = obj.get(name)
            if name in obj and not isinstance(value, kind) and not (value is None and name in _OPTIONAL):
                raise InputError(f"'{name}' is {json.dumps(value)[:40]}, expected {_JSON_NAMES[kind]}", path)
        _check_per_query(obj.get("per_query", {}), path)
        known = {f.name for f in fields(cls)} - {"extra"}
        return cls(**{k: v for k, v in obj.items() if k in known},
                   extra={k: v for k, v in obj.items() if k not in known})

    @classmethod
    def read(cls, path: str | Path) -> "MetricsDocument":
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read metrics file: {getattr(exc, 'strerror', None) or exc}", path) from None
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"malformed JSON: {exc.msg}", path, exc.lineno) from None
        return cls.from_json(obj, path)


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_per_query(per_query: dict, path) -> None:
    """Every query has a finite number for each metric of the first query."""
    names = None
    for qid, row in per_query.items():
        if not isinstance(row, dict) or (names is None and not row):
            raise InputError("per-query entry is not an object of metric values", path, id=qid)
        names = names or list(row)
        for metric in names:
            value = row.get(metric)
            if not _number(value):
                problem = "missing" if value is None else f"not a finite number ({value!r})"
                raise InputError(f"per-query value of {metric} is {problem}", path, id=qid)

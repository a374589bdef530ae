"""The ``efficiency`` block of metrics.json and the ir_metadata header of run.trec.

The block (docs/efficiency.md)::

    stages_s         {stage: seconds}  wall time of each stage: load, index, search, evaluate (rerank, ...
                                       when the pipeline has it), from metrics.json's ``timings``
    n_queries        queries searched
    queries_per_s    n_queries / stages_s.search
    latency_ms       {p50, p90, p95, p99, mean, max, basis[, batch_size | failed]} over the per-query latencies
    index_bytes      size of the index on disk (retriever_stats.index_bytes), None when not exposed
    peak_rss_bytes   the process's peak resident memory so far (getrusage)
    fingerprint      harness.fingerprint.fingerprint(): CPU, RAM, GPU, OS, Python, libraries, git commit

``basis`` says what a query's latency is: ``"per request"`` -- measured per query by the retriever
(the http retriever times each request; ``failed`` counts the requests that failed, which have no
latency and are in none of the figures); ``"per batch share"`` -- the search stage ran in batches of
``batch_size`` queries, each batch was timed, and each of its queries is given ``batch_s / len(batch)``.
Percentiles are numpy's default (linear interpolation between order statistics: the values of
``np.percentile``, computed by :func:`percentiles`). The per-query latencies themselves are metrics.json's ``query_latency_ms``
block ({query id: ms}, in search order), beside this one: what the latency gate resamples.
"""

from __future__ import annotations

import json
import math
import numbers
import re
import resource
import sys
from typing import Iterable, Sequence

import numpy as np

PER_REQUEST, PER_BATCH_SHARE = "per request", "per batch share"
PERCENTILES = (50, 90, 95, 99)
LATENCY_STATS = tuple(f"p{p}" for p in PERCENTILES) + ("mean", "max")


def percentiles(values: Sequence[float], qs: Sequence[float]) -> np.ndarray:
    """``np.percentile(values, qs)`` (numpy's default method, ``linear``: between the order statistics
    at ``(n - 1) * q / 100``, with numpy's interpolation formula), the same float64 values, computed
    here: numpy's partition step calls ``np.unique``, whose first call imports ``numpy.ma`` (~0.02 s
    of a whole warm run). ``values``: a non-empty 1-d sequence; NaN anywhere gives NaN."""
    a = np.sort(np.asarray(values, dtype=np.float64))
    q = np.true_divide(np.asarray(qs, dtype=np.float64), 100)
    if np.isnan(a[-1]):
        return np.full(q.shape, np.nan)
    virtual = (len(a) - 1) * q
    below = np.floor(virtual)
    last = virtual >= len(a) - 1  # numpy takes the last value there
    previous = np.where(last, -1, below).astype(np.intp)
    following = np.where(last, -1, below + 1).astype(np.intp)
    gamma = virtual - previous
    low, high = a[previous], a[following]
    diff = high - low
    return np.where(gamma >= 0.5, high - diff * (1 - gamma), low + diff * gamma)


def latency_summary(values_ms: Sequence[float]) -> dict:
    """``{p50, p90, p95, p99, mean, max}`` of per-query latencies in ms (empty dict without any)."""
    values = np.asarray(values_ms, dtype=np.float64)
    if not len(values):
        return {}
    out = {f"p{p}": float(v) for p, v in zip(PERCENTILES, percentiles(values, PERCENTILES))}
    return {**out, "mean": float(values.mean()), "max": float(values.max())}


def latency_statistic(values_ms: np.ndarray, name: str) -> float:
    """One statistic of :data:`LATENCY_STATS` (``p95``, ``mean``...) of a latency array."""
    if name == "mean":
        return float(np.mean(values_ms))
    if name == "max":
        return float(np.max(values_ms))
    return float(percentiles(np.ravel(values_ms), [float(name[1:])])[0])


def batch_shares(batches: Iterable[tuple[Sequence[str], float]]) -> dict[str, float]:
    """Per-query latency in ms from timed batches ``(query ids, seconds)``: each query gets its batch's share."""
    out: dict[str, float] = {}
    for ids, seconds in batches:
        if len(ids):
            share = seconds * 1000.0 / len(ids)
            out.update((qid, share) for qid in ids)
    return out


def failed_requests(failed: object, query_ids: Sequence[str]) -> set[str]:
    """The searched queries whose request failed (a retriever's ``stats()["failed_queries"]``: the http
    retriever's ``on_failure=empty``), as a set; empty when ``failed`` is no list or tuple. Ids that
    were not searched are ignored."""
    if not isinstance(failed, (list, tuple)):
        return set()
    searched = set(query_ids)
    return {qid for qid in failed if isinstance(qid, str) and qid in searched}


def measured_latencies(measured: object, query_ids: Sequence[str],
                       failed: set[str] = frozenset()) -> tuple[dict[str, float] | None, str | None]:
    """A retriever's own per-query latencies (``stats()["query_latency_ms"]``), checked: ``(latencies,
    None)`` when they are a dict giving every searched query that did not fail a finite number >= 0 ms
    (a real number: Python's or numpy's, ``np.float32`` and ``np.int64`` included; a plugin's bool, NaN,
    inf, negative, missing or non-numeric value would put NaN or nonsense into metrics.json's
    percentiles), else ``(None, why)``; the caller then times the queries itself. The queries of
    ``failed`` (:func:`failed_requests`) have no latency and get none: a failed request's time is no
    answer's latency, and giving every query one share of the timed call instead replaced the
    measured latencies of all the others (2 failures in 300: p95 x0.137)."""
    if not isinstance(measured, dict):
        return None, None
    out: dict[str, float] = {}
    for qid in query_ids:
        if qid in failed:
            continue
        value = measured.get(qid)
        try:  # (numbers.Real: numpy's scalars too, which are no int or float subclass but np.float64)
            ms = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else math.nan
        except OverflowError:  # an int past the largest double
            ms = math.nan
        if not (math.isfinite(ms) and ms >= 0):
            given = f"is {value!r}, not a finite number >= 0 ms" if qid in measured else "is missing"  # (not "None")
            return None, (f"the retriever's query_latency_ms for query {qid!r} {given}: its own latencies are not "
                          "used; each query gets its share of the timed call")
        out[qid] = ms
    return out, None


def peak_rss_bytes() -> int | None:
    """Peak resident set size of this process (``ru_maxrss``: KiB on Linux, bytes on macOS)."""
    try:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    except (OSError, ValueError):
        return None
    return int(peak if sys.platform == "darwin" else peak * 1024)


def efficiency_block(timings: dict[str, float], n_queries: int, query_latency_ms: dict[str, float], basis: str,
                     batch_size: int | None = None, index_bytes: int | None = None, failed: int = 0) -> dict:
    """The block (module docstring) from metrics.json's ``timings`` (``NAME_s`` keys) and the latencies;
    ``failed``: the requests that failed ("per request": recorded as ``latency_ms.failed``, and not among
    the latencies summarized)."""
    from harness.fingerprint import fingerprint

    stages = {name[:-2]: round(float(s), 6) for name, s in timings.items() if name.endswith("_s") and s is not None}
    search_s = stages.get("search")
    latency = {**latency_summary(list(query_latency_ms.values())), "basis": basis}
    if basis == PER_BATCH_SHARE and batch_size:
        latency["batch_size"] = batch_size
    if basis == PER_REQUEST:
        latency["failed"] = int(failed)
    return {"stages_s": stages, "n_queries": n_queries,
            "queries_per_s": n_queries / search_s if search_s else None,
            "latency_ms": latency,
            "index_bytes": index_bytes if isinstance(index_bytes, int) and not isinstance(index_bytes, bool) else None,
            "peak_rss_bytes": peak_rss_bytes(), "fingerprint": fingerprint()}


def query_latency_block(query_latency_ms: dict[str, float]) -> dict[str, float]:
    """metrics.json's ``query_latency_ms``: the per-query latencies in ms (6 decimals), in search order."""
    return {qid: round(ms, 6) for qid, ms in query_latency_ms.items()}


def query_latencies(document) -> dict[str, float]:
    """A metrics document's ``query_latency_ms`` (empty without one, or when it is malformed)."""
    values = getattr(document, "query_latency_ms", None)
    if not isinstance(values, dict):
        return {}
    return {q: float(v) for q, v in values.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


# ------------------------------------------------------------------------------ run.trec header
HEADER_START, HEADER_END = "ir_metadata.start", "ir_metadata.end"
# Characters json.dumps(ensure_ascii=False) leaves raw that would split or spoil a header line: U+0085,
# U+2028 and U+2029 end a line for str.splitlines() and YAML 1.1, and a lone surrogate (a non-UTF-8
# file name's byte, decoded with surrogateescape) cannot be written as UTF-8. Written as \uXXXX escapes.
_UNSAFE = re.compile("[\x85\u2028\u2029\ud800-\udfff]")


def _json(value) -> str:
    """``value`` as one line of JSON (:data:`_UNSAFE` characters escaped), which ``json.loads`` reads back."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+=/@-]*$")


def _key(key) -> str:
    """A mapping key as written: as is when plain (letters, digits, ``_ . + = / @ -``), else as JSON (a
    pipeline stage's ``params`` key from a quoted TOML key may hold ``:``, ``#`` or a line end, which
    would split the line or the run file)."""
    return key if isinstance(key, str) and _PLAIN_KEY.match(key) else _json(str(key))


def _yaml_lines(obj: dict, indent: int = 0) -> list[str]:
    """Nested dicts as YAML block mappings; every scalar (and list, and empty dict) as JSON, which YAML
    reads as is."""
    lines = []
    for key, value in obj.items():
        if isinstance(value, dict) and value:
            lines.append(f"{' ' * indent}{_key(key)}:")
            lines.extend(_yaml_lines(value, indent + 2))
        else:
            lines.append(f"{' ' * indent}{_key(key)}: {_json(value)}")
    return lines


def header_facts(efficiency: dict, tag: str, dataset: dict | None = None) -> dict:
    """What the run.trec header records: the run's tag, the test collection and the efficiency block."""
    facts = {"tag": tag}
    if dataset:
        facts["data"] = {"test_collection": dataset.get("name"), "split": dataset.get("split")}
    facts.update(efficiency)
    return facts


# a pipeline stage record's entries left out of the run.trec header: what differs between two runs of the same
# stages (the cache status, timings, the component's stats) and what measures the run rather than makes it
_UNSTABLE_STAGE_KEYS = ("cache", "timings", "stats", "n_queries", "metrics", "optimization")


def pipeline_header_facts(stages: list[dict], tag: str, dataset: dict | None = None,
                          versions: dict | None = None) -> dict:
    """What a pipeline result's run.trec header records (it has no efficiency block: its stages' times are in
    metrics.json): the run's tag, the test collection, ``stages``, {stage name: its metrics.json record (the
    table, inputs, depth kept, ``resolved_params``, ``fusion_used``, cache ``key``)} in order, without
    :data:`_UNSTABLE_STAGE_KEYS`, and metrics.json's ``versions`` (harness, runs version, git commit,
    libraries): a rerun of the same stages (cache hits) writes the same run.trec."""
    facts = header_facts({}, tag, dataset)
    facts["stages"] = {record.get("name"): {key: value for key, value in record.items()
                                            if key != "name" and key not in _UNSTABLE_STAGE_KEYS}
                       for record in stages if isinstance(record, dict)}
    if versions:
        facts["versions"] = versions
    return facts


def run_header(facts: dict) -> list[str]:
    """The ``#`` lines that open run.trec: ``# ir_metadata.start``, ``# key: value`` ..., ``# ir_metadata.end``."""
    return [f"# {HEADER_START}", *(f"# {line}" for line in _yaml_lines(facts)), f"# {HEADER_END}"]


def parse_header(lines: Iterable[str]) -> dict:
    """The facts of :func:`run_header`'s lines (the leading ``#`` lines of a run file; others end it)."""
    root: dict = {}
    stack: list[tuple[int, dict]] = [(-1, root)]
    for raw in lines:
        if not raw.startswith("#"):
            break
        text = raw[1:].rstrip("\n")
        text = text[1:] if text.startswith(" ") else text
        if text.strip() in (HEADER_START, HEADER_END) or not text.strip():
            continue
        indent = len(text) - len(text.lstrip(" "))
        key, _, value = text.strip().partition(":")
        if text.strip().startswith('"'):  # a key written as JSON (:func:`_key`): it may hold ':'
            try:
                key, end = json.JSONDecoder().raw_decode(text.strip())
                value = text.strip()[end:].partition(":")[2]
            except json.JSONDecodeError:
                pass
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        if value.strip():
            try:
                parent[key] = json.loads(value.strip())
            except json.JSONDecodeError:
                parent[key] = value.strip()
        else:
            parent[key] = {}
            stack.append((indent, parent[key]))
    return root


# ------------------------------------------------------------------------------ columns for tables
def summary(efficiency: dict | None) -> dict:
    """The figures tables show beside effectiveness (None where unknown): ``queries_per_s``, ``p50_ms``,
    ``p95_ms``, ``basis``, ``failed`` (requests that failed, not among the latencies: "per request"),
    ``index_mb`` (10^6 bytes), ``peak_rss_mb`` and ``hardware`` (see :func:`harness.fingerprint.hardware`)."""
    from harness.fingerprint import hardware

    block = efficiency if isinstance(efficiency, dict) else {}
    latency = block.get("latency_ms") if isinstance(block.get("latency_ms"), dict) else {}

    def number(value):  # a hand-edited or foreign file may hold anything: only numbers are shown
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def mb(value):
        return None if number(value) is None else round(value / 1e6, 3)

    basis = latency.get("basis")
    return {"queries_per_s": number(block.get("queries_per_s")), "p50_ms": number(latency.get("p50")),
            "p95_ms": number(latency.get("p95")), "basis": basis if isinstance(basis, str) else None,
            "failed": failed_count(block),
            "index_mb": mb(block.get("index_bytes")), "peak_rss_mb": mb(block.get("peak_rss_bytes")),
            "hardware": hardware(block.get("fingerprint"))}


def failed_count(efficiency: dict | None) -> int | None:
    """``latency_ms.failed`` of an efficiency block: the requests that failed and are not among its
    latencies (None where it is not recorded: "per batch share", results written before it was)."""
    latency = efficiency.get("latency_ms") if isinstance(efficiency, dict) else None
    failed = latency.get("failed") if isinstance(latency, dict) else None
    return failed if isinstance(failed, int) and not isinstance(failed, bool) and failed >= 0 else None


def hardware_labels(hardwares: Sequence[dict | None]) -> tuple[list[str], dict[str, dict]]:
    """A letter per distinct hardware (``A``, ``B``...; ``-`` when unknown) and the legend letter -> hardware."""
    legend: dict[str, dict] = {}
    labels = []
    for hw in hardwares:
        if not hw:
            labels.append("-")
            continue
        letter = next((k for k, v in legend.items() if v == hw), None)
        if letter is None:
            letter = chr(ord("A") + len(legend)) if len(legend) < 26 else f"H{len(legend) + 1}"
            legend[letter] = hw
        labels.append(letter)
    return labels, legend


def fmt(value, digits: int = 1) -> str:
    """A table cell: ``-`` for None, else the number with ``digits`` decimals and thousands separators."""
    return "-" if value is None else f"{value:,.{digits}f}"

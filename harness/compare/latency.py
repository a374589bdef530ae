"""Latency gate: the current result's speed against the baseline's, one verdict per stage.

``harness check --latency-tolerance TOL --latency-metric STAT`` (STAT: p50, p90, p95, p99 or
mean) reads both results' ``efficiency`` blocks (docs/efficiency.md).

The search stage is judged on the per-query latencies (metrics.json ``query_latency_ms``) of the queries
both results searched: ``ratio = STAT(current) / STAT(baseline)``, and its percentile bootstrap
interval at confidence ``1 - alpha`` (significance.paired_bootstrap_ratio). The resampled units are
the independent measurements: queries for "per request" latencies; whole batches (paired by
position) for "per batch share" latencies, whose queries share one timing -- resampling those
queries one by one would give an interval far too narrow. Latencies measured on different bases
(one result per request, the other per batch share) are different quantities: the search stage is
then compared as a wall time, as the other stages (below), with a warning.

* ``REGRESSED``: ``ratio > 1 + TOL`` and the interval lies above 1 (``low > 1``) -- slower by more
  than the tolerance, and not by the luck of which queries were drawn. The gate fails (exit 1).
* ``IMPROVED``: ``ratio < 1 / (1 + TOL)`` and the interval lies below 1.
* ``NOISE``: the ratio is beyond the tolerance but the interval contains 1. Passes.
* ``OK``: within the tolerance, ``1 / (1 + TOL) <= ratio <= 1 + TOL``, both bounds up to a relative
  1e-12 of rounding (a slowdown of exactly the tolerance, 0.009 ms -> 0.0108 ms at 0.2, is OK, as a
  change of exactly the tolerance is in the quality gate). Passes.

Every other stage both results timed (load, index, evaluate, rerank...) is one wall-time
measurement: no interval can be drawn from it, so it is reported as ``OK`` (within the tolerance),
``SLOWER`` or ``FASTER`` and never fails the gate. A result without an efficiency block (written
before it existed, like the committed SciFact baseline) gives "no latency data": nothing is
judged, the gate does not fail. Results measured on different hardware are flagged by the
check's warnings (harness.compare.load.hardware_warning), and so are http results whose requests
were sent under different load (:func:`load_warning`); the verdicts are still given.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from harness.compare.check import IMPROVED, NOISE, OK, REGRESSED
from harness.compare.load import SystemResult
from harness.compare.significance import paired_bootstrap_ratio, percent
from harness.errors import InputError
from harness.reports.efficiency import PER_BATCH_SHARE, failed_count, latency_statistic, query_latencies

SLOWER, FASTER = "SLOWER", "FASTER"
STATISTICS = ("p50", "p90", "p95", "p99", "mean")
NO_DATA = "no latency data"


@dataclass
class StageCheck:
    stage: str
    statistic: str  # the latency statistic (search), or "wall" (one measurement of a whole stage)
    unit: str  # "ms" or "s"
    baseline: float
    current: float
    verdict: str
    ci_low: float | None = None  # bootstrap interval of the ratio (search only)
    ci_high: float | None = None
    n_queries: int | None = None

    @property
    def ratio(self) -> float:
        return self.current / self.baseline if self.baseline > 0 else float("inf")

    def to_dict(self) -> dict:
        """(The ratio of two finite times can still overflow, e.g. 1 s against 5e-324 s: null then.)"""
        return {**asdict(self), "ratio": self.ratio if math.isfinite(self.ratio) else None}

    def line(self) -> str:
        """``VERDICT stage STAT: base -> cur (x ratio, CI [lo, hi])``."""
        interval = f", CI [{self.ci_low:.3f}, {self.ci_high:.3f}]" if self.ci_low is not None else ""
        queries = f" on {self.n_queries} queries" if self.n_queries else ""
        return (f"{self.stage} {self.statistic}: {self.baseline:.4g} {self.unit} -> {self.current:.4g} {self.unit} "
                f"(x{self.ratio:.3f}{interval}{queries})")


@dataclass
class LatencyResult:
    statistic: str
    tolerance: float
    confidence: float
    resamples: int
    seed: int
    checks: list[StageCheck] = field(default_factory=list)
    no_data: str | None = None  # why nothing was judged
    warnings: list[str] = field(default_factory=list)

    @property
    def regressed(self) -> list[StageCheck]:
        return [c for c in self.checks if c.verdict == REGRESSED]

    def to_dict(self) -> dict:
        return {"statistic": self.statistic, "tolerance": self.tolerance, "confidence": self.confidence,
                "resamples": self.resamples, "seed": self.seed, "passed": not self.regressed,
                "no_data": self.no_data, "warnings": self.warnings, "checks": [c.to_dict() for c in self.checks]}


# Slack of the tolerance bounds, relative: a ratio of two times is rounded, so a slowdown of exactly the
# tolerance (0.009 ms -> 0.0108 ms at 0.2) comes out a few ulps beyond it (1.2000000000000002), and a
# speed-up of exactly it below 1 / 1.2 (0.8333333333333333 < 0.8333333333333334); as in the quality gate
# (harness.compare.check.verdict), a change of exactly the tolerance is OK.
_ROUNDING = 1e-12


def _beyond(ratio: float, tolerance: float) -> int:
    """+1 when ``ratio > 1 + tol``, -1 when ``ratio < 1 / (1 + tol)``, else 0 (up to a relative 1e-12)."""
    if ratio > (1.0 + tolerance) * (1.0 + _ROUNDING):
        return 1
    if ratio < (1.0 - _ROUNDING) / (1.0 + tolerance):
        return -1
    return 0


def search_verdict(ratio: float, low: float, high: float, tolerance: float) -> str:
    """The search stage's verdict (module docstring) from the ratio and its interval."""
    beyond = _beyond(ratio, tolerance)
    if beyond == 0:
        return OK
    if beyond > 0 and low > 1.0:
        return REGRESSED
    if beyond < 0 and high < 1.0:
        return IMPROVED
    return NOISE


def stage_verdict(ratio: float, tolerance: float) -> str:
    beyond = _beyond(ratio, tolerance)
    return SLOWER if beyond > 0 else FASTER if beyond < 0 else OK


def check_latency(base: SystemResult, cur: SystemResult, statistic: str = "p95", tolerance: float = 0.2,
                  alpha: float = 0.05, resamples: int = 10_000, seed: int = 0) -> LatencyResult:
    """Latency verdicts of ``cur`` against ``base`` (see the module docstring)."""
    if statistic not in STATISTICS:
        raise ValueError(f"latency metric must be one of {', '.join(STATISTICS)}, got {statistic!r}")
    if not 0 <= tolerance < float("inf"):  # (NaN: no ratio is ever beyond it; inf: Infinity in the JSON)
        raise ValueError(f"latency tolerance must be >= 0 and finite, got {tolerance}")
    result = LatencyResult(statistic, tolerance, 1.0 - alpha, resamples, seed)
    blocks = {}
    for role, system in (("baseline", base), ("current", cur)):
        block = system.document.efficiency if system.document is not None else None
        if not block:
            result.no_data = (f"{NO_DATA}: the {role} has no efficiency block (written before it existed, by "
                              "harness evaluate, or by a pipeline); not checked")
            return result
        blocks[role] = block
    bases = [_mapping(blocks[r], "latency_ms").get("basis") for r in ("baseline", "current")]
    if bases[0] != bases[1]:
        # (a request's time, queueing behind the other requests in flight included, against a share of a timed
        # call: not the same quantity -- an http run whose per-request timings were replaced by one call's share
        # (a failed query) came out 7 times "faster" than its own baseline, with a narrow interval)
        result.warnings.append(f"latencies measured on different bases: baseline {bases[0]!r}, current {bases[1]!r}; "
                               "the search stage's wall time is compared instead")
    load = load_warning(base, cur)
    if load:
        result.warnings.append(load)
    for role in ("baseline", "current"):  # (harness check refuses such a result first: a partial run)
        failed = failed_count(blocks[role])
        if failed:
            result.warnings.append(f"the {role}'s {failed} failed requests have no latency: its search latencies are "
                                   "those of the queries answered")
    latencies = {"baseline": query_latencies(base.document), "current": query_latencies(cur.document)}
    for role, system in (("baseline", base), ("current", cur)):
        bad = next((q for q, ms in latencies[role].items() if not 0.0 <= ms < math.inf), None)  # (NaN too)
        if bad is not None:
            raise InputError(f"query_latency_ms: the search latency {latencies[role][bad]!r} ms is not a finite "
                             "number >= 0", system.source, id=bad)
    search = _search_check(blocks, latencies, result) if bases[0] == bases[1] else None
    if search is not None:
        result.checks.append(search)
    base_stages, cur_stages = _mapping(blocks["baseline"], "stages_s"), _mapping(blocks["current"], "stages_s")
    for stage, seconds in base_stages.items():
        now = cur_stages.get(stage)
        if (stage == "search" and search is not None) or not _positive(seconds) or not _positive(now):
            continue
        result.checks.append(StageCheck(stage, "wall", "s", float(seconds), float(now),
                                        stage_verdict(now / seconds, tolerance)))
    return result


LOAD_SETTINGS = ("concurrency", "qps")  # the http client's: requests kept in flight, how fast they start


def load_warning(base: SystemResult, cur: SystemResult) -> str | None:
    """A warning when both results sent their requests under different load (metrics.json
    ``retriever_stats.client``: the http retriever's ``concurrency`` or ``qps`` differ), None otherwise.
    A request's latency includes its wait behind the others in flight: against ``harness serve``
    (one search at a time) the p95 at concurrency 8 was x10 that at concurrency 1, REGRESSED, with
    nothing changed but the client's settings."""
    clients = []
    for system in (base, cur):
        stats = getattr(system.document, "retriever_stats", None)
        client = stats.get("client") if isinstance(stats, dict) else None
        if not isinstance(client, dict):
            return None
        clients.append(client)
    changed = [f"{key} {clients[0].get(key)!r} -> {clients[1].get(key)!r}" for key in LOAD_SETTINGS
               if clients[0].get(key) != clients[1].get(key)]
    if not changed:
        return None
    return (f"the requests were sent under different load ({', '.join(changed)}; retriever_stats.client): a "
            "request's latency includes its wait behind the others in flight, so the search latencies compare "
            "two loads as well as two services")


def _mapping(block: dict, key: str) -> dict:
    value = block.get(key)
    return value if isinstance(value, dict) else {}


def _positive(value) -> bool:
    """A stage time that can be compared: a finite number > 0 (not 0, NaN, inf -- a hand-edited file's)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < math.inf


def _search_check(blocks: dict, latencies: dict, result: LatencyResult) -> StageCheck | None:
    a_map, b_map = latencies["baseline"], latencies["current"]
    common = sorted(q for q in a_map if q in b_map)  # (query-id order, as compare aligns: the resampled queries
    # are drawn by position, so the order the metrics files list them in moved the interval)
    if len(common) < 2:
        result.warnings.append("search: fewer than 2 queries with a latency in both results; its wall time is "
                               "compared instead")
        return None
    if len(common) < max(len(a_map), len(b_map)):
        result.warnings.append(f"search latency compared on the {len(common)} queries timed in both results "
                               f"(baseline {len(a_map)}, current {len(b_map)})")
    a = np.fromiter((a_map[q] for q in common), dtype=np.float64, count=len(common))
    b = np.fromiter((b_map[q] for q in common), dtype=np.float64, count=len(common))
    before, after = latency_statistic(a, result.statistic), latency_statistic(b, result.statistic)
    if before <= 0:
        result.warnings.append(f"search: the baseline's {result.statistic} latency is 0; its wall time is "
                               "compared instead")
        return None
    clusters = _batches(blocks, latencies, common, result)
    if clusters is not None and len(clusters) < 2:
        result.warnings.append("search: every query was searched in one timed call (one batch): no interval can be "
                               "drawn; its wall time is compared instead")
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        ci = paired_bootstrap_ratio(a, b, _reducer(result.statistic), resamples=result.resamples,
                                    confidence=result.confidence, seed=result.seed, clusters=clusters)
    if not (math.isfinite(ci.low) and math.isfinite(ci.high)):  # a resample's baseline statistic was 0
        result.warnings.append(f"search: resampled baselines with a {result.statistic} latency of 0 (queries timed "
                               "at 0 ms) leave the ratio's interval undefined; its wall time is compared instead")
        return None
    return StageCheck("search", result.statistic, "ms", before, after,
                      search_verdict(after / before, ci.low, ci.high, result.tolerance), ci.low, ci.high, len(common))


def _batches(blocks: dict, latencies: dict, common: list[str], result: LatencyResult) -> np.ndarray | None:
    """The batches to resample when both results measured "per batch share" with the same batches
    (same batch size, same query order): an (m, size) matrix of positions in ``common``, a short last
    batch padded by repeating its own queries (m = 1: no interval possible). None (resample queries)
    for per-request latencies."""
    latency = [_mapping(blocks[r], "latency_ms") for r in ("baseline", "current")]
    if any(x.get("basis") != PER_BATCH_SHARE for x in latency):
        return None
    size = latency[0].get("batch_size")
    order = [list(latencies[r]) for r in ("baseline", "current")]
    if not isinstance(size, int) or size < 1 or size != latency[1].get("batch_size"):
        result.warnings.append("search: the two results were searched in different batches; queries resampled "
                               "one by one (the interval is too narrow for per-batch timings)")
        return None
    batch_ids = [{q: i // size for i, q in enumerate(ids)} for ids in order]
    if any(batch_ids[0][q] != batch_ids[1][q] for q in common):
        result.warnings.append("search: the two results batched their queries differently; queries resampled "
                               "one by one (the interval is too narrow for per-batch timings)")
        return None
    groups: dict[int, list[int]] = {}
    for position, q in enumerate(common):
        groups.setdefault(batch_ids[0][q], []).append(position)
    width = max(map(len, groups.values()))
    return np.array([np.resize(members, width) for members in groups.values()], dtype=np.int64)


def _reducer(statistic: str):
    if statistic == "mean":
        return lambda rows: rows.mean(axis=1)
    q = float(statistic[1:])
    return lambda rows: np.percentile(rows, q, axis=1)


def format_latency(result: LatencyResult) -> list[str]:
    """The lines ``harness check`` prints for the latency gate."""
    head = (f"latency: {result.statistic}, tolerance {result.tolerance:g} (x{1 + result.tolerance:g}), "
            f"{percent(result.confidence)} bootstrap interval of the ratio")
    if result.no_data:
        return [f"latency: {result.no_data}"]
    lines = [head]
    lines.extend(f"  {c.verdict:<9} {c.line()}" for c in result.checks)
    lines.extend(f"warning: {w}" for w in result.warnings)
    return lines

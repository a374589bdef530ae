"""Regression gate: a baseline and a current result, one verdict per metric.

For a metric, with per-query differences ``d = current - baseline`` on the aligned queries,
``delta = mean(d)``, ``tol`` the tolerance (absolute, in metric units, >= 0) and ``p`` the
two-sided p-value of the chosen paired test (Fisher's randomization test by default, or the
paired t-test), the verdict is:

* ``REGRESSED``: ``delta < -tol`` and ``p < alpha`` -- a drop larger than the tolerance that the
  test says is not query-sampling noise. The gate fails (exit 1).
* ``IMPROVED``: ``delta > tol`` and ``p < alpha``.
* ``NOISE``: ``|delta| > tol`` and ``p >= alpha`` -- the mean moved by more than the tolerance,
  but a change of that size is plausible by chance on this many queries. Passes.
* ``OK``: ``|delta| <= tol``, whatever ``p`` -- within tolerance (a significant change smaller
  than the tolerance is deemed too small to matter). Passes.

The gate is on quality measures, higher is better, ``tol`` in the metric's unit (for ``num_rel_ret``,
relevant documents retrieved, documents per query); trec_eval's counts ``num_ret`` and ``num_rel``, and
``Judged@k`` (the judgments' coverage of the run), are no quality measures and are refused
(:mod:`harness.compare.measures`). One tolerance applies to every
metric, except those given one of their own (``tolerances``: ``harness check --tolerance num_rel_ret=2``),
since the metrics of one gate may be in different units (0-1 scores, documents, DCG sums).

The p-values are not corrected across the metrics of one check (each metric is its own gate);
check fewer metrics, or lower ``alpha``, to keep the chance of a false alarm down.

With a latency tolerance, :mod:`harness.compare.latency` adds a verdict per stage; a REGRESSED
stage fails the gate as a regressed metric does (same exit code 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from harness.compare.load import Aligned, SystemResult
from harness.compare.measures import count
from harness.compare.significance import (holm_standard_errors, near_alpha, paired_t_test, randomization_test,
                                          significant)
from harness.errors import HarnessError, InputError
from harness.evaluation.evaluator import finite_mean

OK, IMPROVED, REGRESSED, NOISE = "OK", "IMPROVED", "REGRESSED", "NOISE"


# Slack of the ``|delta| <= tol`` test, relative to the means: a mean difference is a difference of two
# float sums, so a change of exactly the tolerance (0.495 - 0.5) comes out a few ulps of the means beyond
# it (-0.0050000000000000044); at DCG sums near 1e4 an ulp is 1.8e-12 (the means of 10 values 12345.5
# and of 10 values 12345.6 differ by -0.10000000000218279).
_ROUNDING = 1e-12


def verdict(delta: float, p_value: float, tolerance: float, alpha: float, scale: float = 0.0) -> str:
    """The verdict for a mean difference ``delta`` with p-value ``p_value`` (rules above); ``scale``: the
    larger magnitude of the two means (:func:`run_check` passes it).

    ``|delta| <= tol`` is tested as ``|delta| <= tol + 1e-12 * max(1, scale)``, so that rounding in the
    means (a few ulps of ``scale``) never moves a change of exactly the tolerance out of it, also for
    means past 1 (DCG sums: an absolute 1e-12 is below one ulp of 1e4); likewise ``p < alpha`` is
    :func:`~harness.compare.significance.significant`, so that a p-value of exactly alpha computed a
    few ulps low (the t-test's p = 1/2 for t = 1 with one degree of freedom comes out
    0.4999999999999999) stays NOISE.
    """
    if not 0 <= tolerance < float("inf"):  # (NaN would make every change exceed it; inf none: Infinity in JSON)
        raise ValueError(f"tolerance must be >= 0 and finite, got {tolerance}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    scale = abs(scale) if math.isfinite(scale) else 0.0
    if abs(delta) <= tolerance + _ROUNDING * max(1.0, scale):
        return OK
    if not significant(p_value, alpha):
        return NOISE
    return IMPROVED if delta > 0 else REGRESSED


@dataclass(frozen=True)
class QueryChange:
    """One query's change on one metric, with the documents that left / entered its top k."""

    query_id: str
    query: str | None
    baseline: float
    current: float
    k: int | None
    left: list[str] | None = None  # in the baseline's top k, not in the current one (baseline order)
    entered: list[str] | None = None  # in the current top k, not in the baseline's (current order)
    grades: dict[str, float] | None = None  # judged grades of the documents in left / entered (with qrels)

    @property
    def difference(self) -> float:
        return self.current - self.baseline

    def to_dict(self) -> dict:
        return {"query_id": self.query_id, "query": self.query, "baseline": self.baseline, "current": self.current,
                "difference": self.difference, "k": self.k, "left_top_k": self.left, "entered_top_k": self.entered,
                "judged": self.grades}


@dataclass
class MetricCheck:
    metric: str
    baseline_mean: float
    current_mean: float
    p_value: float
    verdict: str
    wins: int
    ties: int
    losses: int
    worst: list[QueryChange] = field(default_factory=list)
    tolerance: float | None = None  # the tolerance this metric was judged with (its own, or the default)

    @property
    def delta(self) -> float:
        return self.current_mean - self.baseline_mean

    def to_dict(self) -> dict:
        return {"metric": self.metric, "baseline": self.baseline_mean, "current": self.current_mean,
                "delta": self.delta, "tolerance": self.tolerance, "p_value": self.p_value, "verdict": self.verdict,
                "wins": self.wins,
                "ties": self.ties, "losses": self.losses, "worst_queries": [q.to_dict() for q in self.worst]}


@dataclass
class CheckResult:
    checks: list[MetricCheck]
    n_queries: int
    tolerance: float
    alpha: float
    test: str
    warnings: list[str]
    latency: object | None = None  # harness.compare.latency.LatencyResult, with --latency-tolerance
    permutations: int | None = None  # the randomization test's, and the seed of it and of the bootstraps:
    seed: int | None = None  # recorded so that a Monte Carlo p-value can be reproduced from the JSON
    tolerances: dict[str, float] = field(default_factory=dict)  # metrics given a tolerance of their own

    def settings(self) -> str:
        """``tolerance 0.005, 2 for num_rel_ret, alpha 0.05`` (the own tolerances only where given)."""
        own = "".join(f", {t:g} for {m}" for m, t in self.tolerances.items())
        return f"tolerance {self.tolerance:g}{own}, alpha {self.alpha:g}"

    @property
    def failures(self) -> list[str]:
        """What regressed: metrics, then latency stages (``latency search p95``)."""
        out = [c.metric for c in self.checks if c.verdict == REGRESSED]
        if self.latency is not None:
            out += [f"latency {c.stage} {c.statistic}" for c in self.latency.regressed]
        return out

    @property
    def regressed(self) -> bool:
        return bool(self.failures)

    @property
    def exit_code(self) -> int:
        return 1 if self.regressed else 0

    def to_dict(self) -> dict:
        return {"schema": "retrieval-harness/check/v1", "passed": not self.regressed, "n_queries": self.n_queries,
                "tolerance": self.tolerance, "tolerances": dict(self.tolerances), "alpha": self.alpha,
                "test": self.test, "permutations": self.permutations,
                "seed": self.seed, "warnings": self.warnings,
                "checks": [c.to_dict() for c in self.checks],
                **({"latency": self.latency.to_dict()} if self.latency is not None else {})}


def parse_tolerances(items: list[str]) -> tuple[float | None, list[tuple[str, float]]]:
    """``harness check --tolerance`` items, each repeatable or comma-separated: a number is the tolerance of
    every gated metric, ``METRIC=NUMBER`` one metric's own (``--tolerance 0.01,num_rel_ret=2``). Returns
    (the number or None, [(metric as given, number)]); HarnessError naming an item that is neither, a
    negative or non-finite number, or a second bare number."""
    default, own = None, []
    for item in items:
        parts = [part.strip() for part in item.split(",")]
        if not any(parts):
            raise HarnessError(f"--tolerance: {item!r} gives no tolerance (e.g. --tolerance 0.005 or "
                               "--tolerance num_rel_ret=2)")
        for part in filter(None, parts):
            name, sep, text = part.rpartition("=")
            name, text = name.strip(), text.strip()
            try:
                value = float(text)
            except ValueError:
                value = None
            if value is None or (sep and not name):
                raise HarnessError(f"--tolerance: {part!r} is neither a number nor METRIC=NUMBER (e.g. "
                                   "--tolerance 0.005 or --tolerance num_rel_ret=2)")
            if not 0 <= value < float("inf"):
                raise HarnessError(f"--tolerance must be >= 0 and finite, got {part}")
            if not sep:
                if default is not None and default != value:
                    raise HarnessError(f"--tolerance: two tolerances for every metric ({default:g} and {value:g}); "
                                       "give one, and METRIC=NUMBER for a metric's own")
                default = value
            else:
                own.append((name, value))
    return default, own


def metric_tolerances(own: list[tuple[str, float]], aligned: Aligned, metrics: list[str]) -> dict[str, float]:
    """``{aligned metric name: tolerance}`` of :func:`parse_tolerances`'s ``own``: a name read as ``-m``
    reads it (``map`` is ``AP``; ``iprec_at_recall`` its 11 levels). HarnessError for a metric that is not
    gated here (``metrics``) or given two different tolerances."""
    from harness.compare.load import result_metric_names

    out: dict[str, float] = {}
    for given, value in own:
        for name in result_metric_names(given, aligned.systems):
            if name not in metrics:
                raise HarnessError(f"--tolerance {given}={value:g}: {name} is not gated here (gated: "
                                   f"{', '.join(metrics)}; add it with -m)")
            if out.get(name, value) != value:
                raise HarnessError(f"--tolerance: two tolerances for {name} ({out[name]:g} and {value:g})")
            out[name] = value
    return out


def failed_queries(system: SystemResult) -> list:
    """The queries a result's retriever could not answer (metrics.json ``retriever_stats.failed_queries``,
    the http retriever's ``on_failure=empty``: scored 0); [] for a complete run."""
    stats = getattr(system.document, "retriever_stats", None)
    failed = stats.get("failed_queries") if isinstance(stats, dict) else None
    return failed if isinstance(failed, list) else []


def refuse_partial(system: SystemResult, role: str) -> None:
    """Refuse a result whose retriever could not answer some queries (the http retriever's
    ``on_failure=empty``: metrics.json ``retriever_stats.failed_queries``). Those queries score 0, and a
    few of them move a mean by less than the tolerance: the gate would pass on a partial run (2 of
    SciFact's 300 queries answered HTTP 500: NDCG@10 -0.0021, OK, PASSED)."""
    failed = failed_queries(system)
    if failed:
        shown = ", ".join(map(str, failed[:5])) + (f", ... (+{len(failed) - 5} more)" if len(failed) > 5 else "")
        raise InputError(f"the {role} result is a partial run: {len(failed)} of its queries failed and scored 0 "
                         f"(retriever_stats.failed_queries: {shown}); gate only complete runs (the http "
                         "retriever's default on_failure=fail stops at the first failure)", system.source)


def cutoff(metric: str) -> int | None:
    """The k of ``NAME@k`` (None without one)."""
    _, sep, k = metric.rpartition("@")
    return int(k) if sep and k.isdigit() else None


def _top(system: SystemResult, query_id: str, k: int, warnings: list[str]) -> list[str] | None:
    try:
        return system.top_docs(query_id, k)
    except HarnessError as exc:  # a broken run.trec only costs the diagnosis, never the verdict
        warnings.append(f"rankings of {system.name} unavailable: {exc}")
        system.run_path = None
        return None


def run_check(aligned: Aligned, metrics: list[str] | None = None, tolerance: float = 0.005, alpha: float = 0.05,
              test: str = "randomization", permutations: int = 10_000, seed: int = 0, show: int = 5,
              default_k: int = 10, qrels: dict[str, dict[str, float]] | None = None,
              tolerances: dict[str, float] | None = None) -> CheckResult:
    """Verdicts for ``aligned.systems[0]`` (baseline) against ``aligned.systems[1]`` (current).

    ``tolerance`` applies to every metric but those in ``tolerances`` (``{metric: tolerance}``, aligned
    names: :func:`metric_tolerances`). ``qrels`` (``{query_id: {doc_id: grade}}``), when given, adds the
    judged grades of the documents that left or entered the top k of the queries that lost most.
    """
    if len(aligned.systems) != 2:
        raise ValueError("a check compares exactly two results: baseline and current")
    if test not in ("randomization", "t"):
        raise ValueError(f"test must be 'randomization' or 't', got {test!r}")
    tolerances = dict(tolerances or {})
    for value in (tolerance, *tolerances.values()):
        verdict(0.0, 1.0, value, alpha)  # validates the tolerances and alpha up front
    unknown = [m for m in [*(metrics or ()), *tolerances] if m not in aligned.metrics]
    if unknown:
        raise ValueError(f"metric {unknown[0]} was not aligned (aligned: {', '.join(aligned.metrics)})")
    stray = [m for m in tolerances if m not in (metrics or aligned.metrics)]
    if stray:
        raise ValueError(f"a tolerance is given for {stray[0]}, which is not gated")
    for metric in metrics or aligned.metrics:
        what = count(metric)
        if what is not None:  # (num_ret 980 -> 100, a run cut to depth 100, read as REGRESSED; see measures)
            hint = ("gate the quality measures; compare shows the coverage beside them" if metric.startswith("Judged")
                    else "gate num_rel_ret, the relevant documents retrieved, or Recall@k")
            raise HarnessError(f"metric {metric} is not a quality measure and is not gated: it is {what}, where more "
                               f"is not better ({hint})")
    base, cur = aligned.systems
    warnings = list(aligned.warnings)
    checks = []
    id_ranks = natural_ranks(aligned.query_ids.tolist())  # (ties among the losses: in natural id order)
    for metric in metrics or aligned.metrics:
        a, b = aligned.of(base.name, metric), aligned.of(cur.name, metric)
        d = b - a
        drawn = None
        if test == "t":
            p = paired_t_test(a, b).p_value
        else:
            r = randomization_test(a, b, permutations=permutations, seed=seed)
            p, drawn = r.p_value, None if r.exact else r.n_permutations
        before, after = finite_mean(a), finite_mean(b)  # (DCG_exp near 2^1023: a plain sum overflows)
        delta = after - before
        tol = tolerances.get(metric, tolerance)
        check = MetricCheck(metric, before, after, p, verdict(delta, p, tol, alpha, max(abs(before), abs(after))),
                            int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()), tolerance=tol)
        if drawn is not None and check.verdict != OK:
            warnings.extend(_near_alpha(metric, p, drawn, alpha, check.verdict))
        losers = np.lexsort((id_ranks, d))[:show]
        losers = losers[d[losers] < 0]
        texts = cur.query_texts() or base.query_texts()
        k = cutoff(metric) or default_k
        for i in losers.tolist():
            qid = aligned.query_ids[i]
            before, after = _top(base, qid, k, warnings), _top(cur, qid, k, warnings)
            left = entered = grades = None
            if before is not None and after is not None:
                after_set, before_set = set(after), set(before)
                left = [doc for doc in before if doc not in after_set]
                entered = [doc for doc in after if doc not in before_set]
                if qrels is not None:
                    judged = qrels.get(qid, {})
                    grades = {doc: judged[doc] for doc in left + entered if doc in judged}
            check.worst.append(QueryChange(qid, texts.get(qid), float(a[i]), float(b[i]), k, left, entered, grades))
        checks.append(check)
    return CheckResult(checks, len(aligned.query_ids), tolerance, alpha, test, list(dict.fromkeys(warnings)),
                       permutations=permutations, seed=seed, tolerances=tolerances)


def _near_alpha(metric: str, p: float, permutations: int, alpha: float, outcome: str) -> list[str]:
    """A warning when a Monte Carlo p-value lies within 3 standard errors of ``alpha``
    (:func:`harness.compare.significance.near_alpha`, ``se = sqrt(p (1 - p) / permutations)``): the
    verdict is then decided by the draws, not the data."""
    se = float(holm_standard_errors([p], [permutations])[0])
    if not near_alpha(p, se, alpha):
        return []
    return [f"{metric}: the randomization p = {p:.4g} is within 3 standard errors (se {se:.2g}) of alpha = {alpha:g}, "
            f"so {outcome} rests on the {permutations:,} random draws: more --permutations (or --test t) settle it"]


def _docs(ids: list[str] | None, grades: dict[str, float] | None, limit: int) -> str:
    """Documents in rank order, those judged with a grade > 0 first and marked ``(grade g)``."""
    if ids is None:
        return "(no ranking)"
    if not ids:
        return "none"
    grades = grades or {}
    relevant = [d for d in ids if grades.get(d, 0) > 0]
    ordered = relevant + [d for d in ids if grades.get(d, 0) <= 0]
    shown = ", ".join(f"{d} (grade {grades[d]:g})" if d in grades else d for d in ordered[:limit])
    return shown + (f", ... (+{len(ids) - limit} more)" if len(ids) > limit else "")


def natural_ranks(query_ids: list[str]) -> np.ndarray:
    """Each query's place in natural id order, the order of the report's explorer (report.js ``naturalRanks``):
    ids compared character by character (code points), except that where both have a run of ASCII digits the
    runs compare as numbers (of any length: without their leading zeros, the shorter first, then digit by digit;
    "2" before "10", "PLAIN-9" before "PLAIN-10"); ids equal so ("07", "7") in their order in ``query_ids``
    (aligned: sorted as text)."""
    import re

    def key(query_id: str) -> list[tuple]:  # (a digit run's first code point is that of '0' to '9': 48 stands for all)
        return [(48, len(t.lstrip("0")), t.lstrip("0")) if t[0] in "0123456789" else (ord(t), 0, "")
                for t in re.findall(r"[0-9]+|.", str(query_id), re.S)]

    order = sorted(range(len(query_ids)), key=lambda i: key(query_ids[i]))
    ranks = np.empty(len(query_ids), dtype=np.int64)
    ranks[order] = np.arange(len(query_ids))
    return ranks


def format_report(result: CheckResult, baseline: str, current: str, max_docs: int = 10) -> str:
    """The plain-text report ``harness check`` prints."""
    test = "randomization test" if result.test == "randomization" else "paired t-test"
    lines = [f"check: {current} against baseline {baseline} on {result.n_queries} queries "
             f"({result.settings()}, {test})"]
    width = max(len(c.metric) for c in result.checks)
    for c in result.checks:
        lines.append(f"  {c.verdict:<9} {c.metric:<{width}}  {c.baseline_mean:.4f} -> {c.current_mean:.4f}  "
                     f"({c.delta:+.4f}, p = {c.p_value:.4g}; {c.wins} better, {c.ties} same, {c.losses} worse)")
    for c in result.checks:
        if c.verdict not in (REGRESSED, NOISE) or not c.worst:
            continue
        lines.append("")
        lines.append(f"queries that lost most on {c.metric} ({c.verdict}):")
        for q in c.worst:
            text = f"  {q.query!r}" if q.query else ""
            lines.append(f"  {q.query_id}{text}")
            lines.append(f"      {c.metric}: {q.baseline:.4f} -> {q.current:.4f} ({q.difference:+.4f})")
            if q.left is not None or q.entered is not None:
                lines.append(f"      left top {q.k}: {_docs(q.left, q.grades, max_docs)}")
                lines.append(f"      entered top {q.k}: {_docs(q.entered, q.grades, max_docs)}")
            else:
                lines.append("      (rankings unavailable: no run.trec beside both metrics files)")
    for w in result.warnings:
        lines.append(f"warning: {w}")
    if result.latency is not None:
        from harness.compare.latency import format_latency

        lines.extend(format_latency(result.latency))
    verdict_line = "FAILED: regression on " + ", ".join(result.failures) if result.regressed else "PASSED"
    lines.append(verdict_line)
    return "\n".join(lines) + "\n"

"""Every system against a baseline on every chosen metric, with Holm's correction across systems.

For each metric, each non-baseline system is compared with the baseline on the aligned per-query
values (:func:`harness.compare.significance.compare_paired`: paired t-test, Fisher's randomization
test, paired bootstrap interval). The p-values of each test are then Holm-adjusted across the
systems compared on that metric (m = number of systems - 1), and a difference is called
significant when the adjusted p-value of the chosen test is below ``alpha``.

trec_eval's counts ``num_ret`` and ``num_rel``, and ``Judged@k``, rank no system (:mod:`harness.compare.measures`): their
means are shown, with no best value and no test (no cell), and the JSON names them under ``counts``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from harness.compare.load import Aligned
from harness.compare.measures import count, ranks_systems
from harness.compare.significance import (PairedComparison, compare_paired, holm_bonferroni, holm_standard_errors,
                                          near_alpha, significant)
from harness.evaluation.evaluator import finite_mean

TESTS = {"randomization": "Fisher's randomization test", "t": "paired t-test"}
SCHEMA = "retrieval-harness/compare/v1"


def same_mean(a: float, b: float) -> bool:
    """Whether two means are equal up to the rounding of their sums (relative 1e-12): builds before
    NUMBERS_VERSION 3 averaged in query order, so the mean of the same per-query values in another order
    could differ in the last bits (P@3 values k/3 averaged to 0.6 in one order and 0.5999999999999999 in
    another; :mod:`harness.evaluation.mean` gives one value now), and both reach the best value."""
    return abs(a - b) <= 1e-12 * max(abs(a), abs(b))


@dataclass(frozen=True)
class Settings:
    test: str = "randomization"
    alpha: float = 0.05
    permutations: int = 10_000
    resamples: int = 10_000
    confidence: float = 0.95
    seed: int = 0

    def __post_init__(self) -> None:
        if self.test not in TESTS:
            raise ValueError(f"test must be one of {', '.join(TESTS)}; got {self.test!r}")
        if not 0.0 < self.alpha < 1.0:
            raise ValueError(f"alpha must be between 0 and 1, got {self.alpha}")
        if self.permutations < 1 or self.resamples < 1:
            raise ValueError("permutations and resamples must be >= 1")
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"confidence must be between 0 and 1, got {self.confidence}")
        if self.seed < 0:  # (numpy's generator refuses it only once it draws: 'expected non-negative integer')
            raise ValueError(f"seed must be >= 0, got {self.seed}")


@dataclass(frozen=True)
class Cell:
    """One system against the baseline on one metric."""

    system: str
    metric: str
    stats: PairedComparison
    p_t_holm: float
    p_randomization_holm: float
    p_value: float  # the chosen test's Holm-adjusted p
    significant: bool

    def to_dict(self) -> dict:
        return {"system": self.system, "metric": self.metric, **self.stats.to_dict(),
                "p_t_holm": self.p_t_holm, "p_randomization_holm": self.p_randomization_holm,
                "p_value": self.p_value, "significant": self.significant}


@dataclass
class Comparison:
    aligned: Aligned
    baseline: str
    settings: Settings
    means: dict[str, dict[str, float]]  # system -> metric -> mean over the aligned queries
    cells: dict[tuple[str, str], Cell] = field(default_factory=dict)  # (system, metric) -> Cell
    warnings: list[str] = field(default_factory=list)  # of the tests (the inputs' are aligned.warnings)

    def __repr__(self) -> str:
        """A one-line summary (the dataclass's repr printed the aligned per-query arrays): baseline, systems,
        metrics, the count of significant cells (:meth:`to_dict` has them all)."""
        hits = sum(cell.significant for cell in self.cells.values())
        return (f"Comparison(baseline {self.baseline!r}, systems {self.systems!r}, metrics {self.metrics!r}, "
                f"{len(self.aligned.query_ids):,} queries, {hits} of {len(self.cells)} comparisons significant "
                f"({self.settings.test}, alpha {self.settings.alpha:g}))")

    @property
    def systems(self) -> list[str]:
        return [s.name for s in self.aligned.systems]

    @property
    def metrics(self) -> list[str]:
        return self.aligned.metrics

    def best(self, metric: str) -> set[str]:
        """The systems with the highest mean (none for a count: :mod:`harness.compare.measures`)."""
        if not ranks_systems(metric):
            return set()
        top = max(self.means[s][metric] for s in self.systems)
        return {s for s in self.systems if same_mean(self.means[s][metric], top)}

    def to_dict(self) -> dict:
        return _finite({
            "schema": SCHEMA,
            "baseline": self.baseline,
            "metrics": self.metrics,
            "n_queries": len(self.aligned.query_ids),
            "settings": {"test": self.settings.test, "alpha": self.settings.alpha,
                         "permutations": self.settings.permutations, "resamples": self.settings.resamples,
                         "confidence": self.settings.confidence, "seed": self.settings.seed,
                         "correction": "holm-bonferroni across systems, per metric and test"},
            "systems": [{"name": s.name, "source": str(s.source), "means": self.means[s.name]}
                        for s in self.aligned.systems],
            "comparisons": [cell.to_dict() for cell in self.cells.values()],
            **({"counts": counts} if (counts := {m: count(m) for m in self.metrics if count(m)}) else {}),
            "warnings": [*self.aligned.warnings, *self.warnings],
        })


def _finite(obj):
    """JSON has no infinities: a t statistic of +-inf is written as the strings "inf" / "-inf"."""
    if isinstance(obj, float) and math.isinf(obj):
        return "inf" if obj > 0 else "-inf"
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def compare(aligned: Aligned, baseline: str | None = None, settings: Settings | None = None) -> Comparison:
    """Compare every system of ``aligned`` with ``baseline`` (default: the first system)."""
    settings = settings or Settings()
    names = [s.name for s in aligned.systems]
    baseline = names[0] if baseline is None else baseline
    if baseline not in names:
        raise ValueError(f"baseline {baseline!r} is not one of the systems ({', '.join(names)})")
    means = {n: {m: finite_mean(aligned.of(n, m)) for m in aligned.metrics} for n in names}
    result = Comparison(aligned, baseline, settings, means)
    others = [n for n in names if n != baseline]
    for metric in filter(ranks_systems, aligned.metrics):  # (no test on a count: neither better nor worse)
        base = aligned.of(baseline, metric)
        stats = [compare_paired(base, aligned.of(n, metric), permutations=settings.permutations,
                                resamples=settings.resamples, confidence=settings.confidence, seed=settings.seed)
                 for n in others]
        p_t = holm_bonferroni([s.p_t for s in stats])
        p_r = holm_bonferroni([s.p_randomization for s in stats])
        se = holm_standard_errors([s.p_randomization for s in stats],
                                  [None if s.randomization_exact else s.permutations for s in stats])
        for i, (name, s) in enumerate(zip(others, stats)):
            p = float(p_t[i] if settings.test == "t" else p_r[i])
            result.cells[(name, metric)] = Cell(name, metric, s, float(p_t[i]), float(p_r[i]), p,
                                                significant(p, settings.alpha) and s.difference != 0)
            if settings.test == "randomization" and s.difference != 0 and near_alpha(p, se[i], settings.alpha):
                result.warnings.append(near_alpha_warning(f"{name} vs {baseline}, {metric}", p, se[i], s.permutations,
                                                          settings.alpha, adjusted=len(others) > 1))
    return result


def near_alpha_warning(what: str, p: float, se: float, permutations: int, alpha: float, adjusted: bool | str,
                       outcome: str = "whether it is significant") -> str:
    """The line for a Monte Carlo p-value within 3 standard errors of alpha (:func:`near_alpha`);
    ``adjusted``: whether it is Holm's (or how: a string)."""
    holm = f" ({adjusted})" if isinstance(adjusted, str) else " (Holm-adjusted)" if adjusted else ""
    return (f"{what}: the randomization p{holm} = {p:.4g} is within 3 standard errors (se {se:.2g}) of alpha = "
            f"{alpha:g}, so {outcome} rests on the {permutations:,} random draws: more "
            "--permutations (or --test t) settle it")

"""Plots of a comparison (matplotlib, imported lazily, Agg backend, PNG).

* :func:`plot_metric_curves` -- for each metric family, the mean at every cutoff k that all
  systems have (x: k on a log scale, y: mean), one line per system.
* :func:`plot_query_differences` -- per-query differences ``system - baseline`` on one metric,
  sorted from the largest gain to the largest loss, as bars (gains green, losses red).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from harness.atomic import atomic_open
from harness.compare.load import SystemResult
from harness.evaluation.evaluator import finite_mean

_NAME = re.compile(r"^(.+)@(\d+)$")


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        from harness.errors import HarnessError

        raise HarnessError("plots need matplotlib: pip install 'retrieval-harness[plots]'") from None

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> Path:
    with atomic_open(path, "wb", encoding=None) as handle:
        fig.savefig(handle, format="png", dpi=120, bbox_inches="tight")
    return path


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "x"


def slugs(names) -> dict[str, str]:
    """A distinct file-name slug per name: :func:`slug`, followed by ``-2``, ``-3``... when an earlier name
    took it (names that differ only outside ``[A-Za-z0-9_.-]``, such as ``bm25 v2`` and ``bm25_v2``, or two
    names in a script other than Latin, which both slug to ``x``: their plots overwrote each other)."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for name in names:
        candidate, n = slug(name), 1
        while candidate in used:
            n += 1
            candidate = f"{slug(name)}-{n}"
        used.add(candidate)
        out[name] = candidate
    return out


def curves(systems: list[SystemResult]) -> dict[str, list[tuple[int, dict[str, float]]]]:
    """family -> [(k, {system: mean})] over the cutoffs every system has, k ascending.

    The means are over the queries common to all systems, the queries the comparison is made on
    (with ``--intersection`` the others are dropped; without it the systems share all their queries).
    """
    common = set.intersection(*(set(s.values) for s in systems))
    shared = set.intersection(*(set(s.query_ids.tolist()) for s in systems))
    rows = {s.name: np.fromiter((q in shared for q in s.query_ids.tolist()), dtype=bool, count=len(s.query_ids))
            for s in systems}
    families: dict[str, list[int]] = {}
    for name in common:
        m = _NAME.match(name)
        if m:
            families.setdefault(m.group(1), []).append(int(m.group(2)))
    out = {}
    for family in sorted(families):
        ks = sorted(families[family])
        out[family] = [(k, {s.name: finite_mean(s.values[f"{family}@{k}"][rows[s.name]]) for s in systems})
                       for k in ks]
    return out


def plot_metric_curves(systems: list[SystemResult], folder: str | Path, prefix: str = "compare") -> list[Path]:
    """One PNG per metric family with at least two cutoffs: ``<prefix>_<family>_at_k.png``."""
    plt = _pyplot()
    folder = Path(folder)
    written = []
    for family, points in curves(systems).items():
        if len(points) < 2:
            continue
        ks = [k for k, _ in points]
        fig, ax = plt.subplots(figsize=(6, 4))
        for s in systems:
            ax.plot(ks, [means[s.name] for _, means in points], marker="o", label=s.name)
        ax.set_xscale("log")
        ax.set_xticks(ks)
        ax.set_xticklabels([str(k) for k in ks])
        ax.set_xlabel("k")
        ax.set_ylabel(f"{family}@k (mean)")
        ax.set_title(f"{family}@k")
        ax.grid(True, alpha=0.3)
        ax.legend()
        written.append(_save(fig, folder / f"{prefix}_{slug(family)}_at_k.png"))
        plt.close(fig)
    return written


def plot_query_differences(baseline: str, system: str, metric: str, differences: np.ndarray,
                           folder: str | Path, prefix: str = "compare", names: dict[str, str] | None = None) -> Path:
    """Sorted per-query difference bars: ``<prefix>_diff_<metric>_<system>_vs_<baseline>.png``, the system
    names as ``names`` (:func:`slugs` of all the systems, so that no two plots share a file) or :func:`slug`
    gives them."""
    plt = _pyplot()
    d = np.sort(np.asarray(differences, dtype=np.float64))[::-1]
    fig, ax = plt.subplots(figsize=(8, 4))
    colors = np.where(d > 0, "#2a9d4b", np.where(d < 0, "#d1495b", "#999999"))
    ax.bar(np.arange(len(d)), d, width=1.0, color=colors)
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_xlim(-0.5, len(d) - 0.5)
    ax.set_xlabel(f"queries, sorted ({int((d > 0).sum())} better, {int((d == 0).sum())} same, "
                  f"{int((d < 0).sum())} worse)")
    ax.set_ylabel(f"Δ {metric}")
    ax.set_title(f"{metric}: {system} - {baseline} per query (mean {finite_mean(d):+.4f})")
    names = names or {}
    system_slug, baseline_slug = names.get(system) or slug(system), names.get(baseline) or slug(baseline)
    path = _save(fig, Path(folder) / f"{prefix}_diff_{slug(metric)}_{system_slug}_vs_{baseline_slug}.png")
    plt.close(fig)
    return path

"""The leaderboard: datasets as rows, retrievers as columns, one table per metric, plus timings.

Values are each cell's mean over its evaluated queries (from its metrics.json); the best of a row is bold,
except for trec_eval's counts ``num_ret`` and ``num_rel`` and for ``Judged@k`` (:mod:`harness.compare.measures`). The ``average``
row is the unweighted mean over datasets (:func:`~harness.evaluation.mean.exact_mean`: the same in any order
of the config's datasets), given only for retrievers with a value on every
dataset (an average over fewer datasets would not be comparable); otherwise it is null / "-".
The timings table adds each cell's efficiency figures (p95 latency, index size, peak RSS) and a
letter per distinct hardware; cells timed on different hardware are flagged.

A dataset of forums (CQADupStack: ``cqadupstack/<forum>`` entries, or ``cqadupstack``, which the config
expands into its twelve forums) is one row, as BEIR reports it: each forum is evaluated on its own and the
row's value is the unweighted mean of the forums' values, given only when every forum of the dataset has
one; the average over datasets counts it once. The forums' own values are kept under ``forums``
(leaderboard.json; a "forums" table per metric in leaderboard.md).

A pipeline is one more column (its last stage); ``stages`` (leaderboard.json) and the "Pipeline
stages" tables (leaderboard.md) show every stage of each pipeline as a ``pipeline/stage`` row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

from harness.bench.cells import Cell
from harness.bench.config import BenchConfig
from harness.compare.analysis import same_mean
from harness.evaluation.mean import exact_mean
from harness.compare.measures import count, ranks_systems
from harness.fingerprint import describe_hardware
from harness.reports import efficiency
from harness.reports.document import MetricsDocument

SCHEMA = "retrieval-harness/leaderboard/v1"


@dataclass
class CellOutcome:
    cell: Cell
    status: str  # "run", "reused", "failed" or "pending" (dry run)
    document: MetricsDocument | None = None
    error: str | None = None
    seconds: float = 0.0
    # the HarnessWarnings issued while it ran (not in metrics.json); a reused cell's: :func:`recorded_failures`
    issued: list[str] = field(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        """What ``harness run`` prints as ``warning: ...`` lines for this cell, in its order: the
        HarnessWarnings issued while it ran (an http retriever's failed queries; a reused cell: the count
        of failed requests recorded), then its metrics.json's ``warnings`` (a reused cell's too); each text once."""
        recorded = (self.document.warnings or []) if self.document is not None else []
        return list(dict.fromkeys([*self.issued, *recorded]))


def recorded_failures(block: dict | None) -> list[str]:
    """A reused cell's stand-in for the HarnessWarning its run issued and metrics.json's ``warnings`` does not
    hold (an http retriever's failed queries, ``on_failure=empty``): the count of failed requests its
    ``efficiency`` block (typed or as JSON reads it: report.html's) records, in the words of the timings
    table's warning."""
    failed = efficiency.failed_count(block)
    return [f"{failed:,} requests failed (scored 0; metrics.json retriever_stats.failed_queries)"] if failed else []


NAMED_CELLS = 3  # a warning shared by more cells names the first ones and counts the others


def grouped_warnings(named: list[tuple[str, list[str]]]) -> list[str]:
    """``[(cell name, its warnings)]`` -> one ``<cells>: <warning>`` line per distinct warning text, in the
    order first met: the cells sharing it by name (``scifact / bm25, nfcorpus / bm25``), past
    :data:`NAMED_CELLS` the first ones and a count (``... and 15 more cells``), so that one setting every
    cell shares (a depth below a cutoff over 18 datasets) is one line, not 18."""
    cells_of: dict[str, list[str]] = {}
    for name, warnings in named:
        for warning in dict.fromkeys(warnings):
            cells_of.setdefault(warning, []).append(name)
    lines = []
    for warning, names in cells_of.items():
        shown = ", ".join(names[:NAMED_CELLS])
        more = len(names) - NAMED_CELLS
        if more > 0:
            shown += f" and {more} more cell{'s' if more > 1 else ''}"
        lines.append(f"{shown}: {warning}")
    return lines


def throughput(document: MetricsDocument) -> dict:
    """Cell speed figures from a metrics.json: index seconds, docs indexed / queries searched per
    second, and documents encoded per second when the retriever's stats() reports it
    (``docs_encoded_per_s``, or the dense retriever's ``documents_per_second``)."""
    timings, dataset, stats = document.timings, document.dataset, document.retriever_stats or {}
    index_s, search_s = timings.get("index_s"), timings.get("search_s")
    n_docs, n_queries = dataset.get("n_docs"), dataset.get("n_queries")
    encoded = next((stats[key] for key in ("docs_encoded_per_s", "documents_per_second")
                    if isinstance(stats.get(key), (int, float))), None)
    return {
        "index_s": index_s,
        "search_s": search_s,
        "docs_indexed_per_s": round(n_docs / index_s, 1) if n_docs and index_s else None,
        "queries_per_s": round(n_queries / search_s, 1) if n_queries and search_s else None,
        "docs_encoded_per_s": encoded,
    }


def forum_groups(config: BenchConfig) -> dict[str, dict[str, str]]:
    """dataset of forums (``cqadupstack``) -> {forum: the label of its dataset entry}, for a dataset whose
    every forum the config lists (config order). A config listing only some forums benchmarks them as
    datasets of their own: one row each, counted in the average as any dataset is."""
    from harness.datasets.registry import forum_of, lookup

    groups: dict[str, dict[str, str]] = {}
    for d in config.datasets:
        found = forum_of(d.source)
        if found is not None:
            groups.setdefault(found[0], {})[found[1]] = d.label
    return {name: forums for name, forums in groups.items() if set(forums) == set(lookup(name).subsets)}


def row_labels(config: BenchConfig, groups: dict[str, dict[str, str]]) -> list[str]:
    """The leaderboard's rows: each dataset's label, a dataset of forums once (its name, where its first
    forum is listed)."""
    forum_labels = {label: name for name, forums in groups.items() for label in forums.values()}
    out: list[str] = []
    for d in config.datasets:
        label = forum_labels.get(d.label, d.label)
        if label not in out:
            out.append(label)
    return out


def _group_value(name: str, forums: dict[str, str], value_of) -> float | None:
    """The mean over every forum the registry lists for ``name`` (None when one is not listed or has no value)."""
    from harness.datasets.registry import forum_mean, lookup

    return forum_mean([value_of(forums[f]) if f in forums else None for f in lookup(name).subsets])


def build(config: BenchConfig, outcomes: list[CellOutcome]) -> dict:
    """The leaderboard.json object."""
    groups = forum_groups(config)
    datasets = row_labels(config, groups)
    retrievers = [r.label for r in (*config.retrievers, *config.pipelines)]
    by_cell = {(o.cell.dataset.label, o.cell.retriever.label): o for o in outcomes}

    def value(d: str, r: str, metric: str):
        outcome = by_cell.get((d, r))
        doc = outcome.document if outcome else None
        return doc.metrics.get(metric) if doc else None

    tables = {}
    for metric in config.metrics:
        rows = {}
        for d in datasets:
            if d in groups:
                rows[d] = {r: _group_value(d, groups[d], lambda label: value(label, r, metric)) for r in retrievers}
            else:
                rows[d] = {r: value(d, r, metric) for r in retrievers}
        average = {}
        for r in retrievers:
            values = [rows[d][r] for d in datasets]
            average[r] = exact_mean(values) if values and all(v is not None for v in values) else None
        tables[metric] = {"rows": rows, "average": average}
        if groups:
            tables[metric]["forums"] = {name: {label: {r: value(label, r, metric) for r in retrievers}
                                               for label in forums.values()} for name, forums in groups.items()}
    cells = []
    for o in outcomes:
        entry = {"dataset": o.cell.dataset.label, "retriever": o.cell.retriever.label,
                 "folder": f"{o.cell.dataset.label}/{o.cell.retriever.label}", "status": o.status}
        if o.error:
            entry["error"] = o.error
        if o.document:
            if o.document.warnings:  # (metrics.json's: the cell's folder says the same; not in its fingerprint)
                entry["warnings"] = list(o.document.warnings)
            entry["fingerprint"] = (o.document.bench or {}).get("fingerprint")
            entry["n_queries"] = o.document.n_queries
            entry["timings"] = o.document.timings
            entry["throughput"] = throughput(o.document)
            if o.document.efficiency:
                entry["efficiency"] = efficiency.summary(o.document.efficiency)
        cells.append(entry)
    board = {"schema": SCHEMA, "bench": config.name, "metrics": list(config.metrics), "datasets": datasets,
             "retrievers": retrievers, "tables": tables, "cells": cells,
             "created": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    if groups:
        from harness.datasets.registry import lookup

        board["forums"] = {name: {"title": lookup(name).title, "forums": list(forums.values()),
                                  "of": len(lookup(name).subsets)} for name, forums in groups.items()}
    if config.pipelines:
        board["stages"] = stage_rows(config, by_cell, groups)
    return board


def stage_rows(config: BenchConfig, by_cell: dict, groups: dict | None = None) -> dict:
    """metric -> ``pipeline/stage`` -> dataset -> the stage's mean (None when not run); a dataset of forums
    has its forums' values and, under its name, their mean (as its leaderboard row)."""
    out: dict = {metric: {} for metric in config.metrics}
    for pipeline in config.pipelines:
        for stage in pipeline.stages:
            for metric in config.metrics:
                row = out[metric].setdefault(f"{pipeline.label}/{stage.name}", {})
                for d in config.datasets:
                    outcome = by_cell.get((d.label, pipeline.label))
                    records = {s.get("name"): s for s in ((outcome.document.stages or []) if outcome and
                                                          outcome.document else [])}
                    row[d.label] = (records.get(stage.name) or {}).get("metrics", {}).get(metric)
                for name, forums in (groups or {}).items():
                    row[name] = _group_value(name, forums, row.get)
    return out


def stage_table(board: dict, metric: str) -> list[str]:
    datasets = board["datasets"]
    lines = [f"| stage | {' | '.join(datasets)} |", "| --- |" + " ---: |" * len(datasets)]
    for label, row in board["stages"][metric].items():
        lines.append(f"| {label} | {' | '.join(_fmt(row.get(d)) for d in datasets)} |")
    return lines


def _fmt(value, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _rate(value) -> str:
    return "-" if value is None else f"{value:,.0f}"


def metric_table(board: dict, metric: str) -> list[str]:
    table = board["tables"][metric]
    retrievers = board["retrievers"]
    lines = [f"| dataset | {' | '.join(retrievers)} |", "| --- |" + " ---: |" * len(retrievers)]
    for label, row in [*table["rows"].items(), ("average", table["average"])]:
        present = [v for v in row.values() if v is not None] if ranks_systems(metric) else []  # (a count: no best)
        best = max(present) if present else None
        cells = [f"**{_fmt(row[r])}**" if row[r] is not None and len(present) > 1 and same_mean(row[r], best)
                 else _fmt(row[r]) for r in retrievers]
        lines.append(f"| {'**average**' if label == 'average' else label} | {' | '.join(cells)} |")
    return lines


def forums_note(name: str, group: dict) -> str:
    """The line under a forums table: how the dataset's row is made."""
    return (f"`{name}` is one dataset of {group['of']} forums, as BEIR reports it: each forum evaluated on its own, "
            f"the `{name}` row the unweighted mean of the forums' values, given for a retriever with a value on "
            f"every forum; the average row counts `{name}` once.")


def forum_table(board: dict, name: str, metric: str) -> list[str]:
    """The forums of ``name`` as rows, then its row (their mean)."""
    table = board["tables"][metric]
    retrievers = board["retrievers"]
    lines = [f"| forum | {' | '.join(retrievers)} |", "| --- |" + " ---: |" * len(retrievers)]
    for label, row in [*table["forums"][name].items(), (f"**{name}** (mean)", table["rows"][name])]:
        lines.append(f"| {label} | {' | '.join(_fmt(row[r]) for r in retrievers)} |")
    return lines


def markdown(board: dict, description: str = "") -> str:
    lines = [f"# Leaderboard: {board['bench']}", ""]
    if description:
        lines += [description, ""]
    for metric in board["metrics"]:
        lines += [f"## {metric}", "",
                  "Mean over each dataset's evaluated queries; "
                  + ("best of each row in bold" if ranks_systems(metric) else
                     f"not a quality measure ({count(metric)}): no best value (docs/compare.md)") + "; the average row "
                  "covers retrievers with a value on every dataset."
                  + "".join(f" `{name}`: the mean of its {group['of']} forums (below)."
                            for name, group in (board.get("forums") or {}).items()), ""]
        lines += metric_table(board, metric) + [""]
    for name, group in (board.get("forums") or {}).items():
        for metric in board["metrics"]:
            lines += [f"## {group['title']} forums: {metric}", "", forums_note(name, group), ""]
            lines += forum_table(board, name, metric) + [""]
    for metric in board["metrics"] if board.get("stages") else []:
        lines += [f"## Pipeline stages: {metric}", "", "Each stage of each pipeline (`pipeline/stage`), "
                  "evaluated on its own run.", ""] + stage_table(board, metric) + [""]
    lines += ["## Timings", "",
              "| dataset | retriever | status | index s | search s | docs indexed/s | queries/s | docs encoded/s "
              "| p95 ms | index MB | peak RSS MB | hardware |",
              "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    speeds = [cell.get("efficiency") or {} for cell in board["cells"]]
    labels, legend = efficiency.hardware_labels([e.get("hardware") for e in speeds])
    for cell, e, label in zip(board["cells"], speeds, labels):
        t = cell.get("throughput") or {}
        status = cell["status"] + (f": {cell['error']}" if cell.get("error") else "")
        lines.append(f"| {cell['dataset']} | {cell['retriever']} | {status.replace('|', '/')} | "
                     f"{_fmt(t.get('index_s'), 2)} | {_fmt(t.get('search_s'), 2)} | "
                     f"{_rate(t.get('docs_indexed_per_s'))} | {_rate(t.get('queries_per_s'))} | "
                     f"{_rate(t.get('docs_encoded_per_s'))} | {efficiency.fmt(e.get('p95_ms'), 3)} | "
                     f"{efficiency.fmt(e.get('index_mb'))} | {efficiency.fmt(e.get('peak_rss_mb'))} | {label} |")
    lines += ["", "Timings are those of the run that produced each cell (a reused cell keeps its own). p95: "
              "search latency per query (docs/efficiency.md); peak RSS: the benchmark process's peak up to the "
              "cell; hardware:" + "".join(f" **{k}** = {describe_hardware(hw)};" for k, hw in legend.items())]
    if len(legend) > 1:
        lines += ["", "> warning: cells were timed on different hardware (reused cells from another machine); "
                      "their timings are not comparable."]
    for cell, e in zip(board["cells"], speeds):  # (the http retriever's on_failure=empty)
        if e.get("failed"):
            lines += ["", f"> warning: {cell['dataset']} / {cell['retriever']}: {e['failed']:,} requests failed "
                          "(scored 0); its p95 is that of the queries answered, without the failed ones."]
    # each cell's metrics.json warnings (a depth below a cutoff, documents not in the corpus, ...), as harness bench
    # prints them: one line per distinct warning, naming its cells
    for line in grouped_warnings([(f"{cell['dataset']} / {cell['retriever']}", cell.get("warnings") or [])
                                  for cell in board["cells"]]):
        lines += ["", f"> warning: {line}"]
    return "\n".join(lines) + "\n"

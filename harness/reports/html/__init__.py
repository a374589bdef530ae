"""The HTML report: one self-contained page with the leaderboard (bootstrap intervals, groups of
systems that are not significantly different), plots, a per-query explorer, efficiency and settings.

    result folders -> :func:`load_results` (grouped by dataset) -> :func:`build_report` -> :func:`write_report`
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from harness.reports.html.model import Report, build_report, dataset_label, result_info
from harness.reports.html.render import render, write_report

__all__ = ["Report", "build_report", "load_results", "render", "write_report"]


def load_results(arguments: Sequence[str]) -> dict[str, list]:
    """Load ``[NAME=]PATH`` arguments (result folders, metrics.json files, or folders holding result
    folders at any depth, such as a ``harness bench`` output) and group them by dataset."""
    from harness.compare.load import load_system, split_name
    from harness.errors import HarnessError

    systems = []
    for argument in arguments:
        name, text = split_name(argument)
        path = Path(text)
        if path.is_dir() and not (path / "metrics.json").is_file():
            found = sorted(path.rglob("metrics.json"))
            if not found:
                raise HarnessError(f"{path}: no metrics.json in this folder or below it")
            if name:
                raise HarnessError(f"{path}: NAME=PATH names one result, but this folder holds {len(found)}")
            systems.extend(load_system(str(p.parent)) for p in found)
        else:
            systems.append(load_system(argument))
    groups: dict[str, list] = {}
    for s in systems:
        groups.setdefault(dataset_label(result_info(s)), []).append(s)
    return groups


def write_bench_report(path: str | Path, cells: Sequence[tuple[str, str, Path, str]], metrics: Sequence[str],
                       title: str, listed_forums: Sequence[str] = (), listed_rows: Sequence[str] = ()) -> Path:
    """The page of a benchmark: ``cells`` are (dataset label, retriever label, result folder, dataset
    source) of its finished cells; rows are the dataset labels, columns the retriever labels.
    ``listed_forums``: the datasets of forums the config lists whole (one row even when a forum's cells
    failed: :func:`harness.reports.html.model.forum_rows`); ``listed_rows``: the leaderboard's rows (a row
    whose cells all failed leaves the average without a value, as in leaderboard.json)."""
    from harness.compare.load import load_system

    groups: dict[str, list] = {}
    sources: dict[str, str] = {}
    for dataset, retriever, folder, source in cells:
        system = load_system(str(folder))
        system.name = retriever
        groups.setdefault(dataset, []).append(system)
        sources[dataset] = source
    report = build_report(groups, list(metrics), sources=sources, intersection=True, title=title,
                          listed_forums=listed_forums, listed_rows=listed_rows)
    return write_report(report, path)

"""Markdown metric table: metric families as rows, cutoffs k as columns, 4 decimals."""

from __future__ import annotations

import re

_NAME = re.compile(r"^(.*?)(?:@(\d+))?$")


def split_name(name: str) -> tuple[str, int | None]:
    family, k = _NAME.match(name).groups()
    return family, (int(k) if k else None)


def table_cells(means: dict[str, float]) -> tuple[list[str], list[str], dict[tuple[str, str], float]]:
    """(row families, column labels, {(family, column): value}) for a means dict."""
    families: list[str] = []
    columns: list[int | None] = []
    cells: dict[tuple[str, str], float] = {}
    for name, value in means.items():
        family, k = split_name(name)
        if family not in families:
            families.append(family)
        if k not in columns:
            columns.append(k)
        cells[(family, "all" if k is None else f"@{k}")] = value
    ks = sorted(c for c in columns if c is not None)
    labels = [f"@{k}" for k in ks] + (["all"] if None in columns else [])
    return families, labels, cells


def text(value: str) -> str:
    """A name as Markdown shows it literally: ``<`` as ``&lt;`` (GitHub dropped ``<stdin>``, the name of
    a run read from standard input, as an HTML tag); the rest as it is (``>=`` stays readable)."""
    return value.replace("<", "&lt;")


def metrics_table(means: dict[str, float], title: str | None = None) -> str:
    families, labels, cells = table_cells(means)
    lines = [f"### {text(title)}", ""] if title else []
    lines.append("| metric | " + " | ".join(labels) + " |")
    lines.append("| --- | " + " | ".join("---:" for _ in labels) + " |")
    for family in families:
        row = [f"{cells[(family, c)]:.4f}" if (family, c) in cells else "" for c in labels]
        lines.append(f"| {family} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"

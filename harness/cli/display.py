"""Console output: the metric table as rich renders it (rich imported when a table is printed: a
``--quiet`` run never pays for it)."""

from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator

from harness.reports.markdown import table_cells

if TYPE_CHECKING:
    from rich.console import Console


def print_table(table, console: Console | None = None) -> None:
    """Print a rich table; to a file or a pipe (CI logs, ``> out.txt``, ``| grep``) at its natural width,
    never squeezed into the 80 columns rich assumes there, where it cut the numbers (``0.70…``)."""
    from rich.console import Console
    from rich.measure import Measurement

    console = console or Console()
    if not console.is_terminal:
        width = Measurement.get(console, console.options.update_width(1 << 20), table).maximum
        if width > console.width:
            console = Console(width=width, file=console.file)
    console.print(table)


def print_metrics(means: dict[str, float], title: str = "", console: Console | None = None) -> None:
    from rich.table import Table

    families, labels, cells = table_cells(means)
    table = Table(title=title or None)
    table.add_column("metric")
    for label in labels:
        table.add_column(label, justify="right")
    for family in families:
        table.add_row(family, *[f"{cells[(family, c)]:.4f}" if (family, c) in cells else "" for c in labels])
    print_table(table, console)


def print_leaderboard(board: dict, metric: str, console: Console | None = None) -> None:
    """One leaderboard table: datasets as rows, retrievers as columns, an average row (a dataset of forums,
    CQADupStack, is one row: the mean of its forums, whose own values leaderboard.md and .json list)."""
    from rich.table import Table

    notes = [f"{name} = mean of its {group['of']} forums ({len(group['forums'])} listed)"
             for name, group in (board.get("forums") or {}).items()]
    table = Table(title=f"{board['bench']}: {metric}", caption="; ".join(notes) or None)
    table.add_column("dataset")
    for label in board["retrievers"]:
        table.add_column(label, justify="right")
    data = board["tables"][metric]
    for name, row in data["rows"].items():
        table.add_row(name, *["-" if row[r] is None else f"{row[r]:.4f}" for r in board["retrievers"]])
    table.add_section()
    table.add_row("average", *["-" if data["average"][r] is None else f"{data['average'][r]:.4f}"
                               for r in board["retrievers"]])
    print_table(table, console)


def note_missing(result, source: str | None = None) -> None:
    """A ``note:`` on stderr for the judged queries a run has no document for: they score 0 (trec_eval -c);
    ``source`` names the run (``harness evaluate`` of several)."""
    import typer

    if result.n_missing_from_run:
        where = f"{source}: " if source else ""
        typer.echo(f"note: {where}{result.n_missing_from_run} judged queries are missing from the run and score 0",
                   err=True)


def note_left_out(result, threshold: float) -> None:
    """A ``note:`` on stderr for the queries left out for want of a document judged relevant (grade >=
    ``threshold``: at 2, the queries judged 1 only)."""
    import typer

    if result.n_without_relevant:
        typer.echo(f"note: {result.n_without_relevant} queries have no document judged relevant (grade >= "
                   f"{threshold:.12g}) and are left out", err=True)


@contextmanager
def logged_warnings_hidden() -> Iterator[None]:
    """``--quiet``: while the block runs, what the library logs at WARNING or below is not printed (a
    cache that could not be written, on a read-only or full disk, and was skipped: the result records
    it, e.g. metrics.json's ``retriever_stats``); errors still are. Before the threshold is put back,
    the cache writes still running in the background (started in the block) are waited for, so that
    their warnings are hidden too (the process would wait for them at exit anyway)."""
    from harness.background import wait_all

    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        try:
            wait_all()
        finally:
            logging.disable(previous)

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


# Hugging Face's switch of its progress bars (huggingface_hub's downloads, transformers' "Loading weights",
# drawn by tqdm on stderr even when it is a pipe), read when huggingface_hub is imported.
HF_PROGRESS_SWITCH = "HF_HUB_DISABLE_PROGRESS_BARS"


@contextmanager
def dependency_output_hidden(hide_warnings: bool = True) -> Iterator[None]:
    """``--quiet``: while the block runs, the dependencies' own progress bars are off (a dense, sparse or
    reranker model's load printed transformers' ``Loading weights: 100%|...| 103/103`` under ``harness run
    -q``) and, with ``hide_warnings``, Python warnings are not printed (a dependency's DeprecationWarning,
    FutureWarning or UserWarning), except the project's own DeprecationWarnings (a former name the user
    typed: :func:`harness.cli.show_own_deprecations`) and HarnessWarnings (an http retriever's failed
    queries). Errors are exceptions: unchanged. The environment
    variable and the warning filters are put back at the end."""
    import os
    import sys
    import warnings

    with warnings.catch_warnings():  # (filters and showwarning put back at the end)
        if hide_warnings:
            from harness.cli import own_deprecation
            from harness.errors import HarnessWarning

            shown = warnings.showwarning

            def show(message, category, filename, lineno, file=None, line=None):
                # (here, not by a filter: a package may add its own "always" filter when imported)
                if own_deprecation(category, filename) or issubclass(category, HarnessWarning):
                    shown(message, category, filename, lineno, file, line)

            warnings.showwarning = show
        previous = os.environ.get(HF_PROGRESS_SWITCH)
        os.environ[HF_PROGRESS_SWITCH] = "1"  # (read when huggingface_hub is imported; if it was, switched below)
        hub, bars = sys.modules.get("huggingface_hub.utils"), sys.modules.get("transformers.utils.logging")
        hub = hub if hasattr(hub, "are_progress_bars_disabled") else None
        bars = bars if hasattr(bars, "is_progress_bar_enabled") else None
        hub_off = hub is not None and hub.are_progress_bars_disabled()
        bars_on = bars is not None and bars.is_progress_bar_enabled()
        if hub is not None and not hub_off:
            hub.disable_progress_bars()
        if bars_on:
            bars.disable_progress_bar()
        try:
            with _tqdm_disabled():
                yield
        finally:
            if bars_on:
                bars.enable_progress_bar()  # (which turns huggingface_hub's on too)
            if hub is not None:
                hub.disable_progress_bars() if hub_off else hub.enable_progress_bars()
            if previous is None:
                os.environ.pop(HF_PROGRESS_SWITCH, None)
            else:
                os.environ[HF_PROGRESS_SWITCH] = previous


@contextmanager
def _tqdm_disabled() -> Iterator[None]:
    """While the block runs, every tqdm bar is made disabled (``disable=True``, whatever its caller gave): the bars
    of packages with no switch of their own, as ir_datasets' ``docs_iter`` (an ``irds:`` dataset's corpus, under
    ``harness run -q``) and the ``datasets`` library's "Generating corpus split" (``hf:``). (tqdm reads its
    ``TQDM_DISABLE`` only when imported.) Nothing is done where tqdm is not installed."""
    try:
        from tqdm import std
    except ImportError:  # pragma: no cover - every model library brings tqdm
        yield
        return
    original = std.tqdm.__init__

    def quiet_init(self, *args, **kwargs):
        kwargs["disable"] = True
        original(self, *args, **kwargs)

    std.tqdm.__init__ = quiet_init
    try:
        yield
    finally:
        std.tqdm.__init__ = original


def hide_output(ctx, quiet: bool) -> None:
    """What ``run``, ``bench`` and ``rerank`` hide for the whole command (``ctx``'s resources, released when
    it ends): with ``quiet``, the progress bars, the dependencies' bars and warnings
    (:func:`dependency_output_hidden`) and what the library logs at WARNING (:func:`logged_warnings_hidden`);
    without, when progress is not shown (stderr no terminal, ``HARNESS_PROGRESS=0``), the dependencies' bars."""
    from harness import progress

    if quiet:
        progress.disable()
        ctx.with_resource(dependency_output_hidden())  # (transformers' "Loading weights" bar, other packages' warnings)
        ctx.with_resource(logged_warnings_hidden())  # (until the command is over: ctx is closed then, this first)
    elif not progress.enabled():  # (stderr no terminal, HARNESS_PROGRESS=0: the dependencies' bars too)
        ctx.with_resource(dependency_output_hidden(hide_warnings=False))


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

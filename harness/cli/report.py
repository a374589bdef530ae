"""``harness report``: result folders as one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from harness.cli import app
from harness.cli.options import (ALPHA_OPTION, INTERSECTION_OPTION, PERMUTATIONS_OPTION, RESAMPLES_OPTION,
                                 SEED_OPTION, TEST_OPTION, check_outputs, metric_items, refuse_outputs_over_inputs,
                                 result_files)


@app.command()
def report(
    results: List[str] = typer.Argument(..., help="Result folders, metrics.json files, or folders holding them "
                                                  "(e.g. a bench output); NAME=PATH names one."),
    output: Path = typer.Option(Path("report.html"), "--output", "-o", help="The HTML file to write."),
    baseline: Optional[str] = typer.Option(None, "--baseline", "-b", help="Baseline system (default: the first)."),
    metric: Optional[List[str]] = typer.Option(None, "--metric", "-m",
                                               help="Metric of the leaderboard (repeatable or comma-separated; "
                                                    "default NDCG@10, Recall@100, MRR@10 where every result has "
                                                    "them; a benchmark's folder, or benchmarks of one list of "
                                                    "metrics: theirs)."),
    dataset: Optional[List[str]] = typer.Option(None, "--dataset", "-d",
                                                help="[LABEL=]NAME_OR_FOLDER of a dataset, for its judgments and "
                                                     "titles when the results' own dataset is not found "
                                                     "(repeatable; LABEL: the leaderboard row)."),
    top_k: int = typer.Option(10, "--top-k", help="Documents of each system's ranking shown per query."),
    title: Optional[str] = typer.Option(None, "--title", help="Page title (default: Retrieval report; a "
                                                                "benchmark's folder: Benchmark NAME)."),
    test: str = TEST_OPTION,
    alpha: float = ALPHA_OPTION,
    permutations: int = PERMUTATIONS_OPTION,
    resamples: int = RESAMPLES_OPTION,
    seed: int = SEED_OPTION,
    intersection: bool = INTERSECTION_OPTION,
) -> None:
    """Write RESULTS as one HTML page: leaderboard with intervals, plots, per-query explorer, settings."""
    from harness.compare import Settings
    from harness.compare.load import split_name
    from harness.errors import HarnessError
    from harness.reports.html import load_inputs, report_of, write_report

    check_outputs(output)
    inputs = load_inputs(results)
    groups = inputs.groups
    refuse_outputs_over_inputs([("--output", output)],
                               result_files(s for group in groups.values() for s in group) + inputs.files)
    sources = {}
    for item in dataset or []:
        label, source = split_name(item)  # a folder whose path holds '=' is a plain folder, as for RESULTS
        if label is None:
            if len(groups) != 1:
                raise HarnessError(f"--dataset {item}: the results cover {len(groups)} datasets "
                                   f"({', '.join(groups)}); say which with LABEL=FOLDER")
            label = next(iter(groups))
        if label not in groups:
            raise HarnessError(f"--dataset {item}: no results on a dataset {label!r} ({', '.join(groups)})")
        sources[label] = source
    settings = Settings(test=test, alpha=alpha, permutations=permutations, resamples=resamples, seed=seed)
    built = report_of(inputs, metric_items(metric), baseline, settings, top_k=top_k, sources=sources,
                      intersection=intersection, title=title)
    for note in inputs.notes:
        typer.echo(f"note: {note}", err=True)
    for warning in built.warnings:
        typer.echo(f"warning: {warning}", err=True)
    for section in built.datasets:
        for warning in section.warnings:
            typer.echo(f"warning: {section.label}: {warning}", err=True)
    path = write_report(built, output)
    typer.echo(f"report written to {path} ({path.stat().st_size / 1024:,.0f} KiB)")

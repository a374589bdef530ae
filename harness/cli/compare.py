"""``harness compare``: several results side by side, with significance against a baseline."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from harness.cli import app
from harness.cli.options import (ALPHA_OPTION, INTERSECTION_OPTION, PERMUTATIONS_OPTION, RESAMPLES_OPTION,
                                 SEED_OPTION, TEST_OPTION, check_outputs, metric_items, refuse_outputs_over_inputs,
                                 refuse_missing_beside_stdin, refuse_stdin_twice, result_files, write_stdout_json)

DEFAULT_METRICS = ("NDCG@10", "Recall@100", "MRR@10")


@app.command()
def compare(
    results: List[str] = typer.Argument(..., help="Result folders, metrics.json files or TREC runs (with --qrels; "
                                                  "- reads one from stdin); NAME=PATH names one."),
    metric: Optional[List[str]] = typer.Option(None, "--metric", "-m",
                                               help="Metric to compare (repeatable or comma-separated; default "
                                                    "NDCG@10, Recall@100, MRR@10 where present)."),
    baseline: Optional[str] = typer.Option(None, "--baseline", "-b", help="Baseline system name (default: the first)."),
    qrels: Optional[Path] = typer.Option(None, "--qrels", help="Qrels for run files (TREC or BEIR tsv); - reads "
                                                               "stdin."),
    test: str = TEST_OPTION,
    alpha: float = ALPHA_OPTION,
    permutations: int = PERMUTATIONS_OPTION,
    resamples: int = RESAMPLES_OPTION,
    seed: int = SEED_OPTION,
    intersection: bool = INTERSECTION_OPTION,
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the comparison as JSON here (-: to stdout, "
                                                                  "the table then goes to stderr)."),
    markdown_out: Optional[Path] = typer.Option(None, "--markdown", help="Write the Markdown here."),
    plots: bool = typer.Option(False, "--plots", help="Write PNG plots beside the --json file."),
) -> None:
    """Compare RESULTS on the chosen metrics: Markdown table (best in bold), paired tests, Holm correction."""
    from harness.atomic import indented_json, write_text
    from harness.compare import Settings, align, compare as run_compare, load_system
    from harness.compare.load import unique_names
    from harness.compare.table import comparison_markdown, valid_json_text, valid_text
    from harness.errors import HarnessError

    if len(results) < 2:
        raise HarnessError("compare needs at least two results")
    if plots and (json_out is None or json_out == Path("-")):
        raise HarnessError("--plots writes beside the JSON: give --json PATH too")
    to_stdout = json_out == Path("-")
    check_outputs(markdown_out, None if to_stdout else json_out)
    settings = Settings(test=test, alpha=alpha, permutations=permutations, resamples=resamples, seed=seed)
    metric = metric_items(metric)
    wanted = list(metric or DEFAULT_METRICS)
    from harness.compare.load import is_run_argument, split_name
    from harness.formats.trec import read_once

    # (before standard input is read: every path is looked at, and --qrels - is refused where nothing reads it)
    runs = [is_run_argument(r) for r in results]
    if qrels is not None and not any(runs):  # (it evaluated nothing, silently)
        raise HarnessError("--qrels applies to run files only; every result given is evaluated already "
                           "(a result folder or metrics.json)")
    refuse_stdin_twice([("--qrels", qrels), *(("RESULTS", Path(split_name(r)[1])) for r in results)])
    refuse_missing_beside_stdin([(qrels, "qrels"), *((Path(split_name(r)[1]), "run") for r in results)])
    # (--qrels <(zcat q.gz): a pipe is read once, here, for every run file; the second read an empty pipe)
    raw = read_once(qrels, "qrels") if qrels is not None else None
    systems = [load_system(r, qrels=qrels, metrics=wanted, **({"qrels_raw": raw} if raw is not None else {}))
               for r in results]
    unique_names(systems)
    from harness.compare.check import failed_queries

    for system in systems:  # (check refuses such a result; a comparison shows it, saying so)
        failed = failed_queries(system)
        if failed:
            typer.echo(f"warning: {system.name} is a partial run: {len(failed)} of its queries failed and scored 0 "
                       "(retriever_stats.failed_queries)", err=True)
    refuse_outputs_over_inputs([("--json", None if to_stdout else json_out), ("--markdown", markdown_out)],
                               [*result_files(systems), *([qrels] if qrels is not None else [])])
    if not metric:  # the defaults that every result has
        wanted = [m for m in DEFAULT_METRICS if all(m in s.values for s in systems)]
        if not wanted:
            raise HarnessError(f"none of the default metrics ({', '.join(DEFAULT_METRICS)}) is in every result; "
                               "choose with --metric")
    aligned = align(systems, wanted, intersection=intersection)
    for warning in aligned.warnings:  # (a name or path of a folder that is not UTF-8: shown as U+FFFD)
        typer.echo(valid_text(f"warning: {warning}"), err=True)
    comparison = run_compare(aligned, baseline, settings)
    for warning in comparison.warnings:  # (a p-value that the random draws put on one side of alpha)
        typer.echo(valid_text(f"warning: {warning}"), err=True)
    markdown = comparison_markdown(comparison)
    typer.echo(valid_text(markdown), nl=False, err=to_stdout)
    if markdown_out:
        write_text(markdown_out, valid_text(markdown))
    if json_out:
        from harness.reports.document import plain_json
        from harness.reports.efficiency import summary

        # strict JSON: a NaN or infinite figure (a hand-edited or foreign metrics.json) is null, as in metrics.json
        speed = {s.name: plain_json(summary(s.document.efficiency))
                 for s in systems if s.document and s.document.efficiency}
        document = {**comparison.to_dict(), **({"efficiency": speed} if speed else {})}
        if to_stdout:
            write_stdout_json(valid_json_text(indented_json(document)) + "\n")
        else:
            write_text(json_out, valid_json_text(indented_json(document)) + "\n")  # write_json's text
        if plots:
            _plots(comparison, json_out.parent, json_out.stem)


def _plots(comparison, folder: Path, prefix: str) -> None:
    from harness.compare.plots import plot_metric_curves, plot_query_differences, slugs

    written = plot_metric_curves(comparison.aligned.systems, folder, prefix)
    base = comparison.baseline
    names = slugs(comparison.systems)  # one file per plot, whatever the names
    for (system, metric) in comparison.cells:
        d = comparison.aligned.of(system, metric) - comparison.aligned.of(base, metric)
        written.append(plot_query_differences(base, system, metric, d, folder, prefix, names))
    from harness.atomic import remove_abandoned

    for path in written:
        remove_abandoned(path.parent, path.name)  # the temporary file of a write of it that was killed (SIGKILL)
        typer.echo(f"plot written to {path}", err=True)

"""``harness bench CONFIG``: every dataset x retriever cell of a config, then a leaderboard."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from harness.cli import app


@app.command()
def bench(
    ctx: typer.Context,
    config: Path = typer.Argument(..., help="Benchmark config (TOML), e.g. configs/quickstart.toml."),
    output_dir: Optional[Path] = typer.Option(None, "--output-dir", "-o",
                                              help="Override the config's output_dir (results go to OUTPUT_DIR/<name>/)."),
    force: bool = typer.Option(False, "--force", help="Rerun every cell, even finished ones."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List the cells and which are finished; run nothing."),
    fail_fast: bool = typer.Option(False, "--fail-fast", help="Stop at the first failing cell."),
    quiet: bool = typer.Option(False, "--quiet", "-q",
                               help="No progress bars, per-cell lines, tables or warnings: the summary, and on "
                                    "stderr each failed cell's error and (as run -q) an http retriever's failed "
                                    "queries."),
    executor: Optional[str] = typer.Option(None, "--executor",
                                           help="Where cells run: local (default) or ray (one Ray task per cell; "
                                                "docs/ray.md). Overrides the kind in the config's executor table."),
    address: Optional[str] = typer.Option(None, "--address",
                                          help="Ray cluster to use with --executor ray: auto, ray://host:port "
                                               "(default: $RAY_ADDRESS, else a local Ray)."),
) -> None:
    """Run every cell (dataset x retriever) of CONFIG, reusing finished cells, and write the leaderboard."""
    from harness import progress
    from harness.bench import load_config, run_bench
    from harness.cli.display import hide_output, print_leaderboard
    from harness.cli.options import check_output_folder

    hide_output(ctx, quiet)  # (as run -q: other packages' bars and warnings, a cache not written)
    cfg = load_config(config)
    if output_dir is not None:
        cfg = cfg.with_output_dir(output_dir)
    if executor is not None or address is not None:
        cfg = cfg.with_executor(executor, address)
    check_output_folder(cfg.folder, "--output-dir" if output_dir is not None else f"{config}: output_dir",
                        writable=not dry_run)  # (a dry run writes nothing: it may plan a read-only folder)
    if address is not None and cfg.executor.kind != "ray":  # (the cells ran here, on no cluster, silently)
        from harness.errors import HarnessError

        raise HarnessError(f"--address {address}: used only with --executor ray (the executor is {cfg.executor.kind})")
    if not dry_run:  # the temporary leaderboard, report.html, bench.json... of a benchmark killed while writing them
        from harness.atomic import remove_abandoned

        remove_abandoned(cfg.folder)
    result = run_bench(cfg, force=force, fail_fast=fail_fast, dry_run=dry_run,
                       echo=None if quiet else progress.echo)
    if quiet:  # (no per-cell lines; a failed cell's error is still said, one line each on stderr, not only in
        # leaderboard.md: exit 1 with no reason was all a CI log showed)
        for outcome in result.failed:
            typer.echo(f"{outcome.cell.name}: failed: {outcome.error}", err=True)
    if dry_run:
        _warn(result, quiet)
        c = result.counts
        typer.echo(f"bench {cfg.name}: {len(result.outcomes)} cells ({c['reused']} finished, {c['pending']} to run, "
                   f"{c['failed']} failing); results in {result.folder}")
        raise typer.Exit(1 if result.failed else 0)
    if not quiet:
        for metric in cfg.metrics:
            print_leaderboard(result.board, metric)
    _warn(result, quiet)
    typer.echo(result.summary())
    if result.failed:
        raise typer.Exit(1)


def _warn(result, quiet: bool) -> None:
    """The cells' warnings on stderr, after the cells and their tables: ``warning: <cells>: <warning>``, one
    line per distinct warning (:meth:`harness.bench.runner.BenchResult.warnings`); with ``quiet``, as
    ``harness run -q``, only the HarnessWarnings issued while cells ran (an http retriever's failed queries)."""
    for line in result.warnings(issued_only=quiet):
        typer.echo(f"warning: {line}", err=True)

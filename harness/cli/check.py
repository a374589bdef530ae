"""``harness check``: gate a search stack on a committed baseline (exit 0 pass, 1 regression, 2 bad input)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from harness.cli import app
from harness.cli.options import (INTERSECTION_OPTION, check_outputs, given, metric_items,
                                 refuse_outputs_over_inputs, result_files, write_stdout_json)


@app.command()
def check(
    ctx: typer.Context,
    baseline: str = typer.Option(..., "--baseline", help="Baseline metrics.json (or its result folder)."),
    current: str = typer.Option(..., "--current", help="Current metrics.json (or its result folder)."),
    metric: Optional[List[str]] = typer.Option(None, "--metric", "-m", help="Metric to gate (repeatable or "
                                                                            "comma-separated; default NDCG@10)."),
    tolerance: Optional[List[str]] = typer.Option(
        None, "--tolerance", help="Largest mean change (absolute, in the metric's unit) that is never a regression: "
                                  "a number for every metric (default 0.005), or METRIC=NUMBER for one "
                                  "(repeatable or comma-separated: --tolerance 0.01,num_rel_ret=2)."),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level of the paired test."),
    test: str = typer.Option("randomization", "--test", help="Paired test: randomization or t."),
    permutations: int = typer.Option(10_000, "--permutations", help="Sign permutations of the randomization test."),
    seed: int = typer.Option(0, "--seed", help="Seed of the randomization test."),
    intersection: bool = INTERSECTION_OPTION,
    show: int = typer.Option(5, "--show", help="Queries that lost most, listed per regressed or noisy metric."),
    qrels: Optional[Path] = typer.Option(None, "--qrels", help="Qrels to mark judged documents in the listing "
                                                               "(default: the qrels the metrics name, if unchanged)."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the verdicts as JSON here (-: to stdout, "
                                                                  "the report then goes to stderr)."),
    github_summary: bool = typer.Option(False, "--github-summary",
                                        help="Append the verdict table (Markdown) to $GITHUB_STEP_SUMMARY."),
    junit: Optional[Path] = typer.Option(None, "--junit", help="Write JUnit XML here (one test case per metric)."),
    latency_tolerance: Optional[float] = typer.Option(
        None, "--latency-tolerance", help="Also gate latency: largest slowdown (0.2 = 20%) that is never a "
                                          "regression (needs the efficiency blocks; docs/compare.md)."),
    latency_metric: str = typer.Option("p95", "--latency-metric", help="Latency statistic of the gate: p50, p90, "
                                                                       "p95, p99 or mean."),
) -> None:
    """Gate CURRENT on BASELINE: a verdict per metric; exit 0 pass, 1 regression, 2 bad input.

    REGRESSED: mean drop > tolerance and p < alpha (exit 1). IMPROVED: gain > tolerance and p < alpha.
    NOISE: change > tolerance but p >= alpha. OK: change within tolerance.
    With --latency-tolerance: a latency verdict per stage; search REGRESSED (exit 1) when its
    latency statistic grew by more than the tolerance and the bootstrap interval of the ratio excludes 1.
    """
    from harness.atomic import indented_json, write_text
    from harness.compare import align, load_system, run_check
    from harness.compare.check import format_report, metric_tolerances, parse_tolerances
    from harness.compare.table import valid_json_text, valid_text
    from harness.errors import HarnessError

    if show < 0:
        raise HarnessError("--show must be >= 0")
    if permutations < 1:
        raise HarnessError("--permutations must be >= 1")
    if seed < 0:  # (numpy's generator refuses it with 'expected non-negative integer', naming no option)
        raise HarnessError("--seed must be >= 0")
    if latency_tolerance is not None and not 0 <= latency_tolerance < float("inf"):  # (NaN, inf: named here)
        raise HarnessError(f"--latency-tolerance must be >= 0 and finite, got {latency_tolerance}")
    from harness.compare.latency import STATISTICS, check_latency

    if latency_metric not in STATISTICS:
        raise HarnessError(f"--latency-metric must be one of {', '.join(STATISTICS)}, got {latency_metric!r}")
    if latency_tolerance is None and given(ctx, "latency_metric"):
        # (without the tolerance no latency is gated: a gate on p99 that the user believed in would pass silently)
        raise HarnessError("--latency-metric applies only with --latency-tolerance (the latency gate)")
    default_tolerance, own_tolerances = parse_tolerances(tolerance or [])
    to_stdout = json_out == Path("-")
    if to_stdout:
        json_out = None
    check_outputs(json_out, junit)
    metrics = list(dict.fromkeys(metric_items(metric) or ["NDCG@10"]))
    for role, argument in (("baseline", baseline), ("current", current)):
        path = Path(argument)
        if argument == "-" or (path.exists() and not path.is_dir() and path.suffix != ".json"):  # (- : a run)
            raise HarnessError(f"--{role} takes a metrics.json or a result folder, got {argument}")
    base = load_system(f"baseline={baseline}")
    cur = load_system(f"current={current}")
    from harness.compare.check import refuse_partial

    for role, system in (("baseline", base), ("current", cur)):
        refuse_partial(system, role)  # (failed queries scored 0: the gate must not pass on a partial run)
    refuse_outputs_over_inputs([("--json", json_out), ("--junit", junit)],
                               [*result_files([base, cur]), *([qrels] if qrels is not None else [])])
    aligned = align([base, cur], metrics, intersection=intersection)
    tolerances = metric_tolerances(own_tolerances, aligned, aligned.metrics)
    judgments = _judgments(qrels, cur, base) if show else None
    result = run_check(aligned, aligned.metrics, tolerance=0.005 if default_tolerance is None else default_tolerance,
                       alpha=alpha, test=test, permutations=permutations, seed=seed, show=show, qrels=judgments,
                       tolerances=tolerances)
    if latency_tolerance is not None:
        result.latency = check_latency(base, cur, latency_metric, latency_tolerance, alpha=alpha, seed=seed)
    # (a lone surrogate, from a '\ud800' escape in a metrics file's query id, cannot be written as UTF-8: the
    # report shows it as U+FFFD and the JSON as its escape, as harness compare does)
    typer.echo(valid_text(format_report(result, baseline, current)), nl=False, err=to_stdout)
    document = valid_json_text(indented_json(result.to_dict())) + "\n"
    if to_stdout:
        write_stdout_json(document)
    if json_out:
        write_text(json_out, document)  # (write_json's text)
    _ci_reports(result, baseline, current, github_summary, junit)
    raise typer.Exit(result.exit_code)


def _ci_reports(result, baseline: str, current: str, github_summary: bool, junit: Optional[Path]) -> None:
    """--junit FILE (written atomically) and --github-summary (appended, as GitHub Actions expects)."""
    import os

    from harness.atomic import write_text
    from harness.compare import ci

    if junit:
        write_text(junit, ci.junit_xml(result, baseline, current))
    if github_summary:
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if not summary:
            typer.echo("warning: --github-summary: GITHUB_STEP_SUMMARY is not set (not in GitHub Actions); "
                       "no summary written", err=True)
            return
        from harness.compare.table import valid_text

        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(valid_text(ci.github_summary(result, baseline, current)))


def _judgments(explicit: Optional[Path], *systems) -> dict | None:
    """``{query: {doc: grade}}`` from --qrels, else from the qrels a metrics file names (if unchanged)."""
    from harness.compare.load import find_qrels
    from harness.formats.trec import read_qrels

    if explicit is not None:
        return read_qrels(explicit).to_dict()
    for system in systems:
        path = find_qrels(system)
        if path is not None:
            try:
                return read_qrels(path).to_dict()
            except Exception:  # noqa: BLE001 - the annotation is optional
                return None
    return None

"""``harness fuse``: fuse TREC runs (RRF, CombSUM, ...), optionally tuning k / weights on dev qrels."""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Optional

import typer

from harness.cli import app
from harness.cli.options import (KEEP_IDENTICAL_IDS_OPTION, RELEVANCE_THRESHOLD_OPTION, SEMANTICS_OPTION, check_outputs,
                                  given, input_name, read_pipes, refuse_missing_beside_stdin,
                                  refuse_outputs_over_inputs, refuse_stdin_twice)
from harness.errors import HarnessError


_NUMBER = {int: re.compile(r"[+-]?[0-9]+"), float: re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")}


def _numbers(text: str | None, option: str, kind: type) -> list | None:
    """Comma-separated ASCII numbers (blanks around each ignored; "" is none). An empty item, ``1_0``
    (Python's 10), ``nan`` and non-ASCII digits are refused: a weight is the weight of the run in its
    position, and ``0.7,,0.3`` was read as two weights."""
    if text is None:
        return None
    parts = [part.strip() for part in text.split(",")]
    if parts == [""]:
        return []
    if not all(_NUMBER[kind].fullmatch(part) for part in parts):
        example = "0.7,0.3" if kind is float else "10,20,30"
        raise HarnessError(f"{option} takes comma-separated numbers, e.g. {example}; got {text!r}")
    return [kind(part) for part in parts]


def _query_sets_differ(runs, names: list[str]) -> str | None:
    """A warning when the runs do not hold the same queries (ranx's fuse refuses such runs; here each query
    is fused over the runs holding it, as documented): how many are in every run, and each run's count.
    Runs of different datasets or splits share few queries or none."""
    sets = [set(r.query_ids.tolist()) for r in runs]
    union, common = set().union(*sets), set.intersection(*sets)
    if len(common) == len(union):
        return None
    counts = ", ".join(f"{name} {len(found):,}" for name, found in zip(names, sets))
    return (f"the runs hold different queries ({counts}; {len(common):,} of {len(union):,} in every run): "
            + ("no query is in every run (runs of different datasets or splits?); " if not common else "")
            + "a query is fused over the runs that hold it, a run without it adds nothing")


def _check_outputs_apart(output: Path, json_out: Path | None, inputs: list[Path]) -> None:
    """Refuse, before any work, ``--json`` naming the ``-o`` file (the settings replaced the fused run,
    exit 0) and an output that is one of the input files (writing it would replace the user's run or
    qrels, whose recorded sha256 would then name a file that is gone)."""
    if json_out is not None and json_out.resolve() == output.resolve():
        raise HarnessError(f"--json {json_out}: is the --output file; the settings would replace the fused run")
    refuse_outputs_over_inputs([("--output", output), ("--json", json_out)], inputs)


def _settings_of_an_earlier_fusion(output: Path) -> Path | None:
    """``<output>.json`` when it is the settings file an earlier ``harness fuse --optimize`` wrote beside
    ``output`` (its keys ``fusion``, ``runs`` and ``output``): a fusion written without settings then
    leaves no file describing another run beside it (an rrf k=10 optimisation's, beside a combsum run).
    Settings whose ``output`` is another file that exists (``-o other --json <output>.json``) describe
    that file: they are left alone."""
    import json
    import os

    path = output.with_name(output.name + ".json")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (isinstance(document, dict) and {"fusion", "runs", "output"} <= document.keys()):
        return None
    named = document["output"]
    try:
        if isinstance(named, str) and os.path.exists(named) and not (output.exists()
                                                                     and os.path.samefile(named, output)):
            return None  # (another run's settings, which --json put here)
    except (OSError, ValueError):  # (a name that is no path: not this output's settings either)
        return None
    return path


def _file_entry(path: Path, once: dict[Path, bytes]) -> dict:
    """The input's path and sha256: of the bytes read from it when it is a pipe (``once``), which
    cannot be read a second time (its checksum was that of nothing: e3b0c442...)."""
    import hashlib

    from harness.checksums import sha256

    return {"path": input_name(path),
            "sha256": hashlib.sha256(once[path]).hexdigest() if path in once else sha256(path)}


def _named_split(qrels: Path) -> str | None:
    """The split the name of the ``--qrels`` file gives (``dev.tsv``: ``dev``); None for standard input
    (``-``) and a pipe (``<(zcat dev.tsv.gz)``: ``/dev/fd/63``), whose names say nothing of their split
    (``cat test.tsv | harness fuse --optimize --qrels -`` tuned on the test split, recorded as split ``-``)."""
    import stat

    from harness.formats.trec import is_stdin

    if is_stdin(qrels):
        return None
    try:
        mode = qrels.stat().st_mode
    except OSError:  # (the qrels reader names it)
        return qrels.stem
    return None if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode) else qrels.stem


# (parameter, option) of the settings only --optimize reads: given without it they would change nothing
OPTIMIZE_ONLY = (("metric", "--metric"), ("split", "--split"), ("allow_test_split", "--allow-test-split"),
                 ("step", "--step"), ("k_grid", "--k-grid"), ("relevance_threshold", "--relevance-threshold"))


@app.command()
def fuse(
    ctx: typer.Context,
    run: List[Path] = typer.Option(..., "--run", help="TREC run to fuse (repeat for each run, at least two; - reads "
                                                      "stdin)."),
    output: Path = typer.Option(..., "--output", "-o", help="Fused TREC run to write."),
    method: str = typer.Option("rrf", "--method",
                               help="rrf, combsum, combmnz, combmax, combmin or wsum (ranx's names also work)."),
    norm: Optional[str] = typer.Option(None, "--norm",
                                       help="Score normalisation per run and query: none, min-max, max, sum, "
                                            "zmuv (z-score) or rank (default: none for rrf, which uses ranks "
                                            "only, min-max otherwise)."),
    k: Optional[int] = typer.Option(None, "--k", help="RRF's rank constant (default 60)."),
    weights: Optional[str] = typer.Option(None, "--weights",
                                          help="One weight per run, comma-separated (rrf and wsum only)."),
    depth: int = typer.Option(1000, "--depth", help="Documents kept per query in the fused run."),
    tag: Optional[str] = typer.Option(None, "--tag", help="Run tag written in the 6th column (default: the method)."),
    optimize: bool = typer.Option(False, "--optimize",
                                  help="Grid-search RRF's k or wsum's weights on --qrels before fusing."),
    qrels: Optional[Path] = typer.Option(None, "--qrels", help="Training/dev qrels for --optimize (TREC or BEIR tsv)."),
    metric: str = typer.Option("NDCG@10", "--metric", help="Metric that --optimize maximises."),
    split: Optional[str] = typer.Option(None, "--split",
                                        help="Name of the --qrels split (default: the qrels file name, e.g. dev; "
                                             "required for - or a pipe)."),
    allow_test_split: bool = typer.Option(False, "--allow-test-split",
                                          help="Allow --optimize on the test split (optimistic scores)."),
    step: float = typer.Option(0.1, "--step", help="Weight grid step of --optimize for wsum."),
    k_grid: Optional[str] = typer.Option(None, "--k-grid", help="RRF k values --optimize tries (default 10,20,...,100)."),
    json_out: Optional[Path] = typer.Option(None, "--json",
                                            help="Write the fusion settings (and the optimisation) as JSON here "
                                                 "(default with --optimize: OUTPUT.json)."),
    keep_identical_ids: bool = KEEP_IDENTICAL_IDS_OPTION,
    relevance_threshold: float = RELEVANCE_THRESHOLD_OPTION,
    semantics: str = SEMANTICS_OPTION,
) -> None:
    """Fuse two or more TREC runs into OUTPUT (canonical order: score desc, ties by doc id desc)."""
    from harness.atomic import write_json
    from harness.formats.trec import check_writable_ids, read_qrels, read_run, write_run
    from harness.fusion import FusionSpec, fuse_runs
    from harness.fusion.spec import INT64_MAX, ignored_norm
    from harness.fusion.optimize import (RRF_K_GRID, check_split, optimize as run_optimize, single_metric_evaluator,
                                         tie_warning, tuned_parameter, weight_grid)

    # Everything the options decide is checked before any file is read or written.
    from harness.evaluation.semantics import parse_semantics

    order = parse_semantics(semantics)  # the evaluator's order: the --depth cut follows it
    spec = FusionSpec.create(method, norm, k, _numbers(weights, "--weights", float), depth)
    if len(run) < 2:
        raise HarnessError(f"fusion needs at least two --run files, got {len(run)}")
    spec.weights_for(len(run))
    k_values = _numbers(k_grid, "--k-grid", int) or list(RRF_K_GRID)
    if k_grid is not None and not _numbers(k_grid, "--k-grid", int):  # ("" tried the default grid, silently)
        raise HarnessError(f"--k-grid takes comma-separated integers, e.g. 10,20,50; got {k_grid!r}")
    if max(k_values) > INT64_MAX:  # (--k and --depth: FusionSpec.create checks them)
        raise HarnessError(f"--k-grid takes values up to 2^63 - 1, got {max(k_values)}")
    if optimize:
        if qrels is None:
            raise HarnessError("--optimize needs --qrels (training or dev judgments)")
        tuned = tuned_parameter(spec)
        if tuned == "weights":
            weight_grid(len(run), step)
        unused = "--k-grid" if tuned == "weights" else "--step"  # (wsum tunes weights, rrf its k)
        if given(ctx, unused.lstrip("-").replace("-", "_")):
            raise HarnessError(f"{unused} does not apply to --optimize of {spec.method}, which tunes its {tuned}")
        if given(ctx, tuned):  # (the value given was replaced by the grid's best, silently)
            raise HarnessError(f"--{tuned} does not apply with --optimize, which tunes {spec.method}'s {tuned} "
                               f"({'--k-grid' if tuned == 'k' else '--step'}); give one or the other")
        single_metric_evaluator(metric)
        named = _named_split(qrels)
        if named is None and split is None:  # (the test-split guard has no name to read)
            raise HarnessError(f"--qrels {qrels}: standard input or a pipe has no file name to read the split "
                               "from; name it with --split (e.g. --split dev)")
        split = split or named
        for name in dict.fromkeys(filter(None, [split, named])):
            check_split(name, allow_test_split)
        if min(k_values) < 0:
            raise HarnessError(f"--k-grid values must be >= 0; got {k_grid!r}")
    elif qrels is not None:
        raise HarnessError("--qrels is used only with --optimize")
    elif unused := [option for name, option in OPTIMIZE_ONLY if given(ctx, name)]:
        raise HarnessError(f"{', '.join(unused)}: used only with --optimize (which is not given)")
    json_target = json_out or (output.with_name(output.name + ".json") if optimize else None)
    check_outputs(output, json_target)
    _check_outputs_apart(output, json_target, [*run, *([qrels] if qrels is not None else [])])
    refuse_stdin_twice([*(("--run", r) for r in run), ("--qrels", qrels)])
    refuse_missing_beside_stdin([*((r, "run") for r in run), (qrels, "qrels")])
    # pipes (--run <(zcat r.gz)) can be read once: parsed and hashed from these bytes
    once = read_pipes([*((r, "run") for r in run), *([(qrels, "qrels")] if qrels is not None else [])])
    runs = [read_run(path, once.get(path)) for path in run]
    if not keep_identical_ids:  # the runs as the evaluator sees them (as a pipeline's retrieve stages give
        runs = [r.without_identical_ids() for r in runs]  # them): the --depth slots go to documents it counts
    differ = _query_sets_differ(runs, [input_name(path) for path in run])
    if differ:
        typer.echo(f"warning: {differ}", err=True)
    if ignored_norm(spec):  # (as ranx takes it: told, not refused; once every input is known good)
        typer.echo(f"warning: --norm {spec.norm} {ignored_norm(spec)}", err=True)
    document = {"fusion": spec.to_dict(), "semantics": order.name, "identical_ids": "kept" if keep_identical_ids
                else "dropped", "runs": [_file_entry(path, once) for path in run]}
    if optimize:
        result = run_optimize(runs, read_qrels(qrels, once.get(qrels)), spec, metric, split=split,
                              allow_test_split=allow_test_split, step=step, k_values=k_values,
                              relevance_threshold=relevance_threshold, ignore_identical_ids=not keep_identical_ids,
                              semantics=order)
        spec = result.spec
        chosen = ", ".join(f"{key}={value}" for key, value in result.chosen.items())
        typer.echo(f"optimised on {result.split} ({input_name(qrels)}): {chosen}  {result.metric} = "
                   f"{result.score:.6f} ({len(result.trials)} trials)")
        tied = tie_warning(result.to_dict())  # (the last of them is chosen, as ranx: not presented as the optimum)
        if tied:
            typer.echo(f"warning: {tied}", err=True)
        document = {"fusion": spec.to_dict(), "semantics": order.name, "identical_ids": document["identical_ids"],
                    "runs": document["runs"],
                    "optimization": {**result.to_dict(), "relevance_threshold": float(relevance_threshold),
                                     "qrels": _file_entry(qrels, once)}}
        json_out = json_out or output.with_name(output.name + ".json")
    fused = fuse_runs(runs, spec, order)
    stale = json_out or _settings_of_an_earlier_fusion(output)
    if stale:  # an earlier fusion's settings must not outlive (or sit beside) a write of this run
        check_writable_ids([tag or spec.method], "run tag")  # (what write_run refuses: refused before the unlink)
        stale.unlink(missing_ok=True)
        if not json_out:
            typer.echo(f"removed {stale}: the settings of an earlier fusion into {output}", err=True)
    write_run(fused, output, tag=tag or spec.method)
    if json_out:
        write_json(json_out, {**document, "output": str(output), "n_queries": fused.n_queries})
        typer.echo(f"settings written to {json_out}")
    typer.echo(f"fused {len(runs)} runs ({spec.method}, norm {spec.norm}) into {output}: "
               f"{fused.n_queries} queries, {len(fused)} entries")

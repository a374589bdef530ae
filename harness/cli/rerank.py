"""``harness rerank``: rescore the top ``depth`` of a first-stage TREC run with a reranker."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from harness.cli import app
from harness.cli.display import print_metrics
from harness.cli.options import (K_OPTION, KEEP_IDENTICAL_IDS_OPTION, METRIC_OPTION, RELEVANCE_THRESHOLD_OPTION,
                                  SEMANTICS_OPTION, build_evaluator, check_outputs, close_when_done, given,
                                  parse_params, refuse_outputs_over_inputs)
from harness.datasets import DEFAULT_DATASET


@app.command()
def rerank(
    ctx: typer.Context,
    run: Path = typer.Option(..., "--run", help="First-stage TREC run (qid Q0 docid rank score tag); - reads stdin."),
    output: Path = typer.Option(..., "--output", "-o", help="Where the reranked TREC run goes (written atomically)."),
    dataset: str = typer.Option(DEFAULT_DATASET, "--dataset", "-d", help="Dataset name or BEIR folder path."),
    reranker: str = typer.Option(..., "--reranker", "-r", help="Reranker name (cross-encoder, bi-encoder) "
                                                                  "or module:Class."),
    param: Optional[List[str]] = typer.Option(None, "--param", "-p", help="Reranker parameter key=value."),
    depth: int = typer.Option(100, "--depth", help="Candidates reranked per query (the rest are dropped)."),
    split: Optional[str] = typer.Option(None, "--split", help="Qrels split (its judged queries are the dataset's; "
                                        "default: its evaluation split: test; dev for msmarco)."),
    evaluate: bool = typer.Option(False, "--evaluate", help="Print the metric table of the reranked run."),
    k: Optional[str] = K_OPTION,
    keep_identical_ids: bool = KEEP_IDENTICAL_IDS_OPTION,
    relevance_threshold: float = RELEVANCE_THRESHOLD_OPTION,
    metric: Optional[List[str]] = METRIC_OPTION,
    semantics: str = SEMANTICS_OPTION,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars; print only the line 'reranked run "
                                                            "written to FILE'."),
) -> None:
    """Rerank the top DEPTH documents of each query of RUN with RERANKER and write the new run."""
    from harness import progress
    from harness.datasets import load_dataset
    from harness.formats.trec import STDIN_NAME, is_stdin, read_once, read_run, write_run
    from harness.registry import create_reranker

    from harness.cli.display import hide_output

    hide_output(ctx, quiet)
    if not 1 <= depth <= 2**63 - 1:  # (ranks and counts are int64, as harness run's --depth)
        raise typer.BadParameter("--depth must be >= 1 and at most 2^63 - 1")
    evaluator, k_values = build_evaluator(k, metric, relevance_threshold, keep_identical_ids, semantics)
    if evaluate and quiet:  # (the table --evaluate prints is what --quiet silences: nothing was evaluated)
        raise typer.BadParameter("--evaluate prints a table and --quiet prints only the output path; give one")
    unused = [option for name, option in (("k", "--k"), ("metric", "--metric"),
                                          ("relevance_threshold", "--relevance-threshold")) if given(ctx, name)]
    if unused and not evaluate:
        raise typer.BadParameter(f"{', '.join(unused)}: used only with --evaluate (which is not given)")
    check_outputs(output)
    refuse_outputs_over_inputs([("--output", output)], [run])
    system = create_reranker(reranker, **parse_params(param, reranker, reranker=True))
    close_when_done(ctx, system)
    _known_dataset(dataset, split)  # (before standard input is read: a slow producer's run, then a typo)
    raw = read_once(run, "run")  # standard input or a pipe: read once, parsed, and searched for an error's line
    first_stage = read_run(run, raw)
    with progress.task(f"loading {dataset}"):
        ds = load_dataset(dataset, split)
    if evaluate:
        evaluator.refuse_no_relevant(ds.qrels)  # (before the reranking)
    with progress.task(f"reranking {first_stage.n_queries:,} queries ({system.name}, depth {depth})"):
        source = STDIN_NAME if is_stdin(run) else run  # (errors name <stdin>:LINE)
        extra = {"source_data": raw} if raw is not None and _takes(system.rerank, "source_data") else {}
        reranked = system.rerank(first_stage, ds.queries, ds.corpus, depth, source=source,
                                  ignore_identical_ids=evaluator.ignore_identical_ids, semantics=evaluator.semantics,
                                  **extra)
    write_run(reranked, output, tag=system.name)
    if not quiet:  # (no metrics.json records the reranker's stats here: the one place to say it)
        _say_reused_versions(system)
    if evaluate and not quiet:
        from harness.evaluation import depth_warning

        # the reranked run holds the top --depth only: a cutoff past it is computed on those documents, as
        # harness run warns for its --depth (a pipeline's rerank stage is the same run)
        warning = depth_warning(depth, k_values, evaluator.metrics)
        if warning:
            typer.echo(f"warning: {warning}", err=True)
        result = evaluator.evaluate(reranked, ds.qrels)
        print_metrics(result.means, title=f"{ds.name} ({ds.split}) - {system.name} @{depth}: {result.n_queries} queries")
        from harness.cli.display import note_missing

        note_missing(result)
    typer.echo(f"reranked run written to {output}")


def _say_reused_versions(system) -> None:
    """One ``warning:`` line when the reranker reused cached work (a bi-encoder's embeddings) that other versions
    of the libraries computing it wrote (its stats' ``*_versions``: docs/cache.md)."""
    from harness.reports.document import plain_json
    from harness.versions import reused_versions_warning

    stats = getattr(system, "stats", None)
    warning = reused_versions_warning(plain_json(stats()) if callable(stats) else None, f"reranker {system.name!r}",
                                      "give the reranker a cache_dir of its own (or cache=false) to compute it again")
    if warning:
        typer.echo(f"warning: {warning}", err=True)


def _known_dataset(dataset: str, split: str | None) -> None:
    """Refuse a local dataset that :func:`harness.datasets.resolve` finds no folder of (a typo in a name or
    a path) before the run is read, in the loader's words: ``cat run | harness rerank --run - -d scifcat``
    read the whole run from standard input first. Registered and remote datasets (which may download) are
    left to the load."""
    from harness.datasets import DatasetRef, resolve

    ref = DatasetRef.parse(dataset)
    if ref.remote is None and ref.info is None:
        resolve(ref, download=False, split=split)


def _takes(method, name: str) -> bool:
    """Whether ``method`` takes the keyword ``name``: a plugin that overrides ``rerank()`` with the signature
    it had before ``source_data`` (the bytes of a run read from standard input, for the line an error names)
    is called without it, as before, rather than failing with a TypeError."""
    import inspect

    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)

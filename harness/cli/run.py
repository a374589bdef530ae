"""``harness run``: a retriever on a dataset, evaluated and reported."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import List, Optional

import typer

from harness.cli import app
from harness.cli.display import hide_output, print_metrics
from harness.cli.options import (K_OPTION, KEEP_IDENTICAL_IDS_OPTION, METRIC_OPTION, RELEVANCE_THRESHOLD_OPTION,
                                  SEMANTICS_OPTION, build_evaluator, check_output_folder, close_when_done, given,
                                  parse_params)
from harness.datasets import DEFAULT_DATASET
from harness.errors import HarnessError


@app.command()
def run(
    ctx: typer.Context,
    dataset: str = typer.Option(DEFAULT_DATASET, "--dataset", "-d", help="Dataset name or BEIR folder path."),
    retriever: str = typer.Option("bm25", "--retriever", "-r", help="Retriever name or module:Class."),
    param: Optional[List[str]] = typer.Option(None, "--param", "-p", help="Retriever parameter key=value."),
    k: Optional[str] = K_OPTION,
    split: Optional[str] = typer.Option(None, "--split", help="Qrels split (default: the dataset's evaluation "
                                        "split: test; dev for msmarco)."),
    depth: Optional[int] = typer.Option(None, "--depth", help="Documents retrieved per query (default: the largest "
                                                              "cutoff of --k and -m; at least 1000 with AP, R-Prec "
                                                              "or bpref)."),
    output_dir: Path = typer.Option(Path("results"), "--output-dir", "-o", help="Where result folders go."),
    name: Optional[str] = typer.Option(None, "--name", help="Result folder name (default: retriever name)."),
    keep_identical_ids: bool = KEEP_IDENTICAL_IDS_OPTION,
    relevance_threshold: float = RELEVANCE_THRESHOLD_OPTION,
    semantics: str = SEMANTICS_OPTION,
    metric: Optional[List[str]] = METRIC_OPTION,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars, warnings or table; print only the "
                                                            "line 'results written to FOLDER' (and errors, a "
                                                            "deprecated name you typed, and an http retriever's "
                                                            "failed queries)."),
    pipeline: Optional[Path] = typer.Option(None, "--pipeline",
                                            help="Pipeline TOML (retrieve / fuse / rerank stages) to run instead "
                                                 "of --retriever; see docs/pipelines.md."),
) -> None:
    """Index DATASET with RETRIEVER, search its queries, evaluate and write a result folder."""
    from harness import progress
    from harness.datasets import DatasetRef, load_dataset
    from harness.experiment import run_experiment
    from harness.registry import create

    hide_output(ctx, quiet)
    evaluator, k_values = build_evaluator(k, metric, relevance_threshold, keep_identical_ids, semantics)
    if depth is not None and not 1 <= depth <= 2**63 - 1:  # (ranks and counts are int64, as for --k)
        raise typer.BadParameter("--depth must be >= 1 and at most 2^63 - 1")
    check_output_folder(output_dir, "--output-dir", writable=True)
    if name is not None and not _folder_name(name):
        # "", ".", "..", "../x", "/x": the result files would land beside or above the dataset's result folders
        raise HarnessError(f"--name names the result folder inside {output_dir}/<dataset>/; got {name!r}")
    if pipeline is not None:
        if param:
            raise typer.BadParameter("--param does not apply with --pipeline (stages carry their own params)")
        if given(ctx, "retriever"):  # (the pipeline ran, not the retriever asked for)
            raise typer.BadParameter("--retriever does not apply with --pipeline (stages name their retrievers)")
        return _run_pipeline(ctx, pipeline, dataset, split, evaluator, k_values, depth, output_dir, name, quiet)
    params = parse_params(param, retriever)
    system = create(retriever, **params)
    close_when_done(ctx, system)  # (its close(), once the result is written or the run failed)
    if name is None and not _folder_name(system.name):  # the default folder name: the retriever's (a plugin's) name
        raise HarnessError(f"retriever {retriever!r} is named {system.name!r}, which cannot name a result folder "
                           f"inside {output_dir}/<dataset>/: give one with --name")
    ref = DatasetRef.parse(dataset)
    with progress.task(f"loading {ref.text}"):
        ds = load_dataset(ref, split)
    folder = output_dir / ds.name / (name or system.name)
    # (-r run-file -p path=results/x/bm25/run.trec --name bm25: the user's run was replaced by its top --depth)
    _refuse_result_files_as_inputs(folder, params.values())
    if not quiet:
        _warn_replacing(folder, {"name": system.name, "params": system.params()}, ds.split)
    with _replacing_warned():
        exp = run_experiment(ds, system, evaluator, k_values, depth=depth, output_dir=folder)
    if not quiet:
        for warning in exp.document.warnings or ():
            typer.echo(f"warning: {warning}", err=True)
        print_metrics(exp.result.means, title=f"{ds.name} ({ds.split}) - {system.name}: {exp.result.n_queries} queries")
        _notes(exp.result, evaluator)
    typer.echo(f"results written to {folder}")


def _notes(result, evaluator) -> None:
    """What harness evaluate notes too: judged queries the run has no document for (they score 0), and
    queries left out for want of a document judged relevant (at --relevance-threshold 2, those judged 1)."""
    from harness.cli.display import note_left_out, note_missing

    note_missing(result)
    note_left_out(result, evaluator.relevance_threshold)


def _refuse_result_files_as_inputs(folder: Path, values) -> None:
    """Refuse string parameters that name one of the result files ``folder`` is about to get."""
    from harness.reports.writer import result_file_named

    found = result_file_named(folder, ((None, value) for value in values))
    if found is not None:
        _, value, out = found
        raise HarnessError(f"--output-dir {out}: is the input file {Path(os.path.expanduser(value))}; "
                           "writing there would replace it")


def _warn_replacing(folder: Path, retriever: dict, split: str) -> None:
    """Warn, before the run, when ``folder`` holds the result of another system: another retriever (or
    pipeline), other parameters or another split, which this run's files replace (``-p k1=1.2`` and then
    a plain ``harness run`` left one folder, with the second's numbers). A rerun of the same system replaces
    it silently; a folder without a readable metrics.json is not looked into. (run_experiment and run_pipeline
    issue the same as a ReplacedResultWarning, which :func:`_replacing_warned` keeps from being printed twice.)"""
    from harness.reports.replacing import replaced_differences

    differ = replaced_differences(folder, retriever, split)
    if differ:
        typer.echo(f"warning: {folder} holds the result of another run ({differ}), which this run "
                   "replaces: give --name to keep both", err=True)


@contextmanager
def _replacing_warned():
    """While the run writes its folder: the library's ReplacedResultWarning left out (this command printed its
    own line, with its own hint, or was asked to be quiet)."""
    import warnings

    from harness.reports.replacing import ReplacedResultWarning

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=ReplacedResultWarning)
        yield


def _refuse_stdin_twice(spec) -> None:
    """Refuse, before anything is read, two ``run-file`` stages replaying standard input (``path = "-"``):
    it can be read once (the second found it at its end: an empty run)."""
    from harness.formats.trec import is_stdin
    from harness.registry import ENTRY_POINT_GROUP, component_class

    named = [stage.name for stage in spec.stages if stage.type == "retrieve" and is_stdin(stage.params.get("path"))
             and getattr(component_class(stage.component, ENTRY_POINT_GROUP), "name", None) == "run-file"]
    if len(named) > 1:
        raise HarnessError(f"stages {named[0]!r} and {named[1]!r} both replay path = \"-\": standard input can be "
                           "read once; give the other as a file")


def _folder_name(name) -> bool:
    """Whether ``name`` names a folder inside the dataset's result folder (not "", ".", "..", "../x", "/x")."""
    parts = Path(name).parts if isinstance(name, str) else ()
    return bool(parts) and ".." not in parts and not Path(name).is_absolute()


def _run_pipeline(ctx: typer.Context, path: Path, dataset: str, split: str | None, evaluator, k_values: list[int],
                  depth: int | None, output_dir: Path, name: str | None, quiet: bool) -> None:
    from harness import progress
    from harness.datasets import DatasetRef, load_dataset
    from harness.pipeline import load_pipeline, run_pipeline
    from harness.evaluation import default_depth
    from harness.pipeline.run import create_components, rerank_depths

    spec = load_pipeline(path)  # every stage checked before the dataset is loaded
    _refuse_stdin_twice(spec)
    rerank_depths(spec, depth or default_depth(k_values, evaluator.metrics))  # (a depth no input holds)
    components = create_components(spec)  # (their constructors' refusals too, as harness run's for its retriever)
    close_when_done(ctx, *components.values())
    ref = DatasetRef.parse(dataset)
    with progress.task(f"loading {ref.text}"):
        ds = load_dataset(ref, split)
    folder = output_dir / ds.name / (name or spec.name)
    _refuse_result_files_as_inputs(folder, (value for stage in spec.stages for value in stage.params.values()))
    if not quiet:
        from harness.pipeline.run import recorded_system

        _warn_replacing(folder, recorded_system(spec), ds.split)
    with _replacing_warned():
        exp, outcomes = run_pipeline(ds, spec, evaluator, k_values, depth=depth, output_dir=folder,
                                      components=components)
    if not quiet:
        for warning in exp.document.warnings or ():
            typer.echo(f"warning: {warning}", err=True)
        first = "NDCG@10" if "NDCG@10" in exp.document.metrics else next(iter(exp.document.metrics), None)
        for outcome in outcomes:
            value = outcome.result.means.get(first) if first else None
            shown = f"{first} {value:.4f}" if value is not None else ""
            typer.echo(f"stage {outcome.stage.name} ({outcome.stage.type}): cache {outcome.status}  {shown}")
        print_metrics(exp.result.means, title=f"{ds.name} ({ds.split}) - {spec.name}: {exp.result.n_queries} queries")
        _notes(exp.result, evaluator)
    typer.echo(f"results written to {folder}")

"""``harness evaluate``: any TREC run against TREC or BEIR qrels."""

from __future__ import annotations

import time
from pathlib import Path
from typing import List, Optional

import typer

from harness.cli import app
from harness.cli.display import print_metrics
from harness.cli.options import (K_OPTION, KEEP_IDENTICAL_IDS_OPTION, METRIC_OPTION, RELEVANCE_THRESHOLD_OPTION,
                                  build_evaluator)


@app.command()
def evaluate(
    qrels: Path = typer.Option(..., "--qrels", help="Qrels: TREC (qid iter docid grade) or BEIR tsv."),
    run: Path = typer.Option(..., "--run", help="TREC run (qid Q0 docid rank score tag)."),
    k: Optional[str] = K_OPTION,
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write metrics.json here."),
    markdown_out: Optional[Path] = typer.Option(None, "--markdown", help="Write the Markdown table here."),
    keep_identical_ids: bool = KEEP_IDENTICAL_IDS_OPTION,
    relevance_threshold: float = RELEVANCE_THRESHOLD_OPTION,
    metric: Optional[List[str]] = METRIC_OPTION,
) -> None:
    """Evaluate a TREC run file and print the metric table."""
    from harness.atomic import write_json, write_text
    from harness.checksums import sha256
    from harness.formats.trec import read_qrels, read_run
    from harness.reports import MetricsDocument, metrics_table

    evaluator, k_values = build_evaluator(k, metric, relevance_threshold, keep_identical_ids)
    start = time.perf_counter()
    judgments, ranking = read_qrels(qrels), read_run(run)
    loaded = time.perf_counter()
    result = evaluator.evaluate(ranking, judgments)
    timings = {"load_s": loaded - start, "evaluate_s": time.perf_counter() - loaded}
    print_metrics(result.means, title=f"{run.name}: {result.n_queries} queries")
    if result.n_missing_from_run:
        typer.echo(f"note: {result.n_missing_from_run} judged queries are missing from the run and score 0", err=True)
    if json_out:
        document = MetricsDocument.build(
            result, dataset={"name": qrels.name, "split": None, "files": {str(qrels): sha256(qrels)},
                             "n_docs": None, "n_queries": result.n_queries},
            retriever={"name": "run-file", "params": {"path": str(run), "sha256": sha256(run)}},
            k_values=k_values, depth=None, timings=timings)
        write_json(json_out, document.to_json())
    if markdown_out:
        write_text(markdown_out, metrics_table(result.means, title=run.name))

"""``harness serve``: a retriever, indexed once, as an HTTP search service (docs/http.md)."""

from __future__ import annotations

from typing import List, Optional

import typer

from harness.cli import app
from harness.cli.options import SEMANTICS_OPTION, close_when_done, parse_params
from harness.datasets import DEFAULT_DATASET


@app.command()
def serve(
    ctx: typer.Context,
    dataset: str = typer.Option(DEFAULT_DATASET, "--dataset", "-d", help="Dataset name or BEIR folder path."),
    retriever: str = typer.Option("bm25", "--retriever", "-r", help="Retriever name or module:Class."),
    param: Optional[List[str]] = typer.Option(None, "--param", "-p", help="Retriever parameter key=value."),
    split: Optional[str] = typer.Option(None, "--split", help="Split whose dataset is loaded (the corpus is the "
                                        "same; default: its evaluation split: test; dev for msmarco)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on (default: this machine only)."),
    port: int = typer.Option(8000, "--port", help="Port (0: any free port; the URL is printed)."),
    max_k: int = typer.Option(10_000, "--max-k", help="Largest k a request may ask for."),
    log_level: str = typer.Option("warning", "--log-level", help="uvicorn log level."),
    semantics: str = SEMANTICS_OPTION,
) -> None:
    """Index DATASET with RETRIEVER once, then answer GET /search?q=&k=, POST /search, GET /healthz."""
    from harness import progress
    from harness.datasets import load_dataset
    from harness.serving import bind, create_app, serve_forever, url_of
    from harness.serving.server import LOOPBACK
    from harness.registry import create

    if not 0 <= port <= 65535:
        raise typer.BadParameter("--port must be from 0 to 65535")
    if max_k < 1:
        raise typer.BadParameter("--max-k must be >= 1")
    from uvicorn.config import LOG_LEVELS

    if log_level.lower() not in LOG_LEVELS:  # (uvicorn's KeyError came after the indexing, as a traceback)
        raise typer.BadParameter(f"--log-level must be one of {', '.join(LOG_LEVELS)}, got {log_level!r}")
    from harness.evaluation.semantics import parse_semantics

    order = parse_semantics(semantics)  # which hits make the cut at k: the evaluator's order
    system = create(retriever, **parse_params(param, retriever))
    close_when_done(ctx, system)  # (when the server stops)
    sock = bind(host, port)  # first, so that a busy port is reported before the indexing
    with progress.task(f"loading {dataset}"):
        ds = load_dataset(dataset, split)
    with progress.task(f"indexing {len(ds.corpus):,} documents ({system.name})"):
        system.index(ds.corpus)
    service = create_app(system, dataset=ds.name, n_documents=len(ds.corpus), max_k=max_k, semantics=order)
    if host not in LOOPBACK:
        typer.echo(f"warning: listening on {host}, reachable from other machines; the service has no "
                   f"authentication", err=True)
    typer.echo(f"serving {system.name} on {ds.name} ({len(ds.corpus):,} documents) at {url_of(sock)} "
               f"(Ctrl-C stops)")
    serve_forever(service, sock, log_level=log_level)

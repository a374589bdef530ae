"""``harness evaluate``: TREC runs against TREC or BEIR qrels.

One run: the metric table (families by cutoffs), ``--json`` writes its metrics.json. Several runs
(``--run A --run B``): one table with a row per run, as ranx and trec_eval users compare; ``--json``
then names a folder that gets ``<run file name>.json`` per run. Every file is read and evaluated
before anything is written, so a bad input leaves nothing behind.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import List, Optional

import typer

from harness.cli import app
from harness.cli.options import (K_OPTION, KEEP_IDENTICAL_IDS_OPTION, METRIC_OPTION, RELEVANCE_THRESHOLD_OPTION,
                                  SEMANTICS_OPTION, build_evaluator, check_outputs, input_name, read_pipes,
                                  refuse_missing_beside_stdin, refuse_outputs_over_inputs, refuse_stdin_twice)
from harness.errors import HarnessError

STDOUT = Path("-")  # --json -: metrics.json on stdout


@app.command()
def evaluate(
    qrels: Path = typer.Option(..., "--qrels", help="Qrels: TREC (qid iter docid grade) or BEIR tsv; - reads stdin."),
    run: List[Path] = typer.Option(..., "--run", help="TREC run (qid Q0 docid rank score tag); repeat for several; "
                                                      "- reads stdin."),
    k: Optional[str] = K_OPTION,
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write metrics.json here (several runs: a folder "
                                                                  "receiving <run file name>.json each); - writes "
                                                                  "it to stdout (the table goes to stderr)."),
    markdown_out: Optional[Path] = typer.Option(None, "--markdown", help="Write the Markdown table here."),
    keep_identical_ids: bool = KEEP_IDENTICAL_IDS_OPTION,
    relevance_threshold: float = RELEVANCE_THRESHOLD_OPTION,
    metric: Optional[List[str]] = METRIC_OPTION,
    semantics: str = SEMANTICS_OPTION,
) -> None:
    """Evaluate TREC run files and print the metric table."""
    from harness.formats.trec import read_qrels, read_run

    evaluator, k_values = build_evaluator(k, metric, relevance_threshold, keep_identical_ids, semantics)
    outputs = _json_paths(run, json_out)
    files = [out for out in outputs if out != STDOUT]
    check_outputs(*files, markdown_out)
    refuse_outputs_over_inputs([*(("--json", out) for out in files), ("--markdown", markdown_out)], [qrels, *run])
    refuse_stdin_twice([("--qrels", qrels), *(("--run", r) for r in run)])
    refuse_missing_beside_stdin([(qrels, "qrels"), *((r, "run") for r in run)])
    # pipes (--run <(zcat run.gz)) can be read once: hashed and parsed from these bytes
    once = read_pipes([(qrels, "qrels"), *((r, "run") for r in run)]) if outputs else {}
    digest = _digests_meanwhile([qrels, *run], once) if outputs else None
    start = time.perf_counter()
    judgments = read_qrels(qrels, once.get(qrels))
    evaluator.refuse_no_relevant(judgments)
    qrels_s = time.perf_counter() - start
    results = []
    for path in run:
        start = time.perf_counter()
        ranking = read_run(path, once.get(path))
        loaded = time.perf_counter()
        result = evaluator.evaluate(ranking, judgments)
        del ranking
        results.append((path, result, {"load_s": qrels_s + loaded - start, "evaluate_s": time.perf_counter() - loaded}))

    _print(results, to_stderr=outputs == [STDOUT])  # (stdout carries the metrics.json)
    from harness.cli.display import note_left_out, note_missing

    for path, result, _ in results:
        note_missing(result, _name(path))
    if results:  # (the same qrels and threshold for every run)
        note_left_out(results[0][1], evaluator.relevance_threshold)
    if outputs:
        _write_documents(outputs, results, qrels, k_values, digest)
    if markdown_out:
        from harness.atomic import write_text

        write_text(markdown_out, _markdown(results))


def _json_paths(runs: list[Path], json_out: Path | None) -> list[Path]:
    """Where each run's metrics.json goes (checked before any work, so a clash writes nothing)."""
    if json_out is None:
        return []
    if len(runs) == 1:
        return [json_out]
    if json_out == STDOUT:
        raise HarnessError("--json -: several runs write one metrics.json each; give a folder")
    paths = [json_out / f"{path.name}.json" for path in runs]
    seen: dict[Path, Path] = {}
    for run, out in zip(runs, paths):
        if out in seen:
            raise HarnessError(f"--json: runs {seen[out]} and {run} would both write {out} (rename one)")
        seen[out] = run
    return paths


def _name(path: Path) -> str:
    """An input's file name as tables and notes show it (``<stdin>`` for ``-``)."""
    return input_name(path) if str(path) == "-" else path.name


def _labels(results: list) -> list[str]:
    """Each run's row label: its file name, or the path as given when two runs share a file name."""
    names = [_name(path) for path, _, _ in results]
    return names if len(set(names)) == len(names) else [input_name(path) for path, _, _ in results]


def _print(results: list, to_stderr: bool = False) -> None:
    from harness.cli.display import print_metrics, print_table

    if len(results) == 1:
        from rich.console import Console

        path, result, _ = results[0]
        print_metrics(result.means, title=f"{_name(path)}: {result.n_queries} queries",
                      console=Console(stderr=True) if to_stderr else None)
        return
    from rich.table import Table

    names = list(results[0][1].means)
    table = Table(title=f"{len(results)} runs, {results[0][1].n_queries} queries")
    table.add_column("run", no_wrap=True)
    for name in names:
        table.add_column(name, justify="right", no_wrap=True)
    for label, (_, result, _) in zip(_labels(results), results):
        table.add_row(label, *[f"{result.means[n]:.4f}" for n in names])
    print_table(table)  # (a file or a pipe: as wide as the table, never truncated)


def _markdown(results: list) -> str:
    from harness.reports import metrics_table
    from harness.reports.markdown import text

    if len(results) == 1:
        path, result, _ = results[0]
        return metrics_table(result.means, title=_name(path))
    names = list(results[0][1].means)
    lines = ["| run | " + " | ".join(names) + " |", "| --- | " + " | ".join("---:" for _ in names) + " |"]
    # (a run's label as GitHub shows it literally: <stdin> was read as an HTML tag and hidden; a | in a file
    # name split the row)
    lines += [f"| {text(label).replace('|', chr(92) + '|')} | " + " | ".join(f"{result.means[n]:.4f}" for n in names)
              + " |" for label, (_, result, _) in zip(_labels(results), results)]
    return "\n".join(lines) + "\n"


def _digests_meanwhile(paths: list[Path], once: dict[Path, bytes]):
    """The files' sha256 (recorded in metrics.json), computed in a thread while the runs are read and
    evaluated (hashlib and file reads release the GIL), then the harness's git commit (metrics.json's
    ``versions.git``, cached for the process); returns ``digest(path)``, which waits for it.
    ``once``: the bytes of the inputs already read (pipes), hashed from memory, never read again."""
    import hashlib
    import threading

    from harness.checksums import sha256

    digests: dict[Path, str | OSError] = {}

    def work() -> None:
        for path in paths:
            try:
                digests[path] = hashlib.sha256(once[path]).hexdigest() if path in once else sha256(path)
            except OSError as exc:  # (reported when asked for; the readers name unreadable files first)
                digests[path] = exc
        from harness.fingerprint import harness_commit

        harness_commit()  # (metrics.json's versions.git: its ~0.05 s of git calls, here rather than after the work)

    thread = threading.Thread(target=work, name="sha256", daemon=True)
    thread.start()

    def digest(path: Path) -> str:
        thread.join()
        value = digests[path]
        if isinstance(value, OSError):
            raise HarnessError(f"cannot read {path}: {value.strerror or value}")
        return value

    return digest


def _write_documents(outputs: list[Path], results: list, qrels: Path, k_values: list[int], digest) -> None:
    from harness.reports import MetricsDocument

    def build(*args, **kwargs) -> dict:
        return MetricsDocument.build(*args, **kwargs).to_json()

    qrels_sum = digest(qrels)
    for out, (path, result, timings) in zip(outputs, results):
        document = build(
            result, dataset={"name": _name(qrels), "split": None, "files": {input_name(qrels): qrels_sum},
                             "n_docs": None, "n_queries": result.n_queries},
            retriever={"name": "run-file", "params": {"path": input_name(path), "sha256": digest(path)}},
            k_values=k_values, depth=None, timings=timings)
        _write_json(out, document)


def _write_json(path: Path, document: dict) -> None:
    """metrics.json with one line per query: json's C encoder for the per-query values (the indented
    encoder is pure Python and took ~1 s for 6,980 queries); atomically."""
    import json

    from harness.atomic import write_text

    per_query = document.pop("per_query")
    head = json.dumps(document, indent=2, ensure_ascii=False)
    rows = ",\n".join(f"    {json.dumps(q, ensure_ascii=False)}: {json.dumps(v)}" for q, v in per_query.items())
    text = head[:-2] + ',\n  "per_query": {\n' + rows + "\n  }\n}\n"
    if path == STDOUT:
        from harness.cli.options import write_stdout_json

        write_stdout_json(text)
    else:
        write_text(path, text)

"""Write a result folder: metrics.json, metrics.md, per_query.jsonl and (optionally) run.trec."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from harness.atomic import atomic_open, file_lock, remove_abandoned, write_json, write_text
from harness.formats.trec import unwritable_ids, unwritable_message, write_run
from harness.reports.document import MetricsDocument
from harness.reports.efficiency import header_facts, pipeline_header_facts, run_header
from harness.reports.markdown import metrics_table, text
from harness.run import Run

RESULT_FILES = ("metrics.json", "metrics.md", "per_query.jsonl", "run.trec")  # what a result folder holds
LOCK = ".lock"  # in a result folder: held while its files are written (write_result_folder)


def result_file_named(folder: Path, named) -> tuple[object, str, Path] | None:
    """(key, value, file) of the first of ``named`` (``(key, value)`` pairs: a retriever's or pipeline
    stage's params) whose str value names one of ``folder``'s result files, ``~`` expanded as the
    run-file retriever expands its ``path``; None when none does. Writing the folder would replace
    that input (``path = "results/x/rf/run.trec"``, to evaluate a run again with other cutoffs, was
    cut to its top depth): ``harness run`` and ``harness bench`` refuse it."""
    import contextlib
    import os

    for key, value in named:
        if not isinstance(value, str) or not value:
            continue
        for name in RESULT_FILES:
            with contextlib.suppress(OSError, ValueError):  # (no such file yet; a string that names no file)
                if os.path.samefile(folder / name, os.path.expanduser(value)):
                    return key, value, folder / name
    return None


def write_result_folder(folder: str | Path, document: MetricsDocument, query_texts: dict[str, str] | None = None,
                        run: Run | None = None, tag: str = "harness") -> Path:
    """Write every file atomically (metrics.json last); returns the folder. An earlier result's files are
    removed first, metrics.json before the others: its presence means the files beside it are its own, and
    a write killed midway would otherwise leave it, or its metrics.md and per_query.jsonl, beside the new
    run.trec (a folder never holds files of two results: killed midway, it holds some of the new one's and
    no metrics.json). The files are
    written under an exclusive lock (POSIX ``flock`` on ``<folder>/.lock``, :func:`harness.atomic.file_lock`):
    two processes writing one folder at once (two ``harness run`` with the same ``-o`` and ``--name``,
    two benches sharing a cell) write it in turn, so the folder holds the last one's files, never one's
    metrics.json beside the other's run.trec."""
    folder = Path(folder)
    if run is not None:
        _refuse_unwritable_doc_ids(run)  # before the folder is made: it was left holding only its .lock
    folder.mkdir(parents=True, exist_ok=True)
    with file_lock(folder / LOCK):
        _write_files(folder, document, query_texts, run, tag)
    return folder


def _refuse_unwritable_doc_ids(run: Run) -> None:
    """ValueError naming the first document id of ``run`` that run.trec cannot hold (the TREC writer's rule,
    :func:`~harness.formats.trec.unwritable_ids`) and the query it was retrieved for. A retriever's own ids
    (a plugin's, a service's) are known only after the search; the writer's refusal named no query."""
    bad = unwritable_ids(run.vocab_source)
    if not len(bad):
        return
    used = np.flatnonzero(np.isin(run.doc_codes, bad))
    if len(used):
        entry = int(used[0])
        query = str(run.query_ids[int(np.searchsorted(run.offsets, entry, side="right")) - 1])
        raise ValueError(f"{unwritable_message(str(run.doc_vocab[run.doc_codes[entry]]), 'document id')}: "
                         f"retrieved for query {query!r}")


def _write_files(folder: Path, document: MetricsDocument, query_texts: dict[str, str] | None, run: Run | None,
                 tag: str) -> None:
    # an earlier result's files, metrics.json first (its presence says the files beside it are its own), then the
    # rest: killed after the new run.trec, the folder held it beside the earlier metrics.md and per_query.jsonl
    for name in ("metrics.json", "metrics.md", "per_query.jsonl", "run.trec"):
        (folder / name).unlink(missing_ok=True)
    remove_abandoned(folder)  # a killed earlier write's temporary run.trec (45 MB at 1,000 queries x 1,000)
    if run is not None:
        header = None
        if document.efficiency:
            header = run_header(header_facts(document.efficiency, tag, document.dataset))
        elif document.stages:  # a pipeline's result: its stages (docs/pipelines.md)
            header = run_header(pipeline_header_facts(document.stages, tag, document.dataset, document.versions))
        write_run(run, folder / "run.trec", tag=tag, header=header)
    texts = query_texts or {}
    with atomic_open(folder / "per_query.jsonl") as handle:
        for qid, values in document.per_query.items():
            handle.write(json.dumps({"query_id": qid, "query": texts.get(qid), **values}, ensure_ascii=False) + "\n")
    dataset = document.dataset
    title = text(f"{dataset.get('name', '')} ({dataset.get('split', '')}) - {document.retriever['name']}")
    header = (f"{title}\n\n{document.n_queries} queries evaluated"
              f" ({document.n_missing_from_run} missing from the run, scored 0;"
              f" {document.n_without_relevant} with no document judged relevant"
              f" (grade >= {_threshold(document)}), left out).\n\n")
    write_text(folder / "metrics.md", "# " + header + metrics_table(document.metrics))
    write_json(folder / "metrics.json", document.to_json())


def _threshold(document: MetricsDocument) -> str:
    """The relevance threshold a document's values were computed under, as metrics.md shows it (1, 2, 0.5)."""
    value = (document.settings or {}).get("relevance_threshold", 1.0)
    return f"{value:.12g}" if isinstance(value, (int, float)) else str(value)

"""TREC run files (``qid Q0 docid rank score tag``) and TREC qrels (``qid iter docid grade``).

Runs are written with real ranks (1-based, canonical order) and scores at round-trip precision
(``repr``), so reading a written run back gives exactly the same floats and the same ties.
Reading ignores the rank column and orders by score, as trec_eval does.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

import numpy as np

from harness.atomic import atomic_open
from harness.errors import InputError
from harness.qrels import Qrels
from harness.run import Run


def write_run(run: Run, path: str | Path, tag: str = "harness") -> None:
    run = run.canonical()
    with atomic_open(path) as handle:
        write_run_to(run, handle, tag)


def write_run_to(run: Run, handle: IO[str], tag: str = "harness") -> None:
    doc_ids = run.doc_vocab[run.doc_codes].tolist()
    scores = run.scores.tolist()
    for i, qid in enumerate(run.query_ids.tolist()):
        start, end = int(run.offsets[i]), int(run.offsets[i + 1])
        handle.writelines(f"{qid} Q0 {doc_ids[p]} {p - start + 1} {scores[p]!r} {tag}\n" for p in range(start, end))


def read_run(path: str | Path) -> Run:
    """Parse a 6-column TREC run; errors name the file and line."""
    path = Path(path)
    query_index: dict[str, int] = {}
    vocab: dict[str, int] = {}
    seen: dict[tuple[int, int], int] = {}
    entry_query: list[int] = []
    codes: list[int] = []
    scores: list[float] = []
    try:
        handle = open(path, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read run file: {exc.strerror}", path) from None
    with handle:
        for number, line in enumerate(handle, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 6:
                raise InputError(f"expected 6 columns (qid Q0 docid rank score tag), got {len(parts)}", path, number)
            qid, _, doc_id, _, score_text, _ = parts
            try:
                score = float(score_text)
            except ValueError:
                raise InputError(f"score {score_text!r} is not a number", path, number, doc_id) from None
            if score != score:
                raise InputError("score is NaN", path, number, doc_id)
            q = query_index.setdefault(qid, len(query_index))
            code = vocab.setdefault(doc_id, len(vocab))
            first = seen.setdefault((q, code), number)
            if first != number:
                raise InputError(f"document retrieved twice for query {qid!r} (first on line {first})",
                                 path, number, doc_id)
            entry_query.append(q)
            codes.append(code)
            scores.append(score)
    if not codes:
        raise InputError("the run file is empty", path)
    entry_q = np.array(entry_query, dtype=np.int64)
    order = np.argsort(entry_q, kind="stable")
    offsets = np.concatenate([[0], np.cumsum(np.bincount(entry_q, minlength=len(query_index)))])
    run = Run.from_arrays(list(query_index), offsets, np.array(codes, dtype=np.int64)[order],
                          np.array(scores, dtype=np.float64)[order], list(vocab), vocab)
    return run.canonical()


def read_qrels(path: str | Path) -> Qrels:
    """Read TREC (``qid iter docid grade``) or BEIR tsv (``query-id corpus-id score``) qrels."""
    from harness.datasets.beir import load_qrels_tsv

    path = Path(path)
    try:
        with open(path, encoding="utf-8") as handle:
            first = next((line for line in handle if line.strip()), "")
    except OSError as exc:
        raise InputError(f"cannot read qrels file: {exc.strerror}", path) from None
    if len(first.split()) == 3:
        return load_qrels_tsv(path)
    return read_trec_qrels(path)


def read_trec_qrels(path: str | Path) -> Qrels:
    from harness.datasets.beir import _add_judgment

    path = Path(path)
    rows: dict[tuple[str, str], float] = {}
    lines: dict[tuple[str, str], int] = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 4:
                raise InputError(f"expected 4 columns (qid iter docid grade), got {len(parts)}", path, number)
            qid, _, doc_id, grade_text = parts
            try:
                grade = float(grade_text)
            except ValueError:
                raise InputError(f"grade {grade_text!r} is not a number", path, number, doc_id) from None
            _add_judgment(rows, lines, qid, doc_id, grade, path, number)
    if not rows:
        raise InputError("no judgments in qrels file", path)
    return Qrels.from_rows((q, d, g) for (q, d), g in rows.items())

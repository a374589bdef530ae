"""Helpers for the evaluator tests: random tie-heavy cases and pytrec_eval as the oracle.

Exposed as fixtures returning functions (``make_case``, ``pytrec``, ``ranking_case``) so that
test modules need no shared import path.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pytest

from harness.qrels import Qrels
from harness.run import Run


def random_case(seed: int, n_queries: int = 60, n_docs: int = 60, max_depth: int = 50,
                grades: Sequence[int] = (0, 1, 2, 3), score_levels: int = 4) -> tuple[Run, Qrels]:
    """A run and qrels built to hit every corner of the ranking contract.

    Scores take only ``score_levels`` distinct values (heavy ties, broken by doc id in string order,
    where "d10" < "d9"); about a fifth of the queries share an id with a document and retrieve it
    (identical-id dropping); some queries are judged but absent from the run, some are in the run
    but unjudged, some have only grade-0 judgments; judged documents are often not retrieved and
    retrieved ones often unjudged.
    """
    rng = np.random.default_rng(seed)
    doc_ids = [f"d{i}" for i in range(n_docs)]
    query_ids = [f"d{i}" if rng.random() < 0.2 else f"q{i}" for i in range(n_queries)]
    results: dict[str, dict[str, float]] = {}
    for qid in query_ids:
        if rng.random() < 0.08:
            continue  # judged, never retrieved
        depth = int(rng.integers(0, min(max_depth, n_docs) + 1))
        docs = rng.choice(n_docs, size=depth, replace=False)
        scores = rng.integers(0, score_levels, size=depth) / 2.0 - 1.0
        results[qid] = {doc_ids[d]: float(s) for d, s in zip(docs, scores)}
        if qid in doc_ids and rng.random() < 0.7:
            results[qid][qid] = float(rng.integers(0, score_levels) / 2.0 - 1.0)
    rows: list[tuple[str, str, float]] = []
    for i, qid in enumerate(query_ids):
        if rng.random() < 0.05:
            continue  # retrieved, never judged
        n_judged = int(rng.integers(1, max(2, n_docs // 3)))
        judged = rng.choice(n_docs, size=n_judged, replace=False)
        p = None if rng.random() < 0.9 else [1.0] + [0.0] * (len(grades) - 1)  # some all-grade-0 queries
        for d, g in zip(judged, rng.choice(grades, size=n_judged, p=p)):
            rows.append((qid, doc_ids[d], float(g)))
    return Run.from_dict(results), Qrels.from_rows(rows)


def pytrec_per_query(run: Run, qrels: Qrels, measures: Iterable[str], relevance_level: int = 1,
                     ignore_identical_ids: bool = True) -> dict[str, dict[str, float]]:
    """pytrec_eval's per-query values, after applying our identical-id rule on its input.

    Queries whose ranking is then empty are left out of its input (as BEIR's evaluate does).
    """
    import pytrec_eval

    if ignore_identical_ids:
        run = run.without_identical_ids()
    results = {q: docs for q, docs in run.to_dict().items() if docs}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels.to_dict(), set(measures), relevance_level=relevance_level)
    return evaluator.evaluate(results)


def ranking_case(rankings: dict[str, Sequence[float | None]],
                 unretrieved: dict[str, Sequence[float]] | None = None) -> tuple[Run, Qrels]:
    """Run and qrels reproducing a worked example given as grades by rank.

    ``rankings[q][i]`` is the grade of the document at rank i + 1 (None = unjudged); scores strictly
    decrease so the ranking is exactly as listed. ``unretrieved[q]`` lists grades of judged documents
    the run does not retrieve.
    """
    results: dict[str, dict[str, float]] = {}
    rows: list[tuple[str, str, float]] = []
    for qid, grades in rankings.items():
        results[qid] = {}
        for rank, grade in enumerate(grades, 1):
            doc = f"{qid}-r{rank:03d}"
            results[qid][doc] = float(len(grades) - rank + 1)
            if grade is not None:
                rows.append((qid, doc, float(grade)))
        for n, grade in enumerate((unretrieved or {}).get(qid, ())):
            rows.append((qid, f"{qid}-u{n:03d}", float(grade)))
    return Run.from_dict(results), Qrels.from_rows(rows)


@lru_cache(maxsize=2)
def _bm25_top1000(folder: Path):
    from harness.datasets.beir import load_beir_folder
    from retrievers import create

    dataset = load_beir_folder(folder)
    retriever = create("bm25", backend="rank-bm25")
    retriever.index(dataset.corpus)
    return dataset, retriever.search(dataset.queries, 1000)


@pytest.fixture
def bm25_top1000():
    """``(dataset, BM25 top-1000 run)`` for a BEIR folder, built once per session (~10 s each)."""
    return _bm25_top1000


@pytest.fixture
def make_case():
    return random_case


@pytest.fixture
def pytrec():
    pytest.importorskip("pytrec_eval", reason="pytrec_eval (the test oracle) is not installed")
    return pytrec_per_query


@pytest.fixture
def ranking():
    return ranking_case

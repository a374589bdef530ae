"""Join a run with its qrels: the ranks and grades of the judged documents each query retrieved.

This is the one place where the ranking contract is applied; every metric is then a few numpy
operations over the arrays built here, never a Python loop over documents.

Ranking contract (see :mod:`harness.evaluation.semantics`): within a query, documents are ranked by
score descending, the scores compared as float32 under ``trec_eval-9`` (the default, as trec_eval 9
and pytrec_eval) or as float64 under ``trec_eval-10``; equal scores are ordered by document id
descending (string order). With
``ignore_identical_ids`` (BEIR's default) an entry whose document id equals its query id is removed
before ranking, so the documents after it move up one rank.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.semantics import Semantics, parse_semantics
from harness.qrels import Qrels
from harness.run import Run


@dataclass(frozen=True, eq=False)
class Judgments:
    """Per evaluated query (index ``q`` into ``query_ids``) and per judged retrieved document (a "hit").

    query_ids      (Q,)  evaluated queries: those with at least one relevant judgment
    in_run         (Q,)  whether the run has the query at all
    n_relevant     (Q,)  R: judged documents with grade >= threshold
    n_nonrelevant  (Q,)  N: judged documents with 0 <= grade < threshold (bpref's judged non-relevant;
                         a negative grade means "in the pool but not judged", as in trec_eval)
    n_retrieved    (Q,)  length of the query's ranking (after dropping identical ids)
    hit_query      (H,)  query index of each judged retrieved document
    hit_rank       (H,)  its 1-based rank
    hit_grade      (H,)  its grade (may be 0 or below the threshold)
    ideal_query    (I,)  query index of each positive grade, sorted by grade descending per query
    ideal_rank     (I,)  1-based rank in the ideal ranking
    ideal_grade    (I,)  the grade (gain) at that rank
    threshold            grade at or above which a document counts as relevant
    semantics            the trec_eval semantics the ranking followed (and Judged@k follows)
    """

    query_ids: np.ndarray
    in_run: np.ndarray
    n_relevant: np.ndarray
    n_nonrelevant: np.ndarray
    n_retrieved: np.ndarray
    hit_query: np.ndarray
    hit_rank: np.ndarray
    hit_grade: np.ndarray
    ideal_query: np.ndarray
    ideal_rank: np.ndarray
    ideal_grade: np.ndarray
    threshold: float
    n_without_relevant: int
    n_missing_from_run: int
    semantics: Semantics = parse_semantics(None)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def relevant_hits(self, k: int | None = None) -> np.ndarray:
        """Mask over hits: relevant (grade >= threshold) and, if given, ranked within the top k."""
        mask = self.hit_grade >= self.threshold
        return mask if k is None else mask & (self.hit_rank <= k)

    def nonrelevant_hits(self) -> np.ndarray:
        """Mask over hits: judged non-relevant (0 <= grade < threshold)."""
        return (self.hit_grade >= 0) & (self.hit_grade < self.threshold)

    def per_query_sum(self, mask: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Sum ``weights`` (or count) of the masked hits per query."""
        w = None if weights is None else weights[mask]
        return np.bincount(self.hit_query[mask], weights=w, minlength=self.n_queries).astype(np.float64)


def _query_positions(values: list[str]) -> tuple[list[str], np.ndarray]:
    index: dict[str, int] = {}
    positions = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int64, count=len(values))
    return list(index), positions


def _not_run_and_qrels(run, qrels) -> str:
    """The TypeError for arguments that are not (Run, Qrels): BEIR's dicts, or the two swapped (pytrec_eval,
    ir_measures and ranx take the qrels first). Dicts are not converted: swapped, they would be read as
    each other (grades as scores, scores as float grades) and give a number, a wrong one."""
    got = f"got {type(run).__name__} and {type(qrels).__name__}"
    if isinstance(run, Qrels) and isinstance(qrels, Run):
        hint = "the run comes first here (pytrec_eval, ir_measures and ranx take the qrels first)"
    else:
        hint = "build them from BEIR's dicts with Run.from_dict(results) and Qrels.from_dict(qrels)"
    return f"evaluate(run, qrels) takes a harness Run and a Qrels, in that order; {got}: {hint}"


def judge(run: Run, qrels: Qrels, threshold: float = 1.0, ignore_identical_ids: bool = True,
          semantics: Semantics | str | None = None) -> Judgments:
    """Rank the run by the contract and look up the grade of every judged retrieved document."""
    if not isinstance(run, Run) or not isinstance(qrels, Qrels):
        raise TypeError(_not_run_and_qrels(run, qrels))
    semantics = parse_semantics(semantics)
    run.refuse_nan()  # (before the scores are re-ranked below, whatever order they are in)
    repeated = run.repeated_entry()
    if repeated is not None:  # (trec_eval: "duplicate docs"; counted twice, P@k and nDCG@k would be inflated)
        raise ValueError(f"run lists document {repeated[1]!r} twice for query {repeated[0]!r}: a document has one "
                         "rank per query (trec_eval refuses duplicate docs)")
    run = run.with_scores(semantics.ranking_scores(run.scores)).canonical()
    # One vocabulary lookup for the run's query ids (identical-id rule) and the judged doc ids.
    run_queries = run.query_ids.tolist()
    codes = run.codes_of(run_queries + qrels.doc_ids.tolist())
    if ignore_identical_ids:
        run = run.without_identical_ids(codes[:len(run_queries)])

    # Queries in the qrels; only those with a relevant judgment are evaluated.
    qrels_queries, row_query = _query_positions(qrels.query_ids.tolist())
    grades = qrels.grades
    n_relevant_all = np.bincount(row_query, weights=grades >= threshold, minlength=len(qrels_queries))
    evaluated = n_relevant_all >= 1
    eval_index = np.cumsum(evaluated) - 1  # qrels query position -> evaluated query index
    query_ids = np.empty(int(evaluated.sum()), dtype=object)
    query_ids[:] = [q for q, keep in zip(qrels_queries, evaluated) if keep]
    keep_row = evaluated[row_query]
    row_eval = eval_index[row_query]

    # Map every evaluated qrels row onto the run: (run query index, document code).
    run_index = {q: i for i, q in enumerate(run.query_ids.tolist())}
    run_of_query = np.array([run_index.get(q, -1) for q in query_ids.tolist()], dtype=np.int64)
    row_code = codes[len(run_queries):]
    row_run_query = np.full(len(qrels), -1, dtype=np.int64)
    row_run_query[keep_row] = run_of_query[row_eval[keep_row]]  # (no evaluated query: nothing to map)
    found = keep_row & (row_code >= 0) & (row_run_query >= 0)
    n_vocab = max(run.n_vocab, 1)
    keys = row_run_query[found] * n_vocab + row_code[found]
    order = np.argsort(keys, kind="stable")
    keys, key_grade, key_eval = keys[order], grades[found][order], row_eval[found][order]

    # Candidate run entries: documents judged for some evaluated query; then exact (query, doc) match.
    judged_code = np.zeros(n_vocab, dtype=bool)
    judged_code[row_code[found]] = True
    cand = np.flatnonzero(judged_code[run.doc_codes]) if len(run) else np.empty(0, dtype=np.int64)
    cand_query = np.searchsorted(run.offsets, cand, side="right") - 1
    cand_key = cand_query * n_vocab + run.doc_codes[cand]
    pos = np.minimum(np.searchsorted(keys, cand_key), max(len(keys) - 1, 0))
    match = (keys[pos] == cand_key) if len(keys) else np.zeros(len(cand), dtype=bool)
    hits, hit_pos = cand[match], pos[match]
    hit_rank = hits - run.offsets[cand_query[match]] + 1

    # Ideal ranking: every positive grade of an evaluated query, best first.
    positive = keep_row & (grades > 0)
    ideal_query, ideal_grade = row_eval[positive], grades[positive]
    order = np.lexsort((-ideal_grade, ideal_query))
    ideal_query, ideal_grade = ideal_query[order], ideal_grade[order]
    first = np.searchsorted(ideal_query, ideal_query, side="left")
    ideal_rank = np.arange(len(ideal_query)) - first + 1

    lengths = np.diff(run.offsets)
    in_run = run_of_query >= 0
    n_retrieved = np.where(in_run, lengths[np.maximum(run_of_query, 0)] if len(lengths) else 0, 0)
    return Judgments(
        query_ids=query_ids,
        in_run=in_run & (n_retrieved > 0),
        n_relevant=n_relevant_all[evaluated].astype(np.int64),
        n_nonrelevant=np.bincount(row_query, weights=(grades >= 0) & (grades < threshold),
                                  minlength=len(qrels_queries))[evaluated].astype(np.int64),
        n_retrieved=n_retrieved.astype(np.int64),
        hit_query=key_eval[hit_pos],
        hit_rank=hit_rank.astype(np.int64),
        hit_grade=key_grade[hit_pos],
        ideal_query=ideal_query,
        ideal_rank=ideal_rank.astype(np.int64),
        ideal_grade=ideal_grade,
        threshold=float(threshold),
        n_without_relevant=int((~evaluated).sum()),
        n_missing_from_run=int((~(in_run & (n_retrieved > 0))).sum()),
        semantics=semantics,
    )

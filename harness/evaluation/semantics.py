"""Evaluation semantics: which trec_eval the evaluator reproduces exactly.

Two versions of trec_eval differ in ways that change per-query values; the evaluator follows one of
them, named in every result (``settings["semantics"]``, stored in metrics.json) so that results made
under different semantics are never compared (see :func:`harness.compare.semantics.refuse_mixed`).

``trec_eval-9`` (default): trec_eval 9.0.x, bundled in pytrec_eval and behind BEIR's and
ir_measures' published numbers. It holds run scores as 32-bit floats (``float sim`` in
``trec_format.h``), so two scores equal in float32 but not in float64 tie, and ties are ordered by
document id descending. The evaluator ranks by ``float32(score)``; runs and metrics.json keep the
full float64 scores.

``trec_eval-10``: trec_eval 10.0 (2026) holds scores as doubles, so the evaluator ranks by the
float64 score (ties by document id descending, as before). Its ``unj`` measure counts a document
judged with a negative grade as unjudged; under this semantics ``Judged@k`` does too. Its
``iprec_at_recall`` turns a recall level p into a number of relevant documents as ``lround(p * R)``
where trec_eval 9 truncates ``p * R + 0.9`` (``m_iprec_at_recall.c``, and ``m_11pt_avg.c`` alike);
``iprec_at_recall_p`` and ``11pt_avg`` follow (``Rprec_mult``'s cutoffs still truncate in 10).

Both read ``#`` comment lines in runs and qrels (trec_eval 10 does; the project accepts them under
either semantics, since trec_eval 9 would refuse the file rather than read it differently).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from harness.run import Run


@dataclass(frozen=True)
class Semantics:
    name: str
    float32_scores: bool  # rank by float32(score), as trec_eval 9's ``float sim``
    negative_grade_judged: bool  # a negative grade counts as judged (Judged@k)
    rounded_recall_cutoffs: bool = False  # iprec_at_recall: lround(p * R), not (long)(p * R + 0.9)

    def ranking_scores(self, scores: np.ndarray) -> np.ndarray:
        """The scores the ranking compares: float32-rounded (as float64) or the scores themselves."""
        if not self.float32_scores:
            return scores
        with np.errstate(over="ignore"):  # beyond float32's range: +-inf, as C's float conversion
            return scores.astype(np.float32).astype(np.float64)


TREC_EVAL_9 = Semantics("trec_eval-9", float32_scores=True, negative_grade_judged=True)
TREC_EVAL_10 = Semantics("trec_eval-10", float32_scores=False, negative_grade_judged=False,
                         rounded_recall_cutoffs=True)
SEMANTICS = {s.name: s for s in (TREC_EVAL_9, TREC_EVAL_10)}
DEFAULT_SEMANTICS = TREC_EVAL_9.name


def parse_semantics(value: str | Semantics | None) -> Semantics:
    """``"trec_eval-9"`` / ``"trec_eval-10"`` (or None: the default) -> :class:`Semantics`."""
    if isinstance(value, Semantics):
        return value
    if value is None:
        return SEMANTICS[DEFAULT_SEMANTICS]
    try:
        return SEMANTICS[value]
    except KeyError:
        raise ValueError(f"unknown semantics {value!r}; known: {', '.join(SEMANTICS)}") from None


def top_depth(run: "Run", depth: int, semantics: Semantics | str | None = None) -> "Run":
    """Each query's first ``depth`` entries in the evaluator's order under ``semantics`` (score
    descending as it compares scores: as float32 under trec_eval-9, then document id descending),
    with their full scores, in canonical order. None: the canonical (float64) order, ``run.truncated``.

    Under trec_eval-9 two scores equal in float32 tie, so the larger id ranks first even when its
    double score is lower: cutting the float64 order would keep a document the evaluator ranks
    below the cut (e.g. scores a 1.00000001, b 1.0 at depth 1: the evaluator's first is b).
    """
    if semantics is None:
        return run.truncated(depth)
    ranked = parse_semantics(semantics).ranking_scores(run.scores)
    if ranked is run.scores or not (np.diff(run.offsets) > depth).any() or np.array_equal(ranked, run.scores):
        return run.truncated(depth)  # nothing cut, or the orders agree (float32 values: a retriever's scores)
    top = run.with_scores(ranked).truncated(depth)
    # The kept entries' full scores: a (query, document) pair occurs once, so it is a key.
    n = max(run.n_vocab, 1)
    keys = run.entry_query_index() * n + run.doc_codes
    order = np.argsort(keys, kind="stable")
    at = order[np.searchsorted(keys[order], top.entry_query_index() * n + top.doc_codes)]
    return top.with_scores(run.scores[at]).canonical()


def evaluated_order(run, settings: dict):
    """The ranking the result's values were computed on: without the documents whose id is the query's
    (``ignore_identical_ids``, the evaluator's default when not recorded) and in the evaluator's order
    under the recorded semantics (trec_eval-9: score as float32 descending, then document id
    descending; so scores 1.00000001 for "a" and 1.0 for "b" rank b first). Without a recorded
    semantics: the canonical (float64) order."""
    if settings.get("ignore_identical_ids", True) is not False:
        run = run.without_identical_ids()
    semantics = SEMANTICS.get(settings.get("semantics")) if isinstance(settings.get("semantics"), str) else None
    if semantics is not None:
        run = run.with_scores(semantics.ranking_scores(run.scores))
    return run.canonical()

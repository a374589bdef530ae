"""Discounted cumulative gain at k (unnormalised), in three gain/discount schemes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.discounting import SchemedMetric, dcg, gain, ideal_dcg


def _number(value: float) -> str:
    """A grade as the qrels write it: ``1100`` for an integer value, else its shortest repr."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


class GainOverflow(ValueError):
    """A DCG@k that would not be a finite double (see :class:`DCG`): names the metric, the query and
    its largest qrels grade, and the document judged with it once known (:meth:`naming_document`)."""

    def __init__(self, metric: str, scheme: str, query_id: str, grade: float, doc_id: str | None = None):
        self.metric, self.scheme, self.query_id, self.grade, self.doc_id = metric, scheme, query_id, grade, doc_id
        super().__init__(self._message())

    def _message(self) -> str:
        document = "" if self.doc_id is None else f", document {self.doc_id!r}"
        grade = _number(self.grade)
        with np.errstate(over="ignore"):
            alone = not np.isfinite(gain(np.float64(self.grade), self.scheme))
        if self.scheme == "exp":
            why = (f"its gain 2^{grade} - 1 overflows a double (DCG_exp takes grades below 1024)" if alone else
                   "the query's gains 2^grade - 1, discounted, sum past the largest double (1.8e308)")
            why += f"; NDCG{self.metric[3:]} stays finite and exact for any grade"
        else:
            why = "the query's discounted grades sum past the largest double (1.8e308)"
        return f"{self.metric} would be infinite: query {self.query_id!r}{document}, qrels grade {grade}: {why}"

    def naming_document(self, qrels) -> "GainOverflow":
        """The same error naming the document the qrels judge with the grade (the first such row)."""
        rows = np.flatnonzero((qrels.query_ids == self.query_id) & (qrels.grades == self.grade))
        doc_id = str(qrels.doc_ids[rows[0]]) if rows.size else None
        return GainOverflow(self.metric, self.scheme, self.query_id, self.grade, doc_id)


@dataclass(frozen=True)
class DCG(SchemedMetric):
    """DCG@k = sum_{i<=k} g(rel_i) / d(i); rel_i is the grade at rank i (0 if unjudged).

    Schemes (see ``discounting``): ``trec`` g = rel, d(i) = log2(i + 1) (``DCG@10``); ``exp``
    g = 2^rel - 1 (``DCG_exp@10``); ``jarvelin`` g = rel, d(i) = max(1, log2 i), i.e.
    rel_1 + sum_{i>=2} rel_i / log2(i) (``DCG_jarvelin@10``). Unbounded: compare it only between
    runs on the same qrels.

    Overflow rule: DCG@k is a finite double or an error, never ``inf``. It is refused (a
    :class:`GainOverflow`, a ValueError naming the query, its largest qrels grade and, through the
    evaluator, that grade's document) when some evaluated query's ideal DCG@k, the DCG@k of its judged
    grades sorted descending, overflows a double: under ``exp`` any grade past 1023 (2^rel - 1 is
    then past 1.8e308), or several grades near 1023 whose discounted gains sum past it; under ``trec``
    and ``jarvelin`` only grades near 1e308 can. The ideal bounds the run's DCG@k from above, so
    the rule depends on the qrels and k alone: the same qrels give every run a value or refuse them
    all. (nDCG scales ``exp`` gains instead, since its ratio allows it: see ``NDCG``.)
    """

    family = "DCG"

    def __call__(self, j: Judgments) -> np.ndarray:
        with np.errstate(over="ignore"):
            values, ideal = dcg(j, self.k, self.scheme), ideal_dcg(j, self.k, self.scheme)
        bad = np.flatnonzero(~(np.isfinite(values) & np.isfinite(ideal)))
        if bad.size:
            q = int(bad[0])
            top = float(j.ideal_grade[j.ideal_query == q].max())  # (a query's largest grade: its first gain)
            raise GainOverflow(self.name, self.scheme, str(j.query_ids[q]), top)
        return values

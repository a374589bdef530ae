"""Qrels: relevance judgments, stored columnar (one row per judged (query, document) pair)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

import numpy as np

from harness.columns import first_repeated, object_array, real_array, require_mapping, require_strings


@dataclass(frozen=True, eq=False)
class Qrels:
    """Judgments as three aligned columns.

    ``grades`` are float64 so that float relevance (click or vote scores) is representable; integer
    grades are stored exactly. Each (query, document) pair appears once.
    """

    query_ids: np.ndarray
    doc_ids: np.ndarray
    grades: np.ndarray

    def __post_init__(self) -> None:
        """The columns checked as :meth:`from_rows` checks rows, also when given directly (``Qrels(q, d, g)``
        over a DataFrame's columns): any sequence is taken (a list, a pandas Series or array, a numpy array)
        and kept as object arrays of str and float64 grades; an id that is no str (a DataFrame's int query
        ids never equalled a run's str ids: every judged query scored 0), a grade that is no finite real
        number, or a (query, document) pair given twice (counted twice: Recall@10 and AP of a perfect
        one-document run were 0.5) is a TypeError or ValueError naming the query and the document."""
        if not (len(self.query_ids) == len(self.doc_ids) == len(self.grades)):
            raise ValueError("qrels columns must have the same length")
        for name, what in (("query_ids", "qrels query"), ("doc_ids", "qrels document")):
            column = getattr(self, name)
            if not (isinstance(column, np.ndarray) and column.dtype == object and column.ndim == 1):
                column = object_array(column.tolist() if isinstance(column, np.ndarray) else column)
                object.__setattr__(self, name, column)
            require_strings(column.tolist(), what)
        grades = self.grades
        if not (isinstance(grades, np.ndarray) and grades.dtype == np.float64 and grades.ndim == 1
                and np.isfinite(grades).all()):
            values = grades.tolist() if isinstance(grades, np.ndarray) else list(grades)
            object.__setattr__(self, "grades", real_array(values, zip(self.query_ids.tolist(), self.doc_ids.tolist()),
                                                          "qrels grade", finite=True))
        if len(dict.fromkeys(zip(self.query_ids.tolist(), self.doc_ids.tolist()))) < len(self.grades):
            pair = first_repeated(zip(self.query_ids.tolist(), self.doc_ids.tolist()))[0]
            raise ValueError(f"qrels judge document {pair[1]!r} of query {pair[0]!r} twice: give each pair once "
                             "(Qrels.from_rows keeps one of equal grades), or it counts as two relevant documents")

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, str, float]]) -> "Qrels":
        """From ``(query_id, doc_id, grade)`` rows, checked as the qrels readers check a file: str ids; a
        grade a finite real number (int, float, bool, numpy's; not a str, None or NaN, which NumPy
        would read as a number or NaN where pytrec_eval refuses them, nor inf: nDCG would be inf / inf);
        a pair given twice kept once when its grades are equal, else refused (counted twice, R and the
        ideal DCG would be inflated). Every refusal names the query and the document."""
        rows = list(rows)
        query_ids, doc_ids, grades = [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]
        require_strings(query_ids, "qrels query")
        require_strings(doc_ids, "qrels document")
        values = real_array(grades, zip(query_ids, doc_ids), "qrels grade", finite=True)
        if len(dict.fromkeys(zip(query_ids, doc_ids))) < len(rows):  # a pair repeated: kept once, in its first place
            first: dict[tuple[str, str], int] = {}
            for i, pair in enumerate(zip(query_ids, doc_ids)):
                at = first.setdefault(pair, i)
                if at != i and values[at] != values[i]:
                    raise ValueError(f"qrels judge document {pair[1]!r} of query {pair[0]!r} twice, with different "
                                     f"grades ({grades[at]!r} and {grades[i]!r})")
            keep = np.fromiter(first.values(), dtype=np.int64, count=len(first))
            return cls._checked(object_array(query_ids)[keep], object_array(doc_ids)[keep], values[keep])
        return cls._checked(object_array(query_ids), object_array(doc_ids), values)

    @classmethod
    def _checked(cls, query_ids: np.ndarray, doc_ids: np.ndarray, grades: np.ndarray) -> "Qrels":
        """Qrels of columns checked already (:meth:`from_rows`), without checking them again."""
        qrels = cls.__new__(cls)
        for name, column in (("query_ids", query_ids), ("doc_ids", doc_ids), ("grades", grades)):
            object.__setattr__(qrels, name, column)
        return qrels

    @classmethod
    def from_dict(cls, qrels: Mapping[str, Mapping[str, float]]) -> "Qrels":
        """From BEIR's ``{query_id: {doc_id: grade}}``."""
        require_mapping(qrels, "Qrels.from_dict", "{query_id: {doc_id: grade}}")
        return cls.from_rows((q, d, g) for q, docs in qrels.items() for d, g in docs.items())

    def to_dict(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for q, d, g in zip(self.query_ids.tolist(), self.doc_ids.tolist(), self.grades.tolist()):
            out.setdefault(q, {})[d] = int(g) if float(g).is_integer() else g
        return out

    def __len__(self) -> int:
        return len(self.grades)

    def __repr__(self) -> str:
        """A one-line summary whatever the size (the dataclass's repr printed the three columns: 8,668
        characters for SciFact's 339 judgments), e.g. ``Qrels(300 queries, 339 judgments, grades 1..1)``."""
        grades = f", grades {self.grades.min():g}..{self.grades.max():g}" if len(self.grades) else ""
        return f"Qrels({len(set(self.query_ids.tolist())):,} queries, {len(self.grades):,} judgments{grades})"

    def queries(self) -> list[str]:
        """Distinct query ids in first-seen order."""
        return list(dict.fromkeys(self.query_ids.tolist()))

    def n_relevant(self, threshold: float = 1.0) -> dict[str, int]:
        counts: dict[str, int] = {q: 0 for q in self.queries()}
        for q, g in zip(self.query_ids.tolist(), (self.grades >= threshold).tolist()):
            counts[q] += g
        return counts

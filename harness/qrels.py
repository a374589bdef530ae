"""Qrels: relevance judgments, stored columnar (one row per judged (query, document) pair)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

import numpy as np

from harness.columns import object_array, require_strings


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
        if not (len(self.query_ids) == len(self.doc_ids) == len(self.grades)):
            raise ValueError("qrels columns must have the same length")

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, str, float]]) -> "Qrels":
        rows = list(rows)
        query_ids, doc_ids = [r[0] for r in rows], [r[1] for r in rows]
        require_strings(query_ids, "qrels query")
        require_strings(doc_ids, "qrels document")
        return cls(object_array(query_ids), object_array(doc_ids), np.array([r[2] for r in rows], dtype=np.float64))

    @classmethod
    def from_dict(cls, qrels: Mapping[str, Mapping[str, float]]) -> "Qrels":
        """From BEIR's ``{query_id: {doc_id: grade}}``."""
        return cls.from_rows((q, d, g) for q, docs in qrels.items() for d, g in docs.items())

    def to_dict(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for q, d, g in zip(self.query_ids.tolist(), self.doc_ids.tolist(), self.grades.tolist()):
            out.setdefault(q, {})[d] = int(g) if float(g).is_integer() else g
        return out

    def __len__(self) -> int:
        return len(self.grades)

    def queries(self) -> list[str]:
        """Distinct query ids in first-seen order."""
        return list(dict.fromkeys(self.query_ids.tolist()))

    def n_relevant(self, threshold: float = 1.0) -> dict[str, int]:
        counts: dict[str, int] = {q: 0 for q in self.queries()}
        for q, g in zip(self.query_ids.tolist(), (self.grades >= threshold).tolist()):
            counts[q] += g
        return counts

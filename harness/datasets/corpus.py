"""Corpus, Queries and Dataset: what a retriever indexes and searches, and what the evaluator judges."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from harness.qrels import Qrels


@dataclass(frozen=True, eq=False)
class Corpus:
    """Documents as aligned columns: ids, titles and texts (``titles[i]`` may be empty)."""

    ids: list[str]
    titles: list[str]
    texts: list[str]

    def __post_init__(self) -> None:
        if not (len(self.ids) == len(self.titles) == len(self.texts)):
            raise ValueError("corpus columns must have the same length")

    def __len__(self) -> int:
        return len(self.ids)

    def contents(self) -> list[str]:
        """Title + " " + text per document, as BEIR and MTEB feed documents to a model."""
        return [f"{t} {x}".strip() if t else x for t, x in zip(self.titles, self.texts)]

    @cached_property
    def id_array(self) -> np.ndarray:
        """The ids as an object array (built once; runs over this corpus share it as their doc_vocab)."""
        out = np.empty(len(self.ids), dtype=object)
        out[:] = self.ids
        return out

    @cached_property
    def id_index(self) -> dict[str, int]:
        """Document id -> position (built once per corpus)."""
        return {doc_id: i for i, doc_id in enumerate(self.ids)}


@dataclass(frozen=True, eq=False)
class Queries:
    ids: list[str]
    texts: list[str]

    def __len__(self) -> int:
        return len(self.ids)

    def subset(self, keep: list[str]) -> "Queries":
        text = dict(zip(self.ids, self.texts))
        ids = [q for q in keep if q in text]
        return Queries(ids, [text[q] for q in ids])

    def as_dict(self) -> dict[str, str]:
        return dict(zip(self.ids, self.texts))


@dataclass(frozen=True, eq=False)
class Dataset:
    """A test collection for one split: the queries are those judged in the split's qrels."""

    name: str
    split: str
    corpus: Corpus
    queries: Queries
    qrels: Qrels
    files: dict[str, str] = field(default_factory=dict)  # file name -> sha256
    warnings: list[str] = field(default_factory=list)

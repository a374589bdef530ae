"""Cheap rerankers for pipeline tests (loaded by ``module:Class``, as a plugin would be)."""

from __future__ import annotations

import numpy as np

from harness.reranker import Reranker


class LengthReranker(Reranker):
    """Scores each candidate by the length of its text (a deterministic stand-in for a model)."""

    name = "length"

    def __init__(self, scale: float = 1.0):
        self.scale = scale

    def params(self) -> dict:
        return {"scale": self.scale}

    def score(self, candidates, queries, corpus) -> np.ndarray:
        lengths = np.array([len(corpus.texts[i]) for i in candidates.doc_rows.tolist()], dtype=np.float64)
        return lengths * self.scale


class FailingReranker(Reranker):
    name = "failing"

    def score(self, candidates, queries, corpus) -> np.ndarray:
        raise RuntimeError("model exploded")

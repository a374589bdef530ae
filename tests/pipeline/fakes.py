"""Cheap rerankers (and a retriever) for pipeline tests (loaded by ``module:Class``, as a plugin would be)."""

from __future__ import annotations

import numpy as np

from harness.reranker import Reranker
from retrievers.run_file import RunFileRetriever


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


class Clock:
    """A stand-in for ``time.perf_counter``: it moves only when told to (:class:`SlowKeyRunFile`)."""

    now = 0.0

    @classmethod
    def perf_counter(cls) -> float:
        return cls.now


class SlowKeyRunFile(RunFileRetriever):
    """The run-file retriever, whose ``params()`` (what a stage's cache key is made of: hashing its file, as
    a model's checksum hashes its folder) advances :class:`Clock` by ``PARAMS_S`` seconds per call."""

    PARAMS_S = 5.0

    def params(self) -> dict:
        Clock.now += self.PARAMS_S
        return super().params()


def write_three_docs(tmp_path):
    """A BEIR folder ``tmp_path/ds``: documents d1, d2, d3 (each text its id), queries q1, q2 (likewise),
    judgments q1-d1 and q2-d2 (grade 1); the pipeline tests add their own run files beside it."""
    import json

    ds = tmp_path / "ds"
    (ds / "qrels").mkdir(parents=True)
    (ds / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": "", "text": d}) + "\n"
                                             for d in ("d1", "d2", "d3")))
    (ds / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": q}) + "\n" for q in ("q1", "q2")))
    (ds / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    return ds

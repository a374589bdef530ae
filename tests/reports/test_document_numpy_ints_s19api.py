"""Cutoffs and a depth given as numpy integers (``np.array([1, 10])``, ``np.int64(12)``), which the evaluator
and ``run_experiment`` take, are recorded in metrics.json as the ints they are. Before: the whole index and
search ran, run.trec, per_query.jsonl and metrics.md were written, then metrics.json failed with
``TypeError: Object of type int64 is not JSON serializable`` (a traceback, no result)."""

from __future__ import annotations

import json

import numpy as np

from harness.datasets.corpus import Corpus, Dataset, Queries
from harness.evaluation import Evaluator
from harness.experiment import run_experiment
from harness.qrels import Qrels
from harness.reports import MetricsDocument
from harness.retriever import Retriever
from harness.run import Run


class PositionRetriever(Retriever):
    """Documents scored by their position (d1 highest)."""

    name = "position"

    def index(self, corpus) -> None:
        self.doc_ids = list(corpus.ids)

    def search(self, queries, k):
        n = len(self.doc_ids)
        return Run.from_dict({q: {d: float(n - i) for i, d in enumerate(self.doc_ids[:k])} for q in queries.ids})


def test_numpy_cutoffs_and_depth_are_written_as_ints(tmp_path):
    ids = [f"d{i}" for i in range(1, 21)]
    dataset = Dataset("toy", "test", Corpus(ids, [""] * 20, ["text"] * 20), Queries(["q1"], ["text"]),
                      Qrels.from_rows([("q1", "d2", 1.0)]))
    k_values = np.array([1, 10])
    experiment = run_experiment(dataset, PositionRetriever(), Evaluator(["P@1", "Recall@10"], k_values=k_values),
                                k_values, depth=np.int64(12), output_dir=tmp_path / "out")
    written = json.loads((tmp_path / "out" / "metrics.json").read_text(encoding="utf-8"))
    assert written["k_values"] == [1, 10] and written["settings"]["depth"] == 12
    # worked: d2, the one relevant document, is ranked 2nd of 12: P@1 = 0, Recall@10 = 1
    assert written["metrics"] == experiment.result.means == {"P@1": 0.0, "Recall@10": 1.0}
    assert MetricsDocument.from_json(written).k_values == [1, 10]


def test_build_takes_numpy_integers():
    result = Evaluator(["P@1"]).evaluate(Run.from_dict({"q": {"d": 1.0}}), Qrels.from_dict({"q": {"d": 1}}))
    document = MetricsDocument.build(result, dataset={}, retriever={"name": "x"}, k_values=[np.int32(5)],
                                     depth=np.uint16(7), timings={})
    assert json.loads(json.dumps(document.to_json()))["k_values"] == [5]
    assert type(document.k_values[0]) is int and type(document.settings["depth"]) is int

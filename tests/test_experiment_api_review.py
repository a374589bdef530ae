"""run_experiment (the Python API of `harness run`) checks its ``depth`` and ``k_values`` first, as the
evaluator checks its own and ``harness run --depth`` does, with one ValueError naming the value.

Before: ``depth=0`` was taken as None (``depth or default``: searched to the default depth without a
word), ``depth=2.5`` failed in numpy after the index (``Cannot cast array data from dtype('float64') to
dtype('int64')``), ``depth="10"`` in the search (``can only concatenate str (not "int") to str``),
``depth=-1`` as ``k must be >= 1, got 0``; ``k_values=[0]`` was recorded in metrics.json as it was.
"""

from __future__ import annotations

import numpy as np
import pytest

from harness.datasets.corpus import Corpus, Dataset, Queries
from harness.evaluation import Evaluator
from harness.experiment import run_experiment
from harness.qrels import Qrels
from harness.retriever import Retriever
from harness.run import Run


class RecordingRetriever(Retriever):
    """Documents scored by their position (d1 highest); records whether index() was called."""

    name = "recording"

    def __init__(self):
        self.indexed = False

    def index(self, corpus) -> None:
        self.indexed, self.doc_ids = True, list(corpus.ids)

    def search(self, queries, k):
        n = len(self.doc_ids)
        return Run.from_dict({q: {d: float(n - i) for i, d in enumerate(self.doc_ids[:k])} for q in queries.ids})


def dataset() -> Dataset:
    ids = [f"d{i}" for i in range(1, 21)]
    return Dataset("toy", "test", Corpus(ids, [""] * len(ids), ["text"] * len(ids)), Queries(["q1"], ["text"]),
                   Qrels.from_rows([("q1", "d12", 1.0)]))


@pytest.mark.parametrize("depth", [0, -1, 2.5, "10", True])
def test_a_depth_that_is_no_integer_of_at_least_one_is_refused_before_indexing(depth):
    retriever = RecordingRetriever()
    with pytest.raises(ValueError, match=f"depth must be an integer >= 1 .*got {depth!r}$"):
        run_experiment(dataset(), retriever, Evaluator(k_values=[10]), [10], depth=depth)
    assert not retriever.indexed


@pytest.mark.parametrize("k_values", [[0], [10, -1], [2.5], [True], ["10"]])
def test_k_values_that_are_no_integers_of_at_least_one_are_refused_before_indexing(k_values):
    retriever = RecordingRetriever()
    with pytest.raises(ValueError, match="k values must be integers >= 1"):
        run_experiment(dataset(), retriever, Evaluator(k_values=[10]), k_values)
    assert not retriever.indexed


def test_valid_depths_search_as_deep_as_asked():
    """Worked example: one relevant document, d12, at rank 12 of 20 (scores 20..1). Depth 10 cuts it off
    (Recall@100 0, with the depth warning); depth None searches to the largest cutoff, 100: Recall@100 1."""
    cut = run_experiment(dataset(), RecordingRetriever(), Evaluator(["Recall@100"], k_values=[100]), [100], depth=10)
    assert len(cut.run) == 10 and cut.result.means == {"Recall@100": 0.0}
    assert cut.document.warnings and "depth 10 is below the largest cutoff 100" in cut.document.warnings[0]
    whole = run_experiment(dataset(), RecordingRetriever(), Evaluator(["Recall@100"], k_values=[100]), [100])
    assert len(whole.run) == 20 and whole.result.means == {"Recall@100": 1.0}
    deep = run_experiment(dataset(), RecordingRetriever(), Evaluator(["Recall@100"], k_values=[100]), [100],
                          depth=np.int64(12))
    assert len(deep.run) == 12 and deep.result.means == {"Recall@100": 1.0}


def test_k_values_the_evaluator_does_not_compute_are_refused_before_indexing():
    # metrics.json recorded k_values [5, 100] beside metrics computed at 10 only: tables and reports read its
    # k_values as the cutoffs of its metrics, and a recompute ran `harness evaluate --k 5,100` (other metrics)
    retriever = RecordingRetriever()
    with pytest.raises(ValueError, match=r"^k values \[5, 100\]: the evaluator computes no metric at 5, 100 \(its "
                                         r"cutoffs: 10\); give it the same cutoffs, Evaluator\(k_values=\[5, 100\]\), "
                                         r"and a search depth as depth=$"):
        run_experiment(dataset(), retriever, Evaluator(k_values=[10]), [5, 100])
    assert not retriever.indexed
    # cutoffs of metrics named with @k count, and metrics without one (bpref) need none: d12 at rank 12 of 20
    ok = run_experiment(dataset(), RecordingRetriever(), Evaluator(["P@20", "bpref"]), [20])
    assert ok.document.k_values == [20] and ok.result.means == {"P@20": 0.05, "bpref": 1.0}
    assert run_experiment(dataset(), RecordingRetriever(), Evaluator(["bpref"]), [], depth=20).result.means == {
        "bpref": 1.0}

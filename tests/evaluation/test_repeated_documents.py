"""A run listing one document twice for a query is refused by the evaluator, as trec_eval refuses it
("duplicate docs"). Counted twice it took two ranks: with d1 and d2 relevant, the run d1 (3.0), d1 (2.0),
d2 (1.0) gave NDCG@3 = 1.3066 (above 1), and Recall@2 = 1.0 where the two distinct documents at the top
hold only d1 (0.5). The TREC readers refuse such files and Run.from_dict cannot hold them; a plugin
building a Run from arrays could."""

from __future__ import annotations

import numpy as np
import pytest

from harness.evaluation import Evaluator
from harness.qrels import Qrels
from harness.run import Run

VOCAB = np.array(["d1", "d2", "d3"], dtype=object)


@pytest.fixture(params=["compiled", "python"], autouse=True)
def path(request, monkeypatch):
    """Both paths (harness.formats.native when built, and numpy) give the same answers."""
    from harness.formats import native

    if request.param == "compiled" and not native.available():
        pytest.skip("the compiled module is not built")
    if request.param == "python":
        monkeypatch.setenv(native.SWITCH, "0")
    return request.param


def run_of(offsets, codes, query_ids=("q", "p")):
    scores = np.arange(len(codes), 0, -1, dtype=np.float64)
    return Run.from_arrays(list(query_ids), np.array(offsets), np.array(codes), scores, VOCAB)


def test_the_evaluator_refuses_a_repeated_document():
    run = run_of([0, 3, 4], [0, 0, 1, 2])
    with pytest.raises(ValueError, match=r"^run lists document 'd1' twice for query 'q'"):
        Evaluator(["NDCG@3", "Recall@2"]).evaluate(run, Qrels.from_dict({"q": {"d1": 1, "d2": 1}}))


@pytest.mark.parametrize("offsets, codes, expected", [
    ([0, 3, 4], [0, 0, 1, 2], ("q", "d1")),
    ([0, 3, 6], [0, 1, 2, 2, 1, 1], ("p", "d2")),  # the repeat in the second query
    ([0, 3, 6], [0, 1, 2, 2, 1, 0], None),         # the same document in two queries is no repeat
    ([0, 1, 1], [2], None),
])
def test_repeated_entry(offsets, codes, expected):
    assert run_of(offsets, codes).repeated_entry() == expected


def test_repeated_entry_of_a_skewed_run():
    # q0 holds 30 entries, q1..q8 one each
    vocab = np.array([f"d{i}" for i in range(40)], dtype=object)
    ids = [f"q{i}" for i in range(9)]
    offsets = np.array([0, 30] + [30 + i for i in range(1, 9)])
    codes = np.array(list(range(30)) + [5] * 8)
    assert Run.from_arrays(ids, offsets, codes, np.ones(38), vocab).repeated_entry() is None
    codes[29] = 7  # d7 twice in q0
    assert Run.from_arrays(ids, offsets, codes, np.ones(38), vocab).repeated_entry() == ("q0", "d7")

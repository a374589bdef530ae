"""experiment.checked_run and the string order a plugin's run claims for its ids (session review).

A run's ``vocab_sorted`` or ``vocab_rank`` is the order the evaluator breaks score ties in (document id
descending, as trec_eval sorts). checked_run looked the used ids up (Run.codes_of), which for a small
vocabulary goes through a dict and finds every id at its code however wrong the claimed order is:
such a run was accepted and its ties broken in the wrong order.

The dataset: documents d1 and d9, query q1 judging d9 relevant (grade 1). The plugin returns d9 and d1
with equal scores; trec_eval ranks ties by document id descending (strcmp), so d9 comes first:
P@1 = 1.0 (the run file "q1 Q0 d9 1 1 t / q1 Q0 d1 2 1 t" gives P_1 1.0000 in trec_eval 9).
"""

from __future__ import annotations

import numpy as np
import pytest

from harness.datasets.corpus import Corpus, Dataset, Queries
from harness.errors import HarnessError
from harness.evaluation import Evaluator
from harness.experiment import run_experiment
from harness.qrels import Qrels
from harness.retriever import Retriever
from harness.run import Run


class Tied(Retriever):
    """Returns d9 and d1 tied at 1.0 for every query, over its own vocabulary ["d9", "d1"]."""

    name = "tied"

    def __init__(self, order: dict):
        self.order = order

    def index(self, corpus):
        pass

    def search(self, queries, k):
        n = len(queries.ids)
        return Run.from_arrays(list(queries.ids), np.arange(n + 1) * 2, np.tile([0, 1], n), np.ones(2 * n),
                               ["d9", "d1"], **self.order)


def p_at_1(order: dict) -> float:
    dataset = Dataset("tiny", "test", Corpus(["d1", "d9"], ["", ""], ["x", "y"]), Queries(["q1"], ["x"]),
                      Qrels.from_rows([("q1", "d9", 1)]))
    return run_experiment(dataset, Tied(order), Evaluator(["P@1"], [1]), [1]).result.means["P@1"]


def test_a_true_order_is_accepted_and_breaks_ties_as_trec_eval():
    assert p_at_1({}) == 1.0  # no order claimed: the strings are compared
    assert p_at_1({"vocab_rank": np.array([1, 0])}) == 1.0  # d1 < d9: ranks 1 and 0 of ["d9", "d1"]


@pytest.mark.parametrize("order", [{"vocab_rank": np.array([0, 1])},
                                   {"vocab_sorted": True, "vocab_index": {"d9": 0, "d1": 1}}],
                         ids=["vocab_rank", "vocab_sorted"])
def test_a_claimed_order_that_is_not_string_order_is_refused(order):
    # (was: accepted, and P@1 = 0.0: d1 put first in the tie, for trec_eval's 1.0)
    with pytest.raises(HarnessError, match=r"retriever 'tied': search\(\) returned documents 'd9' and 'd1' "
                                           r"\(query 'q1'\) in a run whose vocab_sorted or vocab_rank puts 'd9' "
                                           r"before 'd1', where string order does not"):
        p_at_1(order)


class Padded(Tied):
    """Tied's d9 and d1, in a vocabulary with nine unused str entries and one unused int (7), whose
    ranks put the int in the middle: looking d9 and d1 up by binary search over the ranks meets it."""

    def search(self, queries, k):
        n = len(queries.ids)
        vocab = ["d9", "d1"] + [f"e{i}" for i in range(9)] + [7]
        rank = np.array([11, 0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 6])  # d1 < e0..e8 < d9 as strings; the int at rank 6
        return Run.from_arrays(list(queries.ids), np.arange(n + 1) * 2, np.tile([0, 1], n), np.ones(2 * n),
                               vocab, vocab_rank=rank)


def test_an_unused_non_str_entry_beside_vocab_rank_is_no_traceback():
    # (was: TypeError "'<' not supported between instances of 'int' and 'str'" from Run.codes_of's binary
    # search over the ranks; the int is in no entry, so the run is scored: P@1 = 1.0 as trec_eval, above)
    dataset = Dataset("tiny", "test", Corpus(["d1", "d9"], ["", ""], ["x", "y"]), Queries(["q1"], ["x"]),
                      Qrels.from_rows([("q1", "d9", 1)]))
    assert run_experiment(dataset, Padded({}), Evaluator(["P@1"], [1]), [1]).result.means["P@1"] == 1.0

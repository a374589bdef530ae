"""A run given one query id twice (a long DataFrame's query column passed as the run's query ids, or two
batches holding the same query joined with ``concat_runs``) is a ValueError naming the id; before it said
only "query ids in a run must be unique", leaving the user to search millions of rows for it."""

from __future__ import annotations

import pytest

from harness.run import Run, concat_runs


def test_a_query_id_given_twice_is_named():
    with pytest.raises(ValueError, match=r"query ids in a run must be unique: 'q1' is given twice"):
        Run.from_arrays(["q0", "q1", "q2", "q1"], [0, 1, 2, 3, 4], [0, 0, 0, 0], [1.0, 1.0, 1.0, 1.0], ["d"])


def test_two_batches_holding_one_query_are_named():
    first, second = Run.from_dict({"q7": {"d1": 1.0}}), Run.from_dict({"q8": {"d1": 1.0}, "q7": {"d2": 1.0}})
    with pytest.raises(ValueError, match=r"'q7' is given twice"):
        concat_runs([first, second])

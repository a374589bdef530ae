"""Corpus and Queries built in Python (not by a loader, which refuses these per file and line) are checked when
built: a document id twice, a query id twice, a query id that is no str, ids and texts of different lengths.

Before: ``Corpus(["d1", "d1"], ...)`` was indexed with both documents under one id, and the evaluator found the
judged id at one of them only: the query 'pear', whose only match is the second d1, judged relevant, scored
P@1 = 0 (worked: it is ranked first, so P@1 = 1 if the documents were distinct). ``Queries(["q1", "q2"],
["apple"])`` failed after the index with "offsets must have 3 entries, got 2"."""

from __future__ import annotations

import numpy as np
import pytest

from harness.datasets.corpus import Corpus, Queries


def test_a_document_id_twice_is_refused_naming_it_and_its_positions():
    with pytest.raises(ValueError, match=r"corpus document id 'd1' is given twice \(positions 1 and 3\)"):
        Corpus(["d1", "d2", "d1"], ["", "", ""], ["apple", "fig", "pear"])
    with pytest.raises(ValueError, match=r"corpus document id '7' is given twice \(positions 1 and 2\)"):
        Corpus([7, "7"], ["", ""], ["apple", "pear"])  # (ids are read as their str)


def test_queries_are_checked_when_built():
    with pytest.raises(ValueError, match="queries need one text per id: 2 ids, 1 texts"):
        Queries(["q1", "q2"], ["apple"])
    with pytest.raises(ValueError, match=r"query id 'q1' is given twice \(positions 1 and 3\)"):
        Queries(["q1", "q2", "q1"], ["apple", "fig", "pear"])
    with pytest.raises(TypeError, match="query ids must be str, got int 1"):
        Queries([1], ["apple"])


def test_valid_values_are_kept_as_given():
    corpus = Corpus(["d1", "d2"], ["t", ""], ["apple", "pear"])
    assert corpus.ids == ["d1", "d2"] and list(corpus.texts) == ["apple", "pear"]
    queries = Queries(np.array(["q1", "q2"], dtype=object), ["apple", "pear"])
    assert queries.as_dict() == {"q1": "apple", "q2": "pear"} and queries.subset(["q2"]).ids == ["q2"]

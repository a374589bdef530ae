"""Defects found by the second review of the ``sqlite`` retriever (retrievers/engines/sqlite.py),
checked against SQLite's own FTS5 (Python's sqlite3)."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from harness.datasets.corpus import Corpus, Queries
from retrievers import create

if not sqlite3.connect(":memory:").execute("PRAGMA compile_options").fetchall().count(("ENABLE_FTS5",)):
    pytest.skip("this Python's SQLite is built without FTS5", allow_module_level=True)


@pytest.mark.parametrize("k", [2**63 - 16, 2**63 - 1])
def test_the_deepest_depth_is_searched(tmp_path, k):
    """``harness run --depth 9223372036854775807`` (accepted, as for BM25) searches k = 2^63 - 1:
    the engine was asked for LIMIT k + 16 rows, past SQLite's largest integer: OverflowError "Python
    int too large to convert to SQLite INTEGER", a traceback. Expected: every matching document,
    as FTS5 ranks them (the oracle: -bm25() of each row, float32 score desc, id desc)."""
    docs = {"d1": "apple pie", "d2": "banana apple", "d3": "cherry", "d4": "apple apple kiwi"}
    r = create("sqlite", cache_dir=tmp_path)
    r.index(Corpus(list(docs), [""] * len(docs), list(docs.values())))
    run = r.search(Queries(["q"], ["apple"]), k)
    con = sqlite3.connect(":memory:")
    con.execute("CREATE VIRTUAL TABLE t USING fts5(c, tokenize='porter unicode61')")
    con.executemany("INSERT INTO t(rowid, c) VALUES (?, ?)", enumerate(docs.values()))
    ids = list(docs)
    expected = sorted(((ids[i], float(np.float32(-s))) for i, s in
                       con.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH '\"apple\"'")),
                      key=lambda t: (t[1], t[0]), reverse=True)
    assert list(run.to_dict()["q"].items()) == expected
    assert [d for d, _ in expected] == ["d4", "d2", "d1"]

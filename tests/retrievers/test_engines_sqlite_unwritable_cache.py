"""The ``sqlite`` retriever goes on without an index cache it cannot write (retrievers/engines/sqlite.py),
as BM25, dense and sparse do (docs/bm25.md, docs/dense.md, docs/sparse.md: "built, not cached (...)").

With ``HARNESS_CACHE_DIR`` on a read-only folder (a read-only bind mount; a CI's shared cache),
``harness run -r sqlite`` stopped with ``error: <cache>/sqlite: Read-only file system`` (exit 2) before
building anything, while ``-r bm25`` in the same run (or bench) went on uncached. Expected: the failed
write is logged, the index is built in a temporary folder as with ``cache=false`` (the oracle: that
run, score for score, and FTS5's own bm25() of the matching documents), and ``retriever_stats.cache``
says ``built, not cached (<strerror>)``. A cache root under a file fails the same way (ENOTDIR) without
a mount. Engines review (s16)."""

from __future__ import annotations

import logging
import sqlite3

import numpy as np
import pytest

from harness.datasets.corpus import Corpus, Queries
from retrievers import create

if not sqlite3.connect(":memory:").execute("PRAGMA compile_options").fetchall().count(("ENABLE_FTS5",)):
    pytest.skip("this Python's SQLite is built without FTS5", allow_module_level=True)

DOCS = {"d1": "apple apple banana", "d2": "banana cherry", "d3": "cherry date fig grape", "d4": "kiwi lemon",
        "d5": "mango cherry"}


def fts5_oracle(text_terms: list[str]) -> list[tuple[str, float]]:
    """FTS5's -bm25() of every document matching any of the terms (own table, porter unicode61),
    float32 score desc, then id desc (the evaluator's rule)."""
    con = sqlite3.connect(":memory:")
    con.execute("CREATE VIRTUAL TABLE t USING fts5(c, tokenize='porter unicode61')")
    ids = list(DOCS)
    con.executemany("INSERT INTO t(rowid, c) VALUES (?, ?)", enumerate(DOCS.values()))
    rows = con.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH ?", (" OR ".join(text_terms),)).fetchall()
    return sorted(((ids[r], float(np.float32(-s))) for r, s in rows), key=lambda t: (t[1], t[0]), reverse=True)


def test_a_cache_it_cannot_write_is_logged_and_the_index_built_without_it(tmp_path, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    corpus = Corpus(list(DOCS), [""] * len(DOCS), list(DOCS.values()))
    queries = Queries(["q1", "q2"], ["cherry banana", "the mango"])
    retriever = create("sqlite", cache_dir=str(blocker / "cache"))
    with caplog.at_level(logging.WARNING, logger="retrievers.engines.sqlite"):
        retriever.index(corpus)  # raised NotADirectoryError
    assert retriever.stats()["cache"] == "built, not cached (Not a directory)"
    assert any("could not write the SQLite index cache" in r.getMessage() for r in caplog.records)
    got = retriever.search(queries, k=10).to_dict()

    uncached = create("sqlite", cache=False)
    uncached.index(corpus)
    assert got == uncached.search(queries, k=10).to_dict()
    assert [(d, s) for d, s in sorted(got["q1"].items(), key=lambda t: (t[1], t[0]), reverse=True)] == \
        fts5_oracle(["cherry", "banana"])
    assert list(got["q2"]) == ["d5"] and got["q2"]["d5"] == fts5_oracle(["mango"])[0][1]
    assert not (tmp_path / "a-file").is_dir()

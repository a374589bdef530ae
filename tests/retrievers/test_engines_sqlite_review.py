"""Defects found by the review of the ``sqlite`` retriever (retrievers/engines/sqlite.py), each
checked against SQLite's own FTS5 (Python's sqlite3): the query's tokens as the table's tokenizer
splits them, a relative cache folder, and a failure of the engine as one line."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from harness.datasets.corpus import Corpus, Queries
from harness.errors import HarnessError
from retrievers import create
from retrievers.engines.sqlite import fts5_query

if not sqlite3.connect(":memory:").execute("PRAGMA compile_options").fetchall().count(("ENABLE_FTS5",)):
    pytest.skip("this Python's SQLite is built without FTS5", allow_module_level=True)

DOCS = {"d1": "a nai\u0308ve idea", "d2": "don\u2019t panic", "d3": "TNF\u2010\u03b1 levels", "d4": "ve nai",
        "d5": "don t"}


def corpus(docs: dict[str, str] = DOCS) -> Corpus:
    return Corpus(list(docs), [""] * len(docs), list(docs.values()))


def queries(*texts: str) -> Queries:
    return Queries([f"q{i}" for i in range(len(texts))], list(texts))


def fts5_terms(tokenizer: str, texts: list[str]) -> list[list[str]]:
    """The terms FTS5's ``tokenizer`` makes of each text, in order (fts5vocab 'instance')."""
    con = sqlite3.connect(":memory:")
    con.execute(f"CREATE VIRTUAL TABLE t USING fts5(c, tokenize='{tokenizer}')")
    con.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    con.executemany("INSERT INTO t(rowid, c) VALUES (?, ?)", enumerate(texts))
    out: list[list[str]] = [[] for _ in texts]
    for doc, term in con.execute("SELECT doc, term FROM v ORDER BY doc, \"offset\""):
        out[doc].append(term)
    return out


def engine_top(tokenizer: str, docs: dict[str, str], phrase: str) -> list[tuple[str, float]]:
    """The oracle: FTS5's -bm25() of the documents matching the one FTS5 string ``phrase``, sorted by
    float32 score desc, id desc."""
    con = sqlite3.connect(":memory:")
    con.execute(f"CREATE VIRTUAL TABLE t USING fts5(c, tokenize='{tokenizer}')")
    ids = list(docs)
    con.executemany("INSERT INTO t(rowid, c) VALUES (?, ?)", enumerate(docs.values()))
    rows = con.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH ?", ('"' + phrase + '"',)).fetchall()
    return sorted(((ids[r], float(np.float32(-s))) for r, s in rows), key=lambda t: (t[1], t[0]), reverse=True)


@pytest.mark.parametrize("tokenizer", ["porter unicode61", "unicode61", "ascii"])
def test_a_query_word_is_the_token_the_tokenizer_makes_of_it(tmp_path, tokenizer):
    """The query builder split on every character Python's \\w does not hold: "nai\\u0308ve" (NFD:
    a combining diaeresis, which unicode61 keeps in the token and folds away) became "nai" OR "ve"
    and found "ve nai", not the document holding the same word; with ``ascii`` (every non-ASCII
    character is a token character) "don\\u2019t" and "TNF\\u2010\\u03b1" found nothing of theirs.
    Expected: each query word is one FTS5 string, ranked exactly as FTS5 ranks that string."""
    r = create("sqlite", tokenizer=tokenizer, cache_dir=str(tmp_path / "cache"))
    r.index(corpus())
    texts = ["nai\u0308ve", "don\u2019t", "TNF\u2010\u03b1"]
    run = r.search(queries(*texts), k=10).to_dict()
    expected_first = {"porter unicode61": ["d1", "d5", "d3"], "unicode61": ["d1", "d5", "d3"],
                      "ascii": ["d1", "d2", "d3"]}[tokenizer]
    for i, text in enumerate(texts):
        phrase = text if tokenizer == "ascii" or i == 0 else None
        if phrase is not None:  # one token for the tokenizer: FTS5's own ranking of that string
            assert list(run[f"q{i}"].items()) == engine_top(tokenizer, DOCS, phrase)
        assert list(run[f"q{i}"])[0] == expected_first[i]


def test_query_tokens_reproduce_the_tokenizers_terms():
    """Random texts of tricky characters (combining marks, private use, dashes and quotes outside
    ASCII, letters Unicode 6.1 lacks, CJK, ASCII punctuation): FTS5 tokenizing the query's tokens
    joined by spaces gives the terms it makes of the text itself, in order, for every word-based
    tokenizer: no token lost, split or glued to another (the oracle is FTS5, through fts5vocab)."""
    rng = random.Random(7)
    pool = (list("ab Z9 -_.'\"*:^()") + ["\u0301", "\u0308", "\u0327", "\ue000", "\U000f0001", "\u2019", "\u2010",
            "\u00a0", "\u00d7", "\u00e9", "\u4e2d", "\u0915", "\u093f", "\u19b0", "\U0001f917", "\U0001f600", "\u0130",
            "\u00df", "\u0660", "\u2003"])
    texts = ["".join(rng.choice(pool) for _ in range(rng.randint(1, 14))) for _ in range(400)]
    for tokenizer in ("porter unicode61", "unicode61", "porter ascii", "ascii"):
        r = create("sqlite", tokenizer=tokenizer, stopwords=None)
        token = r._token_pattern(texts)
        rebuilt = [" ".join(t.replace('"', '""') for t in token.findall(text)) for text in texts]
        assert fts5_terms(tokenizer, rebuilt) == fts5_terms(tokenizer, texts), tokenizer
        assert all(q.count('"') % 2 == 0 for q in (fts5_query(t, frozenset(), 1, token) for t in texts))


def test_a_relative_cache_folder(tmp_path, monkeypatch):
    """A relative ``cache_dir`` (or $HARNESS_CACHE_DIR) built the index, then every search failed:
    "relative path can't be expressed as a file URI" (the read-only connection's file: URI).
    Expected: the same run as with an absolute folder, the index path recorded absolute."""
    monkeypatch.chdir(tmp_path)
    docs = {"d1": "apple apple banana", "d2": "banana cherry", "d3": "cherry"}
    expected = create("sqlite", cache_dir=str(tmp_path / "abs"))
    expected.index(corpus(docs))
    for params, env in (({"cache_dir": "rel"}, None), ({}, "relenv")):
        if env is not None:
            monkeypatch.setenv("HARNESS_CACHE_DIR", env)
        r = create("sqlite", **params)
        r.index(corpus(docs))
        assert r.search(queries("banana cherry"), k=3).to_dict() == \
            expected.search(queries("banana cherry"), k=3).to_dict()
        assert Path(r.stats()["index_path"]).is_absolute()
        assert Path(r.stats()["index_path"]).is_relative_to(tmp_path / (params.get("cache_dir") or env))


def test_a_failure_of_the_engine_is_one_line(tmp_path):
    """sqlite3.Error is no OSError: a full disk during the build ("database or disk is full", "disk
    I/O error") or a database gone at search time was a traceback. Expected: HarnessError, one line
    naming the file (the CLI prints it and exits 2)."""
    r = create("sqlite", cache_dir=str(tmp_path / "cache"))
    r._ids = np.array(["d1"], dtype=object)
    r._by_rowid = np.array([0])
    with pytest.raises(HarnessError, match=r"SQLite could not build the FTS5 index .*: unable to open database file"):
        r._build(corpus({"d1": "apple"}), tmp_path)  # a folder, not a file SQLite can create
    r.index(corpus({"d1": "apple"}))
    Path(r.stats()["index_path"]).unlink()
    with pytest.raises(HarnessError, match=r"SQLite FTS5 search failed on .*index\.sqlite3: unable to open"):
        r.search(queries("apple"), k=1)

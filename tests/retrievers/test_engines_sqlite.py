"""The ``sqlite`` retriever against SQLite's real FTS5 (Python's own sqlite3): the safe query
builder, FTS5's BM25 values (the formula of SQLite's FTS5 documentation, section "The bm25()
function"), the evaluator's tie rule, the cache, and one end-to-end CLI run on SciFact."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.datasets.corpus import Corpus, Queries
from retrievers import create
from retrievers.engines.sqlite import fts5_query

if not sqlite3.connect(":memory:").execute("PRAGMA compile_options").fetchall().count(("ENABLE_FTS5",)):
    pytest.skip("this Python's SQLite is built without FTS5", allow_module_level=True)

DOCS = {"d1": "apple apple banana", "d2": "banana cherry", "d3": "cherry date fig grape", "d4": "kiwi lemon",
        "d5": "mango"}


def corpus(docs: dict[str, str], titles: dict[str, str] | None = None) -> Corpus:
    return Corpus(list(docs), [(titles or {}).get(d, "") for d in docs], list(docs.values()))


def queries(*texts: str) -> Queries:
    return Queries([f"q{i}" for i in range(len(texts))], list(texts))


def fts5_bm25(tf: float, dl: int, avgdl: float, n: int, N: int, k1: float = 1.2, b: float = 0.75) -> float:
    """One phrase's term of FTS5's bm25(): IDF(q) * f(q,D)*(k1+1) / (f(q,D) + k1*(1-b+b*|D|/avgdl)),
    IDF(q) = log((N - n(q) + 0.5) / (n(q) + 0.5)), replaced by 1e-6 when <= 0 (SQLite's fts5 docs)."""
    idf = math.log((N - n + 0.5) / (n + 0.5))
    idf = idf if idf > 0 else 1e-6
    return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))


@pytest.fixture
def retriever(tmp_path):
    def make(docs=DOCS, titles=None, **params):
        r = create("sqlite", cache_dir=str(tmp_path / "cache"), **params)
        r.index(corpus(docs, titles))
        return r
    return make


# ----------------------------------------------------------------- the query builder
@pytest.mark.parametrize("text, expected", [
    ("apple banana", '"apple" OR "banana"'),
    ('"apple" NEAR(banana cherry, 2) AND fig OR NOT grape', '"apple" OR "NEAR" OR "banana" OR "cherry" OR "2" OR '
                                                          '"AND" OR "fig" OR "OR" OR "NOT" OR "grape"'),
    ("appl* -banana ^cherry title:fig {text}", '"appl" OR "banana" OR "cherry" OR "title" OR "fig" OR "text"'),
    ("'quoted' \"double\" \"\" ''", '"quoted" OR "double"'),
    ("café naïve x_y", '"café" OR "naïve" OR "x" OR "y"'),
    ("", ""),
    ("*** -- () \"\" : ^ + ,.;", ""),
])
def test_fts5_query_quotes_every_token(text, expected):
    assert fts5_query(text) == expected


def test_fts5_query_drops_stopwords_and_short_tokens():
    from retrievers.bm25.analyzer import LUCENE_ENGLISH_STOPWORDS as stop

    assert fts5_query("The cat AND the hat", stop) == '"cat" OR "hat"'
    assert fts5_query("the of and to be", stop) == ""
    assert fts5_query("an apple in a pie", frozenset(), min_chars=3) == '"apple" OR "pie"'


# ----------------------------------------------------------------- scores and order from FTS5
def test_scores_are_fts5_bm25(retriever):
    run = retriever().search(queries("apple cherry"), k=10)
    N, avgdl = 5, 12 / 5  # document lengths 3, 2, 4, 2, 1
    expected = {"d1": fts5_bm25(2, 3, avgdl, 1, N), "d2": fts5_bm25(1, 2, avgdl, 2, N),
                "d3": fts5_bm25(1, 4, avgdl, 2, N)}
    assert run.doc_ids(0) == ["d1", "d2", "d3"]
    assert run.scores.tolist() == [float(np.float32(expected[d])) for d in ["d1", "d2", "d3"]]


def test_two_columns_weigh_title_and_text(retriever):
    titles = {"d1": "banana", "d2": "", "d3": "cherry", "d4": "", "d5": ""}
    r = retriever(titles=titles, columns="title,text", title_weight=3.0, text_weight=0.5)
    run = r.search(queries("cherry"), k=10)
    # FTS5's bm25() (fts5_aux.c): a phrase's frequency is the weighted sum of its counts per column;
    # the length is the whole row's (title + text tokens: d2 0 + 2, d3 1 + 4; average 14 / 5).
    # "cherry" is in n = 2 of N = 5 rows.
    expected = {"d3": fts5_bm25(3.0 * 1 + 0.5 * 1, 5, 14 / 5, 2, 5), "d2": fts5_bm25(0.5 * 1, 2, 14 / 5, 2, 5)}
    assert run.doc_ids(0) == ["d3", "d2"]
    assert run.scores.tolist() == pytest.approx([float(np.float32(expected[d])) for d in ["d3", "d2"]], rel=1e-6)
    assert r.params()["title_weight"] == 3.0 and r.params()["columns"] == "title,text"


def test_ties_are_broken_by_document_id_descending_at_the_cut(retriever):
    # 40 documents with the same text: one score, so the top 3 are the 3 largest ids in string order
    # (more ties than the rows asked for beyond k: the engine is asked again for more).
    docs = {f"t{i}": "mango" for i in range(40)}
    run = retriever(docs=docs).search(queries("mango"), k=3)
    assert run.doc_ids(0) == ["t9", "t8", "t7"]
    assert len(set(run.scores.tolist())) == 1


def test_float32_ties_at_the_cut_are_settled_by_document_id():
    # The engine orders by its double score; the evaluator by the float32 score, then id descending.
    # Rows (rowid, bm25) as the engine returns them (bm25 ascending = score descending): rowids 1-20
    # score 1 + (30 - rowid) * 1e-12, rowid 25 scores 1.0, rowid 30 0.5. The first 21 are one float32
    # (1.0), so the top 2 are rowids 25 and 20; 25 comes after the k + 16 = 18 rows first asked for,
    # whose last still ties with the k-th in float32: the engine is asked again with a larger LIMIT.
    rows = [(r, -(1.0 + (30 - r) * 1e-12)) for r in range(1, 21)] + [(25, -1.0), (30, -0.5)]

    class Engine:
        limits = []

        def execute(self, sql, params):
            self.limits.append(params[-1])
            return type("Cursor", (), {"fetchall": lambda _: rows[:params[-1]]})()

    r = create("sqlite")
    engine = Engine()
    rowids, scores = r._top_k(engine, "", '"x"', k=2)
    assert rowids.tolist() == [25, 20] and scores.tolist() == [1.0, 1.0]
    assert engine.limits == [18, 72]


def test_fts5_operators_in_queries_are_words(retriever):
    r = retriever()
    hostile = ['"apple" NEAR(cherry*, 1) -(banana) AND OR NOT', "apple\" OR rowid MATCH 1 --", "cherry) OR (\"",
               "apple:* ^cherry {d1 d2}", "'; DROP TABLE docs; --"]
    run = r.search(queries(*hostile, "apple cherry banana"), k=10)
    plain = run.to_dict()[f"q{len(hostile)}"]
    # Their tokens (Lucene's stopwords and, or, not dropped): apple NEAR cherry 1 banana; apple rowid
    # MATCH 1; cherry; apple cherry d1 d2. FTS5 reads each as a string, never as an operator.
    assert run.to_dict()["q0"] == plain and list(plain) == ["d1", "d2", "d3"]
    assert run.doc_ids(1) == ["d1"]
    assert run.doc_ids(2) == ["d2", "d3"]
    assert run.doc_ids(3) == ["d1", "d2", "d3"]
    assert run.doc_ids(4) == []  # "drop", "table", "docs" match no document; the table is still there
    assert r.search(queries("mango"), k=1).doc_ids(0) == ["d5"]


def test_queries_without_tokens_return_nothing(retriever):
    r = retriever()
    run = r.search(queries("", "the of and", "*** () -- \"\"", "mango"), k=5)
    assert [run.doc_ids(i) for i in range(4)] == [[], [], [], ["d5"]]
    assert r.stats()["queries_without_tokens"] == 3


def test_trigram_tokenizer_matches_substrings(retriever):
    r = retriever(tokenizer="trigram")
    run = r.search(queries("anan", "ppl", "ab"), k=5)
    assert run.doc_ids(0) == ["d2", "d1"]  # "banana cherry" is shorter than "apple apple banana"
    assert run.doc_ids(1) == ["d1"]
    assert run.doc_ids(2) == []  # shorter than a trigram: no token
    assert r.params()["tokenizer"] == "trigram"


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="unknown FTS5 tokenizer"):
        create("sqlite", tokenizer="porter'); DROP TABLE x; --")
    with pytest.raises(ValueError, match="need columns=title,text"):
        create("sqlite", title_weight=2)
    with pytest.raises(ValueError, match="columns must be one of"):
        create("sqlite", columns="body")


# ----------------------------------------------------------------- the cache
def test_cache_is_reused_and_a_damaged_entry_rebuilt(retriever, tmp_path):
    first = retriever()
    expected = first.search(queries("apple cherry"), k=10).to_dict()
    assert first.stats()["cache"] == "built"
    path = Path(first.stats()["index_path"])
    second = retriever()
    assert second.stats()["cache"] == "hit" and second.stats()["index_path"] == str(path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    third = retriever()
    assert third.stats()["cache"].startswith("rebuilt") and "checksum" in third.stats()["cache"]
    assert third.search(queries("apple cherry"), k=10).to_dict() == expected
    leftovers = [p.name for p in (tmp_path / "cache" / "sqlite").iterdir()
                 if p.name.startswith(".") and p.name != ".locks"]
    assert leftovers == []  # no temporary build folder (.locks/ holds the entries' build locks, as BM25's cache)
    assert [p.name for p in (tmp_path / "cache" / "sqlite" / ".locks").iterdir()] == [f"{path.parent.name}.lock"]
    other = retriever(tokenizer="unicode61")  # other settings: another entry
    assert other.stats()["cache"] == "built" and other.stats()["index_path"] != str(path)


def test_a_killed_builds_folder_is_removed_by_the_next_build(retriever, tmp_path):
    """A build killed midway left ``.<key>.<random>.tmp`` (a whole database) in the cache for good:
    nothing removed it. Expected: its folders are named with the writer (``<pid>-<host>``), and the next
    build of that key removes the one whose process is gone, keeping a live process's and another
    key's."""
    import shutil

    from harness.atomic import writer_tag

    first = retriever()
    entry = Path(first.stats()["index_path"]).parent
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host = writer_tag().split("-")[1]
    abandoned = entry.parent / f".{entry.name}.{dead.pid}-{host}.abcd1234.tmp"
    live = entry.parent / f".{entry.name}.{writer_tag()}.efgh5678.tmp"
    other_key = entry.parent / f".{'0' * len(entry.name)}.{dead.pid}-{host}.ijkl9012.tmp"
    for folder in (abandoned, live, other_key):
        folder.mkdir()
        (folder / "index.sqlite").write_bytes(b"partial")
    shutil.rmtree(entry)  # the next retriever builds this key again
    second = retriever()
    assert second.stats()["cache"] == "built"
    assert not abandoned.exists() and live.exists() and other_key.exists()


# ----------------------------------------------------------------- end to end
def test_cli_run_on_scifact(tmp_path):
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "--dataset", "scifact", "--retriever", "sqlite",
                           "--k", "10,100", "--output-dir", str(tmp_path / "out"), "--quiet"],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "out" / "scifact" / "sqlite" / "metrics.json").read_text())
    assert doc["retriever"]["params"]["engine"] == "sqlite-fts5"
    assert doc["retriever"]["params"]["sqlite_version"] == sqlite3.sqlite_version
    assert doc["retriever_stats"]["cache"] == "built" and doc["retriever_stats"]["n_docs"] == 5183
    # Measured with SQLite 3.40.1 (docs/engines.md); BM25 (bm25s, Anserini's settings) scores 0.6648 here.
    assert doc["metrics"]["NDCG@10"] == pytest.approx(0.6820, abs=0.002)
    assert doc["metrics"]["Recall@100"] == pytest.approx(0.9287, abs=0.002)

"""A plugin's subclass of a built-in retriever keeps its own cache entries, keyed by its code.

The built-in caches (BM25 indexes, embeddings, SQLite databases, PostgreSQL tables) were keyed by what
the built-in's code computes from: a subclass changing what an entry holds through a method no parameter
names (here: the document encoding) was served the built-in's entries, and its numbers were the
built-in's. Now the subclass's code digest (harness.plugin_code.plugin_code) is in its keys; a built-in's
keys are unchanged; a class whose code cannot be keyed (a notebook's) caches nothing.
"""

from __future__ import annotations

import importlib
import logging
import sys
import textwrap

import numpy as np
import pytest

from harness.datasets.corpus import Corpus, Queries
from harness.plugin_code import plugin_code
from retrievers.bm25 import BM25Retriever
from retrievers.dense import DenseRetriever
from retrievers.engines.sqlite import SQLiteRetriever
from tests.retrievers.test_dense_ray import CORPUS, FakeModel, fake_encode, model_dir  # noqa: F401 (fixture)

PLUGIN = '''
import numpy as np

from retrievers.bm25 import BM25Retriever
from retrievers.dense import DenseRetriever
from retrievers.engines.sqlite import SQLiteRetriever


class DoubledDense(DenseRetriever):
    """The built-in's embeddings times two (a change no parameter names)."""

    def _encoder(self, texts, prompt, counter):
        inner = super()._encoder(texts, prompt, counter)
        return lambda rows: np.asarray(inner(rows)) * 2


class MyBM25(BM25Retriever):
    pass


class MySQLite(SQLiteRetriever):
    pass
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    folder = tmp_path / "plugins" / "labplugin_s34"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(textwrap.dedent(PLUGIN))
    monkeypatch.syspath_prepend(str(tmp_path / "plugins"))
    sys.modules.pop("labplugin_s34", None)
    yield importlib.import_module("labplugin_s34")
    sys.modules.pop("labplugin_s34", None)


def test_a_dense_subclass_is_not_served_the_builtins_embeddings(plugin, model_dir, tmp_path):
    cache = str(tmp_path / "cache")
    built_in = DenseRetriever(FakeModel("fake", model_dir), cache_dir=cache, cache_chunk_size=8, progress=False)
    built_in.index(CORPUS)
    np.testing.assert_array_equal(np.asarray(built_in._docs), fake_encode(list(CORPUS.texts)))

    doubled = plugin.DoubledDense(FakeModel("fake", model_dir), cache_dir=cache, cache_chunk_size=8, progress=False)
    doubled.index(CORPUS)
    # (was: documents_cache "hit", the built-in's embeddings, not doubled)
    assert doubled.stats()["documents_cache"] == "miss"
    np.testing.assert_array_equal(np.asarray(doubled._docs), 2 * fake_encode(list(CORPUS.texts)))
    again = plugin.DoubledDense(FakeModel("fake", model_dir), cache_dir=cache, cache_chunk_size=8, progress=False)
    again.index(CORPUS)
    assert again.stats()["documents_cache"] == "hit"  # its own entry, reused
    np.testing.assert_array_equal(np.asarray(again._docs), 2 * fake_encode(list(CORPUS.texts)))
    meta = sorted(p.read_text() for p in (tmp_path / "cache").glob("documents-*/meta.json"))
    assert len(meta) == 2 and sum('"code"' in text for text in meta) == 1


SMALL = Corpus(ids=["d1", "d2", "d3"], titles=["", "", ""],
               texts=["apple banana", "banana cherry", "cherry apple apple"])
QUERIES = Queries(ids=["q1"], texts=["apple"])


def test_a_bm25_subclass_has_its_own_index_entry(plugin, tmp_path):
    cache = str(tmp_path / "cache")
    built_in = BM25Retriever(cache_dir=cache)
    built_in.index(SMALL)
    assert built_in.stats()["cache"] == "built" and "code" not in built_in.backend.settings()
    mine = plugin.MyBM25(cache_dir=cache)
    assert mine.backend.settings()["code"] == plugin_code(plugin.MyBM25) != {}
    mine.index(SMALL)
    assert mine.stats()["cache"] == "built"  # (was: "hit", the built-in's index)
    again = plugin.MyBM25(cache_dir=cache)
    again.index(SMALL)
    assert again.stats()["cache"] == "hit"
    assert again.search(QUERIES, 3).to_dict() == built_in.search(QUERIES, 3).to_dict()


def test_a_sqlite_subclass_has_its_own_database(plugin, tmp_path):
    cache = str(tmp_path / "cache")
    SQLiteRetriever(cache_dir=cache).index(SMALL)
    mine = plugin.MySQLite(cache_dir=cache)
    mine.index(SMALL)
    assert mine.stats()["cache"] == "built"  # (was: "hit")
    assert "code" in mine.settings() and "code" not in SQLiteRetriever(cache_dir=cache).settings()


def test_a_notebook_class_caches_nothing(model_dir, tmp_path, caplog):
    """A class of ``__main__`` with no source file (pytest's ``__main__`` is its launcher: none)."""
    notebook = type("NotebookDense", (DenseRetriever,), {"__module__": "__main__"})
    with caplog.at_level(logging.WARNING, logger="harness.plugin_code"):
        dense = notebook(FakeModel("fake", model_dir), cache_dir=str(tmp_path / "cache"), progress=False)
    assert not dense.cache_enabled
    assert ("NotebookDense is defined in __main__ with no source file, as in a notebook or an interactive session: "
            "its code cannot be keyed: its cache entries are neither read nor written") in caplog.text
    dense.index(CORPUS)
    assert dense.stats()["documents_cache"] == "off" and not (tmp_path / "cache").exists()
    with pytest.raises(ValueError, match="encoder='ray' writes the embedding cache, and NotebookDense is defined"):
        notebook(FakeModel("fake", model_dir), cache_dir=str(tmp_path / "cache"), encoder="ray")
    bm25 = type("NotebookBM25", (BM25Retriever,), {"__module__": "__main__"})(cache_dir=str(tmp_path / "c2"))
    bm25.index(SMALL)
    assert bm25.stats()["cache"] == "off"


def test_sqlite_stopwords_error_names_what_the_command_line_takes():
    """(was: "stopwords must be 'lucene' or None": a command line writes none, a config null)"""
    with pytest.raises(ValueError, match=r"stopwords must be 'lucene' or none \(null in a config: no stopword "
                                         r"list\), got 'english'"):
        SQLiteRetriever(stopwords="english")

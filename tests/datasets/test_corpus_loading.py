"""The lean corpus loader and the Arrow-backed corpus on small hand-made data."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from harness.datasets.beir import load_corpus
from harness.datasets.corpus import ArrowCorpus, Corpus
from harness.errors import InputError


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" if r is not None else "\n" for r in rows), encoding="utf-8")


def test_duplicate_id_names_both_lines(tmp_path):
    path = tmp_path / "corpus.jsonl"
    _write(path, [{"_id": "a", "text": "x"}, None, {"_id": "b", "text": "y"}, {"_id": "a", "text": "z"}])
    with pytest.raises(InputError) as err:
        load_corpus(path)
    # line 2 is blank, so the first "a" is line 1 and the duplicate is line 4
    assert str(err.value) == f"{path}:4: duplicate document id (first on line 1) (id 'a')"


def test_numeric_and_missing_fields_become_strings(tmp_path):
    path = tmp_path / "corpus.jsonl"
    _write(path, [{"_id": 7, "title": None, "text": 3.5}, {"_id": "x", "title": "T"}])
    corpus = load_corpus(path)
    assert (corpus.ids, corpus.titles, corpus.texts) == (["7", "x"], ["", "T"], ["3.5", ""])


def test_arrow_corpus_matches_list_corpus():
    ids, titles, texts = ["d1", "d2", "d3"], ["", " Title ", "t"], ["alpha", "beta ", ""]
    lists = Corpus(ids, titles, texts)
    table = pa.table({"_id": ids, "title": titles, "text": texts})
    arrow = ArrowCorpus(table)
    assert len(arrow) == 3 and arrow.ids == ids
    assert list(arrow.titles) == titles and arrow.texts[1] == "beta " and arrow.texts[-1] == ""
    assert arrow.texts[0:2] == ["alpha", "beta "] and arrow.texts[::2] == ["alpha", ""]
    # contents(): (title + " " + text).strip() when the title is non-empty, else text (Corpus's rule)
    assert arrow.contents() == lists.contents() == ["alpha", "Title  beta", "t"]
    assert [c for batch in arrow.iter_contents(batch_size=2) for c in batch] == lists.contents()
    assert [c for batch in lists.iter_contents(batch_size=2) for c in batch] == lists.contents()
    assert arrow.id_array.tolist() == ids


def test_arrow_corpus_casts_integer_ids_and_fills_nulls():
    table = pa.table({"_id": [10, 20], "title": [None, "a"], "text": ["x", None]})
    corpus = ArrowCorpus(table)
    assert corpus.ids == ["10", "20"] and list(corpus.titles) == ["", "a"] and list(corpus.texts) == ["x", ""]
    with pytest.raises(ValueError, match="lacks column"):
        ArrowCorpus(pa.table({"_id": ["a"], "text": ["x"]}))

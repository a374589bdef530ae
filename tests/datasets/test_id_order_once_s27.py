"""A corpus load's duplicate-id check sorts the ids (harness.columns.distinct_order); the corpus it returns
keeps that order as its id_order, which the BM25 index and run checks read, instead of sorting the ids a
second time (1M ids: ~0.04 s of a cold run, on one core). Streamed into the cache, parsed whole, and not
cached alike; a cache hit sorts when asked, as before."""

from __future__ import annotations

import json
import random

import numpy as np
import pyarrow as pa
import pytest

from harness.columns import distinct_order
from harness.datasets import beir, corpus_cache
from harness.datasets.beir import load_corpus
from harness.datasets.corpus import Corpus
from harness.formats import native
from tests.datasets.test_corpus_stream import cache_root  # noqa: F401  (the fixture)

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled module is not built: no radix sort")


def _corpus_file(tmp_path):
    rng = random.Random(7)
    ids = [f"d{i}" for i in range(300)] + ["d1é", "D", "d", "d10\u00a0", "z", "é", "d01"]
    rng.shuffle(ids)
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"_id": i, "title": "t", "text": f"text of {i}"}) + "\n" for i in ids))
    return path, ids


def _sorts(monkeypatch):
    calls = []
    real = native.string_order
    monkeypatch.setattr(native, "string_order", lambda *a: calls.append(1) or real(*a))
    return calls


@pytest.mark.parametrize("how", ["streamed", "whole", "uncached"])
def test_the_load_keeps_the_order_of_its_duplicate_check(cache_root, tmp_path, monkeypatch, how):
    path, ids = _corpus_file(tmp_path)
    if how == "whole":
        monkeypatch.setenv(beir.STREAM_ENV, "0")
    calls = _sorts(monkeypatch)
    corpus = load_corpus(path, cache=how != "uncached")
    assert calls == [1] and "id_order" in corpus.__dict__  # sorted once, by the check
    expected = sorted(range(len(ids)), key=lambda i: ids[i].encode("utf-8"))
    assert corpus.id_order.tolist() == expected
    assert corpus.id_rank.tolist() == np.argsort(expected).tolist() and calls == [1]
    assert Corpus.from_table(corpus.table).id_order.tolist() == expected  # (what a sort of its own gives)


def test_a_cache_hit_sorts_when_asked(cache_root, tmp_path, monkeypatch):
    path, ids = _corpus_file(tmp_path)
    load_corpus(path, cache=True)
    corpus_cache.wait()
    calls = _sorts(monkeypatch)
    corpus = load_corpus(path, cache=True)
    assert calls == [] and "id_order" not in corpus.__dict__
    assert corpus.id_order.tolist() == sorted(range(len(ids)), key=lambda i: ids[i].encode("utf-8")) and calls == [1]


def test_duplicate_ids_give_no_order(cache_root, tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"_id": i, "text": "x"}) + "\n" for i in ["a", "b", "a"]))
    assert distinct_order(pa.array(["a", "b", "a"])) == (False, None)
    distinct, order = distinct_order(pa.chunked_array([pa.array(["b"]), pa.array(["a", "c"])]))
    assert distinct and order.tolist() == [1, 0, 2]
    with pytest.raises(Exception, match="duplicate document id"):
        load_corpus(path, cache=True)

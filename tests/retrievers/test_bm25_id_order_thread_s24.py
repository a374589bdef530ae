"""A BM25 build sorts the documents' ids (the search's tie order, DocOrder) on a thread of its own while
it encodes (lucene_backend.build): the sort and the encoding both run without the GIL, so the sort no
longer takes a turn of its own on the calling thread after the build (1M documents ~0.05 s, MS MARCO's
8.8M ~0.4 s)."""

from __future__ import annotations

import threading

from harness.datasets.corpus import Corpus
from retrievers.bm25 import BM25Retriever


def test_the_id_sort_runs_beside_the_build_and_gives_the_same_ranks(monkeypatch):
    ids = [f"d{i}" for i in (5, 3, 10, 1, 22, 7)]
    corpus = Corpus(ids, ["", "t", "", "x", "", ""], ["cells divide", "mice", "cells of mice", "rats", "cell", "x y"])
    seen = []
    real = Corpus.id_order.func

    def id_order(self):
        seen.append(threading.current_thread().name)
        return real(self)

    monkeypatch.setattr(Corpus, "id_order", property(id_order))  # (no cache: every read is seen)
    retriever = BM25Retriever(cache=False)
    retriever.index(corpus)
    assert seen and seen[0].startswith("bm25-id-order")  # (before: the calling thread, after the build)
    ranks = corpus.__dict__.get("id_rank")
    assert ranks is not None and sorted(ids, key=lambda i: ranks[ids.index(i)]) == sorted(ids)

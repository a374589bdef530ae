"""harness.reranker.Candidates: a retriever's run over the corpus maps its codes to rows as they are;
a run read from a file maps its ids through the corpus; both give the same candidates and runs."""

from __future__ import annotations

import numpy as np

from harness.datasets.corpus import Corpus, Queries
from harness.formats.trec import read_run, write_run
from harness.reranker import Candidates
from retrievers.bm25 import BM25Retriever

TEXTS = ["apple banana", "banana", "apple", "cherry apple banana", "banana cherry", "apple apple"]
IDS = ["d5", "d10", "d2", "d40", "d3", "d1"]  # string order unlike row order
CORPUS = Corpus(IDS, [""] * len(IDS), TEXTS)
QUERIES = Queries(["q1", "q2"], ["apple", "banana cherry"])


def test_a_retrievers_run_and_the_same_run_read_from_a_file_give_the_same_candidates(tmp_path):
    retriever = BM25Retriever(cache_dir=tmp_path / "cache")
    retriever.index(CORPUS)
    run = retriever.search(QUERIES, 10)
    write_run(run, tmp_path / "run.trec")
    from_file = read_run(tmp_path / "run.trec")
    direct, read = Candidates.of(run, QUERIES, CORPUS, 3), Candidates.of(from_file, QUERIES, CORPUS, 3)
    assert direct.id_order is not None and read.id_order is None  # the corpus's order rides along
    assert direct.query_ids == read.query_ids and np.array_equal(direct.offsets, read.offsets)
    assert np.array_equal(direct.doc_rows, read.doc_rows)
    # q1 "apple": d1 ("apple apple") first, then the shorter "apple" (d2), then d5 ("apple banana")
    assert [IDS[r] for r in direct.doc_rows[direct.offsets[0]:direct.offsets[1]]] == ["d1", "d2", "d5"]
    # new scores with ties: the reranked runs rank ties by id, descending, either way
    scores = np.array([1.0, 1.0, 0.5, 2.0, 2.0, 2.0])[:len(direct)]
    a, b = direct.to_run(scores, CORPUS), read.to_run(scores, CORPUS)
    assert a.to_dict() == b.to_dict()
    assert [a.doc_ids(i) for i in range(2)] == [b.doc_ids(i) for i in range(2)]
    assert a.doc_ids(0) == ["d2", "d1", "d5"]
    assert a.codes_of(["d40", "nope"]).tolist() == [IDS.index("d40"), -1]

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


def test_the_cut_at_depth_is_the_evaluators_float32_ranking_of_a_files_double_scores(tmp_path):
    """A run file's scores 1.00000001 (d2) and 1.0 (d5) are equal in float32, so the evaluator (trec_eval 9:
    ``float sim``) ranks d5 first (tie: id descending) and the first stage's top 1 is d5. The reranker's
    top 1 must be the same document: otherwise Recall@depth of the reranked run is not the first stage's
    (docs/rerank.md). Worked example; the run's float64 order would put d2 first."""
    from harness.evaluation import evaluate
    from harness.qrels import Qrels
    from harness.reranker import Reranker

    class Constant(Reranker):
        name = "constant"

        def score(self, candidates, queries, corpus):
            return np.ones(len(candidates), dtype=np.float32)

    (tmp_path / "run.trec").write_text("q1 Q0 d2 1 1.00000001 first\nq1 Q0 d5 2 1.0 first\nq1 Q0 d40 3 0.5 first\n")
    first = read_run(tmp_path / "run.trec")
    qrels = Qrels.from_dict({"q1": {"d5": 1}})
    assert evaluate(first, qrels, ["Recall@1"]).means["Recall@1"] == 1.0  # d5 is the evaluator's top 1
    assert [IDS[r] for r in Candidates.of(first, QUERIES, CORPUS, 1).doc_rows] == ["d5"]
    reranked = Constant().rerank(first, QUERIES, CORPUS, 1)
    assert reranked.to_dict() == {"q1": {"d5": 1.0}}
    assert evaluate(reranked, qrels, ["Recall@1"]).means["Recall@1"] == 1.0
    # depth 2 takes both tied documents
    assert sorted(IDS[r] for r in Candidates.of(first, QUERIES, CORPUS, 2).doc_rows) == ["d2", "d5"]


def test_a_document_whose_id_is_its_querys_takes_no_place_at_the_cut(tmp_path):
    """Worked example: query "d5" retrieves itself first (3.0), then d2 (2.0), d40 (1.0); only d40 is
    relevant. The evaluator drops d5 (identical ids, on by default), so the first stage's Recall@2 is 1
    (d2, d40). A cut at depth 2 that counts d5 keeps {d5, d2}: the reranked Recall@2 would be 0.
    With the rule off (--keep-identical-ids), d5 is a candidate like any other."""
    from harness.evaluation import evaluate
    from harness.qrels import Qrels
    from harness.reranker import Reranker

    class Constant(Reranker):
        name = "constant"

        def score(self, candidates, queries, corpus):
            return np.ones(len(candidates), dtype=np.float32)

    queries = Queries(["d5"], ["apple"])
    (tmp_path / "run.trec").write_text("d5 Q0 d5 1 3.0 first\nd5 Q0 d2 2 2.0 first\nd5 Q0 d40 3 1.0 first\n")
    first = read_run(tmp_path / "run.trec")
    qrels = Qrels.from_dict({"d5": {"d40": 1}})
    assert evaluate(first, qrels, ["Recall@2"]).means["Recall@2"] == 1.0
    reranked = Constant().rerank(first, queries, CORPUS, 2)
    assert reranked.to_dict() == {"d5": {"d40": 1.0, "d2": 1.0}}
    assert evaluate(reranked, qrels, ["Recall@2"]).means["Recall@2"] == 1.0
    kept = Constant().rerank(first, queries, CORPUS, 2, ignore_identical_ids=False)
    assert kept.to_dict() == {"d5": {"d5": 1.0, "d2": 1.0}}

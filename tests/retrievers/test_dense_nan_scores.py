"""A NaN score (an embedding holding NaN, or inf, which normalizes to NaN) is -1 in the ranking and in
the run, as MTEB's and BEIR's exact search set it (``cos_scores[torch.isnan(cos_scores)] = -1``,
mteb 1.12 RetrievalEvaluator / beir.retrieval.search.dense.exact_search): then the run can be written
and evaluated. A NaN left in the run made ``write_run`` and the evaluator fail ("run scores contain NaN")
whenever it was not the query's last entry, e.g. a query whose embedding is NaN (every score NaN)."""

from __future__ import annotations

import numpy as np

from harness.datasets.corpus import Corpus, Queries
from harness.evaluation import evaluate
from harness.formats.trec import read_run, write_run
from harness.qrels import Qrels
from retrievers.dense import DenseRetriever
from retrievers.dense.exact import exact_search, rerank_candidates
from retrievers.rerank.bi_encoder import BiEncoderReranker
from retrievers.topk import string_ranks
from tests.retrievers.test_dense_retriever import FakeModel, model_dir  # noqa: F401  (fixture)

CORPUS = Corpus(ids=["d1", "d2", "d3", "d4"], titles=[""] * 4,
                texts=["red cherries", "green", "broken", "red"])
QUERIES = Queries(["q1", "q2"], ["red", "broken"])


class NaNModel(FakeModel):
    """The hashed-word fake, but any text with the word "broken" embeds as NaN."""

    def encode(self, texts, **kwargs):
        out = super().encode(texts, **kwargs)
        out[["broken" in t for t in texts]] = np.nan
        return out


def test_exact_search_reports_a_nan_score_as_minus_one_ranked_as_minus_one():
    docs = np.array([[1.0, 0.0], [np.nan, 0.0], [-2.0, 0.0], [-1.0, 0.0]], dtype=np.float32)
    rank = string_ranks(np.array(["a", "b", "c", "d"], dtype=object))
    for block in (1, 3, 16384):
        idx, scores = exact_search(np.array([[1.0, 0.0], [np.nan, 1.0]], dtype=np.float32), docs, 4, rank,
                                   cosine=False, doc_block=block)
        # q1 dot products: a 1, b NaN (-1), c -2, d -1; -1 ties by id descending: d, then b
        assert idx.tolist() == [[0, 3, 1, 2], [3, 2, 1, 0]]  # q2 is NaN: every score -1, ids descending
        assert scores.tolist() == [[1.0, -1.0, -1.0, -2.0], [-1.0, -1.0, -1.0, -1.0]]
    idx, scores = rerank_candidates(np.array([[1, 0, -1]]), np.array([[np.nan, 0.5, -3e38]], np.float32), 2, rank)
    assert idx.tolist() == [[0, 1]] and scores.tolist() == [[0.5, -1.0]]  # the faiss path alike


def test_a_dense_run_with_nan_embeddings_is_written_read_and_evaluated(model_dir, tmp_path):  # noqa: F811
    dense = DenseRetriever(model=NaNModel(model_dir), cache=False, progress=False)
    dense.index(CORPUS)
    run = dense.search(QUERIES, 4)
    assert not np.isnan(run.scores).any()
    # q2 ("broken") embeds as NaN: all four documents score -1, ranked by id descending
    assert run.to_dict()["q2"] == {"d4": -1.0, "d3": -1.0, "d2": -1.0, "d1": -1.0}
    assert run.doc_ids(1) == ["d4", "d3", "d2", "d1"]
    # q1 ("red"; the fake's buckets: red 15, cherries 9, green 1): d4 1, d1 1/sqrt(2), d2 0, d3 NaN -> -1
    assert run.doc_ids(0) == ["d4", "d1", "d2", "d3"]
    assert run.to_dict()["q1"] == {"d4": 1.0, "d1": float(np.float32(2 ** -0.5)), "d2": 0.0, "d3": -1.0}
    write_run(run, tmp_path / "run.trec")
    assert read_run(tmp_path / "run.trec").to_dict() == run.to_dict()
    result = evaluate(run, Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d3": 1}}), ["Recall@2"])
    assert result.means["Recall@2"] == 1.0  # q1: d1 at rank 2; q2: d3 at rank 2 (ids descending)

    reranker = BiEncoderReranker(model=NaNModel(model_dir), cache=False, progress=False)
    reranked = reranker.rerank(run, QUERIES, CORPUS, 4)
    assert reranked.to_dict() == run.to_dict()  # the dense run restricted to its own candidates

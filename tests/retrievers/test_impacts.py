"""The impacts retriever: precomputed term weights (JsonVectorCollection JSONL) on an impact index.

Reference: a brute-force scipy.sparse dot product (tests/retrievers/sparse_data.py), float32 of the
float64 sum over ascending term ids, ties by document id descending; the run must equal it exactly,
compiled search and numpy search alike.
"""

from __future__ import annotations

import numpy as np
import pytest

from harness.datasets import load_dataset
from harness.datasets.corpus import Corpus, Queries
from harness.errors import InputError
from retrievers.sparse.impacts import ImpactsRetriever
from tests.retrievers.sparse_data import brute_force, random_vectors, run_pairs, write_jsonl


@pytest.fixture(scope="module")
def nfcorpus_impacts(tmp_path_factory):
    from tests.conftest import shared_dataset

    dataset = load_dataset(str(shared_dataset("nfcorpus")))
    rng = np.random.default_rng(17)
    ids = dataset.corpus.id_array.tolist()
    docs = random_vectors(ids, rng, vocab=3000, lo=20, hi=60)
    queries = random_vectors(list(dataset.queries.ids), rng, vocab=3000, lo=3, hi=10)
    folder = tmp_path_factory.mktemp("impacts")
    return (dataset, docs, queries, write_jsonl(folder / "docs.jsonl.gz", docs),
            write_jsonl(folder / "queries.jsonl", queries))


@pytest.mark.parametrize("compiled", ["1", "0"])
def test_nfcorpus_top100_equals_scipy_brute_force(nfcorpus_impacts, monkeypatch, compiled):
    dataset, docs, queries, docs_path, queries_path = nfcorpus_impacts
    monkeypatch.setenv("HARNESS_BM25_COMPILED", compiled)
    retriever = ImpactsRetriever(documents=str(docs_path), queries=str(queries_path), n_threads=2)
    retriever.index(dataset.corpus)
    got = run_pairs(retriever.search(dataset.queries, 100))
    want = brute_force(docs, queries, dataset.corpus.id_array.tolist(), 100)
    assert got == want
    assert sum(len(v) for v in want.values()) > 0.95 * 100 * len(want)  # nearly every query fills its top 100
    ties = sum(a[1] == b[1] for v in want.values() for a, b in zip(v, v[1:]))
    assert ties > 100  # equal float32 scores occur, so the tie rule (id descending) is exercised
    assert retriever.stats()["postings"] == sum(len(d["vector"]) for d in docs)


def test_ties_by_document_id_descending(tmp_path):
    corpus = Corpus(ids=["a", "b", "c", "d"], titles=[""] * 4, texts=[""] * 4)
    docs = write_jsonl(tmp_path / "d.jsonl", [{"_id": "a", "vector": {"x": 1.0}}, {"_id": "c", "vector": {"x": 1.0}},
                                               {"_id": "b", "vector": {"x": 0.5, "y": 1.0}},
                                               {"_id": "d", "vector": {"y": 3.0}}])
    queries = write_jsonl(tmp_path / "q.jsonl", [{"_id": "q1", "vector": {"x": 2.0, "unknown": 5.0}},
                                                  {"_id": "q2", "vector": {"x": 1.0, "y": 0.5}}])
    r = ImpactsRetriever(documents=str(docs), queries=str(queries), n_threads=1)
    r.index(corpus)
    got = run_pairs(r.search(Queries(ids=["q1", "q2"], texts=["", ""]), 10))
    # q1: a, c = 2.0 (tie: c before a), b = 1.0; q2: d = 1.5, a = c = 1.0 (c first), b = 0.5 + 0.5 = 1.0 (b < c)
    assert got == {"q1": [("c", 2.0), ("a", 2.0), ("b", 1.0)],
                   "q2": [("d", 1.5), ("c", 1.0), ("b", 1.0), ("a", 1.0)]}


def test_quantize_rounds_weights_and_is_recorded(tmp_path):
    corpus = Corpus(ids=["a", "b"], titles=["", ""], texts=["", ""])
    docs = write_jsonl(tmp_path / "d.jsonl", [{"id": "a", "vector": {"x": 0.126, "y": 0.004}},
                                               {"id": "b", "vector": {"x": 0.114}}])
    queries = write_jsonl(tmp_path / "q.jsonl", [{"id": "q", "vector": {"x": 0.5, "y": 10.0}}])
    r = ImpactsRetriever(documents=str(docs), queries=str(queries), quantize=100, n_threads=1)
    r.index(corpus)
    # rint(100 w): a: x 13, y 0 (dropped); b: x 11; q: x 50, y 1000 -> a 650, b 550
    assert run_pairs(r.search(Queries(ids=["q"], texts=[""]), 10)) == {"q": [("a", 650.0), ("b", 550.0)]}
    assert r.params()["quantize"] == 100
    with pytest.raises(ValueError, match="quantize"):
        ImpactsRetriever(documents=str(docs), queries=str(queries), quantize="0.5")


def _error(tmp_path, doc_lines, query_lines=('{"id": "q", "vector": {"x": 1}}',)) -> str:
    corpus = Corpus(ids=["a", "b"], titles=["", ""], texts=["", ""])
    (tmp_path / "d.jsonl").write_text("\n".join(doc_lines) + "\n")
    (tmp_path / "q.jsonl").write_text("\n".join(query_lines) + "\n")
    r = ImpactsRetriever(documents=str(tmp_path / "d.jsonl"), queries=str(tmp_path / "q.jsonl"))
    with pytest.raises(InputError) as info:
        r.index(corpus)
        r.search(Queries(ids=["q"], texts=[""]), 10)
    return str(info.value)


@pytest.mark.parametrize("lines, message", [
    (['{"id": "a", "vector": {"x": 1}}', '{"id": "zz", "vector": {"x": 1}}'],
     "d.jsonl:2: document is not in the dataset's corpus (id 'zz')"),
    (['{"id": "a", "vector": {"x": 1}}', '', '{"id": "a", "vector": {"y": 1}}'],
     "d.jsonl:3: duplicate id (first on line 1) (id 'a')"),
    (['{"id": "a", "vector": {"x": "high"}}'], "d.jsonl:1: a term weight is not a finite number (id 'a')"),
    (['{"id": "a", "vector": {"x": 1}}', '{"id": "b", "vector": {"x": NaN}}'],
     "d.jsonl:2: a term weight is not a finite number (id 'b')"),
    (['{"id": "a", "vector": [1, 2]}'], "d.jsonl:1: no \"vector\" object of term weights (id 'a')"),
    (['{"vector": {"x": 1}}'], "d.jsonl:1: no \"id\" (or \"_id\") string"),
    (['{"id": "a", "vector": {"x": 1}'], "d.jsonl:1: not a JSON object"),
])
def test_bad_document_files(tmp_path, lines, message):
    assert message in _error(tmp_path, lines)


def test_query_without_vector(tmp_path):
    msg = _error(tmp_path, ['{"id": "a", "vector": {"x": 1}}'], ['{"id": "other", "vector": {"x": 1}}'])
    assert msg.endswith("q.jsonl: query has no vector in the queries file (id 'q')")


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="documents file not found"):
        ImpactsRetriever(documents=str(tmp_path / "nope.jsonl"), queries=str(tmp_path / "q.jsonl"))


def test_documents_without_vectors_warned_and_never_retrieved(tmp_path, caplog):
    corpus = Corpus(ids=["a", "b", "c"], titles=[""] * 3, texts=[""] * 3)
    docs = write_jsonl(tmp_path / "d.jsonl", [{"id": "b", "vector": {"x": 1.0}}])
    queries = write_jsonl(tmp_path / "q.jsonl", [{"id": "q", "vector": {"x": 1.0}}])
    r = ImpactsRetriever(documents=str(docs), queries=str(queries))
    with caplog.at_level("WARNING"):
        r.index(corpus)
    assert "2 corpus documents have no vector (first: 'a')" in caplog.text
    assert r.stats()["documents_without_vectors"] == 2
    assert run_pairs(r.search(Queries(ids=["q"], texts=[""]), 10)) == {"q": [("b", 1.0)]}


def test_compiled_search_checks_weighted_queries():
    from retrievers.bm25 import loader

    if loader.built_module() is None:
        pytest.skip("the C extension is not built (no C compiler at install time)")
    from retrievers.bm25 import compiled
    from retrievers.sparse.impact_index import build_impact_index

    index = build_impact_index(3, np.array([0, 1, 2, 2]), np.array([0, 0, 1, 0]),
                               np.array([1.0, 2.0, 0.5, 3.0], np.float32), ["x", "y"])
    rank = np.arange(3, dtype=np.int64)
    search = compiled.Searcher(index, rank, rank)
    hits, docs, scores = search(np.array([0, 2]), np.array([0, 1]), 10, weights=np.array([2.0, 4.0], np.float32))
    # doc 2: 2 * 3 + 4 * 0.5 = 8; doc 1: 4; doc 0: 2
    assert hits.tolist() == [3] and docs.tolist() == [2, 1, 0] and scores.tolist() == [8.0, 4.0, 2.0]
    with pytest.raises(ValueError, match="distinct and ascending"):
        search(np.array([0, 2]), np.array([1, 0]), 10, weights=np.array([1.0, 1.0], np.float32))
    with pytest.raises(ValueError, match="one float32 per query term"):
        search(np.array([0, 2]), np.array([0, 1]), 10, weights=np.array([1.0], np.float32))

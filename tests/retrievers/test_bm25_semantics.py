"""BM25 semantics at the edges: every variant against bm25s (the oracle) and a hand-written Lucene
formula on random small corpora, both engines giving the same run, the degenerate k1 = 0 of BM25L /
BM25+, and cache entries whose manifest is damaged but still valid JSON."""

from __future__ import annotations

import json
import math
import random
from collections import Counter

import numpy as np
import pytest

from harness.datasets.corpus import Corpus, Queries
from retrievers.bm25 import BM25Retriever
from retrievers.bm25.lucene_norms import LENGTH_TABLE, int_to_byte4
from retrievers.bm25.scoring import nonoccurrence_tfc, tfc

_VOCAB = "alpha beta gamma delta eps zeta eta theta iota kappa the of a and".split()


def _run(retriever, corpus, texts, k):
    retriever.index(corpus)
    run = retriever.search(Queries([f"q{i}" for i in range(len(texts))], texts), k)
    return [list(zip(run.doc_ids(i), run.scores[run.offsets[i]:run.offsets[i + 1]].tolist()))
            for i in range(len(texts))]


def _lucene_expected(tokens, ids, query, k1, b, lossy, k):
    """Lucene's BM25Similarity in float32 (docs/bm25.md), clause scores summed in double."""
    n = sum(1 for t in tokens if t)
    avgdl = np.float32(sum(map(len, tokens)) / n)
    one, k1f, bf = np.float32(1), np.float32(k1), np.float32(b)
    out = {}
    for doc, terms in zip(ids, tokens):
        counts, total, matched = Counter(terms), 0.0, False
        for term, q in Counter(query).items():
            if term not in counts:
                continue
            matched = True
            df = sum(term in t for t in tokens)
            idf = np.float32(math.log(1 + (n - df + 0.5) / (df + 0.5)))
            length = LENGTH_TABLE[int_to_byte4(np.array([len(terms)]))[0]] if lossy else np.float32(len(terms))
            with np.errstate(divide="ignore"):
                inv = one / (k1f * ((one - bf) + bf * length / avgdl))
            total += float((idf - idf / (one + np.float32(counts[term]) * inv)) * np.float32(q))
        if matched and np.float32(total) > 0:
            out[doc] = float(np.float32(total))
    return sorted(out.items(), key=lambda x: (x[1], x[0]), reverse=True)[:k]


def test_variants_match_bm25s_and_lucene_and_both_engines_agree(monkeypatch):
    """60 random corpora (1-25 documents, stopwords included), each variant with a random idf method,
    k1, b, delta and length mode: the compiled and the Python engine give identical runs; the
    lucene method equals the hand-written float32 formula bit for bit (ranking and ties included),
    the others bm25s 0.3 (float64) to float32 rounding, over the documents that match."""
    bm25s = pytest.importorskip("bm25s")
    rng = random.Random(20261127)
    for _ in range(60):
        ids = list(dict.fromkeys(f"d{rng.randrange(1000)}" for _ in range(rng.randint(1, 25))))
        texts = [" ".join(rng.choice(_VOCAB) for _ in range(rng.randint(1, 30))) for _ in ids]
        corpus = Corpus(ids, [""] * len(ids), texts)
        method = rng.choice(["lucene", "robertson", "atire", "bm25l", "bm25+"])
        kw = dict(method=method, idf_method=rng.choice([None, "lucene", "robertson", "atire", "bm25l", "bm25+"]),
                  k1=rng.choice([0.0, 0.5, 0.9, 1.2, 2.0]), b=rng.choice([0.0, 0.4, 0.75, 1.0]),
                  delta=rng.choice([0.0, 0.5, 1.0]), lossy_lengths=rng.choice([None, True, False]))
        if method == "lucene":
            kw["idf_method"] = None
        queries = [" ".join(rng.choice(_VOCAB + ["unknown"]) for _ in range(rng.randint(0, 5))) for _ in range(6)]
        k = rng.randint(1, 30)
        runs = []
        for flag in ("1", "0"):
            monkeypatch.setenv("HARNESS_BM25_COMPILED", flag)
            runs.append(_run(BM25Retriever(cache=False, n_threads=1, **kw), corpus, queries, k))
        assert runs[0] == runs[1], kw
        retriever = BM25Retriever(cache=False, **kw)
        tokens = [retriever.analyzer(t) for t in texts]
        if not all(tokens):
            continue  # N and avgdl count the documents with terms (Lucene's docCount), bm25s all of them
        if method == "lucene":
            for got, query in zip(runs[0], queries):
                assert got == _lucene_expected(tokens, ids, retriever.analyzer(query), kw["k1"], kw["b"],
                                               retriever.scoring.lossy, k), (kw, query)
            continue
        if retriever.scoring.lossy or (method in ("bm25l", "bm25+") and kw["k1"] == 0):
            continue  # bm25s has no one-byte lengths; its non-occurrence score is NaN at k1 = 0 (0 / 0)
        model = bm25s.BM25(k1=kw["k1"], b=kw["b"], method=method, idf_method=kw["idf_method"] or method,
                           delta=kw["delta"], dtype="float64")
        model.index(tokens, show_progress=False)
        for got, query in zip(runs[0], queries):
            terms = retriever.analyzer(query)
            scores = model.get_scores(terms) if terms else np.zeros(len(ids))
            want = {ids[d]: float(np.float32(s)) for d, s in enumerate(scores)
                    if set(tokens[d]) & set(terms) and np.float32(s) > 0}
            assert {d for d, _ in got} <= set(want) and len(got) == min(k, len(want)), (kw, query)
            for doc, score in got:
                assert score == pytest.approx(want[doc], rel=3e-6), (kw, query, doc)


@pytest.mark.parametrize("compiled", ["1", "0"])
def test_bm25plus_and_bm25l_with_k1_zero(monkeypatch, compiled):
    """k1 = 0 passes validation (k1 >= 0); the non-occurrence part tfc(tf=0) divided 0 by 0 there
    (ZeroDivisionError while indexing, for bm25+ at any delta, bm25l at delta 0). With k1 = 0 a
    present term's tfc is 1 (+ delta for bm25+), an absent one's its tf = 0 limit: delta (bm25+),
    0 (bm25l, delta 0). d1 = [x, y], d2 = [y]; N = 2; bm25+ idf = ln(3 / df), bm25l ln(3 / (df + .5))."""
    monkeypatch.setenv("HARNESS_BM25_COMPILED", compiled)
    corpus = Corpus(["d1", "d2"], ["", ""], ["x y", "y"])
    plus = dict(_run(BM25Retriever(cache=False, method="bm25+", k1=0.0, delta=0.5), corpus, ["x y"], 10)[0])
    idf_x, idf_y = math.log(3 / 1), math.log(3 / 2)
    assert plus["d1"] == pytest.approx(idf_x * 1.5 + idf_y * 1.5, rel=1e-6)
    assert plus["d2"] == pytest.approx(idf_x * 0.5 + idf_y * 1.5, rel=1e-6)  # x absent: its delta only
    l0 = dict(_run(BM25Retriever(cache=False, method="bm25l", k1=0.0, delta=0.0), corpus, ["x y"], 10)[0])
    assert l0["d1"] == pytest.approx(math.log(3 / 1.5) + math.log(3 / 2.5), rel=1e-6)
    assert l0["d2"] == pytest.approx(math.log(3 / 2.5), rel=1e-6)


def test_nonoccurrence_closed_form_equals_the_formula_where_it_is_defined():
    """The closed form changes no value of a valid setting (so no cached index): bit for bit."""
    rng = random.Random(7)
    for _ in range(2000):
        k1, b, delta, avgdl = rng.uniform(1e-3, 5), rng.uniform(0, 1), rng.choice([0.0, rng.uniform(0, 3)]), rng.uniform(1, 300)
        for method in ("bm25l", "bm25+"):
            assert nonoccurrence_tfc(method, k1, delta) == tfc(method, 0.0, avgdl, avgdl, k1, b, delta)


def _damage_manifest(tmp_path, change):
    corpus = Corpus([f"d{i}" for i in range(30)], [""] * 30, [f"w{i % 5} common x{i % 3}" for i in range(30)])
    queries = Queries(["q"], ["w1 x2"])
    first = BM25Retriever(cache_dir=tmp_path)
    first.index(corpus)
    expected = first.search(queries, 10).to_dict()
    first.stats()  # the entry is written
    entry = first.backend.cache_entry
    manifest = json.loads((entry / "manifest.json").read_text())
    change(entry, manifest)
    (entry / "manifest.json").write_text(json.dumps(manifest))
    second = BM25Retriever(cache_dir=tmp_path)
    second.index(corpus)  # raised KeyError / ValueError before: a damaged entry must be rebuilt
    assert second.backend.cache_status == "rebuilt"
    assert second.search(queries, 10).to_dict() == expected
    second.stats()


@pytest.mark.parametrize("value", [None, "many", "missing"])
def test_manifest_with_a_bad_document_count_is_rebuilt(tmp_path, value):
    def change(entry, manifest):
        if value == "missing":
            del manifest["n_docs"]
        else:
            manifest["n_docs"] = value
    _damage_manifest(tmp_path, change)


def test_entry_missing_an_array_and_its_manifest_line_is_rebuilt(tmp_path):
    def change(entry, manifest):
        del manifest["files"]["indptr.npy"]
        (entry / "indptr.npy").unlink()
    _damage_manifest(tmp_path, change)


def test_python_search_with_k_zero_gives_no_documents():
    """k = 0 asks for no document: the numpy search gave a query's single match anyway (it skipped the
    top-k selection for one match); with two matches it gave none. Now none either way."""
    from retrievers.bm25.search import DocOrder, search_python

    corpus = Corpus(["d1", "d2", "d3"], ["", "", ""], ["apple pie", "banana", "apple apple"])
    retriever = BM25Retriever(cache=False)
    retriever.index(corpus)
    index = retriever.backend.sparse_index
    terms = list(index.terms)
    queries = [(np.array([terms.index("banana")]), None), (np.array([terms.index("appl")]), None)]
    for k, offsets in ((0, [0, 0, 0]), (1, [0, 1, 2]), (5, [0, 1, 3])):
        run = search_python(index, DocOrder.of(corpus), ["q1", "q2"], queries, k, 1)
        assert run.offsets.tolist() == offsets, k

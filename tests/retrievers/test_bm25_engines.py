"""The one compiled-or-Python choice (loader.py, engines.py): the switch, the pure-Python path an
install without the extension runs, and the two paths' equal indexes and runs on SciFact."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from retrievers.bm25 import BM25Retriever, loader
from retrievers.bm25.sparse_index import SparseIndex
from tests.retrievers.bm25_c import compiled, needs_extension, scifact  # noqa: F401

HAS_C_COMPILER = bool(shutil.which("cc") or shutil.which("gcc"))


# ------------------------------------------------------------------------------ 1. it is built
def test_extension_is_built_when_a_c_compiler_exists():
    if not HAS_C_COMPILER:
        pytest.skip("no C compiler (cc or gcc) on PATH: the optional extension cannot have been built")
    try:
        import retrievers.bm25._fastbm25  # noqa: F401
    except ImportError as exc:
        pytest.fail(f"a C compiler exists but retrievers.bm25._fastbm25 does not import ({exc}); "
                    "`pip install -e .` should compile it (retrievers/bm25/native/*.c)")
    assert loader.built_module() is not None and compiled is not None



def _index_and_runs(monkeypatch, dataset, setting: str, params: dict):
    if setting == "python":
        monkeypatch.setenv("HARNESS_BM25_COMPILED", "0")
    else:
        monkeypatch.delenv("HARNESS_BM25_COMPILED", raising=False)
    assert (loader.extension() is not None) == (setting == "compiled")
    retriever = BM25Retriever(cache=False, **params)
    assert retriever.backend.engine.compiled == (setting == "compiled")
    retriever.index(dataset.corpus)
    ks = (1000, 1, len(dataset.corpus) + 17)
    return retriever.backend.sparse_index, {k: retriever.search(dataset.queries, k) for k in ks}


def _postings_by_term(index: SparseIndex, order: np.ndarray):
    """indptr / indices / data / nonoccurrence with the terms renumbered in ``order``."""
    lengths = np.diff(index.indptr)[order]
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    src = np.repeat(index.indptr[:-1][order] - indptr[:-1], lengths) + np.arange(indptr[-1])
    nonocc = None if index.nonoccurrence is None else index.nonoccurrence[order]
    return indptr, index.indices[src], index.data[src], nonocc


@needs_extension
@pytest.mark.parametrize("params", [{}, {"k1": 0.0}, {"lossy_lengths": False}, {"method": "bm25+"}, {"method": "robertson"}],
                         ids=["lucene", "lucene-k1-0", "lucene-exact-lengths", "bm25+", "robertson"])
def test_scifact_compiled_equals_python(monkeypatch, scifact, params):
    py_index, py_runs = _index_and_runs(monkeypatch, scifact, "python", params)
    c_index, c_runs = _index_and_runs(monkeypatch, scifact, "compiled", params)
    assert py_index.n_docs == c_index.n_docs == len(scifact.corpus) == 5183
    assert sorted(py_index.terms) == sorted(c_index.terms)
    assert py_index.n_terms > 25_000
    np.testing.assert_array_equal(py_index.doc_lengths, c_index.doc_lengths)
    assert py_index.doc_lengths.dtype == c_index.doc_lengths.dtype == np.int32
    py_post = _postings_by_term(py_index, np.argsort(np.array(py_index.terms, dtype=object)))
    c_post = _postings_by_term(c_index, np.argsort(np.array(c_index.terms, dtype=object)))
    for name, a, b in zip(("indptr", "indices", "data", "nonoccurrence"), py_post, c_post):
        if name == "nonoccurrence":
            assert (a is None) == (b is None) == (params.get("method") != "bm25+")
            if a is None:
                continue
        assert a.dtype == b.dtype, name
        np.testing.assert_array_equal(a, b, err_msg=name)  # float32 scores bit for bit
    assert py_post[2].dtype == np.float32 and len(py_post[2]) > 400_000
    for k, py_run in py_runs.items():
        c_run = c_runs[k]
        assert c_run.query_ids.tolist() == py_run.query_ids.tolist()
        assert c_run.doc_vocab.tolist() == py_run.doc_vocab.tolist()
        np.testing.assert_array_equal(c_run.offsets, py_run.offsets, err_msg=f"k={k}")
        np.testing.assert_array_equal(c_run.doc_codes, py_run.doc_codes, err_msg=f"k={k}")
        np.testing.assert_array_equal(c_run.scores, py_run.scores, err_msg=f"k={k}")
        hits = np.diff(py_run.offsets)
        assert hits.max() <= k
        if k == 1:
            assert hits.sum() >= 290
        else:
            assert hits.sum() > 200_000
    assert np.diff(py_runs[len(scifact.corpus) + 17].offsets).max() > 1000


@needs_extension
def test_scifact_index_cached_by_the_python_path_searched_by_the_compiled_one(monkeypatch, scifact, tmp_path):
    """A cached index built by the Python path is searched through the compiled encoder made from its
    vocabulary (CompiledTermEncoder(analyzer, terms)): the same runs as the Python search. (No
    stemmer: the cache key names the Porter implementation, which differs until the fallback is
    exact, so a Porter index would not be shared.)"""
    monkeypatch.setenv("HARNESS_BM25_COMPILED", "0")
    python = BM25Retriever(cache_dir=tmp_path, stemmer=None)
    python.index(scifact.corpus)
    expected = python.search(scifact.queries, 100)
    monkeypatch.delenv("HARNESS_BM25_COMPILED")
    fast = BM25Retriever(cache_dir=tmp_path, stemmer=None)
    fast.index(scifact.corpus)
    assert (python.backend.cache_status, fast.backend.cache_status) == ("built", "hit")
    got = fast.search(scifact.queries, 100)
    assert isinstance(fast.backend.engine._encoder, compiled.CompiledTermEncoder)
    assert fast.backend.engine._encoder.terms is fast.backend.sparse_index.terms
    for name in ("offsets", "doc_codes", "scores"):
        np.testing.assert_array_equal(getattr(got, name), getattr(expected, name), err_msg=name)
    assert len(got.scores) > 25_000



@needs_extension
def test_corpus_digest_compiled_equals_the_python_byte_stream(scifact):
    """The cache key's corpus digest fed by the extension (no joined strings) equals sha256 of the
    documented stream: per chunk and column, int64 lengths, then the joined UTF-8 (surrogatepass)."""
    import hashlib

    from retrievers.bm25.engines import corpus_digest
    from retrievers.texts import corpus_chunks

    def reference(chunks):
        h = hashlib.sha256()
        for chunk in chunks:
            for column in chunk:
                h.update(np.array([len(s) for s in column], dtype=np.int64).tobytes())
                h.update("".join(column).encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    odd = [(["a", "b\ud800", "", "c" * (3 << 20)], ["", "é" * 700_000, "\udfff", "t"], ["x", "", "😀 y", ""])]
    scifact_chunks = list(corpus_chunks(scifact.corpus, 2000))
    for chunks in (odd, scifact_chunks, []):
        assert corpus_digest(iter(chunks), compiled.digest_column) == corpus_digest(iter(chunks)) == reference(chunks)
    with pytest.raises(TypeError):
        compiled._fastbm25.digest_column(hashlib.sha256().update, ["a", 3])




class _NoExtension:
    """Stands in for the extension module: any use of it fails the test."""

    def __getattr__(self, name):
        raise AssertionError(f"the compiled extension was used ({name}) on the pure-Python path")


@pytest.mark.parametrize("how", ["absent", "switched off"])
def test_the_python_path_uses_nothing_compiled(monkeypatch, scifact, tmp_path, how):
    """An install without a C compiler (the extension does not import), and HARNESS_BM25_COMPILED=0,
    run the same pure-Python path: the corpus digest, analysis (tokenizer and Porter stemmer),
    postings, scoring and search all in Python -- the extension, replaced by a stand-in that fails
    on any use, is never touched. On SciFact that path gives Anserini's nDCG@10 0.6789 / R@100
    0.9253 (the reference of test_bm25_scifact.py) and, cached and searched again, the same run."""
    import sys

    import retrievers.bm25 as bm25_package
    from harness.evaluation import evaluate
    from retrievers.bm25 import stemming
    from retrievers.bm25.stemming import fallback_porter

    if how == "absent":
        monkeypatch.setattr(loader, "_built", None)
        monkeypatch.setitem(sys.modules, "retrievers.bm25._fastbm25", None)  # import raises ImportError
        monkeypatch.delitem(sys.modules, "retrievers.bm25.compiled", raising=False)
        monkeypatch.delattr(bm25_package, "compiled", raising=False)
        monkeypatch.delenv("HARNESS_BM25_COMPILED", raising=False)
        with pytest.raises(ImportError):
            from retrievers.bm25 import compiled as _  # noqa: F401
    else:
        monkeypatch.setattr(loader, "_built", _NoExtension())
        monkeypatch.setenv("HARNESS_BM25_COMPILED", "0")
    assert loader.extension() is None and loader.porter_implementation() == stemming.FALLBACK_PORTER
    runs = []
    for status in ("built", "hit"):
        retriever = BM25Retriever(cache_dir=tmp_path)
        assert not retriever.backend.engine.compiled
        retriever.index(scifact.corpus)
        assert retriever.backend.cache_status == status
        runs.append(retriever.search(scifact.queries, 1000))
    means = evaluate(runs[0], scifact.qrels, ["NDCG@10", "Recall@100"]).means
    assert round(means["NDCG@10"], 4) == 0.6789 and round(means["Recall@100"], 4) == 0.9253
    assert runs[0].to_dict() == runs[1].to_dict()
    words = ["trekking", "revved", "pathology"]
    assert retriever.analyzer(" ".join(words)) == fallback_porter(words)  # the one fallback stemmer


def test_the_fallback_porter_is_lucenes():
    """Lucene 8.7's PorterStemmer: trekking -> trek, revved -> rev (test_bm25_porter.py's golden file)."""
    from retrievers.bm25.stemming import fallback_porter

    assert fallback_porter(["trekking", "revved", "pathology"]) == ["trek", "rev", "patholog"]

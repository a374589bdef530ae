"""Review tests of the sparse retriever (retrievers/sparse/retriever.py, cache.py) with the tiny
SPLADE model of test_sparse_encoder.py (random 1-layer BertForMaskedLM + SpladePooling, built at
test time). Oracle: sentence-transformers' own ``encode_document`` on the whole corpus."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sentence_transformers.sparse_encoder")

from harness.datasets.corpus import Corpus, Queries  # noqa: E402
from harness.errors import HarnessError  # noqa: E402
from retrievers.sparse.cache import SparseRows  # noqa: E402
from retrievers.sparse.retriever import SparseRetriever  # noqa: E402
from tests.retrievers.test_sparse_encoder import WORDS, tiny_model  # noqa: E402,F401  (fixture)


def _dense(rows: SparseRows, dim: int) -> np.ndarray:
    out = np.zeros((len(rows.lengths), dim), dtype=np.float32)
    offsets = rows.offsets
    for i in range(len(rows.lengths)):
        out[i, rows.term_ids[offsets[i]:offsets[i + 1]]] = rows.weights[offsets[i]:offsets[i + 1]]
    return out


def _corpus(n: int = 24) -> Corpus:
    """Texts of distinct lengths (so sentence-transformers' length sort has no ties to order)."""
    rng = np.random.default_rng(3)
    texts, lengths = [], set()
    while len(texts) < n:
        text = " ".join(rng.choice(WORDS[5:], size=int(rng.integers(1, 25))))
        if len(text) not in lengths:
            lengths.add(len(text))
            texts.append(text)
    return Corpus(ids=[f"d{i:02d}" for i in range(n)], titles=[""] * n, texts=texts)


def test_document_weights_do_not_depend_on_the_chunk_size_or_the_cache(tiny_model, tmp_path):  # noqa: F811
    """A text's weights depend, in their last float32 bits, on its batch's padding. The documents
    were encoded in chunks of corpus order (each chunk sorted and batched on its own), so the weights
    (and the run) changed with ``cache_chunk_size`` (an operation setting, not in params()) and with
    the cache on or off, and differed from sentence-transformers' encode_document on the corpus (here
    with chunks of 8: 8 of 955 weights, by up to 1.9e-8). Encoded longest first in chunks of that
    order (as dense), a chunk size that is a multiple of batch_size gives the very batches of one
    encode_document call: the same weights, bit for bit."""
    from sentence_transformers import SparseEncoder

    corpus = _corpus()
    model = SparseEncoder(str(tiny_model), device="cpu")
    want = model.encode_document(list(corpus.texts), batch_size=4).to_dense().numpy().astype(np.float32)
    loaded = None
    for cache, chunk in ((True, 8), (False, 8), (True, 2048)):
        r = SparseRetriever(model=str(tiny_model), device="cpu", batch_size=4, cache=cache,
                            cache_dir=str(tmp_path / f"cache-{chunk}"), cache_chunk_size=chunk)
        if loaded is not None:
            r.model._model = loaded  # (the same model files: loaded once)
        got = _dense(r.document_weights(corpus), want.shape[1])
        loaded = r.model._model
        assert np.array_equal(got, want), (cache, chunk, int((got != want).sum()))
        if cache:  # the complete entry, served again, is in corpus order
            r.cache_status = None
            assert np.array_equal(_dense(r.document_weights(corpus), want.shape[1]), want)
            assert r.cache_status == "hit"


def test_sparse_rows_take():
    rows = SparseRows(np.array([2, 0, 1], np.int64), np.array([1, 4, 7], np.int32),
                      np.array([0.5, 1.5, 2.5], np.float32))
    taken = rows.take(np.array([2, 0, 1]))
    assert taken.lengths.tolist() == [1, 2, 0] and taken.term_ids.tolist() == [7, 1, 4]
    assert taken.weights.tolist() == [2.5, 0.5, 1.5]
    assert rows.take(np.zeros(0, np.int64)).check(0)


def test_a_model_giving_a_nan_or_infinite_weight_is_refused(tiny_model, tmp_path):  # noqa: F811
    """A NaN weight made every score it entered NaN: the documents were silently never retrieved
    (an empty run, nDCG 0); an infinite one gave infinite scores. Refused like an impacts file's
    non-finite weight, naming the text, before anything is cached."""
    import torch
    from sentence_transformers import SparseEncoder

    corpus = Corpus(ids=["a", "b", "c"], titles=[""] * 3, texts=["cancer diet", "fat heart", "milk"])
    for value in (float("nan"), float("inf")):
        model = SparseEncoder(str(tiny_model), device="cpu")
        with torch.no_grad():  # the logit of vocabulary entry 10 ("cancer") is `value` for every token
            model[0].auto_model.cls.predictions.decoder.bias[10] = value
        folder = tmp_path / f"model-{value}"
        model.save(str(folder))
        r = SparseRetriever(model=str(folder), device="cpu", cache_dir=str(tmp_path / "cache"))
        with pytest.raises(HarnessError, match=r"the model gave document 'a' a term weight that is not a finite "
                                               r"number \((nan|inf)\)"):
            r.index(corpus)
        assert not list((tmp_path / "cache").rglob("*.npz"))  # nothing cached
        r2 = SparseRetriever(model=str(tiny_model), device="cpu", cache=False)
        r2.index(corpus)
        r2.model = r.model  # documents encoded by the good model; the query by the broken one
        with pytest.raises(HarnessError, match=r"the model gave query 'q' a term weight that is not a finite"):
            r2.search(Queries(ids=["q"], texts=["cancer"]), 10)

"""The dense retriever goes on without an embedding cache it cannot write (retrievers/dense/retriever.py),
as the BM25, corpus and pipeline caches do.

With ``HARNESS_CACHE_DIR`` on an empty read-only bind mount, ``harness run -r dense`` stopped with
``error: <cache>/embeddings: Read-only file system`` before encoding anything, where ``-r bm25`` ran
with a warning. Now the failed write is logged, the texts are encoded without the cache (as with
``cache=false``, the oracle here: the same run, score for score), and ``stats()`` says so
(``documents_cache``: ``miss, not cached (<strerror>)``). A cache root under a file fails the same
way (ENOTDIR) without a mount. The model: a tiny random BERT saved with sentence-transformers
(8 dimensions: tests/retrievers/tiny_models.py)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")

from harness.datasets.corpus import Corpus, Queries  # noqa: E402
from retrievers.dense import DenseRetriever  # noqa: E402
from tests.retrievers.tiny_models import sentence_transformer  # noqa: E402

CORPUS = Corpus(ids=["d1", "d2", "d3", "d4"], titles=["", "", "", ""], texts=["abc def", "xyz", "abc abc", "q r s"])
QUERIES = Queries(["q1", "q2"], ["abc", "xyz"])


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    return sentence_transformer(tmp_path_factory.mktemp("model"))


def _run(model: Path, **params):
    r = DenseRetriever(model=str(model), device="cpu", **params)
    r.index(CORPUS)
    return r, r.search(QUERIES, 3).to_dict()


def test_an_unwritable_cache_is_warned_about_and_the_run_made_without_it(tiny_model, tmp_path, caplog):
    (tmp_path / "a-file").write_text("")
    with caplog.at_level(logging.WARNING):
        r, run = _run(tiny_model, cache_dir=str(tmp_path / "a-file" / "embeddings"))
    assert run == _run(tiny_model, cache=False)[1]
    stats = r.stats()
    assert stats["documents_cache"] == stats["queries_cache"] == "miss, not cached (Not a directory)"
    assert (stats["documents_encoded"], stats["queries_encoded"]) == (4, 2)
    warned = [rec.getMessage() for rec in caplog.records if rec.levelno == logging.WARNING]
    assert len(warned) == 2 and all(m.startswith("could not write the embedding cache under") for m in warned)


def test_faiss_with_an_unwritable_cache_writes_no_index_file(tiny_model, tmp_path):
    pytest.importorskip("faiss")
    (tmp_path / "a-file").write_text("")
    _, run = _run(tiny_model, cache_dir=str(tmp_path / "a-file" / "embeddings"), index="faiss")
    assert set(run) == {"q1", "q2"}


def test_a_writable_cache_is_still_miss_then_hit(tiny_model, tmp_path):
    first, run = _run(tiny_model, cache_dir=str(tmp_path / "embeddings"))
    second, again = _run(tiny_model, cache_dir=str(tmp_path / "embeddings"))
    assert (first.stats()["documents_cache"], second.stats()["documents_cache"]) == ("miss", "hit")
    assert again == run

"""An embedding cache write that fails midway (retrievers/dense/retriever.py): the texts encoded already
are not encoded again.

A full disk fails most often at the join (the complete matrix needs as much space again as the parts),
after every chunk was encoded and written. The fallback (d9ac9a7) then encoded every text a second time
(an hour of encoding, twice) and stats() said ``documents_encoded`` 12 for 6 documents. Now the chunks
encoded already (their part files, or the last chunk, whose write failed) are taken as they are.

Expected values, worked by hand: 6 documents in chunks of 2 (3 chunks); each row is encoded once, so
``documents_encoded`` is 6 (the old code: 10 when the second part's write fails, 2 + 2 + 6; 12 when the
join fails, 6 + 6), and the run equals the one of ``cache=False`` (the oracle, score for score). The model:
a tiny random BERT saved with sentence-transformers (tests/retrievers/tiny_models.py).
"""

from __future__ import annotations

import contextlib
import errno
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")

from harness.datasets.corpus import Corpus, Queries  # noqa: E402
from retrievers.dense import DenseRetriever  # noqa: E402
from tests.retrievers.tiny_models import sentence_transformer  # noqa: E402
from retrievers.dense import cache as dense_cache  # noqa: E402

CORPUS = Corpus(ids=[f"d{i}" for i in range(6)], titles=[""] * 6,
                texts=["abc def", "xyz", "abc abc", "q r s", "k l", "m n o p"])
QUERIES = Queries(["q1", "q2"], ["abc", "xyz"])
FULL = OSError(errno.ENOSPC, "No space left on device")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    return sentence_transformer(tmp_path_factory.mktemp("model"))


def _run(model: Path, **params):
    r = DenseRetriever(model=str(model), device="cpu", cache_chunk_size=2, **params)
    r.index(CORPUS)
    return r, r.search(QUERIES, 3).to_dict()


def _documents(stats: dict) -> tuple:
    return stats["documents_cache"], stats["documents_from_cache"], stats["documents_encoded"]


def _fail_part_writes_from(monkeypatch, nth: int) -> None:
    write_part, calls = dense_cache.EmbeddingCache.write_part, []

    def failing(self, i, part):
        calls.append(i)
        if len(calls) >= nth:
            raise FULL
        return write_part(self, i, part)
    monkeypatch.setattr(dense_cache.EmbeddingCache, "write_part", failing)


def test_a_part_write_that_fails_encodes_each_text_once(tiny_model, tmp_path, monkeypatch):
    oracle = _run(tiny_model, cache=False)[1]
    _fail_part_writes_from(monkeypatch, 2)  # the first part is written, the second's write fails
    r, run = _run(tiny_model, cache_dir=str(tmp_path / "embeddings"))
    assert run == oracle
    assert _documents(r.stats()) == ("miss, not cached (No space left on device)", 0, 6)


def test_a_join_that_fails_encodes_nothing_again(tiny_model, tmp_path, monkeypatch):
    oracle = _run(tiny_model, cache=False)[1]

    @contextlib.contextmanager
    def full(path):
        raise FULL
        yield  # pragma: no cover

    monkeypatch.setattr(dense_cache, "atomic_path", full)  # every part written, the complete matrix not
    r, run = _run(tiny_model, cache_dir=str(tmp_path / "embeddings"))
    assert run == oracle
    assert _documents(r.stats()) == ("miss, not cached (No space left on device)", 0, 6)


def test_parts_of_an_earlier_run_are_taken(tiny_model, tmp_path, monkeypatch):
    oracle = _run(tiny_model, cache=False)[1]
    with monkeypatch.context() as m:
        _fail_part_writes_from(m, 2)  # leaves the first chunk's part (2 rows)
        _run(tiny_model, cache_dir=str(tmp_path / "embeddings"))
    _fail_part_writes_from(monkeypatch, 1)  # now no write succeeds (a read-only or full disk)
    r, run = _run(tiny_model, cache_dir=str(tmp_path / "embeddings"))
    assert run == oracle
    assert _documents(r.stats()) == ("resumed, not cached (No space left on device)", 2, 4)

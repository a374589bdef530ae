"""A model folder rewritten between the sha256 that keys a run's caches and the load of the model is refused
(retrievers/dense/model.py, FolderFiles).

``harness bench`` takes each cell's parameters, the model folder's sha256 among them, when it plans the cells;
a dense cell loads the model only when its turn comes, hours later maybe. A folder rewritten meanwhile (model B
copied over model A) had B's embeddings cached under A's sha256: the cell recorded A beside B's numbers, and every
later run of A, ``harness run`` too, was served B's embeddings from the cache (NDCG@10 0.0338, where A gives 0.3928:
probe of 2026-11-29 on 300 NFCorpus documents). Now the load refuses the folder, nothing is cached, and a run of A
afterwards equals a run of A from an empty cache (the oracle: ``cache=False``, score for score).
"""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")

from harness.datasets.corpus import Corpus, Queries  # noqa: E402
from harness.errors import HarnessError  # noqa: E402
from retrievers.dense import DenseRetriever  # noqa: E402
from retrievers.dense.model import ModelHandle  # noqa: E402
from tests.retrievers.tiny_models import sentence_transformer  # noqa: E402

CORPUS = Corpus(ids=[f"d{i}" for i in range(6)], titles=[""] * 6,
                texts=["abc def", "xyz", "abc abc", "q r s", "k l", "m n o p"])
QUERIES = Queries(["q1", "q2"], ["abc", "xyz"])


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Two tiny random models (A, B: other weights)."""
    root = tmp_path_factory.mktemp("models")
    (root / "a").mkdir()
    (root / "b").mkdir()
    return sentence_transformer(root / "a"), sentence_transformer(root / "b")


def _put(model, folder) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(model, folder)


def test_a_folder_rewritten_after_the_plan_is_refused_and_nothing_is_cached(models, tmp_path):
    a, b = models
    oracle = DenseRetriever(model=str(a), device="cpu", cache=False)
    oracle.index(CORPUS)
    expected = oracle.search(QUERIES, 3).to_dict()
    folder, cache = tmp_path / "model", tmp_path / "embeddings"
    _put(a, folder)
    planned = DenseRetriever(model=str(folder), device="cpu", cache_dir=str(cache))
    digest_a = planned.params()["model_sha256"]  # (the bench's plan)
    _put(b, folder)  # rewritten before the cell runs
    with pytest.raises(HarnessError, match=r"its files changed since their sha256 was taken"):
        planned.index(CORPUS)
    _put(a, folder)
    later = DenseRetriever(model=str(folder), device="cpu", cache_dir=str(cache))
    assert later.params()["model_sha256"] == digest_a
    later.index(CORPUS)
    assert later.search(QUERIES, 3).to_dict() == expected  # (was B's embeddings, served from A's entry)


def test_the_digest_taken_after_the_load_is_of_the_files_loaded(models, tmp_path):
    """Loaded first (the token limit asked of the model), hashed after: a folder rewritten in between is refused
    too; hashed once, the digest stays that of the files loaded, whatever the folder holds later."""
    a, b = models
    folder = tmp_path / "model"
    _put(a, folder)
    handle = ModelHandle("m", folder, device="cpu")
    handle.load()
    _put(b, folder)
    with pytest.raises(HarnessError, match=r"its files changed since the model was loaded from them"):
        handle.digest()
    _put(a, folder)
    first = ModelHandle("m", folder, device="cpu")
    digest = first.digest()
    first.load()
    _put(b, folder)
    assert first.digest() == digest


def _cross_encoder(folder):
    """A one-label random BERT (hidden 16) as sentence-transformers' CrossEncoder loads it."""
    import transformers

    folder.mkdir()
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "abc", "xyz"]) + "\n")
    config = transformers.BertConfig(vocab_size=7, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=32, max_position_embeddings=32, num_labels=1)
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    transformers.BertTokenizer(str(folder / "vocab.txt")).save_pretrained(folder)
    return folder


def test_the_cross_encoder_loads_the_files_it_hashed(tmp_path, monkeypatch):
    """Its ``model_sha256`` keys a pipeline's rerank stage before the stage loads the model."""
    pytest.importorskip("transformers")
    from retrievers.rerank.cross_encoder import CrossEncoderReranker

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    a, b = _cross_encoder(tmp_path / "a"), _cross_encoder(tmp_path / "b")
    folder = tmp_path / "model"
    _put(a, folder)
    reranker = CrossEncoderReranker(model=str(folder), device="cpu")
    digest = reranker.params()["model_sha256"]
    _put(b, folder)
    with pytest.raises(HarnessError, match=r"its files changed since their sha256 was taken"):
        reranker.load()
    _put(a, folder)
    reranker.load()
    _put(b, folder)
    assert reranker.params()["model_sha256"] == digest  # (of the files the model was loaded from)

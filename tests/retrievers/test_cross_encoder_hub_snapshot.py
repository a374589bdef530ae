"""A hub cross-encoder is resolved to its Hugging Face snapshot, loaded from it and digested (as the dense
retriever's hub models are).

Before, ``model_sha256`` was None for a hub name, so a pipeline's rerank stage or a benchmark cell keyed by
``params()`` stayed a cache hit after the repo's main moved to new weights: the old model's reranked run was
served as the new model's. The hub is a local registration here: a Hugging Face cache folder laid out as
huggingface_hub writes it (``models--me--tiny-ce/snapshots/<commit>/``, ``refs/main``) read with
``HF_HUB_OFFLINE=1``, the path a real download ends on. Expected digest: :func:`folder_digest`'s worked
formula, sha256 over ``<relative path> NUL <sha256 of content> LF`` of the snapshot's files in path order.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

pytest.importorskip("sentence_transformers")
transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

from tests.bench.bench_helpers import write_tiny  # noqa: E402
from tests.retrievers.test_rerank_cross_encoder import WORDS  # noqa: E402

COMMITS = ("a" * 40, "b" * 40)


def _save_model(folder: Path, seed: int) -> None:
    folder.mkdir(parents=True)
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    tokenizer = transformers.BertTokenizer(str(folder / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(seed)
    config = transformers.BertConfig(vocab_size=5 + len(WORDS), hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                                     num_labels=1, initializer_range=0.5)
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def _digest(folder: Path) -> str:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return hashlib.sha256("".join(f"{p.relative_to(folder)}\0{hashlib.sha256(p.read_bytes()).hexdigest()}\n"
                                  for p in files).encode()).hexdigest()


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """A Hugging Face cache with me/tiny-ce at two commits (different weights); main names the first."""
    root = tmp_path_factory.mktemp("hf")
    repo = root / "hub" / "models--me--tiny-ce"
    for seed, commit in zip((16, 17), COMMITS):
        _save_model(repo / "snapshots" / commit, seed)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMITS[0])
    return root


@pytest.fixture
def offline_hub(hub, tmp_path, monkeypatch):
    """huggingface_hub reading only ``hub`` (as HF_HUB_CACHE=... HF_HUB_OFFLINE=1 set before it is imported)."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(hub / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    return hub


def _sha(model) -> str:
    from retrievers.rerank.cross_encoder import CrossEncoderReranker

    return CrossEncoderReranker(model=str(model), device="cpu").params()["model_sha256"]


def test_a_hub_name_is_digested_as_its_snapshot_and_a_moved_main_is_a_new_digest(offline_hub):
    repo = offline_hub / "hub" / "models--me--tiny-ce"
    first = _sha("me/tiny-ce")
    assert first == _digest(repo / "snapshots" / COMMITS[0]) == _sha(repo / "snapshots" / COMMITS[0])  # was None
    (repo / "refs" / "main").write_text(COMMITS[1])  # main moves to new weights
    try:
        second = _sha("me/tiny-ce")
    finally:
        (repo / "refs" / "main").write_text(COMMITS[0])
    assert second == _digest(repo / "snapshots" / COMMITS[1]) != first


def test_rerank_with_a_hub_name_scores_as_the_snapshot_folder_does(offline_hub, tmp_path, harness_cli):
    data = write_tiny(tmp_path / "tiny")
    first = tmp_path / "first.trec"  # every document for both queries (write_tiny's q1, q2 and d1..d4)
    first.write_text("".join(f"{q} Q0 {d} {r} {5 - r} x\n" for q in ("q1", "q2")
                             for r, d in enumerate(("d1", "d2", "d3", "d4"), 1)))
    runs = {}
    for label, model in (("hub", "me/tiny-ce"),
                         ("folder", offline_hub / "hub" / "models--me--tiny-ce" / "snapshots" / COMMITS[0])):
        runs[label] = tmp_path / f"{label}.trec"
        done = harness_cli("rerank", "--dataset", data, "--run", first, "--reranker", "cross-encoder",
                           "--param", f"model={model}", "--param", "device=cpu", "-o", runs[label])
        assert done.returncode == 0, done.stderr
    assert runs["hub"].read_text() == runs["folder"].read_text()
    assert len([line for line in runs["hub"].read_text().splitlines() if not line.startswith("#")]) == 8


def test_a_hub_name_not_in_the_cache_offline_is_one_line(offline_hub):
    with pytest.raises(ValueError, match=r"^cannot get cross-encoder 'me/absent' \(not a folder; hub download "
                                         r"failed: \w+: "):
        _sha("me/absent")

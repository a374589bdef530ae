"""Tiny random models built at test time (no weights can be downloaded here): a one-layer BERT with
8 dimensions and a vocabulary of the letters, saved with transformers or as a sentence-transformers model."""

from __future__ import annotations

from pathlib import Path

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [chr(c) for c in range(ord("a"), ord("z") + 1)]


def hf_bert(folder: Path, positions: int = 40) -> Path:
    """A random BERT (model and tokenizer) saved in ``folder`` (created), ``positions`` its
    ``max_position_embeddings``."""
    from transformers import BertConfig, BertModel, BertTokenizer

    folder.mkdir()
    (folder / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    config = BertConfig(vocab_size=len(VOCAB), hidden_size=8, num_hidden_layers=1, num_attention_heads=1,
                        intermediate_size=16, max_position_embeddings=positions)
    BertModel(config).save_pretrained(folder)
    BertTokenizer(str(folder / "vocab.txt")).save_pretrained(folder)
    return folder


def sentence_transformer(root: Path) -> Path:
    """:func:`hf_bert` in ``root/hf`` saved as a sentence-transformers model in ``root/st`` (returned)."""
    from sentence_transformers import SentenceTransformer

    SentenceTransformer(str(hf_bert(root / "hf")), device="cpu").save(str(root / "st"))
    return root / "st"

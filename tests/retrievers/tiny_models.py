"""Tiny random models built at test time (no weights can be downloaded here): a one-layer BERT with
8 dimensions and a vocabulary of the letters, saved with transformers or as a sentence-transformers model;
and a random SPLADE SparseEncoder over a word vocabulary (:func:`sparse_encoder`)."""

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


def sparse_encoder(root: Path, words: list[str]) -> Path:
    """A random SPLADE ``SparseEncoder`` (a 1-layer BertForMaskedLM with 16 dimensions over the special
    tokens and ``words``, then SpladePooling max), seeded, saved in ``root/encoder`` (returned)."""
    import torch
    from sentence_transformers import SparseEncoder
    try:
        from sentence_transformers.sentence_transformer.modules import Transformer
    except ImportError:  # sentence-transformers < 6
        from sentence_transformers.models import Transformer
    from sentence_transformers.sparse_encoder.modules import SpladePooling
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    mlm = root / "mlm"
    mlm.mkdir(parents=True)
    (mlm / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=5 + len(words), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64)
    BertForMaskedLM(config).save_pretrained(mlm)
    # (the vocabulary given as a dict: transformers 5 ignores ``vocab_file=``, and every word was [UNK])
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    BertTokenizerFast(vocab={token: i for i, token in enumerate(vocab)}).save_pretrained(mlm)
    SparseEncoder(modules=[Transformer(str(mlm), transformer_task="fill-mask"), SpladePooling("max")],
                  device="cpu").save(str(root / "encoder"))
    return root / "encoder"

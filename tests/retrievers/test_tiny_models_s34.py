"""The tiny random models the tests build tokenize their words (transformers 5 ignores ``vocab_file=``:
``sparse_encoder``'s tokenizer made every word [UNK], and the tests using it compared vectors that differed
by position alone)."""

from __future__ import annotations

from tests.retrievers.tiny_models import sparse_encoder


def test_sparse_encoder_tokenizes_its_words(tmp_path):
    from transformers import AutoTokenizer

    words = ["vitamin", "protein", "cell"]
    sparse_encoder(tmp_path, words)
    assert AutoTokenizer.from_pretrained(str(tmp_path / "mlm")).tokenize("vitamin protein cell") == words

"""The compiled Porter stemmer (native/porter.c) against Lucene's outputs."""

from __future__ import annotations

import pytest

from tests.retrievers.bm25_c import compiled, compiled_on, needs_extension, scifact  # noqa: F401

# ------------------------------------------------------------------------------- stemmer
# Outputs of Lucene 8.7's own org.apache.lucene.analysis.en.PorterStemmer (checked on its jar).
LUCENE_87_PORTER = {
    "trekking": "trek", "revved": "rev", "accing": "ac", "ulyyed": "uli", "viihmybliousness": "viihmybli",
    "assembly": "assembl", "pathology": "patholog", "possibly": "possibl",
    "as": "as", "is": "is", "a": "a",  # one or two letters: unchanged
}


@needs_extension
def test_stemmer_matches_lucene_examples():
    assert {w: compiled.stem(w) for w in LUCENE_87_PORTER} == LUCENE_87_PORTER


# Every SciFact token and 200,000 random words against the pure-Python port (an independent
# implementation): tests/retrievers/test_bm25_porter_python.py.


@needs_extension
def test_stem_refuses_words_longer_than_the_token_cut():
    assert compiled.stem("x" * 255) == "x" * 255
    with pytest.raises(ValueError):
        compiled.stem("x" * 256)


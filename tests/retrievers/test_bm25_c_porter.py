"""The compiled Porter stemmer (native/porter.c) against Lucene's outputs and the fallback oracle."""

from __future__ import annotations

import pytest

from retrievers.bm25 import loader
from retrievers.bm25.analyzer import Analyzer
from retrievers.bm25.stemming import lucene_porter_fixup
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


def snowball_oracle(words: list[str]) -> list[str]:
    """PyStemmer's ``porter`` corrected by :func:`lucene_porter_fixup`: independent of the C code, and
    equal to Lucene's PorterStemmer on every token of SciFact and NFCorpus (it differs on rare words
    such as trekking). Not ``Analyzer._stem``: that now stems ASCII words with the C stemmer itself."""
    import Stemmer

    stemmer = Stemmer.Stemmer("porter", 0)
    return [lucene_porter_fixup(w, s, stemmer) for w, s in zip(words, stemmer.stemWords(words))]


@needs_extension
def test_stemmer_matches_the_snowball_oracle_on_every_scifact_token():
    from harness.datasets import load_dataset

    ds = load_dataset("scifact")
    tokenize = Analyzer(stopwords=None, stemmer=None)
    tokens: set[str] = set()
    for text in ds.corpus.contents():
        tokens.update(tokenize(text))
    for text in ds.queries.texts:
        tokens.update(tokenize(text))
    words = sorted(t for t in tokens if t.isascii())
    assert len(words) > 30_000
    oracle = snowball_oracle(words)  # one batch
    assert sum(o != w for o, w in zip(oracle, words)) > 10_000  # most words do change
    stems = [compiled.stem(w) for w in words]
    diffs = [(w, c, o) for w, c, o in zip(words, stems, oracle) if c != o]
    assert diffs == [], f"{len(diffs)} of {len(words)} tokens differ (word, C, oracle): {diffs[:20]}"
    # the batch entry point the analyzer uses gives the same stems
    if hasattr(compiled._fastbm25, "stem_ascii"):
        assert loader.built_module().stem_ascii(words) == stems


@needs_extension
def test_stem_refuses_words_longer_than_the_token_cut():
    assert compiled.stem("x" * 255) == "x" * 255
    with pytest.raises(ValueError):
        compiled.stem("x" * 256)


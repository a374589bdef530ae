"""The pure-Python Porter stemmer (retrievers/bm25/porter.py) against Lucene's and the compiled one.

Sources: tests/retrievers/data/lucene_porter_golden.tsv (3,300 words stemmed by Lucene 8.7.0's
PorterStemmer, see test_bm25_porter.py); the words in LUCENE below were stemmed by Lucene 8.7.0's
PorterStemFilter behind a KeywordTokenizer (lucene-analyzers-common-8.7.0.jar, Debian
liblucene8-java 8.8.1-4), 2026-11-23; the compiled stemmer (retrievers/bm25/native/porter.c) is
itself checked against the golden file in test_bm25_porter.py.
"""

from __future__ import annotations

import random
import string

import pytest

from harness.datasets import load_dataset
from retrievers.bm25.analyzer import Analyzer
from retrievers.bm25.porter import STEP2, STEP3, STEP4, Stemmer, stem
from tests.retrievers.test_bm25_porter import golden  # Lucene 8.7's stems of 3,300 words

LUCENE = {
    # where PyStemmer's porter + lucene_porter_fixup differs from Lucene (test_bm25_porter.py)
    "trekking": "trek", "revved": "rev", "accing": "ac", "ulyyed": "uli", "viihmybliousness": "viihmybli",
    # Lucene's departures from the paper: -bli -> -ble, -logi -> -log, any double consonant undoubled
    "generalizations": "gener", "archaeology": "archaeolog", "hopping": "hop",
    # y after y; IES -> I on a three-letter word; ION needs an s or t before it
    "yyy": "yyi", "ies": "i", "ion": "ion", "sion": "sion",
    # non-ASCII letters are consonants
    "naïvely": "naïv", "cafés": "café", "müllerian": "müllerian", "α-helices": "α-helic", "fiancée": "fiancé",
    # a character beyond U+FFFF is two UTF-16 code units, both consonants
    "\U0001d41as": "\U0001d41a", "ba\U0001f600ing": "ba\U0001f600", "a\U0001d41a\U0001d41aed": "a\U0001d41a\U0001d41a",
    "\U0001f600s": "\U0001f600",
}


def test_every_golden_word_stems_as_lucene():
    rows = golden()
    assert len(rows) == 3300
    wrong = [(word, stem(word), want) for word, want in rows if stem(word) != want]
    assert wrong == []


@pytest.mark.parametrize("word", sorted(LUCENE))
def test_named_words_stem_as_lucene(word):
    assert stem(word) == LUCENE[word]


def test_memoizing_stemmer_gives_the_same_stems():
    stemmer = Stemmer()
    words = [word for word, _ in golden()][:500] * 2
    assert stemmer.stem_many(words) == [stem(w) for w in words]
    assert stemmer.stem("trekking") == "trek" and stemmer.stem("trekking") == "trek"


@pytest.fixture(scope="module")
def compiled():
    fast = pytest.importorskip("retrievers.bm25._fastbm25", reason="C extension not built (no compiler)")
    return fast.stem_ascii


def assert_same_as_compiled(stem_ascii, words: list[str]):
    want = stem_ascii(words)
    differ = [(w, got, c) for w, got, c in zip(words, Stemmer().stem_many(words), want) if c is not None and got != c]
    assert differ == []


def test_scifact_tokens_stem_as_compiled(compiled):
    """Every distinct token of the bundled SciFact corpus and queries, analysed up to the stemmer."""
    dataset = load_dataset("scifact")
    analyzer = Analyzer(stemmer=None)
    tokens: set[str] = set()
    for text in dataset.corpus.contents() + list(dataset.queries.texts):
        tokens.update(analyzer(text))
    assert len(tokens) > 35_000
    assert_same_as_compiled(compiled, sorted(tokens))


def test_random_words_stem_as_compiled(compiled):
    """200,000 seeded random lowercase words: half plain letters, half a short root with suffixes
    that the rules know (plain random letters seldom reach steps 2-4)."""
    rnd = random.Random(14)
    letters = string.ascii_lowercase + "aeiouyslltbbzz"  # more vowels, y and doubles
    suffixes = (list(STEP2) + list(STEP3) + sorted(STEP4) + list(STEP2.values())
                + ["s", "es", "ies", "sses", "ss", "ed", "eed", "ing", "y", "e", "ll", "at", "bl", "iz"])
    words = ["".join(rnd.choices(letters, k=rnd.randint(1, 12))) for _ in range(100_000)]
    words += ["".join(rnd.choices(letters, k=rnd.randint(0, 6))) + "".join(rnd.choices(suffixes, k=rnd.randint(1, 3)))
              for _ in range(100_000)]
    assert_same_as_compiled(compiled, words)

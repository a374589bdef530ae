"""The analyzer against Lucene's. Expected outputs were produced by Lucene 9 itself: Pyserini 1.6.0
(Anserini 1.7.1), ``pyserini.analysis.Analyzer(get_lucene_analyzer()).analyze(text)`` on these
exact strings (benchmarks/lucene_peer.py ``analyze``). Over all documents and queries of SciFact
and NFCorpus (1.48M tokens) the analyzer's output was identical to Lucene's."""

from __future__ import annotations

import pytest

from retrievers.bm25.analyzer import Analyzer, java_lower, strip_possessive
from retrievers.bm25.porter import _measure as porter_measure
from retrievers.bm25.tokenizer import tokenize

LUCENE = [
    ("us as is gs ms yes abilities logically probability generalizations",
     ["us", "gs", "ms", "ye", "abil", "logic", "probabl", "gener"]),
    ("Don't e.g. U.S.A. 3.14 1,000 a.1 foo_bar _x abc123 covid-19 IL-6 John's",
     ["don't", "e.g", "u.s.a", "3.14", "1,000", "1", "foo_bar", "_x", "abc123", "covid", "19", "il", "6", "john"]),
    ("a:b 1;2 H2O2 β-cell α’s ΑΣ İstanbul", ["a:b", "1;2", "h2o2", "β", "cell", "α", "ασ", "istanbul"]),
    ("日本語テキストです ひらがな ภาษาไทย hello 😀👍🏽 x ©",
     ["日", "本", "語", "テキスト", "で", "す", "ひ", "ら", "が", "な", "ภาษาไทย", "hello", "😀", "👍🏽", "x", "©"]),
    ("x ® y ™ z ↔ w ⌘ t ★ s # q * p 1️⃣ o 🇺🇸 n ✓ m ° l ± k → j ∞ i ✔",
     ["x", "®", "y", "™", "z", "↔", "w", "t", "★", "s", "q", "p", "1️⃣", "o", "🇺🇸", "n", "m", "l", "k", "j", "i", "✔"]),
    ("Straße ǅ café naïve", ["straße", "ǆ", "café", "naïv"]),
    ("1990s cats's 's x's abc''d a'b'c", ["1990", "cat", "s", "x", "abc", "d", "a'b'c"]),
    # Lucene's Porter departures from Snowball's porter (seen on SciFact/NFCorpus):
    ("assembly possibly irreversibly pathology technologies pharmacologie",
     ["assembl", "possibl", "irrevers", "patholog", "technolog", "pharmacologi"]),
]


@pytest.mark.parametrize("text,expected", LUCENE)
def test_matches_lucene(text, expected):
    assert Analyzer()(text) == expected


def test_long_tokens_are_cut_at_255_like_lucene():
    # Lucene: 600 x's -> pieces of 255, 255 and 90 characters.
    assert [len(t) for t in tokenize("x" * 600)] == [255, 255, 90]


def test_helpers():
    assert strip_possessive("John's") == "John" and strip_possessive("JOHN’S") == "JOHN"
    assert strip_possessive("'s") == "" and strip_possessive("is") == "is"
    assert java_lower("ΑΣ") == "ασ"  # str.lower() would give the final sigma "ας"
    assert java_lower("İ") == "i"
    # the fast path (str.lower) equals Java's per-code-point lowering on every BMP code point, in
    # runs of 64 (Greek capitals included: a run holding Σ takes the per-code-point path)
    points = "".join(chr(c) for c in range(0x10000) if not 0xD800 <= c < 0xE000)
    per_code_point = lambda s: "".join("i" if c == "\u0130" else c.lower() for c in s)  # noqa: E731
    for i in range(0, len(points), 64):
        assert java_lower(points[i:i + 64]) == per_code_point(points[i:i + 64])
    assert java_lower("ΟΔΟΣ ΣΑΣ") == "οδοσ σασ" and java_lower("İSTANBUL") == "istanbul"
    # Porter's measure m of [C](VC){m}[V] (Porter 1980's examples): tr, ee, tree -> 0; trouble -> 1; troubles -> 2
    assert [porter_measure(w) for w in ("tr", "ee", "tree", "trouble", "oats", "troubles", "private")] == [0, 0, 0, 1, 1, 2, 2]


def test_options():
    assert Analyzer(stopwords=None)("the cats") == ["the", "cat"]
    assert Analyzer(stemmer=None)("the cats") == ["cats"]
    assert Analyzer(tokenizer="simple")("e.g. don't") == ["e", "g", "don", "t"]
    assert Analyzer(stopwords=["cats"], stemmer=None)("the cats") == ["the"]
    assert Analyzer().params() == {"tokenizer": "standard", "possessive": True, "lowercase": True,
                                   "stopwords": "lucene", "stemmer": "porter"}
    with pytest.raises(ValueError, match="tokenizer"):
        Analyzer(tokenizer="nope")
    with pytest.raises(ValueError, match="stemmer"):
        Analyzer(stemmer="klingon")
    with pytest.raises(ValueError, match="stopword"):
        Analyzer(stopwords="french-ish")


@pytest.mark.parametrize("options", [{}, {"tokenizer": "simple"}, {"stemmer": None, "lowercase": False},
                                     {"stopwords": None, "possessive": False}])
def test_batch_analysis_equals_one_at_a_time(options):
    """analyze_flat (the encoder's batch path) gives analyze_candidates' terms (main's per-text path)."""
    analyzer = Analyzer(**options)
    candidates = [c for text, _ in LUCENE for c in analyzer.candidates(text)]
    candidates += ["assembly", "Pathology", "is", "IS", "x" * 600, "John's", "ab", "The", "3.14", "α–β"]
    counts, first, terms = analyzer.analyze_flat(candidates)
    flat = [terms[f:f + n] for f, n in zip(first.tolist(), counts.tolist())]
    assert flat == analyzer.analyze_candidates(candidates)
    assert sum(map(len, flat)) > len(candidates) // 2  # not vacuous: most candidates give terms

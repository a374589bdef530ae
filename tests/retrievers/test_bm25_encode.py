"""The chunked encoder gives exactly the analyzer's terms, document by document."""

import numpy as np

from retrievers.bm25.analyzer import Analyzer
from retrievers.bm25.encode import TermEncoder

TEXTS = [
    "The α–β cells (IL-6) of John's mice",     # en dash: one candidate, two tokens
    "the of and",                               # stopwords only: zero terms
    "x" * 600 + " tail",                        # one candidate, three 255-cut tokens
    "",                                         # empty document
    "mice MICE Mice α–β 3.14 e.g. U.S.A.",     # repeats: candidates analysed once
    "cells,\ncells. (cells) cells",            # one candidate in several words; newline = the separator
    "a\u00a0b x\u2009y\x1cz",                   # Unicode spaces that bytes.split() keeps inside a word ("a" is a stopword)
    "bad\ud800surrogate ok",                   # a lone surrogate survives the UTF-8 round trip
]


def test_encoder_matches_analyzer_across_chunks():
    analyzer = Analyzer()
    encoder = TermEncoder(analyzer)
    parts = [encoder.encode(TEXTS[:2]), encoder.encode(TEXTS[2:])]
    lengths = np.concatenate([p[0] for p in parts])
    ids = np.concatenate([p[1] for p in parts])
    expected = [analyzer(t) for t in TEXTS]
    assert lengths.tolist() == [len(e) for e in expected] == [7, 0, 4, 0, 8, 4, 4, 3]
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    decoded = [[encoder.terms[i] for i in ids[a:b]] for a, b in zip(bounds[:-1], bounds[1:])]
    assert decoded == expected
    assert encoder.query_terms("mice of α") == [encoder.term_index["mice"], encoder.term_index["α"]]


def test_encoder_chunks_with_only_plain_or_only_other_words():
    """Chunks whose new words are all plain ASCII alphanumerics, all not, or none at all."""
    analyzer = Analyzer()
    encoder = TermEncoder(analyzer)
    chunks = [["cells mice"], ["(cells), mice's"], [""], ["cells (cells)"]]
    for chunk in chunks:
        lengths, ids = encoder.encode(chunk)
        assert lengths.tolist() == [len(analyzer(t)) for t in chunk]
        assert [encoder.terms[i] for i in ids] == [t for text in chunk for t in analyzer(text)]
    assert encoder.terms == ["cell", "mice"]

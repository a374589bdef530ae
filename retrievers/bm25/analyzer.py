"""Text analysis for BM25: tokenize, lowercase, drop stopwords, stem."""

from __future__ import annotations

import re
from functools import lru_cache

# Lucene's EnglishAnalyzer default stopword set (ENGLISH_STOP_WORDS_SET), 33 words.
LUCENE_ENGLISH_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there "
    "these they this to was will with".split()
)

_TOKEN = re.compile(r"\w+", re.UNICODE)


@lru_cache(maxsize=None)
def _stemmer(name: str):
    import Stemmer  # PyStemmer

    return Stemmer.Stemmer(name)


class Analyzer:
    """lowercase -> word tokens -> drop stopwords -> stem (Porter by default; ``stemmer=None`` to skip)."""

    def __init__(self, stopwords: frozenset[str] | None = LUCENE_ENGLISH_STOPWORDS, stemmer: str | None = "porter"):
        self.stopwords = stopwords or frozenset()
        self.stemmer_name = stemmer

    def params(self) -> dict:
        return {"analyzer": "simple", "stemmer": self.stemmer_name, "stopwords": len(self.stopwords)}

    def __call__(self, text: str) -> list[str]:
        tokens = [t for t in _TOKEN.findall(text.lower()) if t not in self.stopwords]
        if self.stemmer_name:
            tokens = _stemmer(self.stemmer_name).stemWords(tokens)
        return tokens

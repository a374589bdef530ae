"""Text analysis for BM25, modelled on the analyzer Anserini uses for BEIR ("DefaultEnglishAnalyzer"):

    StandardTokenizer -> EnglishPossessiveFilter -> LowerCaseFilter -> StopFilter -> PorterStemFilter

* tokenizer ``standard``: Unicode word boundaries as Lucene applies them (see tokenizer.py);
  ``simple`` (``\\w+``) is kept for comparison.
* possessives: a trailing ``'s`` / ``'S`` (apostrophe U+0027, U+2019 or U+FF07) is removed.
* lowercasing per code point (Java's ``Character.toLowerCase``: no final-sigma rule, ``İ`` -> ``i``).
* stopwords: Lucene's English set (33 words); ``stopwords=None`` keeps everything.
* stemming: Lucene's Porter (``porter``; see stemming.py for how it is computed with and without
  the compiled extension), any other PyStemmer algorithm by name, or ``None`` for none.

The analysis of a candidate string (see tokenizer.py) depends only on that string, so a corpus is
analysed once per *distinct* candidate: :meth:`Analyzer.analyze_candidates` maps a batch of new
candidates to their terms, and :class:`retrievers.bm25.encode.TermEncoder` memoizes it.
"""

from __future__ import annotations

import numpy as np

from retrievers.bm25 import loader
from retrievers.bm25.stemming import pystemmer
from retrievers.bm25.tokenizer import MAX_TOKEN_LENGTH, TOKENIZERS, candidate_finder, split_candidates

# The analysis's version: part of the BM25 index cache key (lucene_backend.settings), so a cached
# index is never read with terms another analysis made. Bump it with any change that alters the
# terms of some text (tokenizer rules, filters, stemmer, the compiled or the Python path).
ANALYSIS_VERSION = 1

# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, 33 words.
LUCENE_ENGLISH_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there "
    "these they this to was will with".split()
)

_APOSTROPHES = ("'", "\u2019", "\uff07")


def java_lower(token: str) -> str:
    """Lowercase one code point at a time, as Java's Character.toLowerCase (Lucene's LowerCaseFilter)."""
    if token.isascii() or ("\u0130" not in token and "\u03a3" not in token):
        # str.lower() lowercases per code point too, but for U+0130 (two code points) and a
        # word-final capital sigma (final sigma, where Java gives the plain one)
        return token.lower()
    return "".join("i" if c == "\u0130" else c.lower() for c in token)


def strip_possessive(token: str) -> str:
    """EnglishPossessiveFilter: drop a trailing apostrophe + s."""
    if len(token) >= 2 and token[-1] in "sS" and token[-2] in _APOSTROPHES:
        return token[:-2]
    return token


class Analyzer:
    """tokenize -> strip possessive -> lowercase -> drop stopwords -> stem."""

    def __init__(self, tokenizer: str = "standard", stopwords: str | frozenset[str] | list[str] | None = "lucene",
                 stemmer: str | None = "porter", possessive: bool = True, lowercase: bool = True):
        if tokenizer not in TOKENIZERS:
            raise ValueError(f"unknown tokenizer {tokenizer!r}; choose one of {', '.join(TOKENIZERS)}")
        if stopwords == "lucene":
            self.stopwords_name, self.stopwords = "lucene", LUCENE_ENGLISH_STOPWORDS
        elif stopwords is None or stopwords == "none":
            self.stopwords_name, self.stopwords = "none", frozenset()
        elif isinstance(stopwords, str):
            raise ValueError(f"unknown stopword list {stopwords!r}; give 'lucene', None or a list of words")
        else:
            self.stopwords = frozenset(stopwords)
            self.stopwords_name = "custom"
        if stemmer is not None:
            pystemmer(stemmer)  # validate now
        self.tokenizer = tokenizer
        self.stemmer_name = stemmer
        self.possessive = bool(possessive)
        self.lowercase = bool(lowercase)
        self._find = candidate_finder(tokenizer)

    def params(self) -> dict:
        out = {"tokenizer": self.tokenizer, "possessive": self.possessive, "lowercase": self.lowercase,
               "stopwords": self.stopwords_name, "stemmer": self.stemmer_name}
        if self.stopwords_name == "custom":
            out["stopword_list"] = sorted(self.stopwords)
        return out

    def candidates(self, text: str) -> list[str]:
        return self._find(text)

    def _filter(self, tokens: list[str]) -> list[str]:
        """Possessive removal, lowercasing and stopword removal on one candidate's tokens."""
        if self.possessive:
            tokens = [strip_possessive(t) for t in tokens]
        if self.lowercase:
            tokens = [java_lower(t) for t in tokens]
        return [t for t in tokens if t and t not in self.stopwords]

    def _plain_term(self, cand: str) -> str | None:
        """The term of a plain ASCII word ('' for a stopword); None when the candidate needs the full
        analysis. The common case: no possessive, nothing to split."""
        if cand.isascii() and cand.isalnum() and len(cand) <= MAX_TOKEN_LENGTH:
            term = cand.lower() if self.lowercase else cand
            return "" if term in self.stopwords else term
        return None

    def analyze_flat(self, candidates: list[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """The terms of a batch of candidate strings, flat: ``(counts, first, terms)`` with candidate
        i's terms at ``terms[first[i]:first[i] + counts[i]]`` (usually one; none for stopwords;
        several when split)."""
        per_candidate: list[int] = []  # terms of each candidate; -1: not plain, analysed after the loop
        flat: list[str] = []
        others: list[str] = []
        for cand in candidates:
            term = self._plain_term(cand)
            if term:
                per_candidate.append(1)
                flat.append(term)
            elif term is not None:  # a stopword
                per_candidate.append(0)
            else:
                per_candidate.append(-1)
                others.append(cand)
        n_plain = len(flat)
        other_counts = []
        for tokens in split_candidates(self.tokenizer, others):  # one regex call for them all
            tokens = self._filter(tokens)
            other_counts.append(len(tokens))
            flat.extend(tokens)
        if self.stemmer_name is not None and flat:
            flat = self._stem(flat)
        # the plain candidates' terms come first in ``flat``, then the others'
        counts = np.asarray(per_candidate, dtype=np.int64)
        other = counts < 0
        counts[other] = other_counts
        plain_counts = np.where(other, 0, counts)
        other_counts = np.where(other, counts, 0)
        first = np.where(other, n_plain + np.cumsum(other_counts) - other_counts, np.cumsum(plain_counts) - plain_counts)
        return counts, first, flat

    def analyze_candidates(self, candidates: list[str]) -> list[list[str]]:
        """The terms of each candidate string (usually one; none for stopwords; several when split)."""
        counts, first, flat = self.analyze_flat(candidates)
        return [flat[f:f + n] for f, n in zip(first.tolist(), counts.tolist())]

    def _stem(self, tokens: list[str]) -> list[str]:
        if self.stemmer_name == "porter":
            return loader.lucene_porter(tokens)
        return pystemmer(self.stemmer_name).stemWords(tokens)

    def __call__(self, text: str) -> list[str]:
        return [t for terms in self.analyze_candidates(self.candidates(text)) for t in terms]

"""Text analysis for BM25, modelled on the analyzer Anserini uses for BEIR ("DefaultEnglishAnalyzer"):

    StandardTokenizer -> EnglishPossessiveFilter -> LowerCaseFilter -> StopFilter -> PorterStemFilter

* tokenizer ``standard``: Unicode word boundaries as Lucene applies them (see tokenizer.py);
  ``simple`` (``\\w+``) is kept for comparison.
* possessives: a trailing ``'s`` / ``'S`` (apostrophe U+0027, U+2019 or U+FF07) is removed.
* lowercasing per code point (Java's ``Character.toLowerCase``: no final-sigma rule, ``İ`` -> ``i``).
* stopwords: Lucene's English set (33 words); ``stopwords=None`` keeps everything.
* stemming: Porter as Lucene's PorterStemFilter does it (Porter's reference implementation: words of
  one or two characters are left as they are, ``-bli -> -ble``, ``-logi -> -log``, any double
  consonant but l, s, z undoubled in step 1b). ASCII words go to the compiled stemmer
  (retrievers/bm25/native/porter.h, checked against Lucene's own); other words, and every word when
  the extension is not built, to PyStemmer's ``porter`` (the published algorithm) corrected by
  :func:`lucene_porter_fixup` -- which covers the differences that occur in SciFact and NFCorpus but
  not all (``trekking``: Lucene ``trek``, PyStemmer ``trekk``). Any other PyStemmer algorithm may be
  named, or ``None`` for none.

The analysis of a candidate string (see tokenizer.py) depends only on that string, so a corpus is
analysed once per *distinct* candidate: :meth:`Analyzer.analyze_candidates` maps a batch of new
candidates to their terms, and :class:`retrievers.bm25.encode.TermEncoder` memoizes it.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import repeat

import numpy as np

from retrievers.bm25.tokenizer import (MAX_TOKEN_LENGTH, TOKENIZERS, candidate_finder, split_candidate,
                                       split_candidates)

# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, 33 words.
LUCENE_ENGLISH_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there "
    "these they this to was will with".split()
)

_APOSTROPHES = ("'", "\u2019", "\uff07")

try:  # Lucene's Porter stemmer for ASCII words, compiled (retrievers/bm25/native/porter.h)
    from retrievers.bm25._fastbm25 import stem_ascii as _stem_ascii
except ImportError:  # extension not built: PyStemmer + lucene_porter_fixup for every word
    _stem_ascii = None


def porter_implementation() -> str:
    """Which Porter stemmer serves ASCII words: ``lucene-c`` (compiled) or ``snowball+fixup``."""
    return "lucene-c" if _stem_ascii is not None else "snowball+fixup"


@lru_cache(maxsize=None)
def _stemmer(name: str):
    import Stemmer  # PyStemmer

    try:
        return Stemmer.Stemmer(name, 0)  # no internal cache: callers stem each distinct word once
    except KeyError:
        raise ValueError(f"unknown stemmer {name!r}; PyStemmer offers {', '.join(Stemmer.algorithms())}") from None


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


def porter_measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in ``stem`` ([C](VC){m}[V])."""
    m, prev_vowel = 0, False
    for i, c in enumerate(stem):
        vowel = c in "aeiou" or (c == "y" and i > 0 and not prev_vowel)
        if prev_vowel and not vowel:
            m += 1
        prev_vowel = vowel
    return m


def lucene_porter_fixup(word: str, snowball: str, stemmer) -> str:
    """Turn Snowball's ``porter`` result into Lucene's PorterStemmer result.

    Lucene's PorterStemmer follows Porter's reference implementation, which departs from the
    published algorithm (that Snowball's ``porter`` implements) in ways visible on real text:
    words of one or two characters are not stemmed, and step 2 maps ``-bli`` to ``-ble`` (not only
    ``-abli``) and ``-logi`` to ``-log`` when the stem before the suffix has m > 0. Snowball leaves
    such a word ending in ``bli``/``logi`` after step 2 (steps 3-5 have no rule for those endings),
    so the fix is: apply the departure and run Snowball on the result, whose steps 1-2 leave
    ``-ble``/``-log`` alone. A word ending in ``e`` never reaches step 2 with those endings (its
    ``...logi`` result comes from step 5 dropping the ``e``: ``pharmacologie``). (Checked on every token of SciFact and NFCorpus against Lucene 9.)
    """
    if len(word) <= 2:
        return word
    if word.endswith("e"):  # step 2 saw "...e"; a "...logi" result came from step 5 dropping the e
        return snowball
    if snowball.endswith("bli") and porter_measure(snowball[:-3]) > 0:
        return stemmer.stemWord(snowball[:-1] + "e")
    if snowball.endswith("logi") and porter_measure(snowball[:-4]) > 0:
        return stemmer.stemWord(snowball[:-1])
    return snowball


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
            _stemmer(stemmer)  # validate now
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

    def _tokens(self, candidate: str) -> list[str]:
        """Tokens of one candidate after possessive removal, lowercasing and stopword removal."""
        return self._filter(split_candidate(self.tokenizer, candidate))

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
        """The terms of each candidate string (usually one; none for stopwords; several when split).

        One candidate at a time: the light path for a single text (:meth:`__call__`); batches of
        many candidates go through :meth:`analyze_flat`, which gives the same terms."""
        per_candidate: list[int] = []
        flat: list[str] = []
        for cand in candidates:
            term = self._plain_term(cand)
            if term:
                per_candidate.append(1)
                flat.append(term)
            elif term is not None:  # a stopword
                per_candidate.append(0)
            else:
                tokens = self._tokens(cand)
                per_candidate.append(len(tokens))
                flat.extend(tokens)
        if self.stemmer_name is not None and flat:
            flat = self._stem(flat)
        out, pos = [], 0
        for n in per_candidate:
            out.append(flat[pos:pos + n])
            pos += n
        return out

    def _stem(self, tokens: list[str]) -> list[str]:
        stemmer = _stemmer(self.stemmer_name)
        if self.stemmer_name == "porter" and _stem_ascii is not None:
            stemmed = _stem_ascii(tokens)
            others = [i for i, s in enumerate(stemmed) if s is None]  # non-ASCII words
            if others:
                for i, s in zip(others, self._snowball_porter([tokens[i] for i in others], stemmer)):
                    stemmed[i] = s
            return stemmed
        if self.stemmer_name == "porter":
            return self._snowball_porter(tokens, stemmer)
        return stemmer.stemWords(tokens)

    @staticmethod
    def _snowball_porter(tokens: list[str], stemmer) -> list[str]:
        """PyStemmer's porter corrected towards Lucene's (see :func:`lucene_porter_fixup`)."""
        stemmed = stemmer.stemWords(tokens)
        if len(tokens) < 4096:  # one text's words
            for i, (word, stem) in enumerate(zip(tokens, stemmed)):
                if len(word) <= 2 or stem.endswith(("bli", "logi")):
                    stemmed[i] = lucene_porter_fixup(word, stem, stemmer)
        else:  # a batch: find the few words the fix-up may change at C speed
            n = len(tokens)
            short = np.fromiter(map(len, tokens), dtype=np.int64, count=n) <= 2
            ending = np.fromiter(map(str.endswith, stemmed, repeat(("bli", "logi"))), dtype=bool, count=n)
            for i in np.flatnonzero(short | ending).tolist():
                stemmed[i] = lucene_porter_fixup(tokens[i], stemmed[i], stemmer)
        return stemmed

    def __call__(self, text: str) -> list[str]:
        return [t for terms in self.analyze_candidates(self.candidates(text)) for t in terms]

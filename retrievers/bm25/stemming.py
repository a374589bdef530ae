"""Stemmers: PyStemmer's algorithms by name, and the pure-Python fallback for Lucene's Porter.

Lucene's PorterStemFilter follows Porter's reference implementation, which departs from the
published algorithm (Snowball's ``porter``, in PyStemmer): words of one or two characters are left
as they are, ``-bli -> -ble``, ``-logi -> -log``, any double consonant but l, s, z undoubled in
step 1b. With the compiled extension ASCII words go to its stemmer (retrievers/bm25/native/porter.c,
checked against Lucene's own); every other word -- and every word without the extension -- goes to
:func:`fallback_porter`, the one pure-Python Lucene Porter of the package. Today that is PyStemmer's
``porter`` corrected by :func:`lucene_porter_fixup`, which covers the differences that occur in
SciFact and NFCorpus but not all (``trekking``: Lucene ``trek``, here ``trekk``); its name,
:data:`FALLBACK_PORTER`, goes into the index cache key so the two never share a cached index.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import repeat

import numpy as np

# The one switch to the exact pure-Python port (retrievers/bm25/porter.py): FALLBACK_PORTER = "lucene"
# (the compiled stemmer's name: the two paths then share cached indexes) and fallback_porter
# returning [porter.stem(w) for w in words]. The tests follow FALLBACK_PORTER.
FALLBACK_PORTER = "snowball+fixup"


@lru_cache(maxsize=None)
def pystemmer(name: str):
    """PyStemmer's stemmer ``name`` (ValueError naming the choices when there is none)."""
    import Stemmer  # PyStemmer

    try:
        return Stemmer.Stemmer(name, 0)  # no internal cache: callers stem each distinct word once
    except KeyError:
        raise ValueError(f"unknown stemmer {name!r}; PyStemmer offers {', '.join(Stemmer.algorithms())}") from None


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

    Words of one or two characters are not stemmed, and step 2 maps ``-bli`` to ``-ble`` (not only
    ``-abli``) and ``-logi`` to ``-log`` when the stem before the suffix has m > 0. Snowball leaves
    such a word ending in ``bli``/``logi`` after step 2 (steps 3-5 have no rule for those endings),
    so the fix is: apply the departure and run Snowball on the result, whose steps 1-2 leave
    ``-ble``/``-log`` alone. A word ending in ``e`` never reaches step 2 with those endings (its
    ``...logi`` result comes from step 5 dropping the ``e``: ``pharmacologie``). (Checked on every
    token of SciFact and NFCorpus against Lucene 9.)
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


def fallback_porter(words: list[str]) -> list[str]:
    """Lucene's Porter stems of ``words`` in pure Python (PyStemmer's porter + :func:`lucene_porter_fixup`)."""
    stemmer = pystemmer("porter")
    stemmed = stemmer.stemWords(words)
    if len(words) < 4096:  # one text's words
        for i, (word, stem) in enumerate(zip(words, stemmed)):
            if len(word) <= 2 or stem.endswith(("bli", "logi")):
                stemmed[i] = lucene_porter_fixup(word, stem, stemmer)
    else:  # a batch: find the few words the fix-up may change at C speed
        n = len(words)
        short = np.fromiter(map(len, words), dtype=np.int64, count=n) <= 2
        ending = np.fromiter(map(str.endswith, stemmed, repeat(("bli", "logi"))), dtype=bool, count=n)
        for i in np.flatnonzero(short | ending).tolist():
            stemmed[i] = lucene_porter_fixup(words[i], stemmed[i], stemmer)
    return stemmed

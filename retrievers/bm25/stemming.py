"""Stemmers: PyStemmer's algorithms by name, and the pure-Python Lucene Porter.

Lucene's PorterStemFilter follows Porter's reference implementation, which departs from the
published algorithm (Snowball's ``porter``, in PyStemmer): words of one or two characters are left
as they are, ``-bli -> -ble``, ``-logi -> -log``, any double consonant but l, s, z undoubled in
step 1b. With the compiled extension ASCII words go to its stemmer (retrievers/bm25/native/porter.c,
checked against Lucene's own); every other word -- and every word without the extension -- goes to
:func:`fallback_porter`, the exact pure-Python port of Lucene's stemmer (retrievers/bm25/porter.py,
equal to Lucene on its golden words and to the C stemmer on every SciFact token). Both paths stem
alike, so they share the name :data:`FALLBACK_PORTER` in the index cache key.
"""

from __future__ import annotations

from functools import lru_cache

from retrievers.bm25 import porter

FALLBACK_PORTER = "lucene"  # the compiled stemmer's name too: both paths share cached indexes


@lru_cache(maxsize=None)
def pystemmer(name: str):
    """PyStemmer's stemmer ``name`` (ValueError naming the choices when there is none)."""
    import Stemmer  # PyStemmer

    try:
        return Stemmer.Stemmer(name, 0)  # no internal cache: callers stem each distinct word once
    except KeyError:
        raise ValueError(f"unknown stemmer {name!r}; PyStemmer offers {', '.join(Stemmer.algorithms())}") from None


def fallback_porter(words: list[str]) -> list[str]:
    """Lucene's Porter stems of ``words`` in pure Python (retrievers/bm25/porter.py). Not memoized:
    the analyzer stems each distinct word once."""
    return list(map(porter.stem, words))

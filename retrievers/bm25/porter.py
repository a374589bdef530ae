"""Lucene's Porter stemmer (org.apache.lucene.analysis.en.PorterStemmer, Lucene 8.7) in pure Python.

The same stemmer as retrievers/bm25/native/porter.c, for when the C extension is not built: Martin
Porter's algorithm ("An algorithm for suffix stripping", Program 14(3), 1980) as his reference C
implementation, and so Lucene, applies it:

* words of one or two characters are left as they are;
* step 2 has (m>0) BLI -> BLE instead of the paper's ABLI -> ABLE, and adds (m>0) LOGI -> LOG;
* step 1b undoubles any final double consonant but l, s, z (Snowball's "porter" only b d f g m n p r t).

Notation (Porter's): a, e, i, o, u are vowels, y is a vowel after a consonant, every other character
is a consonant (digits, punctuation and non-ASCII letters included). A word is [C](VC){m}[V]; m is
its *measure*. A rule's condition applies to the stem left once its suffix is removed:
(m>n) the measure; *v* the stem holds a vowel; *d it ends with a double consonant; *o it ends
consonant-vowel-consonant, the last not w, x or y. In each step the longest suffix of the word that
has a rule decides: if its condition fails, the step does nothing (Lucene lists the longer suffix
first where one ends with another, e.g. ATIONAL before TIONAL, EMENT before MENT before ENT).

Lucene works on UTF-16 code units, so a character outside the Basic Multilingual Plane counts as two
consonants (a surrogate pair); :func:`stem` does the same.
"""

from __future__ import annotations

import re

# step 2: (m>0) suffix -> replacement
STEP2 = {
    "ational": "ate", "tional": "tion", "enci": "ence", "anci": "ance", "izer": "ize", "bli": "ble",
    "alli": "al", "entli": "ent", "eli": "e", "ousli": "ous", "ization": "ize", "ation": "ate",
    "ator": "ate", "alism": "al", "iveness": "ive", "fulness": "ful", "ousness": "ous", "aliti": "al",
    "iviti": "ive", "biliti": "ble", "logi": "log",
}
# step 3: (m>0) suffix -> replacement
STEP3 = {"icate": "ic", "ative": "", "alize": "al", "iciti": "ic", "ical": "ic", "ful": "", "ness": ""}
# step 4: (m>1) suffix -> removed; ION only after s or t
STEP4 = frozenset(
    "al ance ence er ic able ible ant ement ment ent ion ou ism ate iti ous ive ize".split()
)


def _cv(word: str) -> str:
    """'c' or 'v' per character of ``word``: consonant or vowel (y: a vowel iff after a consonant)."""
    out = []
    cons = False  # so that a y at the start is a consonant
    for ch in word:
        cons = ch not in "aeiou" and (ch != "y" or not cons)
        out.append("c" if cons else "v")
    return "".join(out)


def _measure(stem: str) -> int:
    """m: the number of VC sequences in ``stem``."""
    return _cv(stem).count("vc")


def _has_vowel(stem: str) -> bool:
    """*v*"""
    return "v" in _cv(stem)


def _ends_double_consonant(word: str) -> bool:
    """*d"""
    return len(word) >= 2 and word[-1] == word[-2] and _cv(word)[-1] == "c"


def _ends_cvc(word: str) -> bool:
    """*o"""
    return len(word) >= 3 and _cv(word)[-3:] == "cvc" and word[-1] not in "wxy"


def _suffix_finder(suffixes):
    """A function: word -> the longest of ``suffixes`` that ends the word, or None."""
    endings = tuple(suffixes)
    lengths = sorted({len(s) for s in suffixes}, reverse=True)

    def longest_suffix(word: str) -> str | None:
        if word.endswith(endings):  # most words: no
            for n in lengths:  # word[-n:] is the whole word when n > len(word): still right
                if word[-n:] in suffixes:
                    return word[-n:]
        return None

    return longest_suffix


_STEP2_SUFFIX, _STEP3_SUFFIX, _STEP4_SUFFIX = _suffix_finder(STEP2), _suffix_finder(STEP3), _suffix_finder(STEP4)


def _step1ab(w: str) -> str:
    """Plurals (SSES -> SS, IES -> I, SS -> SS, S -> ''), then -ED / -ING:
    (m>0) EED -> EE; (*v*) ED -> ''; (*v*) ING -> ''; after removing ED or ING: AT -> ATE, BL -> BLE,
    IZ -> IZE, (*d and not *L, *S, *Z) -> single letter, (m=1 and *o) -> E."""
    if w.endswith("s"):
        if w.endswith(("sses", "ies")):
            w = w[:-2]
        elif w[-2] != "s":
            w = w[:-1]
    if w.endswith("eed"):
        if _measure(w[:-3]) > 0:
            w = w[:-1]
        return w
    for suffix in ("ed", "ing"):
        if w.endswith(suffix) and _has_vowel(w[:-len(suffix)]):
            w = w[:-len(suffix)]
            if w.endswith(("at", "bl", "iz")):
                return w + "e"
            if _ends_double_consonant(w):
                return w if w[-1] in "lsz" else w[:-1]
            if _measure(w) == 1 and _ends_cvc(w):
                return w + "e"
            return w
    return w


def _step1c(w: str) -> str:
    """(*v*) Y -> I"""
    return w[:-1] + "i" if w.endswith("y") and _has_vowel(w[:-1]) else w


def _replace_if_m0(w: str, rules: dict, longest_suffix) -> str:
    """Steps 2 and 3: the longest suffix with a rule is replaced when the stem has m > 0."""
    suffix = longest_suffix(w)
    if suffix is not None:
        stem = w[:-len(suffix)]
        if _measure(stem) > 0:
            return stem + rules[suffix]
    return w


def _step4(w: str) -> str:
    """(m>1) drop AL ANCE ENCE ER IC ABLE IBLE ANT EMENT MENT ENT (*S or *T)ION OU ISM ATE ITI OUS IVE IZE."""
    suffix = _STEP4_SUFFIX(w)
    if suffix is None:
        return w
    stem = w[:-len(suffix)]
    if suffix == "ion" and not stem.endswith(("s", "t")):
        return w
    return stem if _measure(stem) > 1 else w


def _step5(w: str) -> str:
    """(m>1) E -> ''; (m=1 and not *o) E -> ''; then (m>1 and *d and *L) -> single letter.
    m is measured on the word as step 5 receives it (a final e does not change it)."""
    m = None
    if w.endswith("e"):
        m = _measure(w)
        if m > 1 or (m == 1 and not _ends_cvc(w[:-1])):
            w = w[:-1]
    if w.endswith("ll"):
        if m is None:
            m = _measure(w)
        if m > 1:
            w = w[:-1]
    return w


def _stem_units(word: str) -> str:
    if len(word) <= 2:
        return word
    w = _step1ab(word)
    w = _step1c(w)
    w = _replace_if_m0(w, STEP2, _STEP2_SUFFIX)
    w = _replace_if_m0(w, STEP3, _STEP3_SUFFIX)
    w = _step4(w)
    return _step5(w)


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def _to_surrogates(match: re.Match) -> str:
    c = ord(match.group()) - 0x10000
    return chr(0xD800 + (c >> 10)) + chr(0xDC00 + (c & 0x3FF))


def stem(word: str) -> str:
    """Lucene's Porter stem of ``word`` (lowercase expected, as after LowerCaseFilter)."""
    if word.isascii() or not _ASTRAL.search(word):
        return _stem_units(word)
    # as UTF-16 code units: each supplementary character is two consonants; no rule splits a pair
    units = _ASTRAL.sub(_to_surrogates, word)
    return _stem_units(units).encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


class Stemmer:
    """:func:`stem` memoized per distinct word (a corpus repeats its words)."""

    def __init__(self):
        self._cache: dict[str, str] = {}

    def stem(self, word: str) -> str:
        try:
            return self._cache[word]
        except KeyError:
            out = self._cache[word] = stem(word)
            return out

    def stem_many(self, words) -> list[str]:
        cache = self._cache
        out = []
        for word in words:
            s = cache.get(word)
            if s is None:
                s = cache[word] = stem(word)
            out.append(s)
        return out

"""Texts -> term ids, a chunk at a time, analysing each distinct word once.

Two levels of memoization, both keyed by strings that analyse the same wherever they occur:

* a *word* is a whitespace-delimited piece of text (``str.split()``, C speed). No candidate of the
  tokenizer (tokenizer.py) contains whitespace, so a text's candidates are its words' candidates
  in order, and a text's terms are its words' terms in order.
* a *candidate* is a tokenizer candidate; its terms come from :meth:`Analyzer.analyze_candidates`.

Per text the only Python-level work is ``str.split()`` and a C-level dictionary lookup per word
(``map(dict.__getitem__, ...)`` on a dict that numbers new keys itself). New words are cut into
candidates once, new candidates analysed in one batch per chunk, and word ids are expanded to term
ids with numpy (a word yields 0 terms when it is a stopword or punctuation, usually 1, and more
when it holds several candidates or the exact tokenizer splits it).
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from itertools import compress, islice
from operator import not_
from typing import Iterable

import numpy as np

from retrievers.bm25.analyzer import Analyzer
from retrievers.bm25.tokenizer import separated_candidate_finder


_SEPARATOR = "\n"  # whitespace: no tokenizer candidate holds it
_SEPARATOR_BYTES = _SEPARATOR.encode()


class _Growable:
    """An append-only numpy array with amortised doubling."""

    def __init__(self, dtype) -> None:
        self.data = np.empty(1024, dtype=dtype)
        self.size = 0

    def extend(self, values) -> None:
        values = np.asarray(values, dtype=self.data.dtype)
        need = self.size + len(values)
        if need > len(self.data):
            grown = np.empty(max(need, 2 * len(self.data)), dtype=self.data.dtype)
            grown[:self.size] = self.data[:self.size]
            self.data = grown
        self.data[self.size:need] = values
        self.size = need

    def view(self) -> np.ndarray:
        return self.data[:self.size]


def _numbering_dict() -> defaultdict:
    """A dict that gives a new key the next integer (0, 1, ...) on lookup, at C speed."""
    ids: defaultdict = defaultdict()
    ids.default_factory = ids.__len__
    return ids


def _newest(ids: dict, n: int) -> list:
    """The ``n`` most recently added keys, oldest first (dicts iterate backwards in O(1) a step)."""
    return list(islice(reversed(ids), n))[::-1] if n else []


class _Expansion:
    """Item id -> its term ids: ``count[i]`` terms starting at ``first[i]`` in ``flat`` (which
    several expansions may share, so that items of one may point at another's terms)."""

    def __init__(self, flat: _Growable) -> None:
        self.count = _Growable(np.int64)
        self.first = _Growable(np.int64)
        self.flat = flat

    def __len__(self) -> int:
        return self.count.size

    def append(self, counts: np.ndarray, term_ids, first: np.ndarray | None = None) -> None:
        """Add items with ``counts[i]`` terms each, at ``term_ids[first[i]:first[i] + counts[i]]``
        (``first`` defaults to the items' terms being ``term_ids`` in item order)."""
        counts = np.asarray(counts, dtype=np.int64)
        if first is None:
            first = np.cumsum(counts) - counts
        self.first.extend(self.flat.size + np.asarray(first, dtype=np.int64))
        self.count.extend(counts)
        self.flat.extend(term_ids)

    def expand(self, ids: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(terms per group, term ids) for item ids ``ids`` cut into consecutive groups of ``groups`` items."""
        counts = self.count.view()[ids]
        cum = np.concatenate([[0], np.cumsum(counts)])
        group_ends = np.cumsum(np.asarray(groups, dtype=np.int64))
        lengths = np.diff(np.concatenate([[0], cum[group_ends]]))
        if len(counts) and counts.max() <= 1:
            term_ids = self.flat.view()[self.first.view()[ids[counts == 1]]]
        else:
            total = int(cum[-1])
            starts = self.first.view()[ids]
            # position p of the output belongs to item j: flat index = starts[j] + (p - cum[j])
            term_ids = self.flat.view()[np.repeat(starts - cum[:-1], counts) + np.arange(total)]
        return lengths, term_ids.astype(np.int32, copy=False)


class TermEncoder:
    """Assigns term ids in order of first appearance; ``terms[i]`` is the string of term id ``i``."""

    def __init__(self, analyzer: Analyzer) -> None:
        self.analyzer = analyzer
        flat = _Growable(np.int32)  # term ids of candidates, and of words that are not one candidate
        self._word_ids = _numbering_dict()
        self._words = _Expansion(flat)
        self._candidate_ids = _numbering_dict()
        self._candidates = _Expansion(flat)
        self._candidate_ids[_SEPARATOR] = 0  # candidate 0: the word separator, no terms
        self._candidates.append([0], [])
        self._term_ids = _numbering_dict()
        self.terms: list[str] = []  # grows in place as chunks are encoded

    @property
    def n_terms(self) -> int:
        return len(self.terms)

    @property
    def term_index(self) -> dict[str, int]:
        """Term -> id (a copy)."""
        return dict(self._term_ids)

    def _analyse_new_candidates(self) -> None:
        new = _newest(self._candidate_ids, len(self._candidate_ids) - len(self._candidates))
        if not new:
            return
        counts, first, flat = self.analyzer.analyze_flat(new)
        term_ids = np.fromiter(map(self._term_ids.__getitem__, flat), dtype=np.int32, count=len(flat))
        self.terms.extend(_newest(self._term_ids, len(self._term_ids) - len(self.terms)))
        self._candidates.append(counts, term_ids, first)

    def _analyse_new_words(self) -> None:
        new = _newest(self._word_ids, len(self._word_ids) - len(self._words))
        if not new:
            return
        # A word that is all ASCII letters and digits is one candidate, itself: it shares the
        # candidate's terms. The others go through one findall over them all, each followed by
        # the separator (never part of a candidate; candidate 0, no terms), marking word ends.
        plain = list(map(bytes.isalnum, new))
        plain_words = list(compress(new, plain))
        other_words = list(compress(new, map(not_, plain)))
        lookup = self._candidate_ids.__getitem__
        plain_cids = np.fromiter(map(lookup, _SEPARATOR_BYTES.join(plain_words).decode("ascii").split(_SEPARATOR))
                                 if plain_words else (), dtype=np.int64, count=len(plain_words))
        joined = (_SEPARATOR_BYTES.join(other_words) + _SEPARATOR_BYTES).decode("utf-8", "surrogatepass")
        found = separated_candidate_finder(self.analyzer.tokenizer, _SEPARATOR)(joined) if other_words else []
        other_cids = np.fromiter(map(lookup, found), dtype=np.int64, count=len(found))
        per_word = np.diff(np.flatnonzero(other_cids == 0), prepend=-1)  # its candidates and its separator
        self._analyse_new_candidates()
        other_counts, other_terms = self._candidates.expand(other_cids, per_word)
        is_plain = np.asarray(plain, dtype=bool)
        counts = np.empty(len(new), dtype=np.int64)
        first = np.empty(len(new), dtype=np.int64)
        counts[is_plain] = self._candidates.count.view()[plain_cids]
        first[is_plain] = self._candidates.first.view()[plain_cids]
        counts[~is_plain] = other_counts
        first[~is_plain] = self._words.flat.size + np.cumsum(other_counts) - other_counts
        self._words.flat.extend(other_terms)
        self._words.count.extend(counts)
        self._words.first.extend(first)

    def encode(self, texts: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
        """(number of terms per text as int64, all term ids as int32) for one chunk of texts."""
        lookup = self._word_ids.__getitem__
        n_words: list[int] = []
        word_ids = array("q")  # C integers: no Python int per occurrence kept
        for text in texts:
            words = text.encode("utf-8", "surrogatepass").split()
            n_words.append(len(words))
            word_ids.extend(map(lookup, words))
        self._analyse_new_words()
        return self._words.expand(np.frombuffer(word_ids, dtype=np.int64), n_words)

    def query_terms(self, text: str) -> list[int]:
        """Term ids of a query's terms that are in the vocabulary (unknown terms match nothing)."""
        index = self._term_ids
        return [index[t] for t in self.analyzer(text) if t in index]

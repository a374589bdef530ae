"""Texts -> term ids, a chunk at a time, analysing each distinct candidate string once.

Per text the only Python-level work is one regex ``findall`` and a C-level dictionary lookup per
candidate (``map(dict.__getitem__, ...)`` on a dict that numbers new keys itself). New candidates
are analysed in one batch per chunk (:meth:`Analyzer.analyze_candidates`), and candidate ids are
expanded to term ids with numpy (a candidate yields 0 terms when it is a stopword, usually 1, and
more when the exact tokenizer splits it).
"""

from __future__ import annotations

from collections import defaultdict
from itertools import islice
from typing import Iterable

import numpy as np

from retrievers.bm25.analyzer import Analyzer


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


class TermEncoder:
    """Assigns term ids in order of first appearance; ``terms[i]`` is the string of term id ``i``."""

    def __init__(self, analyzer: Analyzer) -> None:
        self.analyzer = analyzer
        self._candidate_ids: defaultdict = defaultdict()
        self._candidate_ids.default_factory = self._candidate_ids.__len__  # a new key gets the next id
        self._n_analysed = 0
        self._count = _Growable(np.int64)  # terms per candidate
        self._first = _Growable(np.int64)  # start of its terms in _flat
        self._flat = _Growable(np.int32)   # term ids, candidate after candidate
        self.term_index: dict[str, int] = {}
        self.terms: list[str] = []

    @property
    def n_terms(self) -> int:
        return len(self.terms)

    def _analyse_new(self) -> None:
        n_new = len(self._candidate_ids) - self._n_analysed
        if not n_new:
            return
        # dicts keep insertion order and iterate backwards in O(1) a step: the newest keys last.
        new = list(islice(reversed(self._candidate_ids), n_new))[::-1]
        index = self.term_index
        counts, flat = [], []
        for terms in self.analyzer.analyze_candidates(new):
            counts.append(len(terms))
            for term in terms:
                tid = index.get(term)
                if tid is None:
                    tid = index[term] = len(self.terms)
                    self.terms.append(term)
                flat.append(tid)
        counts_arr = np.asarray(counts, dtype=np.int64)
        self._first.extend(self._flat.size + np.concatenate([[0], np.cumsum(counts_arr)[:-1]]))
        self._count.extend(counts_arr)
        self._flat.extend(flat)
        self._n_analysed = len(self._candidate_ids)

    def encode(self, texts: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
        """(number of terms per text as int64, all term ids as int32) for one chunk of texts."""
        find = self.analyzer.candidates
        lookup = self._candidate_ids.__getitem__
        n_candidates: list[int] = []
        candidate_ids: list[int] = []
        for text in texts:
            found = find(text)
            n_candidates.append(len(found))
            candidate_ids.extend(map(lookup, found))
        self._analyse_new()
        cids = np.asarray(candidate_ids, dtype=np.int64)
        counts = self._count.view()[cids]
        ends = np.cumsum(counts)
        doc_ends = np.cumsum(np.asarray(n_candidates, dtype=np.int64))
        cum = np.concatenate([[0], ends])
        lengths = np.diff(np.concatenate([[0], cum[doc_ends]]))
        if len(counts) and counts.max() <= 1:
            keep = counts == 1
            term_ids = self._flat.view()[self._first.view()[cids[keep]]]
        else:
            total = int(cum[-1])
            starts = self._first.view()[cids]
            # position k of the output belongs to candidate j: flat index = starts[j] + (k - cum[j])
            term_ids = self._flat.view()[np.repeat(starts - cum[:-1], counts) + np.arange(total)]
        return lengths, term_ids.astype(np.int32, copy=False)

    def query_terms(self, text: str) -> list[int]:
        """Term ids of a query's terms that are in the vocabulary (unknown terms match nothing)."""
        index = self.term_index
        return [index[t] for t in self.analyzer(text) if t in index]

"""The Run: ranked documents with scores for each query, stored columnar.

A run is a CSR-like layout over all queries at once (a document appears at most once per query)::

    query_ids  (n_queries,)      query ids, unique
    offsets    (n_queries + 1,)  query i owns entries offsets[i]:offsets[i+1]
    doc_codes  (n_entries,)      index of each entry's document id in ``doc_vocab``
    scores     (n_entries,)      float64 scores
    doc_vocab  (n_docs,)         the distinct document ids (strings)

Document ids are interned into ``doc_vocab`` so that the evaluator joins a run with the qrels on
integers, never on Python strings per entry. A retriever builds runs directly from its corpus
index; ``Run.from_dict`` and the TREC reader build them from ids.

Canonical order (the evaluator's ranking) is score descending, ties broken by document id
descending in string order, as trec_eval sorts. A run whose ``doc_vocab`` is in string order
(``vocab_sorted``, as the columnar TREC reader builds it) breaks ties by comparing codes and finds
ids by binary search; a run that carries ``vocab_rank`` (each vocabulary entry's rank in string
order, as a retriever knows it of its corpus ids) breaks ties on those integers; any other compares
the id strings. ``Run.canonical()`` returns a run in that order (itself when it already is; a run
remembers that it is canonical, so the check runs once), so rank = position within the query + 1.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Iterable, Mapping

import numpy as np

from harness.columns import (IdColumn, first_repeated, object_array, real_array, require_mapping,
                             require_strings)


def _string_argsort(strings: np.ndarray) -> np.ndarray:
    """argsort of an object array of str in Python's string order.

    A fixed-width unicode copy sorts in C on code points (the same order as Python's ``<``), much
    faster than comparing objects; very long ids fall back to the object sort to bound memory, and
    so do ids holding a NUL (numpy's fixed-width strings drop trailing NULs: "a\\0" would equal "a").
    """
    values = strings.tolist()
    longest = max(map(len, values), default=0)
    if longest * len(values) <= 1 << 26 and "\0" not in "".join(values):
        return np.argsort(np.array(values, dtype=f"U{max(longest, 1)}"), kind="stable")
    return np.argsort(strings, kind="stable")


class _Vocabulary:
    """``Run.doc_vocab``: the object array of the run's document ids. A run may be given an
    :class:`~harness.columns.IdColumn` instead (a corpus's ids, as a retriever's runs are): it is
    kept as given (:attr:`Run.vocab_source`), compiled readers (the TREC writer, :meth:`Run.codes_of`)
    read its Arrow buffers, and the object array is made on the first read of ``doc_vocab`` only."""

    def __get__(self, run, owner=None):
        if run is None:
            raise AttributeError("doc_vocab")  # (no class-level default for the dataclass field)
        value = run.__dict__["vocab_source"]
        return value.objects() if isinstance(value, IdColumn) else value

    def __set__(self, run, value) -> None:
        run.__dict__["vocab_source"] = value


@dataclass(frozen=True, eq=False)
class Run:
    query_ids: np.ndarray
    offsets: np.ndarray
    doc_codes: np.ndarray
    scores: np.ndarray
    doc_vocab: np.ndarray = _Vocabulary()  # type: ignore[assignment]  # an IdColumn is kept as given
    _vocab_index: dict = field(default=None, repr=False, compare=False)  # type: ignore[assignment]
    vocab_sorted: bool = False  # doc_vocab is in string order (code order = id order)
    vocab_rank: np.ndarray | None = field(default=None, repr=False, compare=False)  # int64 string rank per code
    _canonical: bool = field(default=False, init=False, repr=False, compare=False)  # known canonical
    # (vocab_source, vocab_rank, code of each rank): see _code_of_rank; an init
    # field so that replace() carries it to runs of the same vocabulary (checked by identity at use).
    _rank_view: tuple | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        n_q = len(self.query_ids)
        if len(self.offsets) != n_q + 1:
            raise ValueError(f"offsets must have {n_q + 1} entries, got {len(self.offsets)}")
        if len(self.doc_codes) != len(self.scores) or (n_q and self.offsets[-1] != len(self.scores)):
            raise ValueError("doc_codes, scores and offsets[-1] must agree on the number of entries")
        ids = self.query_ids.tolist()
        if len(set(ids)) != n_q:
            repeated = first_repeated(ids)[0]
            raise ValueError(f"query ids in a run must be unique: {repeated!r} is given twice (query i owns "
                             "entries offsets[i]:offsets[i+1]: give each query once, its entries together)")

    def __repr__(self) -> str:
        """A one-line summary whatever the run's size (the dataclass's repr printed its arrays: 5,127
        characters for BM25's run over SciFact), e.g. ``Run(300 queries, 30,000 entries, 4,859 document ids)``."""
        return f"Run({self.n_queries:,} queries, {len(self.scores):,} entries, {self.n_vocab:,} document ids)"

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_arrays(
        cls,
        query_ids: Iterable[str],
        offsets: np.ndarray,
        doc_codes: np.ndarray,
        scores: np.ndarray,
        doc_vocab: Iterable[str],
        vocab_index: dict | None = None,
        vocab_sorted: bool = False,
        vocab_rank: np.ndarray | None = None,
        canonical: bool = False,
        vocab_order: np.ndarray | None = None,
    ) -> "Run":
        """Build a run from columnar arrays (no copy where dtypes already fit); ``vocab_sorted`` says
        that ``doc_vocab`` is in string order, ``vocab_rank`` gives each entry's rank in that order;
        ``doc_vocab`` may be an :class:`~harness.columns.IdColumn` (kept as given: see ``_Vocabulary``);
        ``canonical``: the producer guarantees the canonical order (a top k selected by the evaluator's
        keys, retrievers/topk.py), so it is not checked again; ``vocab_order``: the inverse permutation
        of ``vocab_rank`` (the code at each rank) when the producer has it (a retriever's corpus
        order): id lookups (:meth:`codes_of`) start from it instead of building and checking it.

        Checked (a ValueError or TypeError, not a silently wrong evaluation): 1-d columns; offsets from 0,
        never decreasing; every code an index of ``doc_vocab``; str query ids; and, for a vocabulary
        given without ``vocab_index``, ``vocab_sorted`` or ``vocab_rank`` (a caller's own columns, not a
        producer's), str document ids, each once: an id at two codes would be two documents to the
        evaluator, which looks a judged id up at one code only (a pandas column of every entry's id, as
        ``doc_vocab`` with codes 0..n-1, found each judged document in one query only)."""
        vocab = doc_vocab if isinstance(doc_vocab, (np.ndarray, IdColumn)) else object_array(doc_vocab)
        query_ids = query_ids if isinstance(query_ids, list) else list(query_ids)
        require_strings(query_ids, "run query")
        offsets, doc_codes = np.asarray(offsets, dtype=np.int64), np.asarray(doc_codes, dtype=np.int64)
        scores = np.asarray(scores, dtype=np.float64)
        if offsets.ndim != 1 or doc_codes.ndim != 1 or scores.ndim != 1:
            raise ValueError("offsets, doc_codes and scores must be 1-d arrays")
        if len(offsets) and (offsets[0] != 0 or (np.diff(offsets) < 0).any()):
            raise ValueError("offsets must start at 0 and never decrease (query i owns entries offsets[i]:offsets[i+1])")
        if len(doc_codes) and (doc_codes.min() < 0 or doc_codes.max() >= len(vocab)):
            bad = doc_codes[(doc_codes < 0) | (doc_codes >= len(vocab))][0]
            raise ValueError(f"document code {bad} is not an index of doc_vocab ({len(vocab)} ids)")
        if vocab_index is None and not vocab_sorted and vocab_rank is None and not isinstance(vocab, IdColumn):
            ids = vocab.tolist()
            require_strings(ids, "run document")
            if len(set(ids)) < len(ids):
                repeated = first_repeated(ids)[0]
                raise ValueError(f"document id {repeated!r} is in doc_vocab twice: give each distinct id one code "
                                 "(e.g. numpy.unique(ids, return_inverse=True)), or the evaluator counts it as two documents")
        rank = None if vocab_rank is None else np.asarray(vocab_rank, dtype=np.int64)
        view = None
        if (vocab_order is not None and rank is not None and len(vocab_order) == len(vocab)
                and (isinstance(vocab, IdColumn) or vocab.dtype == object)):
            # taken after a spot check that it inverts the ranks (without it, codes_of builds and checks its own)
            order = np.asarray(vocab_order, dtype=np.int64)
            probe = np.linspace(0, len(order) - 1, min(len(order), 64)).astype(np.int64)
            at = order[probe]
            if len(rank) == len(order) and ((at >= 0) & (at < len(rank))).all() and np.array_equal(rank[at], probe):
                view = (vocab, rank, order)
        run = cls(
            query_ids=object_array(query_ids),
            offsets=offsets,
            doc_codes=doc_codes,
            scores=scores,
            doc_vocab=vocab,
            _vocab_index=vocab_index,
            vocab_sorted=vocab_sorted,
            vocab_rank=rank,
            _rank_view=view,
        )
        return run._known_canonical() if canonical else run

    @classmethod
    def from_dict(cls, results: Mapping[str, Mapping[str, float]]) -> "Run":
        """Build a run from BEIR's ``{query_id: {doc_id: score}}`` results."""
        require_mapping(results, "Run.from_dict", "{query_id: {doc_id: score}}")
        # (at C speed, no Python loop per entry: a dict numbering each new id on lookup, chained iterators)
        vocab = _numbering()
        lists = list(results.values())
        lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        offsets = np.zeros(len(lists) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        codes = np.fromiter(map(vocab.__getitem__, chain.from_iterable(lists)), dtype=np.int64, count=int(offsets[-1]))
        scores = list(chain.from_iterable(docs.values() for docs in lists))
        vocab.default_factory = None
        require_strings(list(vocab), "run document")  # (the query ids: from_arrays checks them)
        labels = ((q, d) for q, docs in results.items() for d in docs)
        return cls.from_arrays(list(results), offsets, codes, real_array(scores, labels, "run score"), list(vocab),
                               vocab)

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, str, float]]) -> "Run":
        """From ``(query_id, doc_id, score)`` rows in any order, as :meth:`harness.qrels.Qrels.from_rows`
        takes judgments: ir_measures' ``ScoredDoc`` tuples, a DataFrame's ``zip(df.query_id, df.doc_id,
        df.score)``. Queries keep the order they are first seen in, each query's documents the order of
        their rows (the evaluator ranks them by score). Checked as :meth:`from_dict`: str ids, real scores;
        a (query, document) pair given twice is a ValueError naming both (trec_eval refuses "duplicate
        docs"; counted twice, nDCG@k could pass 1)."""
        rows = list(rows)
        query_ids, doc_ids, scores = [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]
        require_strings(query_ids, "run query")
        require_strings(doc_ids, "run document")
        values = real_array(scores, zip(query_ids, doc_ids), "run score")
        if len(dict.fromkeys(zip(query_ids, doc_ids))) < len(rows):
            pair = first_repeated(zip(query_ids, doc_ids))[0]
            raise ValueError(f"run rows list document {pair[1]!r} for query {pair[0]!r} twice: give each pair once")
        queries, docs = _numbering(), _numbering()
        query_codes = np.fromiter(map(queries.__getitem__, query_ids), dtype=np.int64, count=len(rows))
        doc_codes = np.fromiter(map(docs.__getitem__, doc_ids), dtype=np.int64, count=len(rows))
        order = np.argsort(query_codes, kind="stable")  # each query's rows together, in their order
        offsets = np.zeros(len(queries) + 1, dtype=np.int64)
        np.cumsum(np.bincount(query_codes, minlength=len(queries)), out=offsets[1:])
        docs.default_factory = None
        return cls.from_arrays(list(queries), offsets, doc_codes[order], values[order], list(docs), docs)

    # ----------------------------------------------------------------- access
    @property
    def vocab_source(self) -> "np.ndarray | IdColumn":
        """The vocabulary as given: the object array, or the IdColumn whose objects ``doc_vocab`` makes."""
        return self.__dict__["vocab_source"]

    @property
    def n_vocab(self) -> int:
        """The number of distinct document ids (codes are 0..n_vocab-1), without making ``doc_vocab``."""
        return len(self.vocab_source)

    def _replace(self, **changes) -> "Run":
        """dataclasses.replace, with the vocabulary passed on as given (an IdColumn stays one)."""
        return replace(self, doc_vocab=self.vocab_source, **changes)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def __len__(self) -> int:
        return len(self.scores)

    @property
    def vocab_index(self) -> dict:
        """Document id -> code (built on first use)."""
        if self._vocab_index is None:
            object.__setattr__(self, "_vocab_index", {d: i for i, d in enumerate(self.doc_vocab.tolist())})
        return self._vocab_index

    def codes_of(self, ids: Iterable[str]) -> np.ndarray:
        """The code of each id in ``doc_vocab`` (-1 where absent).

        Uses the id index when it is built (or the vocabulary is small); otherwise scans the
        vocabulary once for just these ids, which is ~10x cheaper than indexing a vocabulary of
        millions of ids that an evaluation looks up only a few thousand of.
        """
        ids = ids if isinstance(ids, list) else list(ids)
        if isinstance(self.vocab_source, IdColumn) and self._vocab_index is None and self.vocab_rank is not None:
            codes = self._codes_in_column(ids)
            if codes is not None:
                return codes
        if self.vocab_sorted and self._vocab_index is None:
            if not ids or not len(self.doc_vocab):
                return np.full(len(ids), -1, dtype=np.int64)
            # (fixed-width strings drop trailing NULs: an id holding one is compared as an object)
            probe = np.array(ids, dtype=str) if "\0" not in "".join(ids) else object_array(ids)
            at = np.minimum(np.searchsorted(self.doc_vocab, probe), len(self.doc_vocab) - 1)
            return np.where(self.doc_vocab[at] == probe, at, -1).astype(np.int64)
        if self._vocab_index is None and self.vocab_rank is not None and self.n_vocab > 4 * len(ids):
            codes = self._codes_by_rank(ids)
            if codes is not None:
                return codes
        if self._vocab_index is not None or self.n_vocab <= 4 * len(ids):
            index = self.vocab_index
            return np.fromiter((index.get(d, -1) for d in ids), dtype=np.int64, count=len(ids))
        position = {d: i for i, d in enumerate(dict.fromkeys(ids))}
        vocab = self.doc_vocab.tolist()
        in_vocab = np.flatnonzero(np.fromiter(map(position.__contains__, vocab), dtype=bool, count=len(vocab)))
        code_of_position = np.full(len(position), -1, dtype=np.int64)
        code_of_position[[position[vocab[c]] for c in in_vocab.tolist()]] = in_vocab
        return code_of_position[np.fromiter(map(position.__getitem__, ids), dtype=np.int64, count=len(ids))]

    def _code_of_rank(self) -> np.ndarray | None:
        """The code at each rank of ``vocab_rank`` (its inverse, built once per vocabulary and kept in
        ``_rank_view``), or None when that does not apply (no ranks, not an object vocabulary or an
        IdColumn, or ranks not 0..n-1 each once)."""
        view, source = self._rank_view, self.vocab_source
        if view is None or view[0] is not source or view[1] is not self.vocab_rank:
            rank = self.vocab_rank
            n = 0 if rank is None else len(rank)
            if (rank is None or not (isinstance(source, IdColumn) or source.dtype == object) or n != len(source)
                    or not n or rank.min() < 0 or rank.max() >= n):
                return None
            code_of_rank = np.full(n, -1, dtype=np.int64)
            code_of_rank[rank] = np.arange(n)
            if (code_of_rank < 0).any():  # a rank given twice
                return None
            view = (source, rank, code_of_rank)
            object.__setattr__(self, "_rank_view", view)
        return view[2]

    def _codes_in_column(self, ids: list[str]) -> np.ndarray | None:
        """``codes_of`` for an IdColumn vocabulary with ranks: a binary search of each id over the
        column's bytes in rank order, in C (``harness._trecrun.find_ranked``); None when the compiled
        module is not there (or the ranks do not apply): the caller then reads ``doc_vocab``."""
        from harness.formats import native

        code_of_rank = self._code_of_rank()
        if code_of_rank is None or not native.available():
            return None
        return native.find_ranked(*self.vocab_source.buffers(), code_of_rank, ids)

    def _codes_by_rank(self, ids: list[str]) -> np.ndarray | None:
        """``codes_of`` by binary search in the vocabulary put in string order by ``vocab_rank`` (built
        once per vocabulary: numpy work over the vocabulary, instead of a Python lookup per id of it),
        or None when that does not apply (see :meth:`_code_of_rank`; or an entry of the vocabulary is no
        str, which cannot be compared with one)."""
        code_of_rank = self._code_of_rank()
        if code_of_rank is None:
            return None
        vocab = self.doc_vocab
        # A binary search of every id at once, over the ranks: each step compares the ids with the
        # vocabulary's strings at their midpoints (no copy of the vocabulary in string order: at
        # millions of ids, gathering it cost more than the lookups).
        probe = object_array(ids)
        n = len(code_of_rank)
        lo, hi = np.zeros(len(probe), dtype=np.int64), np.full(len(probe), n, dtype=np.int64)
        while True:
            open_ = lo < hi
            if not open_.any():
                break
            mid = (lo + hi) >> 1
            try:
                below = vocab[code_of_rank[np.minimum(mid, n - 1)]] < probe
            except TypeError:  # a vocabulary entry that is no str (a plugin's): the dict lookup compares none
                return None
            lo = np.where(open_ & below, mid + 1, lo)
            hi = np.where(open_ & ~below, mid, hi)
        at = code_of_rank[np.minimum(lo, n - 1)]
        return np.where(vocab[at] == probe, at, -1).astype(np.int64)

    def entry_query_index(self) -> np.ndarray:
        """The query index of every entry."""
        return np.repeat(np.arange(self.n_queries), np.diff(self.offsets))

    def repeated_entry(self) -> tuple[str, str] | None:
        """(query id, document id) of a document listed twice for one query, or None. trec_eval refuses
        such a run (``duplicate docs``): a repeat takes two ranks, so P@k, Recall@k and nDCG@k count it
        twice (nDCG > 1). Compiled: one pass over the entries (harness.formats.native; 1M entries ~2 ms);
        else a sort of every entry's (query, code) key."""
        n = len(self.doc_codes)
        if n < 2:
            return None
        from harness.formats import native

        if native.available():
            at = native.repeated_entry(self.offsets, self.doc_codes, self.n_vocab)
            if at < 0:
                return None
            row = int(np.searchsorted(self.offsets, at, side="right")) - 1
            return str(self.query_ids[row]), str(self.doc_vocab[self.doc_codes[at]])
        rows = self.entry_query_index()
        keys = np.sort(rows * max(self.n_vocab, 1) + self.doc_codes)
        at = np.flatnonzero(keys[1:] == keys[:-1])
        if not len(at):
            return None
        row, code = divmod(int(keys[at[0]]), max(self.n_vocab, 1))
        return str(self.query_ids[row]), str(self.doc_vocab[code])

    def doc_ids(self, i: int) -> list[str]:
        start, end = self.offsets[i], self.offsets[i + 1]
        return self.doc_vocab[self.doc_codes[start:end]].tolist()

    def to_dict(self) -> dict[str, dict[str, float]]:
        """BEIR/pytrec_eval form ``{query_id: {doc_id: score}}`` (slow; for interop and tests)."""
        out = {}
        for i, qid in enumerate(self.query_ids.tolist()):
            start, end = self.offsets[i], self.offsets[i + 1]
            out[qid] = dict(zip(self.doc_vocab[self.doc_codes[start:end]].tolist(), self.scores[start:end].tolist()))
        return out

    # ----------------------------------------------------------------- ordering
    def _string_ranks(self, codes: np.ndarray) -> np.ndarray | None:
        """The string-order rank of the documents ``codes`` (integers that order like their ids),
        or None when the run knows no such order (its ids must then be compared as strings)."""
        if self.vocab_sorted:
            return codes
        return None if self.vocab_rank is None else self.vocab_rank[codes]

    def _tie_break_violations(self, positions: np.ndarray) -> np.ndarray:
        """For tied neighbours (i, i+1), whether doc id i < doc id i+1 (out of canonical order)."""
        left, right = self._string_ranks(self.doc_codes[positions]), self._string_ranks(self.doc_codes[positions + 1])
        if left is None:  # object arrays: one C loop of Python string comparisons
            left, right = self.doc_vocab[self.doc_codes[positions]], self.doc_vocab[self.doc_codes[positions + 1]]
        return np.asarray(left < right, dtype=bool)

    def _known_canonical(self) -> "Run":
        object.__setattr__(self, "_canonical", True)
        return self

    def refuse_nan(self) -> None:
        """ValueError naming the query of the first NaN score, if any: a NaN score has no rank."""
        nan = np.flatnonzero(np.isnan(self.scores))
        if nan.size:
            query = self.query_ids[np.searchsorted(self.offsets, nan[0], side="right") - 1]
            raise ValueError(f"run scores contain NaN (query {query!r}): a NaN score has no rank")

    def _neighbours(self) -> tuple[bool, np.ndarray]:
        """Over adjacent entries (i, i+1) of a query: (whether a score rises or any score is NaN, the
        positions i of tied neighbours). A NaN anywhere counts, last in its query too: a NaN has no
        rank, and the same entries in another order must not be accepted where these are refused."""
        n = len(self.scores)
        same_query = np.ones(n - 1, dtype=bool)
        inner = self.offsets[1:-1]
        same_query[inner[(inner > 0) & (inner < n)] - 1] = False
        left, right = self.scores[:-1], self.scores[1:]
        rising = bool(np.any(same_query & (left < right)) or np.isnan(self.scores).any())
        return rising, np.flatnonzero(same_query & (left == right))

    def _trivially_canonical(self) -> bool:
        """Known canonical, or fewer than two entries none of which is NaN."""
        return self._canonical or (len(self.scores) < 2 and not np.isnan(self.scores).any())

    def is_canonical(self) -> bool:
        """True when every query's entries are sorted by score desc, then doc id desc (and no score is NaN)."""
        if self._trivially_canonical():
            return True
        rising, tied = self._neighbours()
        return not rising and not (tied.size and self._tie_break_violations(tied).any())

    def canonical(self) -> "Run":
        """This run in canonical order (score desc, doc id desc within each query); a ValueError naming
        the query when a score is NaN, wherever it stands."""
        if self._trivially_canonical():
            return self
        rising, tied_at = self._neighbours()
        if not rising and not (tied_at.size and self._tie_break_violations(tied_at).any()):
            return self._known_canonical()
        self.refuse_nan()
        if rising:
            qidx = self.entry_query_index()
            order = self._score_order(qidx)
            codes, scores = self.doc_codes[order], self.scores[order]
            tied = (scores[1:] == scores[:-1]) & (qidx[1:] == qidx[:-1])
        else:  # scores already in order: only tie groups are out of order
            codes, scores = self.doc_codes, self.scores
            tied = np.zeros(len(scores) - 1, dtype=bool)
            tied[tied_at] = True
        # Equal (query, score) neighbours form tie groups; order each group by doc id descending.
        if tied.any():
            codes, scores = self._order_ties(codes, scores, tied)
        return self._replace(doc_codes=codes, scores=scores)._known_canonical()

    def _score_order(self, qidx: np.ndarray) -> np.ndarray:
        """Positions sorted by query, then score descending (ties in arbitrary order)."""
        lengths = np.diff(self.offsets)
        width = int(lengths.max()) if len(lengths) else 0
        if len(lengths) and (lengths == width).all():  # equal depths: sort the rows of a reshaped view
            rows = np.argsort(-self.scores.reshape(self.n_queries, width), axis=1)
            return (rows + self.offsets[:-1, None]).ravel()
        if self.n_queries * width > 4 * len(self.scores) + 1024:  # very uneven queries: one global sort
            return np.lexsort((-self.scores, qidx))
        column = np.arange(len(self.scores)) - np.repeat(self.offsets[:-1], lengths)
        padded = np.full((self.n_queries, width), np.inf)
        padded[qidx, column] = -self.scores
        rows = np.argsort(padded, axis=1)
        return (rows + self.offsets[:-1, None])[rows < lengths[:, None]]

    def _order_ties(self, codes: np.ndarray, scores: np.ndarray, tied: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Order each group of equal (query, score) neighbours by document id descending: (codes,
        scores). The scores move with their documents where a group holds a zero: -0.0 == 0.0 tie, and
        each document keeps the sign its score had (other equal scores are the same bits)."""
        starts = np.flatnonzero(tied & ~np.concatenate([[False], tied[:-1]]))
        ends = np.flatnonzero(tied & ~np.concatenate([tied[1:], [False]])) + 2
        sizes = ends - starts
        members = np.repeat(starts - np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes) + np.arange(sizes.sum())
        group = np.repeat(np.arange(len(starts)), sizes)
        # String order of just the tied documents, then sort within groups on it.
        string_rank = self._string_ranks(codes[members])
        if string_rank is None:
            string_rank = np.empty(len(members), dtype=np.int64)
            string_rank[_string_argsort(self.doc_vocab[codes[members]])] = np.arange(len(members))
        moved = members[np.lexsort((-string_rank, group))]
        codes = codes.copy()
        codes[members] = codes[moved]
        if not scores[members].all():  # a zero among the tied scores: maybe -0.0 beside 0.0
            scores = scores.copy()
            scores[members] = scores[moved]
        return codes, scores

    def with_scores(self, scores: np.ndarray) -> "Run":
        """The same entries with other scores (e.g. the float32-rounded scores a ranking compares).
        A run known to be in canonical order stays so when the scores are equal to its own, value for
        value (float32 rounding of scores that are float32 values already: a retriever's run)."""
        if scores is self.scores:
            return self
        run = self._replace(scores=scores)
        if self._canonical and np.array_equal(scores, self.scores):  # (NaN never equal: then checked)
            run._known_canonical()
        return run

    def truncated(self, depth: int) -> "Run":
        """The first ``depth`` entries of each query (of the canonical order)."""
        run = self.canonical()
        lengths = np.minimum(np.diff(run.offsets), depth)
        excess = np.diff(run.offsets) - lengths
        over = np.flatnonzero(excess)  # only the entries past depth are located (usually few)
        if not over.size:
            return run
        starts, cut = run.offsets[over] + lengths[over], excess[over]
        keep = np.ones(len(run.scores), dtype=bool)
        keep[np.repeat(starts - np.cumsum(cut) + cut, cut) + np.arange(int(cut.sum()))] = False
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        return run._replace(offsets=offsets, doc_codes=run.doc_codes[keep], scores=run.scores[keep])._known_canonical()

    def without_identical_ids(self, query_codes: np.ndarray | None = None) -> "Run":
        """Drop every entry whose document id equals its query id (BEIR's ignore_identical_ids).

        ``query_codes`` (optional): ``codes_of(query_ids)`` when the caller has it already.
        """
        qcodes = self.codes_of(self.query_ids.tolist()) if query_codes is None else query_codes
        rows = np.flatnonzero(qcodes >= 0)  # queries whose id is a document id of the run: only those checked
        if not rows.size:
            return self
        sizes = self.offsets[rows + 1] - self.offsets[rows]
        if int(sizes.sum()) * 4 > len(self.doc_codes):  # most entries checked (query ids that are document
            # ids, as in MS MARCO): one comparison over the run, no index of the entries to check
            hits = np.flatnonzero(self.doc_codes == np.repeat(qcodes, np.diff(self.offsets)))  # -1: no code
        else:
            entries = np.repeat(self.offsets[rows] - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
            hits = entries[self.doc_codes[entries] == np.repeat(qcodes[rows], sizes)]
        if not hits.size:
            return self
        keep = np.ones(len(self.doc_codes), dtype=bool)
        keep[hits] = False
        dropped = np.bincount(np.searchsorted(self.offsets, hits, side="right") - 1, minlength=self.n_queries)
        offsets = np.concatenate([[0], np.cumsum(np.diff(self.offsets) - dropped)])
        run = self._replace(offsets=offsets, doc_codes=self.doc_codes[keep], scores=self.scores[keep])
        return run._known_canonical() if self._canonical else run  # dropping entries keeps the order

    def without_empty_queries(self) -> "Run":
        """The run without its queries that have no entries: what its TREC file holds (a line per entry,
        so a query without one is not there); the evaluator scores both alike (0, judged and missing)."""
        nonempty = np.diff(self.offsets) > 0
        if nonempty.all():
            return self
        run = self._replace(query_ids=self.query_ids[nonempty],
                            offsets=np.append(self.offsets[:-1][nonempty], self.offsets[-1]))
        return run._known_canonical() if self._canonical else run


def concat_runs(runs: list[Run]) -> Run:
    """The runs of disjoint query batches as one run (queries in the given order).

    Runs sharing one vocabulary (a retriever's corpus ids: ``vocab_source``) are joined without touching ids;
    otherwise each run's codes are mapped into the union of the vocabularies.
    """
    if len(runs) == 1:
        return runs[0]
    if not runs:
        return Run.from_dict({})
    first = runs[0].vocab_source
    vocab_rank = None
    vocab_order = None
    if all(r.vocab_source is first for r in runs):
        vocab, vocab_index, codes = first, runs[0]._vocab_index, [r.doc_codes for r in runs]
        vocab_rank = runs[0].vocab_rank
        view = runs[0]._rank_view
        if view is not None and view[0] is first and view[1] is vocab_rank:
            vocab_order = view[2]
    else:
        vocab_index = {}
        codes = []
        for r in runs:
            mapping = np.fromiter((vocab_index.setdefault(d, len(vocab_index)) for d in r.doc_vocab.tolist()),
                                  dtype=np.int64, count=r.n_vocab)
            codes.append(mapping[r.doc_codes])
        vocab = object_array(list(vocab_index))
    sizes = np.concatenate([np.diff(r.offsets) for r in runs])
    return Run.from_arrays(np.concatenate([r.query_ids for r in runs]).tolist(),
                           np.concatenate([[0], np.cumsum(sizes)]), np.concatenate(codes),
                           np.concatenate([r.scores for r in runs]), vocab, vocab_index, vocab_rank=vocab_rank,
                           canonical=all(r._canonical for r in runs), vocab_order=vocab_order)  # each query's entries as they were


def _numbering() -> defaultdict:
    """A dict that gives a new key the next code (0, 1, ...) on lookup, at C speed (``map(d.__getitem__, ids)``)."""
    ids: defaultdict = defaultdict()
    ids.default_factory = ids.__len__
    return ids

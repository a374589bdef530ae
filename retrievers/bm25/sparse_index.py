"""The built BM25 index: plain data (bm25s's eager layout), checked once when it is made or loaded.

Layout, as ``bm25s.BM25.scores``: a term-major CSC matrix of precomputed per-(term, document) BM25
scores (scoring.py), ``indptr`` (n_terms + 1), ``indices`` (document of each posting, ascending
within a term) and ``data`` (float32 score of the posting). A query's score for a document is the
sum of the entries of its terms, each multiplied by the term's count in the query (Anserini's
bag-of-words query boosts every distinct term by its count). Built by build.py, stored by
cache.py, searched by search.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_CHECK_BLOCK = 1 << 20  # ranks and postings checked a block at a time (no n-sized temporaries)


class InvalidIndex(ValueError):
    """The arrays of an index do not fit together (a damaged cache entry, a bug)."""


def check_postings(indptr: np.ndarray, indices: np.ndarray, n_docs: int) -> None:
    """Raise :class:`InvalidIndex` unless ``indptr`` rises from 0 to ``len(indices)`` and each term's
    documents are strictly ascending in ``[0, n_docs)``: what search relies on (the compiled search
    finds a term's postings of a block of documents by binary search and writes each at its
    document's place in the block's scratch, so a term out of order would write out of bounds).
    numpy, a block of postings at a time; the compiled engine's ``check_postings`` (search.c) is
    the same check in one pass on threads."""
    if indptr[0] != 0 or indptr[-1] != len(indices):
        raise InvalidIndex("indptr does not span the postings")
    if len(indptr) > 1 and np.any(indptr[1:] < indptr[:-1]):
        raise InvalidIndex("indptr is not ascending")
    starts = np.asarray(indptr[1:-1])  # a term starts at each (a document may be lower than the one before)
    unordered = "a posting's document is out of range or out of order (each term's must ascend)"
    for start in range(0, len(indices), _CHECK_BLOCK):
        stop = min(start + _CHECK_BLOCK, len(indices))
        block = np.asarray(indices[start:stop], dtype=np.int64)
        if block.min() < 0 or block.max() >= n_docs:
            raise InvalidIndex(unordered)
        rises = np.diff(block, prepend=np.int64(indices[start - 1]) if start else np.int64(-1)) > 0
        lo, hi = np.searchsorted(starts, [start, stop])  # the terms starting in this block
        rises[starts[lo:hi] - start] = True
        if not rises.all():
            raise InvalidIndex(unordered)


class TermList(Sequence):
    """A cached index's terms as read from its ``terms.txt``: ``blob``, their UTF-8 joined by newlines
    (surrogates passed through, as the cache writes them). The length is known at once; the str of
    every term is made on first use only (299k terms: ~25 ms of a warm run that needs none of them:
    the compiled query encoder reads the blob, ``Encoder.add_terms_blob``). Compares equal to a list
    of the same terms; pickles as its blob."""

    def __init__(self, blob: bytes, n: int):
        text = blob.decode("utf-8", "surrogatepass")  # (raises UnicodeDecodeError on bytes that are not)
        if (blob.count(b"\n") + 1 if n else len(blob)) != n:
            raise ValueError(f"the terms' text does not hold {n} terms")
        self.blob, self._text, self._n, self._terms = blob, text, n, None

    def _list(self) -> list[str]:
        if self._terms is None:
            self._terms = self._text.split("\n") if self._n else []
            self._text = None
        return self._terms

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        return self._list()[i]

    def __iter__(self):
        return iter(self._list())

    def __eq__(self, other) -> bool:
        if isinstance(other, TermList):
            return self.blob == other.blob and self._n == other._n
        return isinstance(other, (list, tuple)) and self._list() == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self):
        return TermList, (self.blob, self._n)


@dataclass
class SparseIndex:
    """``terms[i]`` is term id i's string (a list, or a cached index's :class:`TermList`);
    ``doc_lengths`` are exact term counts."""

    terms: "list[str] | TermList"
    indptr: np.ndarray       # int64 (n_terms + 1)
    indices: np.ndarray      # int32 (n_postings)
    data: np.ndarray         # float32 (n_postings)
    doc_lengths: np.ndarray  # int32 (n_docs)
    nonoccurrence: np.ndarray | None  # float32 (n_terms), for bm25l / bm25+
    n_docs: int
    bounds: np.ndarray | None = None  # float32 (n_terms): the compiled search's pruning bounds, once made (search.c)
    id_rank: np.ndarray | None = None  # int64 (n_docs): each document id's rank in string order (ties), once known
    id_order: np.ndarray | None = None  # int64 (n_docs): the document at each rank (the inverse of id_rank), once known

    @property
    def n_terms(self) -> int:
        return len(self.terms)

    def arrays(self) -> dict[str, np.ndarray]:
        out = {"indptr": self.indptr, "indices": self.indices, "data": self.data, "doc_lengths": self.doc_lengths}
        if self.nonoccurrence is not None:
            out["nonoccurrence"] = self.nonoccurrence
        if self.bounds is not None:
            out["bounds"] = self.bounds
        if self.id_rank is not None:
            out["id_rank"] = self.id_rank
            if self.id_order is not None:
                out["id_order"] = self.id_order
        return out

    def validate(self, postings_check=None) -> "SparseIndex":
        """Raise :class:`InvalidIndex` unless every array has its dtype and shape, ``indptr`` rises
        from 0 to the number of postings, each term's documents are strictly ascending and in range
        (``postings_check(indptr, indices, n_docs)``: :func:`check_postings` by default, an engine's
        own otherwise) and ``id_rank`` (when present) is a permutation, whose inverse ``id_order`` is
        (when present): what search relies on to read and write in bounds. Returns the index, which
        remembers which arrays passed (:meth:`postings_checked`: the compiled search then does not
        check them again)."""
        want = {"indptr": (np.int64, self.n_terms + 1), "indices": (np.int32, None), "data": (np.float32, None),
                "doc_lengths": (np.int32, self.n_docs)}
        if self.nonoccurrence is not None:
            want["nonoccurrence"] = (np.float32, self.n_terms)
        if self.bounds is not None:
            want["bounds"] = (np.float32, self.n_terms)
        if self.id_rank is not None:
            want["id_rank"] = (np.int64, self.n_docs)
        if self.id_order is not None:
            if self.id_rank is None:
                raise InvalidIndex("id_order without id_rank")
            want["id_order"] = (np.int64, self.n_docs)
        for name, (dtype, size) in want.items():
            a = getattr(self, name)
            if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != 1 or (size is not None and len(a) != size):
                raise InvalidIndex(f"{name} is not a 1-D {np.dtype(dtype).name} array of the index's size")
        if len(self.data) != len(self.indices):
            raise InvalidIndex("data and indices differ in length")
        (postings_check or check_postings)(self.indptr, self.indices, self.n_docs)
        if self.id_rank is not None and self.n_docs:
            if self.id_rank.view(np.uint64).max() >= self.n_docs:
                raise InvalidIndex("id_rank holds a value out of range")
            if self.id_order is not None:  # rank[order[r]] == r for every r: both permutations, inverses
                if self.id_order.view(np.uint64).max() >= self.n_docs:
                    raise InvalidIndex("id_order holds a value out of range")
                for start in range(0, self.n_docs, _CHECK_BLOCK):
                    stop = min(start + _CHECK_BLOCK, self.n_docs)
                    if not np.array_equal(self.id_rank[self.id_order[start:stop]], np.arange(start, stop)):
                        raise InvalidIndex("id_order is not the inverse of id_rank")
            else:
                covered = np.zeros(self.n_docs, dtype=bool)
                covered[self.id_rank] = True
                if not covered.all():
                    raise InvalidIndex("id_rank is not a permutation of the documents")
        self._checked = (self.indptr, self.indices, self.n_docs)
        return self

    def postings_checked(self) -> bool:
        """Whether :meth:`validate` passed on the index's present ``indptr``, ``indices`` and ``n_docs``."""
        checked = getattr(self, "_checked", None)
        return checked is not None and checked[0] is self.indptr and checked[1] is self.indices and \
            checked[2] == self.n_docs

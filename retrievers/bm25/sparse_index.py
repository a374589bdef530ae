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

_CHECK_BLOCK = 1 << 20  # ranks checked a block at a time (no n-sized temporaries)


class InvalidIndex(ValueError):
    """The arrays of an index do not fit together (a damaged cache entry, a bug)."""


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

    def validate(self) -> "SparseIndex":
        """Raise :class:`InvalidIndex` unless every array has its dtype and shape, ``indptr`` rises
        from 0 to the number of postings, every posting's document is in range and ``id_rank`` (when
        present) is a permutation, whose inverse ``id_order`` is (when present): what search relies on
        to read in bounds. Returns the index."""
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
        indptr, indices = self.indptr, self.indices
        if indptr[0] != 0 or indptr[-1] != len(indices) or len(self.data) != len(indices):
            raise InvalidIndex("indptr does not span the postings")
        if len(indptr) > 1 and np.any(indptr[1:] < indptr[:-1]):
            raise InvalidIndex("indptr is not ascending")
        if len(indices) and indices.view(np.uint32).max() >= self.n_docs:  # one pass: negatives are large
            raise InvalidIndex("a posting's document is out of range")
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
        return self

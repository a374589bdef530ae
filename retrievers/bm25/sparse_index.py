"""The built BM25 index: plain data (bm25s's eager layout), checked once when it is made or loaded.

Layout, as ``bm25s.BM25.scores``: a term-major CSC matrix of precomputed per-(term, document) BM25
scores (scoring.py), ``indptr`` (n_terms + 1), ``indices`` (document of each posting, ascending
within a term) and ``data`` (float32 score of the posting). A query's score for a document is the
sum of the entries of its terms, each multiplied by the term's count in the query (Anserini's
bag-of-words query boosts every distinct term by its count). Built by build.py, stored by
cache.py, searched by search.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class InvalidIndex(ValueError):
    """The arrays of an index do not fit together (a damaged cache entry, a bug)."""


@dataclass
class SparseIndex:
    """``terms[i]`` is term id i's string; ``doc_lengths`` are exact term counts."""

    terms: list[str]
    indptr: np.ndarray       # int64 (n_terms + 1)
    indices: np.ndarray      # int32 (n_postings)
    data: np.ndarray         # float32 (n_postings)
    doc_lengths: np.ndarray  # int32 (n_docs)
    nonoccurrence: np.ndarray | None  # float32 (n_terms), for bm25l / bm25+
    n_docs: int
    bounds: np.ndarray | None = None  # float32 (n_terms): the compiled search's pruning bounds, once made (search.c)
    id_rank: np.ndarray | None = None  # int64 (n_docs): each document id's rank in string order (ties), once known

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
        return out

    def validate(self) -> "SparseIndex":
        """Raise :class:`InvalidIndex` unless every array has its dtype and shape, ``indptr`` rises
        from 0 to the number of postings, every posting's document is in range and ``id_rank`` (when
        present) is a permutation: what search relies on to read in bounds. Returns the index."""
        want = {"indptr": (np.int64, self.n_terms + 1), "indices": (np.int32, None), "data": (np.float32, None),
                "doc_lengths": (np.int32, self.n_docs)}
        if self.nonoccurrence is not None:
            want["nonoccurrence"] = (np.float32, self.n_terms)
        if self.bounds is not None:
            want["bounds"] = (np.float32, self.n_terms)
        if self.id_rank is not None:
            want["id_rank"] = (np.int64, self.n_docs)
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
            covered = np.zeros(self.n_docs, dtype=bool)
            covered[self.id_rank] = True
            if not covered.all():
                raise InvalidIndex("id_rank is not a permutation of the documents")
        return self

"""The ``impacts`` retriever: term weights computed elsewhere (SPLADE, uniCOIL, ... outputs), read
from JSONL files in Pyserini's JsonVectorCollection format, scored on an impact index.

    harness run --dataset nfcorpus --retriever impacts \\
        --param documents=docs.jsonl.gz --param queries=queries.jsonl.gz

Every document id in ``documents`` must be in the corpus, and every query searched must be in
``queries`` (errors naming the file, line and id; exit 2). Corpus documents without a vector are
indexed empty (never retrieved): counted in :meth:`stats` and logged as a warning. Query vectors
for queries outside the dataset's split are ignored. See docs/sparse.md.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np

from harness.checksums import HashedFile
from harness.datasets.corpus import Corpus, Queries
from harness.errors import InputError
from harness.retriever import Retriever
from harness.run import Run
from retrievers.bm25.search import DocOrder
from retrievers.sparse.impact_index import ImpactSearcher, build_impact_index, quantized, query_columns
from retrievers.sparse.vectors import Vectors, read_vectors

log = logging.getLogger(__name__)


def check_quantize(quantize) -> int | None:
    """``quantize`` as a positive integer scale, or None (float weights)."""
    if quantize is None or quantize == "none" or quantize == "":
        return None
    try:
        value = int(quantize)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an infinite float (1e400)
        value = 0
    if value < 1 or value > float(np.finfo(np.float32).max) or str(value) != str(quantize).strip():
        raise ValueError(f"quantize must be a positive integer scale (e.g. 100) or none, got {quantize!r}")
    return value


def default_threads() -> int:
    from retrievers.bm25.lucene_backend import default_threads as bm25_threads

    return bm25_threads()


class ImpactsRetriever(Retriever):
    """Precomputed document and query term weights (``documents=``, ``queries=``: JSONL or
    JSONL.gz); ``quantize`` (None, or an integer scale S: weights become rint(S * w));
    ``n_threads`` (search threads, default all usable cores; not part of :meth:`params`)."""

    name = "impacts"

    def __init__(self, documents: str, queries: str, quantize: int | str | None = None,
                 n_threads: int | None = None):
        self.documents_path = Path(os.path.expanduser(str(documents)))
        self.queries_path = Path(os.path.expanduser(str(queries)))
        for what, path in (("documents", self.documents_path), ("queries", self.queries_path)):
            if not path.is_file():
                raise InputError(f"{what} file not found", path)
        self.quantize = check_quantize(quantize)
        self.n_threads = default_threads() if n_threads is None else int(n_threads)
        if self.n_threads < 1:
            raise ValueError(f"n_threads must be >= 1, got {n_threads}")
        self._files = {"documents": HashedFile(self.documents_path, "the documents file"),
                       "queries": HashedFile(self.queries_path, "the queries file")}
        self._searcher: ImpactSearcher | None = None
        self._vocabulary: list[str] | None = None
        self._queries: Vectors | None = None
        self._stats: dict = {}

    def params(self) -> dict:
        """The files' paths and sha256: of the content read, once read (:class:`~harness.checksums.HashedFile`:
        a file rewritten between a bench's plan and its cell was recorded by the old content's sha256)."""
        return {"documents": str(self.documents_path), "documents_sha256": self._files["documents"].sha256(),
                "queries": str(self.queries_path), "queries_sha256": self._files["queries"].sha256(),
                "quantize": self.quantize}

    def stats(self) -> dict:
        return dict(self._stats)

    def index(self, corpus: Corpus) -> None:
        docs = self._files["documents"].read(lambda path: read_vectors(path, what="documents"))
        doc_index = np.fromiter((corpus.id_index.get(d, -1) for d in docs.ids), dtype=np.int64, count=len(docs.ids))
        if (doc_index < 0).any():
            row = int(np.argmax(doc_index < 0))
            raise InputError("document is not in the dataset's corpus", docs.path, int(docs.lines[row]), docs.ids[row])
        missing = len(corpus) - len(docs.ids)
        if missing:
            absent = np.ones(len(corpus), dtype=bool)
            absent[doc_index] = False
            first = corpus.id_array[int(np.argmax(absent))]
            log.warning("%s: %d corpus documents have no vector (first: %r); they are never retrieved",
                        docs.path, missing, first)
        entries = np.repeat(doc_index, np.diff(docs.offsets))
        index = build_impact_index(len(corpus), entries, docs.term_ids, quantized(docs.weights, self.quantize),
                                   docs.terms)
        self._vocabulary = index.terms
        self._queries = None
        self._searcher = ImpactSearcher(index, DocOrder.of(corpus), self.n_threads)
        self._stats = {"documents_with_vectors": len(docs.ids), "documents_without_vectors": missing,
                       "terms": index.n_terms, "postings": int(index.indptr[-1])}

    def search(self, queries: Queries, k: int) -> Run:
        if self._searcher is None:
            raise RuntimeError("index() must be called before search()")
        if self._queries is None:
            self._queries = self._files["queries"].read(lambda path: read_vectors(path, self._vocabulary,
                                                                                   what="queries"))
        vectors = self._queries
        row_of = vectors.row_of()
        rows = np.fromiter((row_of.get(q, -1) for q in queries.ids), dtype=np.int64, count=len(queries))
        if (rows < 0).any():
            qid = list(queries.ids)[int(np.argmax(rows < 0))]
            raise InputError("query has no vector in the queries file", vectors.path, id=qid)
        starts, ends = vectors.offsets[rows], vectors.offsets[rows + 1]
        lengths = ends - starts
        take = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths) + np.arange(lengths.sum())
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        weights = quantized(vectors.weights[take], self.quantize)
        offsets, term_ids, weights = query_columns(offsets, vectors.term_ids[take], weights)
        return self._searcher(queries.ids, offsets, term_ids, weights, k)

"""BM25 over two fields, title and text, each with its own statistics: Anserini's BEIR "multifield" runs.

Anserini indexes a BEIR corpus two ways (``BeirFlatCollection``: one field, ``title + " " + text``, what
``fields="flat"`` reproduces; ``BeirMultifieldCollection``: the title and the text as two fields) and
searches the second with ``-fields contents=1.0 title=1.0``: one bag-of-words query per field, their
scores summed. So a document's score is

    score(d) = sum over query terms t of  BM25_title(t, d) + BM25_text(t, d)

where each field's BM25 is Lucene's (the ``lucene`` backend's arithmetic, float32), with that field's
own statistics: its document frequencies, its documents' lengths (one-byte norms), its average length and
its ``docCount`` (the documents with at least one term in the field). The sum is taken as the flat search
takes it (float32 of the double sum of the terms' float32 postings), over both fields' postings at once, as
Lucene does once its ``BooleanQuery`` rewrite has flattened the per-field disjunctions into one.

Documents whose text is empty once Java's ``String.trim()`` has removed its ends (every character up to
U+0020) are not indexed by Anserini's document generator, whatever their title: they are not indexed here
either (their title is left out of the title field, their text has no term), so they count in no field's
statistics and are never retrieved.

The two fields are two ordinary indexes of the ``lucene`` backend (built, cached and loaded as such: their
corpora are derived from the corpus, and named in the cache key by its fingerprint and the field), joined for
search into one index whose terms are the title field's, then the text field's: a query's terms are looked up
in both vocabularies. The joined index is a copy of both fields' postings in memory (unless the title field has
no term: then it is the text field's index).
"""

from __future__ import annotations

import numpy as np

from harness.datasets.corpus import Corpus, Queries
from harness.run import Run
from retrievers.bm25.search import CompiledSearcher, DocOrder, search_python
from retrievers.bm25.sparse_index import SparseIndex

DERIVATION = "multifield-1"  # how the two fields' corpora are made from a corpus (in their cache names)
_NOT_BLANK = r"[^\x00-\x20]"  # a character Java's String.trim() keeps


def field_corpora(corpus: Corpus) -> tuple[Corpus, Corpus]:
    """(the title field's corpus, the text field's corpus): each holds its field as its text and an empty
    title (the ``lucene`` backend indexes ``title + " " + text``), with the corpus's ids. A document whose text
    is blank (Java's trim) gets an empty title field too: Anserini does not index it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = corpus.table
    n = table.num_rows
    empty = pa.StringArray.from_buffers(n, pa.py_buffer(np.zeros(n + 1, dtype=np.int32).tobytes()), pa.py_buffer(b""))
    texts, titles = table.column("text"), table.column("title")
    indexed = pc.match_substring_regex(texts, _NOT_BLANK)
    if not pc.all(indexed).as_py() and n:
        titles = pc.if_else(indexed, titles, "")
    derived = []
    for name, column in (("title", titles), ("text", texts)):
        part = Corpus.from_table(pa.table({"_id": table.column("_id"), "title": empty, "text": column}))
        if corpus.fingerprint is not None:
            part.fingerprint = f"{DERIVATION}:{name}:{corpus.fingerprint}"
        for known in ("id_rank", "id_order", "ids", "id_index"):  # (the same ids: nothing sorted or listed twice)
            if known in corpus.__dict__:
                part.__dict__[known] = corpus.__dict__[known]
        derived.append(part)
    return derived[0], derived[1]


def joined_index(title: SparseIndex, text: SparseIndex) -> SparseIndex:
    """One index of both fields' postings: the title field's terms, then the text field's (term ids of the
    text field shifted by the title field's vocabulary size). Document lengths are the sums of the fields'
    (not used to score: each posting holds its field's score). A corpus without titles (MS MARCO's) has a title
    field without terms: its joined index is the text field's own, not a copy."""
    if len(title.terms) == 0:
        return text
    shift = len(title.indices)
    bounds = None
    if title.bounds is not None and text.bounds is not None:
        bounds = np.concatenate([title.bounds, text.bounds])
    return SparseIndex(
        terms=_JoinedTerms(len(title.terms) + len(text.terms)),
        indptr=np.concatenate([title.indptr, text.indptr[1:] + shift]),
        indices=np.concatenate([title.indices, text.indices]),
        data=np.concatenate([title.data, text.data]),
        doc_lengths=(title.doc_lengths.astype(np.int64) + text.doc_lengths).astype(np.int32),
        nonoccurrence=None, n_docs=title.n_docs, bounds=bounds,
        id_rank=title.id_rank, id_order=title.id_order)


class _JoinedTerms:
    """The joined index's vocabulary size (its terms are looked up in each field's own)."""

    def __init__(self, n: int):
        self._n = n

    def __len__(self) -> int:
        return self._n


def query_term_ids(searcher, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, term ids) of each query's terms in the vocabulary of ``searcher``'s index (a repeated term
    repeats; unknown terms left out), from the field backend's own searcher."""
    if isinstance(searcher, CompiledSearcher):
        offsets, ids = searcher.query_terms(texts)
        return np.asarray(offsets, dtype=np.int64), np.asarray(ids, dtype=np.int64)
    per_query = searcher.queries_term_ids(texts)
    offsets = np.concatenate([[0], np.cumsum([len(t) for t in per_query])]).astype(np.int64)
    return offsets, np.fromiter((i for t in per_query for i in t), dtype=np.int64, count=int(offsets[-1]))


def joined_queries(title: tuple[np.ndarray, np.ndarray], text: tuple[np.ndarray, np.ndarray], shift: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Each query's title-field term ids, then its text-field term ids plus ``shift``: (offsets, ids)."""
    (t_off, t_ids), (x_off, x_ids) = title, text
    offsets = t_off + x_off
    ids = np.empty(int(offsets[-1]), dtype=np.int64)
    counts_t, counts_x = np.diff(t_off), np.diff(x_off)
    query_of_t = np.repeat(np.arange(len(counts_t)), counts_t)
    query_of_x = np.repeat(np.arange(len(counts_x)), counts_x)
    ids[offsets[:-1][query_of_t] + (np.arange(len(t_ids)) - t_off[:-1][query_of_t])] = t_ids
    ids[offsets[:-1][query_of_x] + counts_t[query_of_x] + (np.arange(len(x_ids)) - x_off[:-1][query_of_x])] = \
        x_ids + shift
    return offsets, ids


class MultifieldBackend:
    """Two ``lucene`` backends (``make()`` gives each), one per field, searched as one: see the module."""

    def __init__(self, make):
        self.title, self.text = make(), make()
        self.engine = self.title.engine
        self._search = None

    @property
    def cache_status(self) -> str | None:
        a, b = self.title.cache_status, self.text.cache_status
        return a if a == b else f"title {a}; text {b}"

    @property
    def cache_entries(self) -> list:
        return [e for e in (self.title.cache_entry, self.text.cache_entry) if e is not None]

    @property
    def index_versions(self) -> dict | None:
        return self.title.index_versions if self.title.index_versions == self.text.index_versions else \
            {"title": self.title.index_versions, "text": self.text.index_versions}

    def cache_written(self) -> None:
        self.title.cache_written()
        self.text.cache_written()

    def settings(self) -> dict:
        return {**self.title.settings(), "fields": "multifield", "derivation": DERIVATION}

    def index(self, corpus: Corpus) -> None:
        order = DocOrder.of(corpus)  # (the ids' string order, once, shared by both fields' corpora)
        title_corpus, text_corpus = field_corpora(corpus)
        self.title.index(title_corpus)
        self.text.index(text_corpus)
        title, text = self.title.sparse_index, self.text.sparse_index
        joined = joined_index(title, text)
        shift = len(title.terms)
        searchers = (self.title._searcher, self.text._searcher)

        def terms_of(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
            return joined_queries(*(query_term_ids(s, texts) for s in searchers), shift)

        if self.engine.compiled:
            searcher = CompiledSearcher(joined, order, lambda texts: tuple(
                a.astype(t) for a, t in zip(terms_of(texts), (np.int64, np.int32))), self.engine.n_threads)
            self._search = searcher
        else:
            def search(queries: Queries, k: int) -> Run:
                offsets, ids = terms_of(list(queries.texts))
                per_query = [(ids[offsets[q]:offsets[q + 1]], None) for q in range(len(offsets) - 1)]
                return search_python(joined, order, queries.ids, per_query, k, self.engine.n_threads)
            self._search = search

    def search(self, queries: Queries, k: int) -> Run:
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        if self._search is None:
            raise RuntimeError("index() must be called before search()")
        return self._search(queries, k)

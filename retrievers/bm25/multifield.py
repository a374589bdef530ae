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

:class:`MultifieldEngine` wraps the ``lucene`` backend's engine (compiled or Python): it builds each field's
index from a corpus derived from the corpus (:func:`field_corpora`) and joins them into one index
(:func:`joined_index`) whose terms are the title field's, each marked with :data:`TITLE_MARK`, then the text
field's, so that the backend caches, loads (memory-mapped) and searches it as any index; a query's terms are
looked up in both fields' vocabularies (:meth:`MultifieldEngine.searcher`).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from harness.datasets.corpus import Corpus, Queries
from harness.run import Run
from retrievers.bm25.search import CompiledSearcher, DocOrder, flat_term_ids, search_python, term_ids_of
from retrievers.bm25.sparse_index import InvalidIndex, SparseIndex, TermList

DERIVATION = "multifield-1"  # how the two fields are made from a corpus and joined (in the cache key's settings)
TITLE_MARK = "\x1f"  # the first character of a title-field term in a joined index (no analyzer's token holds it)
_NOT_BLANK = r"[^\x00-\x20]"  # a character Java's String.trim() keeps

QueryTerms = Callable[[list[str]], tuple[np.ndarray, np.ndarray]]


def field_corpora(corpus: Corpus) -> tuple[Corpus, Corpus]:
    """(the title field's corpus, the text field's corpus): each holds its field as its text and an empty
    title (the ``lucene`` engines index ``title + " " + text``), with the corpus's ids. A document whose text
    is blank (Java's trim) gets an empty title field too: Anserini does not index it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = corpus.table
    n = table.num_rows
    empty = pa.StringArray.from_buffers(n, pa.py_buffer(np.zeros(n + 1, dtype=np.int32).tobytes()), pa.py_buffer(b""))
    texts, titles = table.column("text"), table.column("title")
    indexed = pc.match_substring_regex(texts, _NOT_BLANK) if n else None
    if n and not pc.all(indexed).as_py():
        titles = pc.if_else(indexed, titles, "")
    return tuple(Corpus.from_table(pa.table({"_id": table.column("_id"), "title": empty, "text": column}))
                 for column in (titles, texts))


def joined_index(title: SparseIndex, text: SparseIndex) -> SparseIndex:
    """One index of both fields' postings: the title field's terms (marked), then the text field's (their ids
    shifted by the title field's vocabulary size). Document lengths are the sums of the fields' (not used to
    score: each posting holds its field's score). A corpus without titles (MS MARCO's) has a title field
    without terms: its joined index is the text field's own."""
    if len(title.terms) == 0:
        return text
    return SparseIndex(
        terms=[TITLE_MARK + t for t in title.terms] + list(text.terms),
        indptr=np.concatenate([title.indptr, text.indptr[1:] + len(title.indices)]),
        indices=np.concatenate([title.indices, text.indices]),
        data=np.concatenate([title.data, text.data]),
        doc_lengths=(title.doc_lengths.astype(np.int64) + text.doc_lengths).astype(np.int32),
        nonoccurrence=None, n_docs=title.n_docs)


def split_terms(terms: Sequence[str]) -> tuple[Sequence[str], Sequence[str]]:
    """(the title field's terms, unmarked; the text field's terms) of a joined index's vocabulary. A cached
    index's :class:`TermList` is split on its bytes (no str per term)."""
    mark = TITLE_MARK.encode()
    if isinstance(terms, TermList):
        blob, n = terms.blob, len(terms)
        if n == 0:
            return terms, terms
        raw = np.frombuffer(blob, dtype=np.uint8)
        starts = np.concatenate([[0], np.flatnonzero(raw == ord("\n")) + 1])
        marked = raw[np.minimum(starts, len(raw) - 1)] == mark[0]
        marked &= starts < len(raw)  # (an empty last term has no first byte)
        n_title = int(np.argmin(marked)) if not marked.all() else n
        if marked[n_title:].any():
            raise InvalidIndex("a joined index's title terms are not all before its text terms")
        end = int(starts[n_title]) - 1 if n_title < n else len(blob)
        title = TermList(blob[:end].replace(b"\n" + mark, b"\n")[1:] if n_title else b"", n_title)
        text = TermList(blob[end + 1:] if n_title < n else b"", n - n_title)
        return title, text
    n_title = 0
    while n_title < len(terms) and terms[n_title].startswith(TITLE_MARK):
        n_title += 1
    if any(t.startswith(TITLE_MARK) for t in terms[n_title:]):
        raise InvalidIndex("a joined index's title terms are not all before its text terms")
    return [t[1:] for t in terms[:n_title]], list(terms[n_title:])


def joined_queries(title: tuple[np.ndarray, np.ndarray], text: tuple[np.ndarray, np.ndarray], shift: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Each query's title-field term ids, then its text-field term ids plus ``shift``: (offsets int64, ids int32)."""
    (t_off, t_ids), (x_off, x_ids) = title, text
    t_off, x_off = np.asarray(t_off, dtype=np.int64), np.asarray(x_off, dtype=np.int64)
    queries = np.arange(len(t_off) - 1)
    query_of = np.concatenate([np.repeat(queries, np.diff(t_off)), np.repeat(queries, np.diff(x_off))])
    ids = np.concatenate([np.asarray(t_ids, dtype=np.int64), np.asarray(x_ids, dtype=np.int64) + shift])
    return t_off + x_off, ids[np.argsort(query_of, kind="stable")].astype(np.int32)  # (stable: title ids first)


class MultifieldEngine:
    """The ``lucene`` backend's engine for ``fields="multifield"``: builds the joined index of the two fields
    with ``base`` (the compiled or Python engine, :func:`retrievers.bm25.engines.choose_engine`) and searches it
    with ``base``'s search (the same tie rule)."""

    def __init__(self, base):
        self.base = base
        self.compiled, self.analyzer, self.n_threads = base.compiled, base.analyzer, base.n_threads

    def digest(self, corpus: Corpus) -> str:
        return self.base.digest(corpus)  # (the corpus's own: the derivation is in the cache key's settings)

    def check_postings(self, indptr: np.ndarray, indices: np.ndarray, n_docs: int) -> None:
        self.base.check_postings(indptr, indices, n_docs)

    def build(self, corpus: Corpus) -> SparseIndex:
        title_corpus, text_corpus = field_corpora(corpus)
        title = self.base.build(title_corpus)
        return joined_index(title, self.base.build(text_corpus))

    def _query_terms(self, terms: Sequence[str]) -> QueryTerms:
        """texts -> (offsets, term ids) of each query's terms in the vocabulary ``terms`` (repeats kept)."""
        if self.compiled and self.base.encodes:
            from retrievers.bm25 import compiled

            return compiled.CompiledTermEncoder(self.analyzer, terms).freeze().query_terms
        index = {t: i for i, t in enumerate(terms)}

        return lambda texts: flat_term_ids(term_ids_of(self.analyzer, index, texts))

    def searcher(self, index: SparseIndex, order: DocOrder) -> Callable[[Queries, int], Run]:
        title_terms, text_terms = split_terms(index.terms)
        title, text = self._query_terms(title_terms), self._query_terms(text_terms)
        shift = len(title_terms)

        def query_terms(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
            return joined_queries(title(texts), text(texts), shift)

        if self.compiled:
            return CompiledSearcher(index, order, query_terms, self.n_threads)

        def search(queries: Queries, k: int) -> Run:
            offsets, ids = query_terms(list(queries.texts))
            per_query = [(ids[offsets[q]:offsets[q + 1]], None) for q in range(len(offsets) - 1)]
            return search_python(index, order, queries.ids, per_query, k, self.n_threads)
        return search

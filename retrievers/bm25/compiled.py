"""Python glue of the compiled extension (C sources in retrievers/bm25/native/), used by
engines.CompiledEngine, which runs only when loader.py says the extension does.

* :class:`CompiledTermEncoder` for :class:`retrievers.bm25.encode.TermEncoder`: ASCII text is
  tokenized (Lucene's rules on ASCII), lowercased, stopped and Porter-stemmed in C, memoized per
  distinct token; words holding non-ASCII characters are cut at separators (characters no token
  holds) and their pieces that hold other non-ASCII characters go, once per distinct piece, to the
  Python analyzer's exact Unicode path (:func:`analyze_words`). :meth:`CompiledTermEncoder.encode_into`
  hands each document's postings straight to a postings builder (:func:`index_postings`).
* :func:`build_postings` / :func:`index_postings`: term ids -> term-major postings with tf (the
  counting sort of build.build_python), :func:`score_lucene`: Lucene's BM25 of each posting.
* :class:`Searcher`: build.py's index searched in C (search.score_query + top k), on threads.
* :func:`digest_column`: the corpus digest's bytes of one column, without joining the strings.

The encoder serves analyzers with the ``standard`` tokenizer, lowercasing on and the ``porter``
stemmer or none (the defaults): :func:`supports`.
"""

from __future__ import annotations

import gc
from functools import partial

import numpy as np

from harness.columns import string_buffers
from retrievers.bm25 import loader
from retrievers.bm25.analyzer import Analyzer
from retrievers.bm25.sparse_index import InvalidIndex, SparseIndex, TermList
from retrievers.bm25.tokenizer import separated_candidate_finder

_fastbm25 = loader.built_module()
if _fastbm25 is None:
    raise ImportError("retrievers.bm25._fastbm25 is not built (no C compiler at install time)")


def supports(analyzer: Analyzer) -> bool:
    """Whether the compiled encoder reproduces ``analyzer`` (standard tokenizer, lowercase, Porter or no stemmer)."""
    return analyzer.tokenizer == "standard" and analyzer.lowercase and analyzer.stemmer_name in ("porter", None)


def analyze_words(analyzer: Analyzer, words: list[str]) -> list[list[str]]:
    """The terms of each whitespace-free word, through the analyzer's exact path: one regex call
    cuts all the words into candidates, each distinct candidate is analysed once. (The garbage
    collector is paused meanwhile: the many short-lived lists here otherwise trigger full
    collections that doubled this step's time on SciFact, 10 -> 20 ms, in some runs.)"""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _analyze_words(analyzer, words)
    finally:
        if enabled:
            gc.enable()


def _analyze_words(analyzer: Analyzer, words: list[str]) -> list[list[str]]:
    found = separated_candidate_finder(analyzer.tokenizer, "\n")(("\n".join(words) + "\n") if words else "")
    distinct = list(dict.fromkeys(c for c in found if c != "\n"))
    counts, first, terms = analyzer.analyze_flat(distinct)
    of = {c: terms[f:f + n] for c, f, n in zip(distinct, first.tolist(), counts.tolist())}
    out: list[list[str]] = []
    current: list[str] = []
    for cand in found:
        if cand == "\n":
            out.append(current)
            current = []
        else:
            current.extend(of[cand])
    if len(out) != len(words):
        raise ValueError("a word holds a newline; words must be whitespace-free")
    return out


class CompiledTermEncoder:
    """Same interface and terms as :class:`retrievers.bm25.encode.TermEncoder` (term ids may be
    numbered in another order): ``encode(texts) -> (terms per text, term ids)``, ``terms``."""

    def __init__(self, analyzer: Analyzer, terms: list[str] | None = None, n_threads: int = 1):
        if not supports(analyzer):
            raise ValueError(f"the compiled encoder does not support the analyzer {analyzer.params()}")
        self.analyzer = analyzer
        self.n_threads = int(n_threads)  # texts of a large chunk are tokenized on this many threads
        self._encoder = _fastbm25.Encoder(sorted(analyzer.stopwords), analyzer.possessive,
                                          analyzer.stemmer_name == "porter", partial(analyze_words, analyzer))
        self.terms: list[str] = []  # grows in place as chunks are encoded
        if isinstance(terms, TermList):  # a cached index's: the encoder reads its bytes, no str per term
            self._encoder.add_terms_blob(terms.blob, len(terms))
            self.terms = terms  # (made a list if new terms come: _take_new_terms)
        elif terms is not None:
            self._encoder.add_terms(terms)
            self.terms.extend(terms)

    @property
    def n_terms(self) -> int:
        return len(self.terms)

    def encode(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(number of terms per text as int64, all term ids as int32) for one chunk of texts."""
        counts, ids = self._encoder.encode(texts, self.n_threads)
        self._take_new_terms()
        return np.frombuffer(counts, dtype=np.int64), np.frombuffer(ids, dtype=np.int32)

    def encode_into(self, builder, texts, titles=None) -> None:
        """Append the chunk's documents to a ``_fastbm25.PostingsBuilder`` as postings (each text's
        distinct terms with their tf, counted by the encoding threads; no arrays in between).
        ``titles`` (one per text) are read as ``title + " " + text`` without building those strings.
        ``texts`` and ``titles``: lists of str, or Arrow string arrays or chunked arrays, whose buffers are
        read in place (:func:`arrow_column`; the same terms as their strings give)."""
        if isinstance(texts, list):
            self._encoder.encode(texts, self.n_threads, titles=titles, into=builder)
        else:
            self._encoder.encode(arrow_column(texts), self.n_threads, into=builder, columns=True,
                                 titles=None if titles is None else arrow_column(titles))
        self._take_new_terms()

    def _take_new_terms(self) -> None:
        """Extend ``terms`` (in place: others hold it) with the terms the last call added."""
        if self._encoder.n_terms > len(self.terms):
            if not isinstance(self.terms, list):  # a cached index's TermList: a list of its own from now on
                self.terms = list(self.terms)
            self.terms.extend(self._encoder.terms(len(self.terms)))

    def freeze(self) -> "CompiledTermEncoder":
        """No new terms from now on: unknown terms are dropped (for queries)."""
        self._encoder.freeze()
        return self

    def query_terms(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(offsets, term ids) of each query's known terms (repeats kept); freezes the encoder."""
        self.freeze()
        counts, ids = self.encode(texts)
        return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), ids


def arrow_column(array) -> tuple[np.ndarray, object] | list[tuple[np.ndarray, object]]:
    """(offsets int64, data buffer) of an Arrow string or large_string array, as the encoder reads a
    column (``columns=True``); of a chunked array, a list of them, one per chunk (read one after the
    other, never joined); nulls read as empty strings (a corpus has none: they become "")."""
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        return [arrow_column(chunk) for chunk in array.chunks]
    if array.null_count:
        array = array.fill_null("")
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        raise TypeError(f"expected an Arrow string array, got {array.type}")
    return string_buffers(array)


def _postings_arrays(raw: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """PostingsBuilder.finish's buffers as (indptr int64, indices int32, tf int32, doc_lengths int32)."""
    return tuple(np.frombuffer(b, dtype=t) for b, t in zip(raw, (np.int64, np.int32, np.int32, np.int32)))


def build_postings(chunks, n_terms_after) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(indptr int64, indices int32, tf int32, doc_lengths int32) of (terms per document, term ids)
    chunks: term-major postings, documents ascending within a term. ``n_terms_after()`` gives the
    number of terms once the chunks are consumed (the vocabulary grows while they stream)."""
    builder = _fastbm25.PostingsBuilder()
    for lengths, term_ids in chunks:
        builder.add(np.ascontiguousarray(lengths, dtype=np.int64), np.ascontiguousarray(term_ids, dtype=np.int32))
    raw = builder.finish(n_terms_after(), 1)
    return _postings_arrays(raw)


def index_postings(encoder: CompiledTermEncoder, chunks, scorer=None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(indptr int64, indices int32, tf int32, doc_lengths int32) of (titles, texts) chunks, each
    encoded straight into one PostingsBuilder; ``encoder.terms`` holds the vocabulary after.
    ``scorer``: None, or ``scorer(indptr, doc_lengths) ->
    (idf32, inv)`` (bytes in, float32 arrays out; :class:`retrievers.bm25.build.FusedLuceneScores`),
    called once the document frequencies are known: the third array then holds each posting's Lucene
    score (float32 bits, viewed as int32), written as the postings are scattered (no pass of its own)."""
    builder = _fastbm25.PostingsBuilder()
    for titles, texts in chunks:
        encoder.encode_into(builder, texts, titles)
    raw = builder.finish(len(encoder.terms), encoder.n_threads, None, scorer)
    return _postings_arrays(raw)


def score_lucene(indptr: np.ndarray, indices: np.ndarray, tf: np.ndarray, idf32: np.ndarray,
                 inv: np.ndarray, n_threads: int = 1, in_place: bool = False) -> np.ndarray:
    """float32 score of each posting, ``w - w / (1 + tf * inv[doc])`` with ``w = idf32[term]``, in
    float32 operations: the same values as the numpy expression of ``_PostingScorer``. ``in_place``:
    written over ``tf`` (a writable, contiguous int32 array that is not needed afterwards, such as
    the postings builder's), whose memory the scores then are: no second array of one value per
    posting (1.3 GB at MS MARCO's 8.8M passages)."""
    c = lambda a, t: np.ascontiguousarray(a, dtype=t)  # noqa: E731
    args = (c(indptr, np.int64), c(indices, np.int32), c(tf, np.int32), c(idf32, np.float32), c(inv, np.float32),
            int(n_threads))
    if in_place:
        if args[2] is not tf or not tf.flags.writeable:
            raise ValueError("in_place needs tf as a writable contiguous int32 array")
        _fastbm25.score_lucene(*args, tf)
        return tf.view(np.float32)
    return np.frombuffer(_fastbm25.score_lucene(*args), dtype=np.float32)


def check_postings(indptr: np.ndarray, indices: np.ndarray, n_docs: int, n_threads: int = 1) -> None:
    """:func:`retrievers.bm25.sparse_index.check_postings` in C, in one pass on ``n_threads`` threads."""
    c = lambda a, t: np.ascontiguousarray(a, dtype=t)  # noqa: E731
    try:
        _fastbm25.check_postings(c(indptr, np.int64), c(indices, np.int32), int(n_docs), int(n_threads))
    except ValueError as exc:
        raise InvalidIndex(str(exc)) from None


class Searcher:
    """``(offsets, term_ids, k, constants, n_threads) -> (hits per query int64, documents int64,
    scores float64 holding float32 values)``: score desc, document id desc (``id_rank``), scores > 0
    only, at most ``k`` per query. The index's arrays are checked once: here (``_fastbm25.Index``,
    its postings on ``n_threads`` threads), or already by ``index.validate()``; a search checks only
    its queries."""

    def __init__(self, index: SparseIndex, id_rank: np.ndarray, doc_of_rank: np.ndarray, n_threads: int = 1):
        """The pruning bounds are ``index.bounds`` when it has them (a cached index), else computed
        here and kept in ``index.bounds`` (the index cache stores them)."""
        c = lambda a, t: np.ascontiguousarray(a, dtype=t)  # noqa: E731
        bounds = None if index.bounds is None else c(index.bounds, np.float32)
        self._index = _fastbm25.Index(c(index.indptr, np.int64), c(index.indices, np.int32),
                                      c(index.data, np.float32), int(index.n_docs), c(id_rank, np.int64),
                                      c(doc_of_rank, np.int64), bounds, checked=index.postings_checked(),
                                      n_threads=int(n_threads))
        if index.bounds is None:
            index.bounds = np.frombuffer(self._index.bounds(), dtype=np.float32)

    def __call__(self, offsets: np.ndarray, term_ids: np.ndarray, k: int, constants: np.ndarray | None = None,
                 n_threads: int = 1, weights: np.ndarray | None = None, **options
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``weights``: None (BM25: repeated terms count), or a float32 weight per query term, each
        query's terms distinct and ascending (impacts: a sparse dot product; search.c). Options:
        ``doc_block``, ``prune`` (default True: MaxScore; False scores every posting, same results)."""
        c = lambda a, t: np.ascontiguousarray(a, dtype=t)  # noqa: E731
        if weights is not None:
            options["weights"] = c(weights, np.float32)
        hits, docs, scores = self._index.search(c(offsets, np.int64), c(term_ids, np.int32), int(k),
                                                None if constants is None else c(constants, np.float32),
                                                int(n_threads), **options)
        return (np.frombuffer(hits, dtype=np.int64), np.frombuffer(docs, dtype=np.int64),
                np.frombuffer(scores, dtype=np.float64))


def digest_column(update, column: list[str]) -> None:
    """Feed ``update`` the int64 lengths (code points) of ``column``'s strings, then their UTF-8."""
    _fastbm25.digest_column(update, column)


def stem(word: str) -> str:
    """Lucene's Porter stem of one lowercase ASCII word, from the C stemmer (for tests)."""
    return _fastbm25.stem(word)

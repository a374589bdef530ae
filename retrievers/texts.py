"""What a retriever reads of a document: its title and its text, joined by one space.

Two named policies, because the published systems each project reproduces differ on the ends:

* :func:`lexical_text` (BM25, as BEIR feeds its lexical models): ``title + " " + text`` stripped
  when there is a title, the text as it is when there is none (``Corpus.contents()``). For a
  tokenizer the ends are whitespace and never matter, so the compiled BM25 encoder reads title and
  text apart as ``title + " " + text`` without joining them, straight from the corpus's Arrow
  buffers (:func:`corpus_columns`).
* :func:`dense_text` (dense models, as MTEB's retrieval evaluator builds them in
  ``DRESModel.encode_corpus``, mteb 1.12): ``(title + " " + text).strip()``; with an empty title
  that is ``text.strip()``.
"""

from __future__ import annotations

import bisect
import itertools
from typing import TYPE_CHECKING, Iterator

from harness.datasets.corpus import Corpus

if TYPE_CHECKING:
    import pyarrow as pa


def lexical_text(title: str, text: str) -> str:
    return f"{title} {text}".strip() if title else text


def dense_text(title: str, text: str) -> str:
    return (title + " " + text).strip()


def corpus_chunks(corpus: Corpus, size: int, ids: bool = True) -> Iterator[tuple[list[str] | None, list[str], list[str]]]:
    """(ids, titles, texts) of consecutive slices of ``size`` documents (whatever the Arrow table's
    chunking: digests over them depend on the content only), each read from the corpus's Arrow
    table when it is needed: never a full copy of the texts as Python strings. A memory-mapped
    corpus's pages of each slice are released once copied (``Corpus.release``), so a pass over the
    corpus does not leave all of it in the process's resident memory.

    The ids are slices of ``corpus.ids`` when that list is made already (no second copy of them),
    else read per slice (not made here: at 8.8M documents the list is ~0.6 GB, which would then be
    held through a whole index build); the table is taken afresh per slice, so a corpus switched to
    its cache file's map while the pass runs (``Corpus.use_mapped``) is read from the map from then on.
    With ``ids=False`` the ids are not read (None in their place)."""
    made = corpus.__dict__.get("ids")  # (the cached_property's value, when computed)
    for start in range(0, len(corpus), size):
        part = corpus.table.slice(start, size)
        chunk_ids = (None if not ids else made[start:start + size] if made is not None
                     else part.column("_id").to_pylist())
        columns = (chunk_ids, part.column("title").to_pylist(), part.column("text").to_pylist())
        corpus.release(part)
        del part
        yield columns


def corpus_columns(corpus: Corpus, size: int) -> Iterator[tuple["pa.Array", "pa.Array"]]:
    """(titles, texts) of consecutive slices of at most ``size`` documents as Arrow string arrays, read
    in place from the corpus's table (a compiled reader takes their buffers: no Python strings at all).
    A slice ends at the end of one of the table's record batches when one lies in its second half, so
    that slices seldom span two batches, whose columns would be copied into one array (at 1M documents
    about half of the 50 slices of 20,000 documents did: 8 MB each, on the calling thread). As in
    :func:`corpus_chunks`, the table is taken afresh per slice; a memory-mapped corpus's pages of a
    slice are released (``Corpus.release``) when the next slice is asked for, so the consumer must be
    done with a slice by then."""
    start, n, table, ends = 0, len(corpus), None, []
    while start < n:
        if corpus.table is not table:  # (switched to its cache file's map: see corpus_chunks)
            table = corpus.table
            ends = _batch_ends(table)
        limit = min(start + size, n)
        last = bisect.bisect_right(ends, limit) - 1  # the last batch end at or before the limit
        stop = ends[last] if last >= 0 and ends[last] > start + size // 2 else limit
        part = table.slice(start, stop - start)
        yield _one_array(part.column("title")), _one_array(part.column("text"))
        corpus.release(part)
        del part
        start = stop


def _batch_ends(table) -> list[int]:
    """Where the chunks of a table's title and text columns end (row numbers, ascending)."""
    ends: set[int] = set()
    for name in ("title", "text"):
        ends.update(itertools.accumulate(len(chunk) for chunk in table.column(name).chunks))
    return sorted(ends)


def _one_array(column: "pa.ChunkedArray") -> "pa.Array":
    """A slice's column as one array (copied only when the slice spans record batches)."""
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def lexical_batches(corpus: Corpus, size: int) -> Iterator[list[str]]:
    """:func:`lexical_text` of every document, ``size`` documents at a time (never all at once)."""
    for _, titles, texts in corpus_chunks(corpus, size, ids=False):
        yield list(map(lexical_text, titles, texts))


def lexical_texts(corpus: Corpus) -> list[str]:
    return list(map(lexical_text, corpus.titles, corpus.texts))


def dense_texts(corpus: Corpus) -> list[str]:
    return list(map(dense_text, corpus.titles, corpus.texts))

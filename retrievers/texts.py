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


def corpus_columns(corpus: Corpus, size: int) -> Iterator[tuple["pa.ChunkedArray", "pa.ChunkedArray"]]:
    """(titles, texts) of consecutive slices of ``size`` documents as Arrow string (chunked) arrays, read in
    place from the corpus's table: a slice that spans several of its record batches is a chunk of each,
    never copied into one array (a compiled reader takes their buffers one after the other: no Python
    strings, no copy of the text). As in :func:`corpus_chunks`, the table is taken afresh per slice; a
    memory-mapped corpus's pages of a slice are released (``Corpus.release``) when the next slice is
    asked for, so the consumer must be done with a slice by then."""
    for start in range(0, len(corpus), size):
        part = corpus.table.slice(start, size)  # (switched to its cache file's map: see corpus_chunks)
        yield part.column("title"), part.column("text")
        corpus.release(part)
        del part


def lexical_batches(corpus: Corpus, size: int) -> Iterator[list[str]]:
    """:func:`lexical_text` of every document, ``size`` documents at a time (never all at once)."""
    for _, titles, texts in corpus_chunks(corpus, size, ids=False):
        yield list(map(lexical_text, titles, texts))


def lexical_texts(corpus: Corpus) -> list[str]:
    return list(map(lexical_text, corpus.titles, corpus.texts))


def dense_texts(corpus: Corpus) -> list[str]:
    return list(map(dense_text, corpus.titles, corpus.texts))

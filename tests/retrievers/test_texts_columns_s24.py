"""corpus_columns (the compiled BM25 build's reader) cuts the corpus in slices of exactly ``size`` documents
and reads every one in place: a slice that spans record batches is a chunked array, a chunk per batch, never
joined into one array (a copy of the text, 8 MB per 20,000-document slice at 1M documents)."""

from __future__ import annotations

import pyarrow as pa

from harness.datasets.corpus import Corpus
from retrievers.texts import corpus_columns


def _corpus(batch_sizes):
    batches, i = [], 0
    for size in batch_sizes:
        rows = range(i, i + size)
        batches.append(pa.RecordBatch.from_arrays(
            [pa.array([f"d{r}" for r in rows]), pa.array([f"title {r}" for r in rows]),
             pa.array([f"text {r} " * (r % 5) for r in rows])], names=["_id", "title", "text"]))
        i += size
    return Corpus.from_table(pa.Table.from_batches(batches))


def _in_place(column: pa.ChunkedArray, table_column: pa.ChunkedArray) -> bool:
    """Whether every chunk of a yielded column has its data inside one of the table's chunks (read in place)."""
    spans = [(c.buffers()[2].address, c.buffers()[2].address + c.buffers()[2].size) for c in table_column.chunks]
    return all(any(lo <= chunk.buffers()[2].address < hi for lo, hi in spans)
               for chunk in column.chunks if len(chunk) and chunk.buffers()[2] is not None)


def test_slices_of_size_read_every_row_in_place_across_batches():
    corpus = _corpus([7, 30, 5])  # batch ends 7, 37, 42
    slices = list(corpus_columns(corpus, 10))
    assert [len(texts) for _, texts in slices] == [10, 10, 10, 10, 2]
    # 0-10 spans the batches 0-7 and 7-37, 30-40 the batches 7-37 and 37-42: a chunk of each, not joined
    assert [texts.num_chunks for _, texts in slices] == [2, 1, 1, 2, 1]
    assert all(isinstance(t, pa.ChunkedArray) and isinstance(x, pa.ChunkedArray) for t, x in slices)
    assert all(_in_place(texts, corpus.table.column("text")) and _in_place(titles, corpus.table.column("title"))
               for titles, texts in slices)
    assert [t for titles, _ in slices for t in titles.to_pylist()] == corpus.table.column("title").to_pylist()
    assert [t for _, texts in slices for t in texts.to_pylist()] == corpus.table.column("text").to_pylist()


def test_small_batches_do_not_make_small_slices():
    """The encoder's threads want large slices: batches of 3 rows give slices of 10 (4 chunks each)."""
    corpus = _corpus([3, 3, 3, 3, 3, 3, 3])  # ends 3, 6, ..., 21
    slices = list(corpus_columns(corpus, 10))
    assert [len(texts) for _, texts in slices] == [10, 10, 1]
    assert [texts.num_chunks for _, texts in slices] == [4, 4, 1]
    assert all(_in_place(texts, corpus.table.column("text")) for _, texts in slices)

"""corpus_columns (the compiled BM25 build's reader) ends a slice at the end of a record batch that lies
in its second half, so that a slice seldom spans two batches (whose columns _one_array then copies into
one array: at 1M documents about half of the 50 slices, 8 MB each, on the calling thread)."""

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


def _in_one_batch(array, table) -> bool:
    """Whether a yielded text array's data lies in one of the table's text chunks (read in place)."""
    address = array.buffers()[2].address if len(array) else None
    return address is None or any(chunk.buffers()[2].address <= address < chunk.buffers()[2].address + chunk.buffers()[2].size
                                  for chunk in table.column("text").chunks)


def test_slices_end_at_batch_ends_in_their_second_half_and_read_every_row_in_place():
    corpus = _corpus([7, 30, 5])  # batch ends 7, 37, 42
    slices = list(corpus_columns(corpus, 10))
    # 0-7 (7 > 5: the batch end), 7-17, 17-27, 27-37 (the batch end), 37-42; before: 0-10 and 30-40 spanned two
    assert [len(texts) for _, texts in slices] == [7, 10, 10, 10, 5]
    assert all(_in_one_batch(texts, corpus.table) for _, texts in slices)
    assert [t for titles, _ in slices for t in titles.to_pylist()] == corpus.table.column("title").to_pylist()
    assert [t for _, texts in slices for t in texts.to_pylist()] == corpus.table.column("text").to_pylist()


def test_a_batch_end_in_a_slices_first_half_is_not_taken():
    """Small batches do not make small slices (the encoder's threads want large ones): an end at or
    before half the size is crossed, the columns then copied."""
    corpus = _corpus([3, 3, 3, 3, 3, 3, 3])  # ends 3, 6, ..., 21
    assert [len(texts) for _, texts in corpus_columns(corpus, 10)] == [9, 9, 3]
    corpus = _corpus([2, 40])
    assert [len(texts) for _, texts in corpus_columns(corpus, 10)] == [10, 10, 10, 10, 2]

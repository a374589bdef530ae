"""Corpus, Queries and Dataset: what a retriever indexes and searches, and what the evaluator judges."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterator, Sequence

import numpy as np

from harness.qrels import Qrels


@dataclass(frozen=True, eq=False)
class Corpus:
    """Documents as aligned columns: ids, titles and texts (``titles[i]`` may be empty)."""

    ids: list[str]
    titles: list[str]
    texts: list[str]

    def __post_init__(self) -> None:
        if not (len(self.ids) == len(self.titles) == len(self.texts)):
            raise ValueError("corpus columns must have the same length")

    def __len__(self) -> int:
        return len(self.ids)

    def contents(self) -> list[str]:
        """Title + " " + text per document, as BEIR and MTEB feed documents to a model."""
        return _contents(self.titles, self.texts)

    def iter_contents(self, batch_size: int = 10_000) -> Iterator[list[str]]:
        """:meth:`contents` in batches, for encoders that need not hold every string at once."""
        for start in range(0, len(self.ids), batch_size):
            stop = start + batch_size
            yield _contents(self.titles[start:stop], self.texts[start:stop])

    @cached_property
    def id_array(self) -> np.ndarray:
        """The ids as an object array (built once; runs over this corpus share it as their doc_vocab)."""
        out = np.empty(len(self.ids), dtype=object)
        out[:] = self.ids
        return out

    @cached_property
    def id_index(self) -> dict[str, int]:
        """Document id -> position (built once per corpus)."""
        return {doc_id: i for i, doc_id in enumerate(self.ids)}


def _contents(titles: Sequence[str], texts: Sequence[str]) -> list[str]:
    return [f"{t} {x}".strip() if t else x for t, x in zip(titles, texts)]


class ArrowColumn(Sequence):
    """A read-only sequence of strings over an Arrow string column; nothing is copied until read."""

    def __init__(self, column):
        self._column = column  # pyarrow.ChunkedArray

    def __len__(self) -> int:
        return len(self._column)

    def __getitem__(self, index):
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step == 1:
                return self._column.slice(start, max(stop - start, 0)).to_pylist()
            return [self[i] for i in range(start, stop, step)]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._column[index].as_py()

    def __iter__(self) -> Iterator[str]:
        for chunk in self._column.chunks:
            yield from chunk.to_pylist()


class ArrowCorpus:
    """A corpus kept in an Arrow table (``_id``, ``title``, ``text`` string columns).

    Same interface as :class:`Corpus` (``ids``, ``titles``, ``texts``, ``len``, ``contents()``,
    ``id_array``, ``id_index``) but the titles and texts stay in Arrow buffers, memory-mapped when the table
    comes from a Hugging Face ``datasets`` cache file, so a multi-million-document corpus costs
    page cache rather than Python objects. ``ids`` is materialized once (runs and qrels join on it).
    """

    def __init__(self, table):
        import pyarrow as pa

        missing = {"_id", "title", "text"} - set(table.column_names)
        if missing:
            raise ValueError(f"corpus table lacks column(s) {sorted(missing)}")
        columns = {}
        for name in ("_id", "title", "text"):
            column = table.column(name)
            if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
                column = column.cast(pa.string())
            if column.null_count:
                column = column.fill_null("")
            columns[name] = column
        self.table = pa.table(columns)

    def __len__(self) -> int:
        return self.table.num_rows

    @cached_property
    def ids(self) -> list[str]:
        return self.table.column("_id").to_pylist()

    @property
    def titles(self) -> ArrowColumn:
        return ArrowColumn(self.table.column("title"))

    @property
    def texts(self) -> ArrowColumn:
        return ArrowColumn(self.table.column("text"))

    def contents(self) -> list[str]:
        """Title + " " + text per document, exactly as :meth:`Corpus.contents`."""
        out: list[str] = []
        for batch in self.iter_contents():
            out.extend(batch)
        return out

    def iter_contents(self, batch_size: int = 10_000) -> Iterator[list[str]]:
        for batch in self.table.select(["title", "text"]).to_batches(max_chunksize=batch_size):
            yield _contents(batch.column(0).to_pylist(), batch.column(1).to_pylist())

    @cached_property
    def id_array(self) -> np.ndarray:
        """The ids as an object array (built once, as :attr:`Corpus.id_array`)."""
        out = np.empty(len(self), dtype=object)
        out[:] = self.ids
        return out

    @cached_property
    def id_index(self) -> dict[str, int]:
        """Document id -> position (built once per corpus)."""
        return {doc_id: i for i, doc_id in enumerate(self.ids)}


@dataclass(frozen=True, eq=False)
class Queries:
    ids: list[str]
    texts: list[str]

    def __len__(self) -> int:
        return len(self.ids)

    def subset(self, keep: list[str]) -> "Queries":
        text = dict(zip(self.ids, self.texts))
        ids = [q for q in keep if q in text]
        return Queries(ids, [text[q] for q in ids])

    def as_dict(self) -> dict[str, str]:
        return dict(zip(self.ids, self.texts))


@dataclass(frozen=True, eq=False)
class Dataset:
    """A test collection for one split: the queries are those judged in the split's qrels."""

    name: str
    split: str
    corpus: Corpus
    queries: Queries
    qrels: Qrels
    files: dict[str, str] = field(default_factory=dict)  # file name -> sha256
    warnings: list[str] = field(default_factory=list)
    load_s: float = 0.0  # seconds load_dataset took to load it (0 when built otherwise)

"""Corpus, Queries and Dataset: what a retriever indexes and searches, and what the evaluator judges."""

from __future__ import annotations

import mmap
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from harness.columns import all_distinct, first_repeated, require_strings
from harness.qrels import Qrels


COLUMNS = ("_id", "title", "text")


class Corpus:
    """Documents as aligned Arrow string columns ``_id``, ``title`` and ``text`` (a title may be empty).

    The text stays in Arrow buffers (memory-mapped when the table comes from the corpus cache or a
    Hugging Face ``datasets`` cache file), so a multi-million-document corpus costs page cache rather
    than Python objects. Views for current consumers: ``ids`` (a list, materialized once: runs and
    qrels join on it), ``titles`` / ``texts`` (lazy sequences over the columns), ``contents()``;
    streaming consumers read :meth:`batches` (Arrow record batches) or :meth:`iter_contents`.

    ``Corpus(ids, titles, texts)`` builds one from Python sequences; :meth:`from_table` wraps an Arrow
    table without copying its text.

    A memory-mapped corpus's pages count in the process's resident memory once read, for as long as
    they stay mapped (the whole 3 GB text of MS MARCO after one indexing pass): a reader that has
    copied a part out (Python strings) calls :meth:`release` on it, and the kernel drops those pages
    from this process (they stay in the page cache and are read again if touched).

    ``fingerprint`` identifies the content without reading it: for a corpus loaded from a file it is
    derived from the sha256 of the file's content (a ``.gz``'s decompressed bytes: one fingerprint however
    it is encoded) and the parser's format version (set by the loader), so a cache
    keyed on the corpus (an index, embeddings) need not hash every document; None when unknown
    (then hash the content).

    ``parsed_with``: the library versions the corpus cache file holding the table records (the pyarrow that
    parsed it: :func:`harness.datasets.corpus_cache.recorded_versions`), None for a table in memory or a
    file written before they were recorded (:func:`harness.datasets.load_dataset` warns when they are not
    this process's).
    """

    fingerprint: str | None = None
    parsed_with: dict[str, str] | None = None
    # the JSON Lines file the loader parsed it from, its documents in the file's order (None: built otherwise):
    # what names the file and line of a document refused after loading (harness.experiment.check_run_file_ids)
    source: Path | None = None
    _mapping: mmap.mmap | None = None  # the read-only file map holding the table, when it is one
    _give_back = False  # a table in RAM was replaced by its map: give its memory back (see use_mapped)

    def __init__(self, ids: Sequence[str], titles: Sequence[str], texts: Sequence[str]):
        import pyarrow as pa

        if not (len(ids) == len(titles) == len(texts)):
            raise ValueError("corpus columns must have the same length")
        self._set_table(pa.table({name: _string_array(values) for name, values in zip(COLUMNS, (ids, titles, texts))}))
        _refuse_repeated_ids(self.table.column("_id"), "corpus document")  # (as every loader refuses them)

    @classmethod
    def from_table(cls, table, mapping: mmap.mmap | None = None) -> "Corpus":
        """A corpus over ``table``'s ``_id``, ``title`` and ``text`` columns (other columns are dropped;
        non-string columns are cast, nulls become empty strings; the text is not copied). ``mapping``:
        the read-only ``mmap.mmap`` of a file that holds the table's buffers (see :meth:`release`)."""
        from harness.datasets.corpus_cache import recorded_versions

        corpus = cls.__new__(cls)
        corpus._set_table(table)
        corpus._mapping = mapping
        corpus.parsed_with = recorded_versions(table)  # (the given table's metadata: _set_table's copy has none)
        return corpus

    def __getstate__(self) -> dict:
        """Pickled without the file map (an ``mmap`` does not pickle; Arrow copies the table's buffers)."""
        state = dict(self.__dict__)
        state.pop("_mapping", None)
        return state

    def use_mapped(self, table, mapping: mmap.mmap) -> None:
        """Read from now on the same rows from ``table``, held by the file map ``mapping`` (the corpus
        cache, once its background write is finished): readers that take :attr:`table` afresh per
        part (:meth:`release` them) read the map, and the table in RAM is freed once the last part
        of it is dropped; the first part released from the map then gives that memory back to the
        system (Arrow's allocator would otherwise keep it, hundreds of MB, through a whole index
        build). Called from another thread: each attribute is replaced in one step."""
        corpus = Corpus.from_table(table, mapping)
        if len(corpus) != len(self):
            raise ValueError("the mapped table has another number of rows")
        self._mapping = mapping
        self._give_back = True
        self.parsed_with = corpus.parsed_with
        self.table = corpus.table

    def release(self, part) -> None:
        """Drop the resident pages of ``part`` (a slice of :attr:`table`: a Table or RecordBatch) from
        this process when they lie in the corpus's file map (``madvise(MADV_DONTNEED)``: for a
        read-only file mapping the content is unchanged, the next read pages it in again from the
        page cache). Buffers outside the map (a corpus in RAM, a column filled in RAM) are left alone."""
        mapping = self._mapping
        if mapping is None or not hasattr(mapping, "madvise"):
            return
        import pyarrow as pa

        base, size = pa.py_buffer(mapping).address, len(mapping)
        mapped = False
        for column in part.columns:
            for chunk in (column.chunks if isinstance(column, pa.ChunkedArray) else [column]):
                for start, end in _string_spans(chunk):
                    if base <= start < end <= base + size:
                        first = (start - base) // mmap.PAGESIZE * mmap.PAGESIZE
                        mapping.madvise(mmap.MADV_DONTNEED, first, end - base - first)
                        mapped = True
        if mapped and self._give_back:  # a part of the map: the reader has dropped the table in RAM
            self._give_back = False
            pa.default_memory_pool().release_unused()

    def _set_table(self, table) -> None:
        import pyarrow as pa

        missing = set(COLUMNS) - set(table.column_names)
        if missing:
            raise ValueError(f"corpus table lacks column(s) {sorted(missing)}")
        columns = {}
        for name in COLUMNS:
            column = table.column(name)
            if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
                column = column.cast(pa.string())
            if column.null_count:
                column = column.fill_null("")
            columns[name] = column
        self.table = pa.table(columns)

    def __len__(self) -> int:
        return self.table.num_rows

    def __repr__(self) -> str:
        """``Corpus(5,183 documents)``: the size, without reading the text (the default repr named only
        the class and an address)."""
        return f"Corpus({len(self):,} documents)"

    @cached_property
    def ids(self) -> list[str]:
        ids = self.table.column("_id").to_pylist()
        self.release(self.table.select(["_id"]))
        return ids

    @property
    def titles(self) -> "ArrowColumn":
        return ArrowColumn(self.table.column("title"))

    @property
    def texts(self) -> "ArrowColumn":
        return ArrowColumn(self.table.column("text"))

    def batches(self, size: int = 10_000) -> Iterator:
        """The corpus as ``pyarrow.RecordBatch`` es of at most ``size`` rows (columns ``_id``, ``title``,
        ``text``), in order; slices of the table, nothing copied."""
        return iter(self.table.to_batches(max_chunksize=size))

    def contents(self) -> list[str]:
        """Title + " " + text per document, as BEIR and MTEB feed documents to a model."""
        out: list[str] = []
        for batch in self.iter_contents():
            out.extend(batch)
        return out

    def iter_contents(self, batch_size: int = 10_000) -> Iterator[list[str]]:
        """:meth:`contents` in batches, for encoders that need not hold every string at once (each
        batch's mapped pages released once copied)."""
        for batch in self.batches(batch_size):
            titles, texts = batch.column(1).to_pylist(), batch.column(2).to_pylist()
            self.release(batch)
            yield _contents(titles, texts)

    @cached_property
    def id_array(self) -> np.ndarray:
        """The ids as an object array (built once; runs over this corpus share it as their doc_vocab)."""
        out = np.empty(len(self), dtype=object)
        out[:] = self.ids
        return out

    @cached_property
    def id_column(self) -> "IdColumn":  # noqa: F821
        """The ``_id`` column as one :class:`harness.columns.IdColumn`: runs over this corpus take it
        as their vocabulary, so a run needs no Python string per id (its ``objects()`` are
        :attr:`id_array`, made only if a reader of the run asks for them)."""
        from harness.columns import IdColumn

        return IdColumn(self.table.column("_id"), lambda: self.id_array)

    @cached_property
    def id_order(self) -> np.ndarray:
        """The documents in id string order (int64 positions; the evaluator's tie rule, ids compared by
        code point, which is their UTF-8 bytes' order), sorted from the ``_id`` column's bytes with no
        Python string comparisons: by the compiled radix sort (``harness.formats.native.string_order``;
        1M shuffled ``doc<i>`` ids 0.11 s, MS MARCO's 8.8M 0.36 s) when it is built, else by Arrow's
        ``sort_indices`` (0.29 s, 0.54 s; ~1.1 s for an argsort of 1M Python strings). Ids equal to
        each other keep their order (a stable sort), as ``retrievers.topk.string_ranks`` gives them."""
        from harness.formats import native

        if native.available():
            return native.string_order(*self.id_column.buffers())
        import pyarrow.compute as pc

        return pc.sort_indices(self.table.column("_id")).to_numpy().astype(np.int64, copy=False)

    @cached_property
    def id_rank(self) -> np.ndarray:
        """Each document id's rank in string order (int64): the inverse of :attr:`id_order`."""
        from harness.columns import inverse_permutation

        return inverse_permutation(self.id_order)

    @cached_property
    def id_index(self) -> dict[str, int]:
        """Document id -> position (built once per corpus)."""
        return {doc_id: i for i, doc_id in enumerate(self.ids)}

    @cached_property
    def content_digest(self) -> str:
        """sha256 of the ids, titles and texts (each column as :func:`_hash_strings` hashes it), taken once per
        corpus (its Arrow table does not change): what names a corpus built in Python in a pipeline stage's key
        and in metrics.json (:meth:`Dataset.current_identity`)."""
        import hashlib

        digest = hashlib.sha256(b"retrieval-harness corpus v1\0")
        for name in COLUMNS:
            _hash_strings(digest, self.table.column(name))
        return digest.hexdigest()


def _string_spans(array) -> list[tuple[int, int]]:
    """Address ranges ``[start, end)`` of a (sliced) string array's offsets and character data."""
    import pyarrow as pa

    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)) or len(array) == 0:
        return []
    _, offsets, data = array.buffers()
    width = 8 if pa.types.is_large_string(array.type) else 4
    first = offsets.address + width * array.offset
    bounds = np.frombuffer(offsets, dtype=np.int64 if width == 8 else np.int32)[[array.offset, array.offset + len(array)]]
    spans = [(first, first + width * (len(array) + 1))]
    if data is not None and bounds[1] > bounds[0]:
        spans.append((data.address + int(bounds[0]), data.address + int(bounds[1])))
    return spans


def _string_array(values: Sequence):
    import pyarrow as pa

    if isinstance(values, ArrowColumn):
        return values._column
    try:
        return pa.array(values, type=pa.string())
    except (pa.ArrowTypeError, pa.ArrowInvalid):
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())


def _refuse_repeated_ids(column, what: str) -> None:
    """ValueError naming the first id of the Arrow string ``column`` given twice, and the two positions. A
    corpus built in Python with an id twice indexed both documents under one id: the evaluator found the
    judged id at one of them only (a query retrieving the other, judged relevant, scored P@1 = 0)."""
    if all_distinct(column):
        return
    value, at, i = first_repeated(column.to_pylist())
    raise ValueError(f"{what} id {value!r} is given twice (positions {at + 1:,} and {i + 1:,}): give each "
                     "its own id, or the evaluator finds one of them only")


def ArrowCorpus(table) -> Corpus:
    """Former name of :meth:`Corpus.from_table` (kept for callers written before the corpus was Arrow)."""
    return Corpus.from_table(table)


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

    def __eq__(self, other) -> bool:
        if isinstance(other, ArrowColumn):
            return self._column.equals(other._column)
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and list(self) == list(other)
        return NotImplemented

    __hash__ = None


@dataclass(frozen=True, eq=False)
class Queries:
    ids: list[str]
    texts: list[str]

    def __post_init__(self) -> None:
        """A text per id, str ids, each once (a ValueError or TypeError naming the id), checked when built
        rather than after the index (BM25 failed with "offsets must have 3 entries, got 2" for 2 ids and 1 text;
        a query id twice, with "query ids in a run must be unique"; an int id never equals a judged one)."""
        if len(self.ids) != len(self.texts):
            raise ValueError(f"queries need one text per id: {len(self.ids):,} ids, {len(self.texts):,} texts")
        ids = list(self.ids)
        require_strings(ids, "query")
        if len(set(ids)) < len(ids):
            query_id, at, i = first_repeated(ids)
            raise ValueError(f"query id {query_id!r} is given twice (positions {at + 1:,} and {i + 1:,}): give "
                             "each query once")

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        """A one-line summary whatever the number of queries (the dataclass's repr printed every id and
        text: 39,587 characters for SciFact's 300 queries), with the first query's id and text
        shortened, e.g. ``Queries(300 queries; first '1': '0-dimensional biomaterials show ...')``."""
        if not self.ids:
            return "Queries(0 queries)"
        text = str(self.texts[0])
        text = text if len(text) <= 60 else text[:57] + "..."
        return f"Queries({len(self.ids):,} queries; first {self.ids[0]!r}: {text!r})"

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
    # file name without .gz -> sha256 of its content (a .gz's decompressed bytes): what the dataset IS, where
    # ``files`` is exactly which files were read; {} where the loader knows no content apart from its files
    content: dict[str, str] = field(default_factory=dict)
    # what the loader read (:func:`harness.datasets.beir.assemble`): ``{"corpus": its fingerprint, "queries": their
    # digest, "qrels": the Qrels object}``, so that a loaded dataset whose corpus, queries or qrels were replaced
    # since (``dataclasses.replace``: rewritten queries) is told apart from the files it came from
    # (:meth:`changed_since_load`); {} when built in Python
    as_loaded: dict = field(default_factory=dict, repr=False)

    def identity(self) -> dict[str, str]:
        """The checksums that say which data this is (``content``, else ``files``): what keys pipeline stages
        and what compare / check compare, so that one text gzipped or not is one dataset."""
        return dict(sorted((self.content or self.files).items()))

    def current_identity(self) -> dict[str, str]:
        """What this dataset holds now: :meth:`identity`, with what changed since it was loaded
        (:meth:`changed_since_load`); for a dataset built in Python (no files), ``{"in-memory": <memory_digest>}``.
        What keys pipeline stages, and what metrics.json records as ``dataset.content`` where it is not
        :meth:`identity`."""
        files = self.identity()
        return {**files, **self.changed_since_load()} if files else {"in-memory": self.memory_digest()}

    def memory_digest(self) -> str:
        """sha256 of the data itself: of the digests of the corpus (:attr:`Corpus.content_digest`), the queries
        (:meth:`queries_digest`) and the qrels' rows, each column hashed as its values' byte lengths then their
        bytes (so ``["ab", "c"]`` is not ``["a", "bc"]``; Arrow's chunking does not matter). What names a dataset built in Python (``Dataset(name, split,
        Corpus(...), ...)``: no files, so no :meth:`identity`) in a pipeline stage's key: two such datasets of one
        name and split had one key, and the second was served the first one's runs."""
        import hashlib

        parts = (self.corpus.content_digest, self.queries_digest(), _qrels_digest(self.qrels))
        return hashlib.sha256(("retrieval-harness in-memory dataset v2\0" + " ".join(parts)).encode()).hexdigest()

    def queries_digest(self) -> str:
        """sha256 of the queries' ids and texts (as :meth:`memory_digest` hashes columns)."""
        import hashlib

        digest = hashlib.sha256(b"retrieval-harness queries v1\0")
        for values in (self.queries.ids, self.queries.texts):
            _hash_texts(digest, values)
        return digest.hexdigest()

    def changed_since_load(self) -> dict[str, str]:
        """What of a loaded dataset is no longer what its files hold, ``{"corpus in memory": ..., "queries in
        memory": ..., "qrels in memory": ...}`` (the corpus by its fingerprint, else the digest of its documents;
        the queries by their digest; the qrels, when the object was replaced, by theirs), ``{}`` when nothing
        changed or the dataset was not loaded (:attr:`as_loaded`). A pipeline stage's
        key adds it to the files' checksums: queries rewritten with ``dataclasses.replace(dataset, queries=...)``
        were keyed by the files alone, and the stage was served the original queries' run ("hit")."""
        if not self.as_loaded:
            return {}
        changed = {}
        if self.corpus.fingerprint is None or self.corpus.fingerprint != self.as_loaded.get("corpus"):
            changed["corpus in memory"] = self.corpus.fingerprint or self.corpus.content_digest
        queries = self.queries_digest()
        if queries != self.as_loaded.get("queries"):
            changed["queries in memory"] = queries
        if self.qrels is not self.as_loaded.get("qrels", self.qrels):  # (replaced: other judgments, or a subset)
            changed["qrels in memory"] = _qrels_digest(self.qrels)
        return changed


def _qrels_digest(qrels: Qrels) -> str:
    import hashlib

    digest = hashlib.sha256(b"retrieval-harness qrels v1\0")
    for values in (qrels.query_ids.tolist(), qrels.doc_ids.tolist()):
        _hash_texts(digest, values)
    digest.update(np.ascontiguousarray(qrels.grades, dtype="<f8").tobytes())
    return digest.hexdigest()


def _hash_texts(digest, values) -> None:
    """:func:`_hash_strings` of a Python sequence of str (queries, qrels ids: thousands, not a corpus's millions;
    ``pa.array`` of a list would import pandas, ~0.2 s of a warm run, to ask whether it is a pandas object)."""
    encoded = [value.encode("utf-8", "surrogatepass") for value in values]
    digest.update(np.int64(len(encoded)).tobytes())
    digest.update(np.array([len(e) for e in encoded], dtype="<i8").tobytes())
    digest.update(b"".join(encoded))


def _hash_strings(digest, column) -> None:
    """Add a string column (an Arrow chunked array) to ``digest``: its length, every value's byte length, then
    the values' bytes, read from the Arrow buffers (:func:`harness.columns.string_buffers`: no Python string
    per value; a null as "")."""
    from harness.columns import string_buffers

    buffers = [string_buffers(chunk.fill_null("") if chunk.null_count else chunk) for chunk in column.chunks]
    digest.update(np.int64(sum(len(offsets) - 1 for offsets, _ in buffers)).tobytes())
    for offsets, _ in buffers:
        digest.update(np.diff(offsets).astype("<i8").tobytes())
    for offsets, data in buffers:
        digest.update(memoryview(data)[offsets[0]:offsets[-1]])

"""Loader for a dataset folder in BEIR's layout.

    <folder>/corpus.jsonl[.gz]     {"_id", "title", "text"} per line
    <folder>/queries.jsonl[.gz]    {"_id", "text"} per line
    <folder>/qrels/<split>.tsv     query-id <TAB> corpus-id <TAB> score, header optional (read by
                                   harness.formats.trec.read_beir_qrels, as `harness evaluate` reads it)

Every problem in a file is reported as ``file:line: message (id ...)``. Judgments that point at
queries or documents the dataset lacks are counted and reported as warnings (BEIR's ArguAna has
such rows) rather than refused.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from pathlib import Path

from harness.checksums import sha256  # noqa: F401  (re-exported: callers use beir.sha256)
from harness.columns import arrow_contains, arrow_strings, distinct_order, is_utf8_text
from harness.datasets import corpus_cache
from harness.datasets.corpus import COLUMNS, Corpus, Dataset, Queries
from harness.datasets.jsonl import iter_jsonl, read_string_columns, stream_string_columns  # noqa: F401  (iter_jsonl re-exported)
from harness.errors import InputError
from harness.formats.trec import GZIP_MAGIC, read_beir_qrels
from harness.qrels import Qrels


def find_file(folder: Path, stem: str) -> Path:
    """``<stem>`` or ``<stem>.gz`` in ``folder``; both there is an error (which one is meant is not
    known: a copy left by ``gunzip -k`` may differ from the .gz beside it), as is neither."""
    found = [folder / name for name in (stem, stem + ".gz") if (folder / name).is_file()]
    if len(found) == 2:
        raise InputError(f"both {stem} and {stem}.gz in this dataset folder: remove one (which one is meant "
                         "is ambiguous)", folder)
    if not found:
        raise InputError(f"no {stem} or {stem}.gz in this dataset folder", folder)
    return found[0]


def _id(obj: dict, path: Path, number: int) -> str:
    value = obj.get("_id")
    if value is None:
        raise InputError("missing '_id'", path, number)
    return str(value)


def _text(value) -> str:
    """A title or text as a string: null or absent is "", any other JSON value its ``str()`` (``0`` is
    "0", not "")."""
    return value if type(value) is str else "" if value is None else str(value)


STREAM_ENV = "HARNESS_CORPUS_STREAM"  # "0": parse a cached corpus whole, then cache it in the background


def load_corpus(path: Path, cache: bool | None = None) -> Corpus:
    """Read a corpus.jsonl[.gz] into an Arrow-backed :class:`Corpus`.

    Parsed column-wise (:mod:`harness.datasets.jsonl`) and, with ``cache`` (default: corpora of
    :data:`~harness.datasets.corpus_cache.MIN_BYTES` or more), kept as a memory-mapped Arrow file
    keyed by its content's checksum (:mod:`harness.datasets.corpus_cache`: a ``.gz``'s decompressed bytes), so
    the next load is a map; ``fingerprint`` is derived from the same checksum.
    A cached corpus is parsed batch by batch straight into its cache file, which is then mapped
    (:func:`_stream_corpus`: no whole parsed copy in RAM, nothing copied afterwards; at 1M documents
    ~0.9 s and ~300 MB less); a corpus the fast parse refuses, or ``HARNESS_CORPUS_STREAM=0``, is
    parsed whole and cached in the background.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror}", path) from None
    parsed: dict = {}  # the ids' string order, as a parse's duplicate check sorted them (_sorted_ids)
    token = _sorted_ids.set(parsed)
    try:
        if cache if cache is not None else size >= corpus_cache.MIN_BYTES:
            stream = None if os.environ.get(STREAM_ENV, "1") == "0" else (lambda write: _stream_corpus(path, write))
            corpus, digest = corpus_cache.load_or_build(path, COLUMNS, lambda: _parse_corpus(path), Corpus.from_table,
                                                        stream=stream)
        else:
            corpus, digest = Corpus.from_table(_parse_corpus(path)), corpus_cache.content_checksum(path)
    finally:
        _sorted_ids.reset(token)
    order = parsed.get("id_order")
    if order is not None and len(order) == len(corpus):  # the same rows: Corpus.id_order need not sort them again
        corpus.__dict__.setdefault("id_order", order)
    corpus.fingerprint = corpus_cache.fingerprint(digest)
    corpus.source = path
    return corpus


# Where a parse of :func:`load_corpus` leaves the ids' string order that its duplicate check sorted
# (:func:`harness.columns.distinct_order`): the corpus made of those rows takes it as its ``id_order``
_sorted_ids: ContextVar[dict | None] = ContextVar("harness_corpus_sorted_ids", default=None)


def _distinct_ids(column) -> bool:
    """Whether the ids of a parse are all distinct; their string order is left for :func:`load_corpus`."""
    distinct, order = distinct_order(column)
    kept = _sorted_ids.get()
    if distinct and order is not None and kept is not None:
        kept["id_order"] = order
    return distinct


def _parse_corpus(path: Path):
    """The corpus as an Arrow table (``_id``, ``title``, ``text``; no nulls), checked: every line a JSON
    object with an ``_id``, ids unique, at least one document."""
    table = read_string_columns(path, COLUMNS)
    if table is not None and len(table) and not table.column("_id").null_count and _distinct_ids(table.column("_id")):
        return Corpus.from_table(table).table  # fills the null titles / texts with ""
    return _scan_corpus(path).table  # the line scan names the fault, or converts odd values as before


def _stream_corpus(path: Path, write) -> bool:
    """:func:`_parse_corpus` batch by batch into ``write`` (the corpus cache file): null titles and
    texts filled with "" per batch; False (nothing to keep) when the fast parse refuses the file, an
    id is null, the ids are not unique or there is no document: the caller then parses it as
    :func:`_parse_corpus` does, whose line scan names the fault."""
    import pyarrow as pa

    ids, refused = [], []

    def take(batch) -> None:
        if refused or batch.column(0).null_count:
            refused.append(True)
            return
        columns = [batch.column(0)] + [c.fill_null("") if c.null_count else c for c in batch.columns[1:]]
        ids.append(columns[0])  # (only the ids' buffers stay in RAM)
        write(pa.RecordBatch.from_arrays(columns, names=list(COLUMNS)))

    if not stream_string_columns(path, COLUMNS, take) or refused or not ids:
        return False
    return _distinct_ids(pa.chunked_array(ids, type=pa.string()))


def _scan_corpus(path: Path) -> Corpus:
    """The line-by-line reader: slow, exact about where a problem is.

    Per document only the three strings and one set entry pointing at the id are kept; the line of a
    duplicate id's first occurrence is found by re-reading the file, only when there is a duplicate.
    """
    ids: list[str] = []
    titles: list[str] = []
    texts: list[str] = []
    seen: set[str] = set()
    for number, obj in iter_jsonl(path):
        doc_id = _id(obj, path, number)
        if doc_id in seen:
            first = next(n for n, o in iter_jsonl(path) if _id(o, path, n) == doc_id)
            raise InputError(f"duplicate document id (first on line {first})", path, number, doc_id)
        seen.add(doc_id)
        ids.append(doc_id)
        titles.append(_text(obj.get("title")))
        texts.append(_text(obj.get("text")))
    del seen
    if not ids:
        raise InputError("the corpus is empty", path)
    return Corpus(ids, titles, texts)


def load_queries(path: Path) -> Queries:
    table = read_string_columns(path, ("_id", "text"))
    if table is not None and not table.column("_id").null_count:
        ids = table.column("_id").to_pylist()
        if len(set(ids)) == len(ids):
            return Queries(ids, [text or "" for text in table.column("text").to_pylist()])
    ids = []
    texts: list[str] = []
    seen: dict[str, int] = {}
    for number, obj in iter_jsonl(path):
        query_id = _id(obj, path, number)
        if query_id in seen:
            raise InputError(f"duplicate query id (first on line {seen[query_id]})", path, number, query_id)
        seen[query_id] = number
        ids.append(query_id)
        texts.append(_text(obj.get("text")))
    return Queries(ids, texts)


def load_qrels_tsv(path: Path) -> Qrels:
    """BEIR qrels: ``query-id corpus-id score`` per line, tab separated, header optional; read by the
    one BEIR qrels reader, :func:`harness.formats.trec.read_beir_qrels` (its grammar and messages).
    A folder's ``qrels/<split>.tsv`` is plain text: gzip data under a name without ``.gz`` is refused
    saying so (it was "a carriage return inside a line", or a byte that is not UTF-8; the reader's own
    message would advise a ``.gz`` name, which a folder's qrels cannot take)."""
    path = Path(path)
    if path.suffix != ".gz" and path.is_file():  # (a .gz is decompressed by the reader; a pipe is not peeked)
        try:
            with open(path, "rb") as handle:
                head = handle.read(len(GZIP_MAGIC))
        except OSError:
            head = b""  # (the reader names the fault)
        if head == GZIP_MAGIC:
            raise InputError("gzip-compressed data, not text: a dataset's qrels/<split>.tsv is read as plain "
                             "text; decompress it", path, 1)
    return read_beir_qrels(path)


def load_beir_folder(folder: str | Path, split: str = "test", name: str | None = None) -> Dataset:
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("dataset folder not found", folder)
    corpus_path = find_file(folder, "corpus.jsonl")
    queries_path = find_file(folder, "queries.jsonl")
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        available = sorted(p.stem for p in (folder / "qrels").glob("*.tsv") if p.is_file())
        packed = qrels_path.with_name(qrels_path.name + ".gz")  # (it read "available: none" beside it)
        hint = (f"; {packed.name} is there, but a dataset's qrels/<split>.tsv is read as plain text: decompress it"
                if packed.is_file() else "")
        raise InputError(f"no qrels for split {split!r} (available: {', '.join(available) or 'none'}){hint}",
                         qrels_path)
    qrels = load_qrels_tsv(qrels_path)
    all_queries = load_queries(queries_path)
    _refuse_no_judged_query(all_queries, qrels, queries_path, qrels_path)  # (before a corpus of millions is parsed)
    corpus = load_corpus(corpus_path)
    paths = {p.name if p.parent == folder else f"qrels/{p.name}": p for p in (corpus_path, queries_path, qrels_path)}
    return assemble(name or folder.name, split, corpus, all_queries, qrels,
                    {key: corpus_cache.source_checksum(p) for key, p in paths.items()},
                    {key.removesuffix(".gz"): corpus_cache.content_checksum(p) for key, p in paths.items()})


def _refuse_no_judged_query(queries: Queries, qrels: Qrels, queries_path: Path, qrels_path: Path) -> None:
    """InputError when not one query judged in the split has a text: an empty queries file, or one of another
    dataset (every metric was 0, with only a warning that the judged queries had no text; an empty corpus was
    refused already). Some judged queries without a text stay a warning (:func:`assemble`)."""
    judged = qrels.queries()
    if not judged or len(queries.subset(judged)):
        return
    if not len(queries):
        raise InputError("the queries file holds no query", queries_path)
    raise InputError(f"none of the {len(judged):,} queries judged in {qrels_path.parent.name}/{qrels_path.name} is "
                     f"in this file (the first judged: {judged[0]!r}): are the queries of another dataset?",
                     queries_path)


def assemble(name: str, split: str, corpus: Corpus, all_queries: Queries, qrels: Qrels,
             files: dict[str, str], content: dict[str, str] | None = None) -> Dataset:
    """Keep the queries judged in ``qrels`` and count judgments that point nowhere. ``files``: the sha256
    of each file read (provenance); ``content``: of what each holds (``Dataset.content``), where known."""
    judged = qrels.queries()
    queries = all_queries.subset(judged)
    warnings = []
    missing_queries = len(judged) - len(queries)
    if missing_queries:
        warnings.append(f"{missing_queries} judged query id(s) have no query text; they score 0")
    missing_docs = _count_missing(qrels.doc_ids.tolist(), corpus)
    if missing_docs:
        warnings.append(f"{missing_docs} judgment(s) name documents missing from the corpus")
    dataset = Dataset(name, split, corpus, queries, qrels, files, warnings, content=dict(content or {}))
    # (what was read: a stage key tells a dataset whose corpus or queries were replaced since from its files)
    dataset.as_loaded.update(corpus=corpus.fingerprint, queries=dataset.queries_digest(), qrels=dataset.qrels)
    return dataset


def _count_missing(doc_ids: list[str], corpus: Corpus) -> int:
    """How many of ``doc_ids`` (judgments' documents) the corpus lacks: the corpus ids are probed
    against the few judged ids in Arrow (no Python set of a million ids), in C when it is built
    (``harness.columns.arrow_contains``), else with ``pyarrow.compute.is_in``."""
    if not doc_ids:
        return 0
    ids = corpus.table.column("_id")
    judged = sorted(set(doc_ids))
    try:
        found = arrow_contains(ids, judged)
    except (UnicodeEncodeError, TypeError):  # an id that is not UTF-8-encodable: the Arrow path
        found = None
    if found is None:
        import pyarrow.compute as pc

        judged = [d for d in judged if is_utf8_text(d)]  # (a lone surrogate: in no UTF-8 corpus)
        present = set(pc.filter(ids, pc.is_in(ids, value_set=arrow_strings(judged))).to_pylist())
    else:
        present = {d for d, hit in zip(judged, found) if hit}
    return sum(1 for d in doc_ids if d not in present)

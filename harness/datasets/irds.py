"""Datasets from the ir_datasets catalogue: ``irds:<id>`` (``irds:beir/trec-covid``,
``irds:beir/scifact/test``, ``irds:msmarco-passage/dev/small``, ...).

Needs the optional ``ir_datasets`` package (``pip install 'retrieval-harness[irds]'``); it downloads
and verifies the files itself, into ``$IR_DATASETS_HOME`` (default ``~/.ir_datasets``). The id names
the documents, queries and qrels together (the split is part of the id), as ir_datasets models them.

* Documents stream from ``docs_iter()`` (ir_datasets' docstore or file iterator) into Arrow record
  batches of :data:`BATCH_DOCS` rows (fewer when their text reaches :data:`BATCH_CHARS` characters,
  under Arrow's 2 GiB per string column), so the corpus is the same Arrow-backed
  :class:`~harness.datasets.corpus.Corpus` as a BEIR folder's; no list of document objects is held.
  ``title`` is the document's ``title`` field ('' when its type has none), ``text`` its ``text``
  field; a type without a ``text`` field gives ``default_text()``, less the title it starts with when
  the type has one (``MsMarcoDocument``, ``Cord19Doc``, ``NfCorpusDoc``, ``TrecParsedDoc``: title
  ``title``, text ``body`` / ``abstract``, as BEIR's conversions split them), so that title + " " +
  text is ``default_text()`` and the title is not read twice.
* The corpus cache: the first load streams the batches into an Arrow file of the corpus cache, later
  loads map it (:func:`_corpus`; keyed on the files ir_datasets reads the documents from: :func:`_docs_key`).
* Queries: ``text`` field (or ``default_text()``); qrels: ``relevance`` as the grade.
* The split: an id that names one (a path part such as ``dev`` in ``msmarco-passage/dev/small``) is
  that split, also when ``split`` is the default ``test`` (a warning says so; another ``split`` is an
  error); an id that names none is ``<id>/<split>`` where ir_datasets has that id (``beir/scifact``
  with split ``train`` is ``beir/scifact/train``), else the id itself, recorded as ``split``.
* Duplicate document or query ids, and conflicting grades, are errors naming the id, as for a folder.
* ``files`` records the id loaded with the ir_datasets version, and the sha256 of the content loaded:
  ``irds:<id>/docs`` (each batch's id, title and text columns: value lengths and UTF-8 bytes),
  ``irds:<id>/queries`` and ``irds:<id>/qrels`` (the JSON of the ids and texts, of the judgments), so
  that a benchmark cell or a pipeline stage keyed on ``files`` is not reused for other content under
  the same id (a changed local registration, user-supplied collection files).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from harness.datasets.beir import assemble
from harness.formats.trec import _add_judgment
from harness.datasets.corpus import COLUMNS, Corpus, Queries
from harness.errors import HarnessError
from harness.qrels import Qrels

CONVERSION = 1  # how documents become (id, title, text) here: part of the corpus cache key (bump on change)
CACHE_MIN_BYTES = 0  # every collection is cached: ir_datasets reads documents in Python (NFCorpus's 3,633: 1 s)
BATCH_DOCS = 50_000
# What parsed a cached collection's rows, recorded in its Arrow file (not keyed: corpus_cache.PARSED_WITH), as the
# folder corpora's pyarrow is: ir_datasets reads the documents (its parsers, its docstore), pyarrow writes them
PARSED_WITH = ("ir_datasets", "pyarrow")
BATCH_CHARS = 2**28  # a batch ends at this many title and text characters (<= 1 GiB of UTF-8) or sooner:
# an Arrow string column holds at most 2 GiB (int32 offsets), and 50,000 long documents (PMC or CORD-19
# full texts, web pages: 43 KB each) pass that


SPLIT_PART = re.compile(r"train|training|dev\d*|test|val|valid|validation|eval")  # a path part naming a split


def _text_getter(cls):
    if "text" in getattr(cls, "_fields", ()):
        return lambda item: item.text
    return lambda item: item.default_text()


def _as_str(value) -> str:
    return value if type(value) is str else ("" if value is None else str(value))


def _title_and_text(cls):
    """(title, text) of a document of type ``cls``: its ``title`` and ``text`` fields; without a
    ``text`` field, ``default_text()`` (ir_datasets: ``f"{title} {body}"`` and the like) less the
    title and the one separator it starts with, or all of it (title '') when it does not start so. A
    None title is '' and not read as text: ``f"{None} {body}"`` starts with ``"None"``, which is taken off."""
    fields = getattr(cls, "_fields", ())
    has_title = "title" in fields
    if "text" in fields:
        return lambda doc: (_as_str(doc.title) if has_title else "", _as_str(doc.text))
    if not has_title:
        return lambda doc: ("", _as_str(doc.default_text()))

    def split(doc):
        title, full = _as_str(doc.title), _as_str(doc.default_text())
        for shown in dict.fromkeys((str(doc.title), title)):  # a None title: f"{None} {body}" is "None body"
            if full.startswith(shown):
                rest = full[len(shown):]
                if not rest or rest[0].isspace():
                    return title, rest[1:]
        return "", full

    return split


def _digest_strings(digest, array) -> None:
    """Feed an Arrow string array to ``digest``: its length (int64), its values' byte lengths (int32)
    and their bytes."""
    import numpy as np

    digest.update(np.int64(len(array)).tobytes())
    offsets = np.frombuffer(array.buffers()[1], np.int32, len(array) + 1, array.offset * 4)
    digest.update(np.diff(offsets).tobytes())
    if array.buffers()[2] is not None:
        digest.update(memoryview(array.buffers()[2])[offsets[0]:offsets[-1]])


def _docs_batches(ds, digest):
    """The documents of ``ds`` as Arrow record batches of :data:`BATCH_DOCS` rows (fewer past
    :data:`BATCH_CHARS` characters), each fed to ``digest`` (:func:`_digest_strings`) as it is made."""
    import pyarrow as pa

    title_and_text = _title_and_text(ds.docs_cls())
    schema = pa.schema([(name, pa.string()) for name in COLUMNS])
    ids: list[str] = []
    titles: list[str] = []
    texts: list[str] = []

    def batch():
        made = pa.record_batch([pa.array(ids, pa.string()), pa.array(titles, pa.string()),
                                pa.array(texts, pa.string())], schema=schema)
        for column in made.columns:
            _digest_strings(digest, column)
        ids.clear(), titles.clear(), texts.clear()
        return made

    chars = 0
    for doc in ds.docs_iter():
        ids.append(_as_str(doc.doc_id))
        title, text = title_and_text(doc)
        titles.append(title)
        texts.append(text)
        chars += len(title) + len(text)
        if len(ids) == BATCH_DOCS or chars >= BATCH_CHARS:
            yield batch()
            chars = 0
    if ids:
        yield batch()


def _check_docs(table, source: str) -> None:
    """HarnessError for an empty corpus or a duplicate document id (named)."""
    import pyarrow.compute as pc

    if not len(table):
        raise HarnessError(f"{source}: the corpus is empty")
    if pc.count_distinct(table.column("_id")).as_py() != len(table):
        counts = pc.value_counts(table.column("_id")).filter(
            pc.greater(pc.value_counts(table.column("_id")).field("counts"), 1))
        raise HarnessError(f"{source}: duplicate document id {counts.field('values')[0].as_py()!r}")


def _docs_table(ds, source: str, digest):
    import pyarrow as pa

    schema = pa.schema([(name, pa.string()) for name in COLUMNS])
    table = pa.Table.from_batches(list(_docs_batches(ds, digest)), schema=schema)
    _check_docs(table, source)
    return table


def _stat(path: Path) -> list:
    from harness.checksums import file_signature

    return [path.name, *file_signature(path)]


def _folder_files(folder: Path) -> list:
    """The stat (:func:`_stat`) of each file in ``folder``, by name."""
    return [_stat(file) for file in sorted(folder.iterdir()) if file.is_file()]


def _store_files(ds) -> list:
    """The stat of each file of ``ds``'s docstore folder where it is on disk ([] where there is none)."""
    try:
        folder = Path(ds.docs_store().path)
    except Exception:  # noqa: BLE001 - no docstore, or one kept elsewhere than a folder of files
        return []
    return _folder_files(folder) if folder.is_dir() else []


def _built_store(ds) -> Path | None:
    """The folder of ``ds``'s docstore, built first (what ``docs_iter()`` would do first) under a build lock
    (``<cache>/corpora/keyed/docstore-<sha256 of $IR_DATASETS_HOME and the documents' namespace>.lock``, named
    before the docstore is looked at); None where ``docs_store()`` names none. ir_datasets builds a docstore in
    place, unlocked, and two processes loading the same collection built it over each other, leaving it corrupt
    for every later load (``ValueError: Invalid size``, a duplicate document id). A second process waits, then
    finds it built. The lock is taken before ``docs_store()``: making it reads the docstore's ``bin.meta``,
    which a build creates empty and then writes, and a load that made it meanwhile failed (``AssertionError:
    fields do not match``), or read the documents unlocked and built the docstore beside the first."""
    import logging

    import ir_datasets

    from harness.atomic import build_lock, waited_holder
    from harness.cache import cache_dir
    from harness.datasets.corpus_cache import KIND

    where = f"{Path(ir_datasets.util.home_path()).resolve()}\0{ds.docs_namespace()}"
    name = hashlib.sha256(where.encode()).hexdigest()[:32]
    release = build_lock(cache_dir(KIND) / "keyed" / f"docstore-{name}.lock", on_wait=lambda: logging.getLogger(
        __name__).warning("%s is building ir_datasets' docstore of %s; waiting for it", waited_holder(),
                          ds.docs_namespace()))
    try:
        try:
            store = ds.docs_store()
            folder = Path(store.path)
        except Exception:  # noqa: BLE001 - no docstore, or one kept elsewhere than a folder of files
            return None
        store.build()
    finally:
        release()
    return folder


def _builds_its_store(ds) -> bool:
    """Whether ``ds``'s ``docs_iter()`` builds its docstore first (ir_datasets' BEIR collections: it
    iterates the docstore, built on first use), so that building it for the cache key is what the read
    does anyway."""
    try:
        from ir_datasets.datasets.beir import BeirDocs
    except ImportError:
        return False
    return isinstance(getattr(ds.docs_iter, "__self__", None), BeirDocs)


def _docs_files(ds) -> tuple[Path, list] | None:
    """(the path, the stat of each file: name, device, inode, size, mtime, ctime) of what ir_datasets
    reads the documents of ``ds`` from: its documents file (``docs_path()``: a TSV, JSONL, ... file)
    and its docstore's files where it has one on disk (``docs_iter()`` reads a built docstore instead
    of the file: a docstore built before the file changed is served until it is removed), else its
    docstore's folder (``docs_store()``, e.g. every ``beir/*`` collection), built first when it is
    not yet only where ``docs_iter()`` builds it too (:func:`_builds_its_store`); None when it names
    neither, and where the docstore is not built and the read would not build it (a ``docs_path()``
    folder of TREC files, ``TrecDocs``; KILT's or CAR's documents, read from their downloads)."""
    try:
        path = Path(ds.docs_path())
    except Exception:  # noqa: BLE001 - no docs_path (AttributeError, NotImplementedError)
        path = None
    if path is not None and path.is_file():  # (an OSError of a stat: not cached, _docs_key)
        return path, [_stat(path), *_store_files(ds)]
    if _builds_its_store(ds):
        folder = _built_store(ds)
    else:
        try:
            store = ds.docs_store()
            folder = Path(store.path)
            if not store.built():
                # (a folder of files, TrecDocs', or a type whose docs_iter() reads a docstore only once built:
                # KILT, CAR, ...: built here, it would be a copy of the collection that ir_datasets alone would
                # not make, multi-GB for some, and read instead of the files from then on, edits unseen: not cached)
                return None
        except Exception:  # noqa: BLE001 - no docstore, or one kept elsewhere than a folder of files
            return None
    if folder is None or not folder.is_dir():
        return None
    return folder, _folder_files(folder)


def _docs_key(ds, load_id: str, version: str) -> str | None:
    """The corpus cache key of ``ds``'s documents (:func:`harness.datasets.corpus_cache.load_keyed`):
    the sha256 of the id, the ir_datasets version, the document type and its fields, this module's
    conversion (:data:`CONVERSION`), and the path and stat of the files ir_datasets reads them from
    (:func:`_docs_files`), as the JSONL corpus cache trusts a file whose stat is unchanged. None (not
    cached) where there are no such files, or they hold less than :data:`CACHE_MIN_BYTES`."""
    try:
        found = _docs_files(ds)
    except OSError:
        return None
    if found is None or sum(entry[3] for entry in found[1]) < CACHE_MIN_BYTES:
        return None
    cls = ds.docs_cls()
    identity = [CONVERSION, load_id, version, f"{cls.__module__}.{cls.__qualname__}",
                list(getattr(cls, "_fields", ())), str(found[0].resolve()), found[1]]
    return "irds-" + _json_sha256(identity)


def _corpus(ds, source: str, load_id: str, version: str) -> tuple[Corpus, str]:
    """(the corpus of ``ds``, the sha256 of its content: ``files``' ``irds:<id>/docs``): from the corpus
    cache when its documents file is unchanged since it was cached (see :func:`_docs_key`), else read
    from ``docs_iter()`` batch by batch straight into the cache, or into memory where it is not cached."""
    from harness.datasets import corpus_cache

    key = _docs_key(ds, load_id, version)
    if key is not None:
        def stream(write):
            digest = hashlib.sha256()
            rows = 0
            for batch in _docs_batches(ds, digest):
                write(batch)
                rows += len(batch)
            return digest.hexdigest() if rows else None
        cached = corpus_cache.load_keyed(key, COLUMNS, stream, check=lambda table: _check_docs(table, source),
                                         waiting=f"caching the documents of {source}; "
                                                 "waiting for it", parsed_with=PARSED_WITH)
        if cached is not None:
            table, mapping, digest = cached
            return Corpus.from_table(table, mapping), digest
    digest = hashlib.sha256()
    corpus = Corpus.from_table(_docs_table(ds, source, digest))
    return corpus, digest.hexdigest()


def _queries(ds, source: str) -> Queries:
    text_of = _text_getter(ds.queries_cls())
    ids: list[str] = []
    texts: list[str] = []
    seen: set[str] = set()
    for query in ds.queries_iter():
        query_id = _as_str(query.query_id)
        if query_id in seen:
            raise HarnessError(f"{source}: duplicate query id {query_id!r}")
        seen.add(query_id)
        ids.append(query_id)
        texts.append(_as_str(text_of(query)))
    return Queries(ids, texts)


def _qrels(ds, source: str) -> Qrels:
    rows: dict[tuple[str, str], float] = {}
    lines: dict[tuple[str, str], int] = {}
    for number, qrel in enumerate(ds.qrels_iter(), 1):
        _add_judgment(rows, lines, _as_str(qrel.query_id), _as_str(qrel.doc_id), float(qrel.relevance),
                      Path(source), number)
    if not rows:
        raise HarnessError(f"{source}: no judgments")
    return Qrels.from_rows((q, d, g) for (q, d), g in rows.items())


def load_irds_dataset(dataset_id: str, split: str = "test"):
    """Load ir_datasets' ``dataset_id`` (documents, queries and qrels) as a harness Dataset."""
    try:
        import ir_datasets
    except ImportError:
        raise HarnessError(f"irds:{dataset_id} needs the ir_datasets package: "
                           "pip install 'retrieval-harness[irds]'") from None
    source = f"irds:{dataset_id}"
    if not dataset_id.strip():
        raise HarnessError(f"{source!r} names no ir_datasets id (e.g. irds:beir/scifact/test)")
    named = _named_split(dataset_id)
    if named is not None and split not in (named, "test"):
        raise HarnessError(f"{source}: the id names split {named!r}, not {split!r}; "
                           "name the split in the id (the split is part of an ir_datasets id)")
    load_id = dataset_id
    if named is None and _registered(ir_datasets, f"{dataset_id}/{split}"):
        load_id = f"{dataset_id}/{split}"  # beir/scifact + split test: beir/scifact/test
    try:
        ds = ir_datasets.load(load_id)
    except KeyError:
        raise HarnessError(f"{source}: ir_datasets knows no dataset {dataset_id!r} "
                           "(ids: https://ir-datasets.com)") from None
    missing = [part for part in ("docs", "queries", "qrels") if not getattr(ds, f"has_{part}")()]
    if missing:
        splits = [s for s in ("train", "dev", "test") if _registered(ir_datasets, f"{dataset_id}/{s}")]
        hint = (f"; ir_datasets has split(s) {', '.join(splits)} of it: name one with --split or in the id"
                if splits and load_id == dataset_id else
                "; name one with documents, queries and qrels (e.g. beir/scifact/test)")
        raise HarnessError(f"{source}: this ir_datasets id has no {', '.join(missing)}" + hint)
    version = getattr(ir_datasets, "__version__", "?")
    try:
        corpus, docs_digest = _corpus(ds, source, load_id, version)
        queries = _queries(ds, source)
        qrels = _qrels(ds, source)
    except HarnessError:
        raise
    except Exception as exc:  # downloads and parsers inside ir_datasets raise many types
        raise HarnessError(f"{source}: ir_datasets could not provide it: {type(exc).__name__}: {exc}") from None
    # ir_datasets verifies its downloads; the version and the content's sha256 identify what was loaded
    # (a benchmark's cells and pipeline stage caches are keyed on them; the id alone may name other content)
    rows = [[q, d, g] for q, d, g in zip(qrels.query_ids.tolist(), qrels.doc_ids.tolist(), qrels.grades.tolist())]
    files = {f"irds:{load_id}": f"ir_datasets {version}",
             f"irds:{load_id}/docs": docs_digest,
             f"irds:{load_id}/queries": _json_sha256([queries.ids, queries.texts]),
             f"irds:{load_id}/qrels": _json_sha256(rows)}
    # the documents' sha256 is the corpus fingerprint too: an index or embedding cache need not hash them again
    corpus.fingerprint = hashlib.sha256(f"irds-docs v1 {files[f'irds:{load_id}/docs']}".encode()).hexdigest()
    dataset = assemble(dataset_id, named or split, corpus, queries, qrels, files)
    if named is not None and named != split:
        dataset.warnings.append(f"the split is {named!r}, named by the id {dataset_id!r} (not {split!r})")
    return dataset


def _json_sha256(value) -> str:
    return hashlib.sha256(json.dumps(value).encode("ascii")).hexdigest()  # (ASCII: lone surrogates escaped)


def _named_split(dataset_id: str) -> str | None:
    """The split an ir_datasets id names: its last path part after the first that is a split name
    (``msmarco-passage/dev/small``: ``dev``; ``beir/trec-covid``: None)."""
    named = [part for part in dataset_id.split("/")[1:] if SPLIT_PART.fullmatch(part)]
    return named[-1] if named else None


def _registered(ir_datasets, dataset_id: str) -> bool:
    try:
        ir_datasets.registry[dataset_id]
    except KeyError:
        return False
    return True

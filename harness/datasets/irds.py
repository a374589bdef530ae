"""Datasets from the ir_datasets catalogue: ``irds:<id>`` (``irds:beir/trec-covid``,
``irds:beir/scifact/test``, ``irds:msmarco-passage/dev/small``, ...).

Needs the optional ``ir_datasets`` package (``pip install 'retrieval-harness[irds]'``); it downloads
and verifies the files itself, into ``$IR_DATASETS_HOME`` (default ``~/.ir_datasets``). The id names
the documents, queries and qrels together (the split is part of the id), as ir_datasets models them.

* Documents stream from ``docs_iter()`` (ir_datasets' docstore or file iterator) into Arrow record
  batches of :data:`BATCH_DOCS` rows, so the corpus is the same Arrow-backed
  :class:`~harness.datasets.corpus.Corpus` as a BEIR folder's; no list of document objects is held.
  ``title`` is the document's ``title`` field ('' when its type has none), ``text`` its ``text``
  field, or ``default_text()`` for types without one.
* Queries: ``text`` field (or ``default_text()``); qrels: ``relevance`` as the grade.
* Duplicate document or query ids, and conflicting grades, are errors naming the id, as for a folder.
"""

from __future__ import annotations

from pathlib import Path

from harness.datasets.beir import _add_judgment, assemble
from harness.datasets.corpus import COLUMNS, Corpus, Queries
from harness.errors import HarnessError
from harness.qrels import Qrels

BATCH_DOCS = 50_000


def _text_getter(cls):
    if "text" in getattr(cls, "_fields", ()):
        return lambda item: item.text
    return lambda item: item.default_text()


def _as_str(value) -> str:
    return value if type(value) is str else ("" if value is None else str(value))


def _docs_table(ds, source: str):
    import pyarrow as pa
    import pyarrow.compute as pc

    cls = ds.docs_cls()
    has_title = "title" in getattr(cls, "_fields", ())
    text_of = _text_getter(cls)
    schema = pa.schema([(name, pa.string()) for name in COLUMNS])
    batches = []
    ids: list[str] = []
    titles: list[str] = []
    texts: list[str] = []

    def flush():
        if ids:
            batches.append(pa.record_batch([pa.array(ids, pa.string()), pa.array(titles, pa.string()),
                                            pa.array(texts, pa.string())], schema=schema))
            ids.clear(), titles.clear(), texts.clear()

    for doc in ds.docs_iter():
        ids.append(_as_str(doc.doc_id))
        titles.append(_as_str(doc.title) if has_title else "")
        texts.append(_as_str(text_of(doc)))
        if len(ids) == BATCH_DOCS:
            flush()
    flush()
    table = pa.Table.from_batches(batches, schema=schema)
    if not len(table):
        raise HarnessError(f"{source}: the corpus is empty")
    if pc.count_distinct(table.column("_id")).as_py() != len(table):
        counts = pc.value_counts(table.column("_id")).filter(
            pc.greater(pc.value_counts(table.column("_id")).field("counts"), 1))
        raise HarnessError(f"{source}: duplicate document id {counts.field('values')[0].as_py()!r}")
    return table


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
    try:
        ds = ir_datasets.load(dataset_id)
    except KeyError:
        raise HarnessError(f"{source}: ir_datasets knows no dataset {dataset_id!r} "
                           "(ids: https://ir-datasets.com)") from None
    missing = [part for part in ("docs", "queries", "qrels") if not getattr(ds, f"has_{part}")()]
    if missing:
        raise HarnessError(f"{source}: this ir_datasets id has no {', '.join(missing)}; "
                           "name one with documents, queries and qrels (e.g. beir/scifact/test)")
    try:
        corpus = Corpus.from_table(_docs_table(ds, source))
        queries = _queries(ds, source)
        qrels = _qrels(ds, source)
    except HarnessError:
        raise
    except Exception as exc:  # downloads and parsers inside ir_datasets raise many types
        raise HarnessError(f"{source}: ir_datasets could not provide it: {type(exc).__name__}: {exc}") from None
    # no file checksums to record: ir_datasets verifies its downloads; record the package version
    return assemble(dataset_id, split, corpus, queries, qrels,
                    {source: f"ir_datasets {getattr(ir_datasets, '__version__', '?')}"})

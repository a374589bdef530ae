"""Load a BEIR dataset from the Hugging Face hub through ``datasets``: ``hf:BeIR/<name>``.

BEIR publishes each dataset as two hub repos: ``BeIR/<name>`` with configs ``corpus`` (split
``corpus``: ``_id``, ``title``, ``text``) and ``queries`` (split ``queries``: ``_id``, ``text``), and
``BeIR/<name>-qrels`` with one TSV per split (``query-id``, ``corpus-id``, ``score``).

* The corpus stays in the Arrow file ``datasets`` writes to its cache (memory-mapped), wrapped in an
  :class:`~harness.datasets.corpus.Corpus` (:meth:`~harness.datasets.corpus.Corpus.from_table`, as
  the JSONL loader and its Arrow cache do); it is never copied into Python lists.
* Ids are read as strings (the qrels TSVs would otherwise be parsed as integers, losing leading zeros
  and failing to join with string corpus ids).
* The hub's offline settings are ``datasets``' own: with ``HF_HUB_OFFLINE=1`` (or
  ``HF_DATASETS_OFFLINE=1``) it reads only its cache; a miss becomes a HarnessError saying so.
* Repos that still carry a loading script (which ``datasets`` 4+ refuses) are read from the hub's
  parquet export (revision ``refs/convert/parquet``).

``repo`` may also be a local folder laid out like a hub repo (README.md with ``configs``), with the
qrels in ``<folder>-qrels``; the tests use that. ``datasets`` keys such a folder's cache by its README's
configs, not by its files, so a rewritten parquet file was served from the old cache (and two folders
with the same name and README shared one): a local folder's files are therefore digested
(:func:`_local_identity`; sha256 per file, remembered by stat as the corpus cache does), and the digest
picks the ``datasets`` cache folder and goes into the corpus fingerprint (which keys the BM25 index
cache) and into ``Dataset.files`` (which keys pipeline stages and bench cells). Hub repos are keyed by
their revision (``datasets``' fingerprint names the commit), as before.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


from harness.datasets.beir import assemble
from harness.formats.trec import read_beir_qrels
from harness.datasets.corpus import COLUMNS, Corpus, Queries
from harness.errors import HarnessError
from harness.qrels import Qrels

PARQUET_EXPORT = "refs/convert/parquet"
SPLIT_ALIASES = {"dev": "validation", "validation": "dev"}  # datasets names a dev.tsv split 'validation'


def _offline_hint(path: str | None = None) -> str:
    """Why a load may have failed offline; nothing for ``path`` a local folder (read with or without the hub)."""
    import datasets

    if path is not None and Path(path).expanduser().is_dir():
        return ""
    if datasets.config.HF_HUB_OFFLINE:
        return (" (offline: HF_HUB_OFFLINE / HF_DATASETS_OFFLINE is set and it is not in the Hugging Face "
                "cache; load it once while online, or unset the variable)")
    return ""


def _load(path: str, split: str, name: str | None = None, revision: str | None = None,
          cache_dir: str | None = None, **kwargs):
    import datasets

    path = os.path.expanduser(path)  # (hf:~/repo: a local folder, as its digest reads it; datasets does not expand ~)
    try:
        return datasets.load_dataset(path, name, split=split, revision=revision, cache_dir=cache_dir, **kwargs)
    except RuntimeError as exc:
        if "scripts are no longer supported" not in str(exc) or name is None:
            raise
        # A script-based repo: read its parquet export instead (layout <config>/<split>/*.parquet).
        return datasets.load_dataset(path, split=name, revision=PARQUET_EXPORT, cache_dir=cache_dir,
                                     data_files={name: f"{name}/**/*.parquet"}, **kwargs)


def _describe(exc: BaseException) -> str:
    """``Type: message`` of ``exc``, and of its cause where ``datasets`` wraps one (its
    ``DatasetGenerationError`` says only "An error occurred while generating the dataset")."""
    cause = exc.__cause__
    detail = f" ({type(cause).__name__}: {str(cause).strip()})" if cause is not None else ""
    return f"{type(exc).__name__}: {exc}{detail}".replace("\n", " ")


def _load_or_explain(what: str, path: str, split: str, **kwargs):
    try:
        return _load(path, split, **kwargs)
    except HarnessError:
        raise
    except Exception as exc:  # datasets raises many types: ConnectionError, FileNotFoundError, ValueError
        raise HarnessError(f"cannot load the {what} of {path!r} from the Hugging Face hub: "
                           f"{_describe(exc)}".rstrip(".") + _offline_hint(path)) from None


def _load_qrels(path: str, split: str, revision: str | None, cache_dir: str | None):
    """The split's qrels TSV as ``datasets`` reads it: each line verbatim as one string (column
    ``line``; separator NUL, no header taken; a line ends at LF only: a lone CR stays in its line, which
    the folder reader refuses as in a folder), no value read as missing (pandas would make ids such as
    ``NA``, ``null``, ``None`` or ``nan`` null), no quote character taken as quoting (``"Heroes"_(album)``
    stays as written), blank lines kept, so that :func:`_qrels_from_table` parses the file's own lines
    with the folder loader's reader (its header rule, a headerless file, a line of 4 columns refused,
    line numbers). A local folder's ``<split>.tsv``, when it has one, is the split's only file (as
    ``qrels/<split>.tsv`` is a BEIR folder's): ``datasets``' split patterns would also read
    ``test.tsv.bak`` or ``test2.tsv`` into ``test``. A repo whose qrels are no CSV/TSV (parquet, JSON
    lines: typed columns, no text for pandas to misread) is read with the string features only (its
    builder refuses the CSV options)."""
    import csv

    import datasets

    features = datasets.Features({"query-id": datasets.Value("string"), "corpus-id": datasets.Value("string"),
                                  "score": datasets.Value("string")})

    def load(name: str):
        # a local folder's <split>.tsv alone: datasets' split patterns would add test.tsv.bak, test2.tsv, ...
        files = {"data_files": {name: f"{name}.tsv"}} if (Path(path).expanduser() / f"{name}.tsv").is_file() else {}
        try:
            return _load(path, name, revision=revision, cache_dir=cache_dir, na_filter=False,
                         features=datasets.Features({"line": datasets.Value("string")}), names=["line"], sep="\0",
                         quoting=csv.QUOTE_NONE, skip_blank_lines=False, lineterminator="\n", **files)
        except ValueError as exc:
            if "doesn't have a 'na_filter' key" not in str(exc):
                raise
        return _load(path, name, revision=revision, cache_dir=cache_dir, features=features, **files)

    try:
        return load(split)
    except ValueError as exc:
        alias = SPLIT_ALIASES.get(split)
        if alias is None or "split" not in str(exc).lower():
            raise
        try:
            return load(alias)
        except ValueError as again:  # (the error named the alias alone: "Unknown split 'validation'" for --split dev)
            if "split" not in str(again).lower():
                raise
            raise ValueError(f"neither a {split!r} nor a {alias!r} split ({again})") from None


def _qrels_from_table(table, source: str) -> Qrels:
    """The judgments of the qrels table, read by the one BEIR qrels reader
    (:func:`harness.formats.trec.read_beir_qrels`: header, ``#`` comments, whitespace, grades, pairs
    judged twice, every refusal naming ``source`` and the line): a TSV's lines as read (column
    ``line``), or the TSV lines the string fields of a parquet or JSON table make again, after a
    header line (so that a first row is never taken as one)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if "line" in table.column_names:
        data = "".join(line + "\n" for line in pc.fill_null(table.column("line"), "").to_pylist())
        return read_beir_qrels(Path(source), data.encode("utf-8", "surrogatepass"))
    columns = [pc.fill_null(table.column(name).cast(pa.string()), "") for name in ("query-id", "corpus-id", "score")]
    lines = pc.binary_join_element_wise(*columns, "\t")
    data = "query-id\tcorpus-id\tscore\n" + "".join(line + "\n" for line in lines.to_pylist())
    return read_beir_qrels(Path(source), data.encode("utf-8", "surrogatepass"))


def _string_columns(table, names, source: str, json_columns=()):
    """``table``'s ``names`` columns as Arrow strings (nulls kept; the text is not copied), the corpus's
    and the queries' by one rule: a number or boolean as Arrow writes it (``5``, ``0``, ``true``), an
    absent ``title`` or ``text`` all "" (as the folder loader reads an absent field); an absent ``_id``,
    or a column no text can be made of (a list, a struct), is a one-line error naming it. The ``json_columns``
    (:func:`_json_columns`: the datasets library's for a JSON file's column of mixed types, ``"d1"`` and ``2``)
    hold each value as JSON text: decoded first (it was read as ``'"d1"'``)."""
    import pyarrow as pa

    if "_id" not in table.column_names:
        raise HarnessError(f"{source}: no '_id' column (columns: {', '.join(table.column_names) or 'none'})")
    columns = {}
    for name in names:
        if name not in table.column_names:
            columns[name] = pa.repeat(pa.scalar("", pa.string()), table.num_rows)
            continue
        column = table.column(name)
        if name in json_columns:
            column = _from_json_text(column, name, source)
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            try:
                column = column.cast(pa.string())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                raise HarnessError(f"{source}: column {name!r} holds {column.type}, not text") from None
        columns[name] = column
    return pa.table(columns)


def _json_columns(features, names) -> list[str]:
    """The columns of ``names`` whose ``features`` type is ``Json``: values kept as JSON text."""
    return [name for name in names if type(features.get(name)).__name__ == "Json"]


def _from_json_text(column, name: str, source: str):
    """A ``Json`` column's values (JSON text each) as the strings :func:`_string_columns` makes of typed values: a
    string as it is, a number or boolean as Arrow writes it, null as null; a list or an object is refused."""
    import json

    import pyarrow as pa

    values = [None if text is None else json.loads(text) for text in column.to_pylist()]
    for row, value in enumerate(values):
        if isinstance(value, (list, dict)):
            raise HarnessError(f"{source}: column {name!r} row {row + 1} holds {json.dumps(value)[:40]}, not text")
    strings = [value if value is None or isinstance(value, str)
               else pa.array([value]).cast(pa.string())[0].as_py() for value in values]
    return pa.chunked_array([pa.array(strings, pa.string())])


def _check_ids(column, what: str, source: str) -> None:
    """Refuse a null or repeated id (as the folder loader does): a null would become "" (or "None"),
    a repeated document would be indexed twice and a repeated query keep only its last text."""
    import pyarrow.compute as pc

    if column.null_count:
        row = pc.index(pc.is_null(column), True).as_py()
        raise HarnessError(f"{source}: row {row + 1} has no {what} id")
    if pc.count_distinct(column).as_py() != len(column):
        counts = pc.value_counts(column)
        repeated = counts.filter(pc.greater(counts.field("counts"), 1)).field("values")[0].as_py()
        raise HarnessError(f"{source}: duplicate {what} id {str(repeated)!r}")


def _local_identity(*repos: str) -> str | None:
    """A digest of the files (relative path and sha256) of the repos that are local folders, hidden
    ones aside; None when none is (hub repos)."""
    from harness.datasets.corpus_cache import source_checksum

    parts = []
    for repo in repos:
        folder = Path(repo).expanduser()
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder)
            if path.is_file() and not any(part.startswith(".") for part in relative.parts):
                parts.append(f"{repo}\0{relative.as_posix()}\0{source_checksum(path)}")
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogatepass")).hexdigest() if parts else None


def load_hf_dataset(repo: str, split: str = "test", revision: str | None = None, qrels_repo: str | None = None,
                    cache_dir: str | Path | None = None):
    """Load ``repo`` (e.g. ``BeIR/nfcorpus``) and its qrels repo (default ``<repo>-qrels``) for ``split``."""
    cache = str(cache_dir) if cache_dir is not None else None
    qrels_repo = qrels_repo or f"{repo.rstrip('/')}-qrels"
    local = _local_identity(repo, qrels_repo)
    if local is not None:  # a local folder: its own datasets cache per content (see the module docstring)
        import datasets

        cache = str(Path(cache or datasets.config.HF_DATASETS_CACHE) / "harness-local" / local[:16])
    corpus_ds = _load_or_explain("corpus", repo, "corpus", name="corpus", revision=revision, cache_dir=cache)
    queries_ds = _load_or_explain("queries", repo, "queries", name="queries", revision=revision, cache_dir=cache)
    try:
        qrels_ds = _load_qrels(qrels_repo, split, revision, cache)
    except HarnessError:
        raise
    except Exception as exc:
        raise HarnessError(f"cannot load the {split!r} qrels from {qrels_repo!r}: {_describe(exc)}"
                           + _offline_hint(qrels_repo)) from None
    json_columns = {part: _json_columns(ds.features, names) for part, ds, names in
                    (("corpus", corpus_ds, COLUMNS), ("queries", queries_ds, ("_id", "text")))}
    # (a Json column decoded: its ids and texts are no longer those an earlier build read, quotes and all, so the
    # caches keyed on the fingerprint and on ``files`` are not served that build's index or runs)
    decoded = {part: f" json-decoded:{','.join(names)}" if names else "" for part, names in json_columns.items()}
    corpus_table = _string_columns(corpus_ds.data.table, COLUMNS, f"{repo}:corpus", json_columns["corpus"])
    _check_ids(corpus_table.column("_id"), "document", f"{repo}:corpus")
    corpus = Corpus.from_table(corpus_table)
    corpus.fingerprint = hashlib.sha256(f"hf-datasets {corpus_ds._fingerprint}{' ' + local if local else ''}"
                                        f"{decoded['corpus']}".encode()).hexdigest()
    query_table = _string_columns(queries_ds.data.table, ("_id", "text"), f"{repo}:queries", json_columns["queries"])
    _check_ids(query_table.column("_id"), "query", f"{repo}:queries")
    queries = Queries(query_table.column("_id").to_pylist(), query_table.column("text").fill_null("").to_pylist())
    qrels = _qrels_from_table(qrels_ds.data.table, f"{qrels_repo}:{split}")
    # ``datasets``' fingerprint names a hub repo's revision but a local folder by its README alone: the
    # folders' digest goes with it, so that a pipeline stage or bench cell keyed on ``files`` is not reused
    # for other content under the same path
    files = {f"hf:{repo}/corpus": corpus_ds._fingerprint + decoded["corpus"],
             f"hf:{repo}/queries": queries_ds._fingerprint + decoded["queries"],
             f"hf:{qrels_repo}/{split}": qrels_ds._fingerprint}
    if local is not None:
        files = {key: f"{value} local {local}" for key, value in files.items()}
    name = Path(repo.rstrip("/")).name
    return assemble(name, split, corpus, queries, qrels, files)

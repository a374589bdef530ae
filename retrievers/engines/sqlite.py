"""The ``sqlite`` retriever: SQLite's FTS5 full-text index, from Python's own ``sqlite3``.

    harness run --dataset scifact --retriever sqlite
    harness run --dataset scifact --retriever sqlite --param tokenizer=trigram
    harness run --dataset scifact --retriever sqlite --param columns=title,text --param title_weight=2

Index: one FTS5 table in a database file, rowid = the rank of the document id in string order (so
``ORDER BY score, rowid DESC`` is the evaluator's tie rule inside the engine). ``columns``:

* ``contents`` (default): one column holding title + " " + text, the document text BM25 indexes;
* ``title,text``: two columns, scored by ``bm25(docs, title_weight, text_weight)``: FTS5 weighs a
  term's count in each column by the column's weight and sums them (one weighted frequency), and
  normalises by the whole row's length (title + text tokens), a BM25F-like score.

The database is cached under ``<cache root>/sqlite/<key>/`` (key: sha256 of the corpus, as the
BM25 cache hashes it, and the settings, SQLite's version included), built in a temporary sibling
folder and renamed into place when complete; ``manifest.json`` holds the file's size and sha256,
checked on every load; a damaged entry is rebuilt. A miss is built under the entry's build lock
(``<root>/.locks/<key>.lock``, harness.atomic.build_lock): a concurrent run missing the same entry
waits for it (a warning says so) and loads it. A cache that cannot be written (read-only) is
logged and the database built in a temporary folder, as with ``cache=false``.

Search: each query becomes an FTS5 query of its tokens (runs of the characters the table's tokenizer
keeps in tokens: letters and digits, each non-ASCII character of the queries classified by SQLite's
own tokenizer, once), each one double-quoted (a quote inside is doubled) and joined by ``OR``, so
FTS5 operators in a query (``NEAR``, ``AND``, ``*``, ``-``, ``^``, ``:``, parentheses, quotes) are
plain words or separators, never syntax; stopwords (Lucene's English set by default) are dropped,
and a query left without tokens returns nothing. Score = ``-bm25(...)`` (FTS5's BM25, k1 = 1.2,
b = 0.75, fixed by SQLite) rounded to float32, as the evaluator compares scores; the top ``k`` are
cut in that order (the engine is asked for a few more rows than ``k`` so that float32 ties at the
cut are settled by document id, as the evaluator does).
Queries run in batches on ``n_threads`` threads, each with its own read-only connection.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import shutil
import sqlite3
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from harness.atomic import build_lock, remove_abandoned, waited_holder, writer_tag
from harness.checksums import sha256
from harness.datasets.corpus import Corpus, Queries
from harness.errors import HarnessError
from harness.plugin_code import entry_code
from harness.retriever import flag
from harness.run import Run
from retrievers.base import Retriever
from retrievers.bm25.analyzer import LUCENE_ENGLISH_STOPWORDS
from retrievers.engines.common import default_threads, hits_run, in_batches, index_key

FORMAT_VERSION = 1
TOKENIZERS = ("porter unicode61", "unicode61", "trigram", "porter ascii", "ascii")
COLUMNS = {"contents": ("contents",), "title,text": ("title", "text")}
DB_FILE = "index.sqlite3"
log = logging.getLogger(__name__)
# Rows asked for beyond k: enough to settle float32 ties at the cut in one go almost always.
MARGIN = 16
LIMIT_MAX = 2**63 - 1  # SQLite's largest integer: a LIMIT beyond it is an OverflowError (a depth of 2^63 - 1)
# Token characters: letters and digits, Python's \w without the underscore; exact for ASCII (every
# tokenizer here), corrected per non-ASCII character by asking the tokenizer (_token_pattern).
_TOKEN = re.compile(r"[^\W_]+")


class CacheCorrupt(Exception):
    """A cached database does not match its manifest."""


def fts5_query(text: str, stopwords: frozenset[str] = frozenset(), min_chars: int = 1,
               token: re.Pattern = _TOKEN) -> str:
    """The FTS5 query for ``text``: its tokens (matches of ``token``, by default runs of letters and
    digits, at least ``min_chars`` long, not in ``stopwords`` case-insensitively), each double-quoted,
    joined by ``OR``; "" when no token is left. Quoting makes every token an FTS5 string: operators
    are never parsed from it."""
    tokens = (t for t in token.findall(text) if len(t) >= min_chars and t.lower() not in stopwords)
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in tokens)


class SQLiteRetriever(Retriever):
    """FTS5 BM25 over title + text.

    ``tokenizer``: ``porter unicode61`` (default), ``unicode61``, ``trigram``, ``porter ascii``,
    ``ascii``. ``columns``: ``contents`` (default) or ``title,text`` (then ``title_weight`` and
    ``text_weight``, default 1, weigh the columns). ``stopwords``: ``lucene`` (default) or None,
    dropped from queries. Operation (not part of :meth:`params`): ``cache`` / ``cache_dir``,
    ``n_threads``, ``batch_size``.
    """

    name = "sqlite"
    search_batch_size = None  # one search() call: its threads share the queries, stats() describe the call

    def __init__(self, tokenizer: str = "porter unicode61", columns: str = "contents", title_weight: float = 1.0,
                 text_weight: float = 1.0, stopwords: str | None = "lucene", cache: bool = True,
                 cache_dir: str | os.PathLike | None = None, n_threads: int | None = None, batch_size: int = 64):
        if tokenizer not in TOKENIZERS:
            raise ValueError(f"unknown FTS5 tokenizer {tokenizer!r}; choose one of {', '.join(TOKENIZERS)}")
        if columns not in COLUMNS:
            raise ValueError(f"columns must be one of {', '.join(COLUMNS)}, got {columns!r}")
        weights = (float(title_weight), float(text_weight))
        if not all(w >= 0 and np.isfinite(w) for w in weights):
            raise ValueError(f"column weights must be finite and >= 0, got {weights}")
        if columns == "contents" and weights != (1.0, 1.0):
            raise ValueError("title_weight and text_weight need columns=title,text (two columns to weigh)")
        if stopwords not in ("lucene", None, "none"):
            raise ValueError(f"stopwords must be 'lucene' or none (null in a config: no stopword list), "
                             f"got {stopwords!r}")
        self.tokenizer, self.columns = tokenizer, columns
        self.weights = weights if columns == "title,text" else (1.0,)
        self.stopwords = LUCENE_ENGLISH_STOPWORDS if stopwords == "lucene" else frozenset()
        self._code_key, self.use_cache = entry_code(type(self), flag("cache", cache))  # (see DenseRetriever)
        self.cache_dir = cache_dir
        self.n_threads = default_threads() if n_threads is None else int(n_threads)
        self.batch_size = int(batch_size)
        if self.n_threads < 1 or self.batch_size < 1:
            raise ValueError("n_threads and batch_size must be >= 1")
        self._path: Path | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._local = threading.local()
        self._stats: dict = {}
        self._token_char: dict[str, bool] = {}  # non-ASCII character -> the tokenizer keeps it in tokens

    # ----------------------------------------------------------------- description
    def settings(self) -> dict:
        """What the stored database depends on."""
        return {"format": FORMAT_VERSION, "sqlite_version": sqlite3.sqlite_version, "tokenizer": self.tokenizer,
                "columns": self.columns, **self._code_key}

    def params(self) -> dict:
        out = {"engine": "sqlite-fts5", "sqlite_version": sqlite3.sqlite_version, "tokenizer": self.tokenizer,
               "columns": self.columns, "ranking": "bm25 (k1=1.2, b=0.75)",
               "stopwords": "lucene" if self.stopwords else "none"}
        if self.columns == "title,text":
            out["title_weight"], out["text_weight"] = self.weights
        return out

    def stats(self) -> dict:
        return dict(self._stats)

    # ----------------------------------------------------------------- index
    def index(self, corpus: Corpus) -> None:
        self._ids = corpus.id_array
        self._by_rowid = np.argsort(self._ids, kind="stable")  # rowid r holds document _by_rowid[r]
        self._local = threading.local()
        started = time.perf_counter()
        if not self.use_cache:
            self._tmp = temporary_folder()
            self._path = Path(self._tmp.name) / DB_FILE
            self._build(corpus, self._path)
            status = "off"
        else:
            root = _cache_root(self.cache_dir).absolute()  # (a file: URI at search time needs it absolute)
            key = index_key(corpus, self.settings())
            status = "hit"
            try:
                self._path = _load(root, key, len(corpus))
            except CacheCorrupt:  # (discarded and rebuilt under the build lock, once looked at again there)
                self._path = None
            if self._path is None:
                # A miss is built under the entry's build lock (<root>/.locks/<key>.lock): a second process
                # missing the same entry meanwhile waits for the first, then loads what it wrote (a hit),
                # instead of building the whole database beside it; where no lock can be taken (a read-only
                # cache, a file system without locks) it goes ahead unlocked, as before.
                release = build_lock(root / ".locks" / f"{key}.lock", on_wait=lambda: log.warning(
                    "%s is building the SQLite index %s; waiting for it", waited_holder(), root / key))
                try:
                    self._path, status = self._load_or_build(corpus, root, key)
                finally:
                    release()
        self._stats = {"engine": "sqlite-fts5", "sqlite_version": sqlite3.sqlite_version, "cache": status,
                       "index_path": str(self._path), "index_bytes": self._path.stat().st_size,
                       "index_s": round(time.perf_counter() - started, 6), "n_docs": len(corpus)}

    def _load_or_build(self, corpus: Corpus, root: Path, key: str) -> tuple[Path, str]:
        """(the database of entry ``key``, cache status): the entry when it is there now (another
        process built it), else built into it (a damaged entry discarded first); a cache that cannot
        be written (read-only, or a cache root under a file) is logged and the database built in a
        temporary folder, as BM25, dense and sparse go on without theirs. Under the entry's build
        lock (:meth:`index`)."""
        try:
            path = _load(root, key, len(corpus))
        except CacheCorrupt as exc:
            shutil.rmtree(root / key, ignore_errors=True)
            path, status = None, f"rebuilt ({exc})"
        else:
            status = "built"
        if path is not None:
            return path, "hit"
        try:
            return self._save(corpus, root, key), status
        except OSError as exc:
            log.warning("could not write the SQLite index cache under %s: %s; building the index "
                        "without it", root, exc.strerror or exc)
            self._tmp = temporary_folder()
            path = Path(self._tmp.name) / DB_FILE
            self._build(corpus, path)
            return path, f"{status}, not cached ({exc.strerror or exc})"

    def _build(self, corpus: Corpus, path: Path) -> None:
        columns = COLUMNS[self.columns]
        rowids = np.empty(len(self._by_rowid), dtype=np.int64)
        rowids[self._by_rowid] = np.arange(len(rowids))
        if self.columns == "contents":
            rows = zip(rowids.tolist(), itertools.chain.from_iterable(corpus.iter_contents()))
        else:
            rows = zip(rowids.tolist(), corpus.titles, corpus.texts)
        try:
            con = sqlite3.connect(path)
            try:
                con.execute("PRAGMA journal_mode=OFF")
                con.execute("PRAGMA synchronous=OFF")
                # Only names from COLUMNS and TOKENIZERS (checked in __init__) reach this DDL.
                con.execute(f"CREATE VIRTUAL TABLE docs USING fts5({', '.join(columns)}, tokenize='{self.tokenizer}')")
                con.executemany(f"INSERT INTO docs(rowid, {', '.join(columns)}) VALUES (?{', ?' * len(columns)})",
                                rows)
                con.execute("INSERT INTO docs(docs) VALUES ('optimize')")
                con.commit()
            finally:
                con.close()
        except sqlite3.Error as exc:  # (a full disk is "database or disk is full" or "disk I/O error" here)
            raise HarnessError(f"SQLite could not build the FTS5 index {path}: {exc}") from None

    def _save(self, corpus: Corpus, root: Path, key: str) -> Path:
        """Build the database in a temporary folder beside ``root/key`` (``.<key>.<pid>-<host>.<random>.tmp``)
        and rename it into place; the folders of this key's killed builds are removed first
        (harness.atomic.remove_abandoned: each holds a whole database)."""
        root.mkdir(parents=True, exist_ok=True)
        remove_abandoned(root, key)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key}.{writer_tag()}.", suffix=".tmp", dir=root))
        try:
            self._build(corpus, tmp / DB_FILE)
            with open(tmp / DB_FILE, "rb+") as handle:
                os.fsync(handle.fileno())
            manifest = {"format": FORMAT_VERSION, "key": key, "settings": self.settings(), "n_docs": len(corpus),
                        "bytes": (tmp / DB_FILE).stat().st_size, "sha256": sha256(tmp / DB_FILE)}
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True), encoding="utf-8")
            try:
                os.rename(tmp, root / key)
            except OSError:
                if not (root / key).is_dir():
                    raise
                shutil.rmtree(tmp, ignore_errors=True)  # a concurrent build finished the same entry first
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return root / key / DB_FILE

    # ----------------------------------------------------------------- search
    def _connection(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            con = sqlite3.connect(self._path.as_uri() + "?mode=ro", uri=True, check_same_thread=False)
            self._local.con = con
        return con

    def search(self, queries: Queries, k: int) -> Run:
        if self._path is None:
            raise RuntimeError("index() must be called before search()")
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k must be an integer >= 1, got {k!r}")
        min_chars = 3 if self.tokenizer == "trigram" else 1  # trigram matches nothing shorter
        texts = list(queries.texts)
        token = self._token_pattern(texts)
        weights = ", ?" * len(self.weights)
        sql = (f"SELECT rowid, bm25(docs{weights}) AS s FROM docs WHERE docs MATCH ? "
               "ORDER BY s, rowid DESC LIMIT ?")

        def batch(start: int, stop: int) -> list[tuple[np.ndarray, np.ndarray]]:
            try:
                con = self._connection()
                return [self._top_k(con, sql, fts5_query(texts[i], self.stopwords, min_chars, token), k)
                        for i in range(start, stop)]
            except sqlite3.Error as exc:
                raise HarnessError(f"SQLite FTS5 search failed on {self._path}: {exc}") from None

        hits = [h for part in in_batches(batch, len(texts), self.batch_size, self.n_threads) for h in part]
        lengths = np.array([len(rowids) for rowids, _ in hits], dtype=np.int64)
        rowids = np.concatenate([r for r, _ in hits]) if hits else np.empty(0, dtype=np.int64)
        scores = np.concatenate([s for _, s in hits]) if hits else np.empty(0)
        self._stats["queries_without_tokens"] = sum(not fts5_query(t, self.stopwords, min_chars, token)
                                                    for t in texts)
        return hits_run(queries.ids, lengths, self._by_rowid[rowids], scores, self._ids, None)

    def _token_pattern(self, texts: list[str]) -> re.Pattern:
        """The tokens of ``texts`` as the table's tokenizer splits them: :data:`_TOKEN`, corrected for
        the non-ASCII characters of ``texts`` that the tokenizer classifies otherwise (unicode61 keeps
        combining diacritics, private-use characters and code points its Unicode 6.1 tables lack in
        tokens; ascii keeps every non-ASCII character), each asked of SQLite once. A character split
        on where the tokenizer keeps it lost the token ("nai\\u0308ve" was "nai" OR "ve"); one kept
        where it splits made a phrase of the quoted token. trigram splits nothing: :data:`_TOKEN`."""
        if self.tokenizer == "trigram":
            return _TOKEN
        chars = {c for c in set("".join(texts)) if c > "\x7f" and not "\ud800" <= c <= "\udfff"}
        unknown = sorted(chars - self._token_char.keys())
        if unknown:
            self._token_char.update(fts5_token_chars(self.tokenizer, unknown))
        extra = "".join(re.escape(c) for c in sorted(chars) if self._token_char[c] and not _TOKEN.match(c))
        split = "".join(re.escape(c) for c in sorted(chars) if not self._token_char[c] and _TOKEN.match(c))
        if not extra and not split:
            return _TOKEN
        return re.compile(f"(?:[^\\W_{split}]{f'|[{extra}]' if extra else ''})+")

    def _top_k(self, con: sqlite3.Connection, sql: str, match: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(rowids, float32 scores) of the top ``k`` matches of ``match``: score descending, ties by
        rowid (= document id) descending, with scores compared as float32."""
        if not match:
            return np.empty(0, dtype=np.int64), np.empty(0)
        limit = min(k + MARGIN, LIMIT_MAX)
        while True:
            rows = con.execute(sql, (*self.weights, match, limit)).fetchall()
            rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            scores = -np.fromiter((r[1] for r in rows), dtype=np.float64, count=len(rows)).astype(np.float32)
            # Rows beyond those fetched score no higher than the last one: when its float32 score is
            # below the k-th's, none of them can tie into the top k.
            if len(rows) < limit or scores[-1] < scores[k - 1]:
                break
            limit = min(limit * 4, LIMIT_MAX)
        order = np.lexsort((-rowids, -scores))[:k]
        return rowids[order], scores[order].astype(np.float64)


def fts5_token_chars(tokenizer: str, chars: list[str]) -> dict[str, bool]:
    """Whether FTS5's ``tokenizer`` keeps each of ``chars`` in a token: "x" + char + "x" is one token
    (kept) or two (a separator), as an in-memory table of that tokenizer counts them."""
    con = sqlite3.connect(":memory:")
    try:
        con.execute(f"CREATE VIRTUAL TABLE t USING fts5(c, tokenize='{tokenizer}')")  # (a name from TOKENIZERS)
        con.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        con.executemany("INSERT INTO t(rowid, c) VALUES (?, ?)", ((i, f"x{c}x") for i, c in enumerate(chars)))
        single = {doc for doc, n in con.execute("SELECT doc, count(*) FROM v GROUP BY doc") if n == 1}
    finally:
        con.close()
    return {c: i in single for i, c in enumerate(chars)}


TEMPORARY = "harness-sqlite"  # the name in an uncached database's folder (cache=false, or a cache not writable)


def temporary_folder() -> tempfile.TemporaryDirectory:
    """A folder for a database that is not cached, in the system's temporary folder, named as
    :func:`harness.atomic.temporary_path` names its files (``.harness-sqlite.<pid>-<host>.<random>.tmp``),
    the abandoned ones of which (a run killed by SIGKILL, which cannot remove its own: a whole
    database each) are removed first (:func:`harness.atomic.remove_abandoned`); a running process's
    is kept."""
    folder = Path(tempfile.gettempdir())
    remove_abandoned(folder, TEMPORARY)
    return tempfile.TemporaryDirectory(prefix=f".{TEMPORARY}.{writer_tag()}.", suffix=".tmp", dir=folder)


def _cache_root(cache_dir: str | os.PathLike | None) -> Path:
    from retrievers.bm25.cache import cache_root

    return cache_root(cache_dir) / "sqlite"


def _load(root: Path, key: str, n_docs: int) -> Path | None:
    """The cached database for ``key``; None when absent; :class:`CacheCorrupt` when damaged."""
    folder = root / key
    if not folder.is_dir():
        return None
    path = folder / DB_FILE
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        if manifest["format"] != FORMAT_VERSION or manifest["key"] != key or manifest["n_docs"] != n_docs:
            raise CacheCorrupt("manifest does not match")
        if path.stat().st_size != manifest["bytes"] or sha256(path) != manifest["sha256"]:
            raise CacheCorrupt(f"{DB_FILE} does not match its checksum")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CacheCorrupt(f"unreadable entry: {exc}") from None
    return path

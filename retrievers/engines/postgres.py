"""The ``postgres`` retriever: PostgreSQL full-text search through psycopg 3.

    harness run --dataset scifact --retriever postgres --param dsn="host=/run/postgresql dbname=bench"
    harness run --dataset scifact --retriever postgres --param dsn=... --param rank=ts_rank_cd --param normalization=1
    harness run --dataset scifact --retriever postgres --param dsn=... --param table=public.articles \\
        --param id_column=doc_id --param vector_column=search_vector

Index (no ``table``): the corpus is loaded with ``COPY`` into ``harness_fts_<key>`` (``id text``
primary key, ``contents`` = title + " " + text as BM25 indexes it, ``tsv tsvector`` generated as
``to_tsvector(config, contents)``) with a GIN index on ``tsv``, all in one transaction (the table
exists complete or not at all), under an advisory lock (concurrent runs build it once). ``key``
hashes the corpus (as the BM25 cache does), ``config`` and its definition on the server (see
``_config_definition``), so a later run reuses the table; one whose row count is not the corpus's is
rebuilt; ``cache=false`` always rebuilds. With ``table``, an existing table is searched as it is:
``id_column`` (any type, read as text) and ``vector_column`` (a ``tsvector``); documents it returns
that the corpus lacks are counted in the stats.

Search: ``parser`` ``websearch`` (``websearch_to_tsquery``, default) or ``plain``
(``plainto_tsquery``) parses each query with ``config`` (default ``english``). Both AND every term;
``operator=or`` (default) turns the parsed query's ``&`` into ``|`` so that a document matching any
term is ranked (bag of words, as BM25; a websearch ``-word`` then reads "or lacks word"), while
``operator=and`` keeps PostgreSQL's all-terms semantics. Ranking: ``ts_rank`` (default) or
``ts_rank_cd`` with ``normalization`` (the integer bit mask of PostgreSQL's documentation, default
0), scores are PostgreSQL's float4; ties by document id descending in byte order (``COLLATE "C"``),
the evaluator's rule, inside the engine (``ORDER BY ... LIMIT k``). Queries go in batches of
``batch_size`` (one statement each: ``unnest`` of the texts, a ``LATERAL`` top-k per query) over a
pool of ``connections`` connections, one per worker thread.

Connecting: libpq's ``connect_timeout`` is :data:`CONNECT_TIMEOUT_S` (per address tried) unless the
dsn or ``PGCONNECT_TIMEOUT`` sets one (libpq waits without end); a URI dsn that libpq misreads (a
password's raw '@' or '/' in the host, port or database name) is refused, one that reads two ways is
accepted and its failed connection not shown (``_uri_reading``).

User values never become SQL text by concatenation: query texts, the configuration and numbers are
bound parameters; table and column names are quoted identifiers (``psycopg.sql.Identifier``); the
function names come from fixed choices.
"""

from __future__ import annotations

import itertools
import os
import queue
import re
import time

import numpy as np

from harness.datasets.corpus import Corpus, Queries
from harness.errors import HarnessError
from harness.plugin_code import entry_code
from harness.secrets import SECRET_PARAMETERS  # never recorded (params) nor shown (errors)
from harness.retriever import flag
from harness.run import Run
from retrievers.base import Retriever
from retrievers.engines.common import hits_run, in_batches, index_key

FORMAT_VERSION = 1
RANKS = ("ts_rank", "ts_rank_cd")
PARSERS = {"websearch": "websearch_to_tsquery", "plain": "plainto_tsquery"}
OPERATORS = ("or", "and")
INSTALL_HINT = "pip install 'retrieval-harness[postgres]'"
CONNECT_TIMEOUT_S = 10  # libpq's connect_timeout unless the dsn (or PGCONNECT_TIMEOUT) sets one: per address tried


def _psycopg():
    try:
        import psycopg
    except ImportError as exc:
        raise HarnessError(f"the postgres retriever needs psycopg 3, which is not installed ({INSTALL_HINT}): {exc}") \
            from None
    return psycopg


def _first_line(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _uri_reading(dsn: str) -> str | None:
    """How libpq reads the URI ``dsn`` (``postgresql://`` or ``postgres://``; None for a key=value
    string): ``"misread"`` when part of its user info (a password's tail, say) or of its query
    evidently lands in the host, port or database name, ``"ambiguous"`` when the string reads two ways,
    None when it reads as written.

    libpq (fe-connect.c ``conninfo_uri_parse_options``) takes user info only when an '@' comes before
    any '/', and ends it at that first '@'; the host list runs to the next '/' or '?', the database
    name to the next '?'. So a raw '@' in a password puts its tail in the host list
    (``postgresql://u:p@ss@h/db``: host "ss@h"), a raw '/' puts the user in the host, the password's
    head in the port and the rest in the database name (``postgresql://u:pa/ss@h/db``: host "u", port
    "pa", dbname "ss@h/db"), and an '@' in a query with no '/' before it ends a "user info" there
    (``postgresql://h?password=s@x&y=1``: host "x&y=1"). Misread: a host or port holding '@', '=' or
    '&' (no host name or port does), or a port that is not a number while the database name holds
    '@' (the head of a password with a '/'). Ambiguous: a database name holding '@'
    (``postgresql://h:5432/my@db`` is database "my@db", as RFC 3986 and libpq read it, but the same
    string is how ``postgresql://u:5432/pw@h``, a password "5432/pw" not percent-encoded, reads), or
    user info holding '?' (a password's '?', or a query's '@'): accepted, and a failed connection's
    line does not show libpq's reading (:meth:`PostgresRetriever._connect`); a password in
    ``?password=`` overrides the user info's, as libpq takes it, and is no misreading."""
    scheme, sep, rest = dsn.partition("://")
    if not sep or scheme not in ("postgresql", "postgres"):  # (libpq's test: the exact prefix)
        return None
    first = re.search("[@/]", rest)
    userinfo = ""
    if first is not None and first[0] == "@":
        userinfo, rest = rest[:first.start()], rest[first.end():]
    netloc = re.match(r"[^/?]*", rest)[0]
    path = rest[len(netloc):].split("?", 1)[0]  # "/dbname" or ""
    if re.search("[@=&]", netloc):
        return "misread"
    ports = [piece.rpartition("]")[2].partition(":") for piece in netloc.split(",")]
    if "@" in path and any(colon and not port.isdigit() for _, colon, port in ports):
        return "misread"
    return "ambiguous" if "@" in path or "?" in userinfo else None


def _masked(text: str, conninfo: dict) -> str:
    """``text`` with every value of the dsn's host, hostaddr, port, user and database name, as
    libpq read them (each host of a list), replaced by ``***``, where it stands as a word."""
    values = {v for key in ("host", "hostaddr", "port", "user", "dbname")
              for v in str(conninfo.get(key) or "").split(",") if v}
    for value in sorted(values, key=len, reverse=True):
        text = re.sub(r"(?<![\w.@%-])" + re.escape(value) + r"(?![\w.@%-])", "***", text)
    return text


def _text(text: str) -> str:
    """``text`` as PostgreSQL can hold it: a NUL character (which text cannot store) becomes a space, a
    separator, as any tokenizer reads it."""
    return text.replace("\x00", " ")


class PostgresRetriever(Retriever):
    """PostgreSQL full-text search (``tsvector`` / GIN / ``ts_rank``) over title + text.

    ``dsn``: libpq connection string or URI ("" = libpq's environment: PGHOST, PGDATABASE, ...).
    ``table`` (None: a table the retriever loads), ``id_column``, ``vector_column``; ``config``
    (``english``); ``rank`` (``ts_rank`` or ``ts_rank_cd``), ``normalization`` (0-63); ``parser``
    (``websearch`` or ``plain``); ``operator`` (``or`` or ``and``). Operation (not part of
    :meth:`params`): ``cache`` (reuse a loaded table), ``connections``, ``batch_size``.
    """

    name = "postgres"
    search_batch_size = None  # one search() call: its threads share the queries, stats() describe the call

    def __init__(self, dsn: str = "", table: str | None = None, id_column: str = "id", vector_column: str = "tsv",
                 config: str = "english", rank: str = "ts_rank", normalization: int = 0, parser: str = "websearch",
                 operator: str = "or", cache: bool = True, connections: int = 2, batch_size: int = 64):
        self._pg = _psycopg()
        if rank not in RANKS:
            raise ValueError(f"rank must be one of {', '.join(RANKS)}, got {rank!r}")
        if parser not in PARSERS:
            raise ValueError(f"parser must be one of {', '.join(PARSERS)}, got {parser!r}")
        if operator not in OPERATORS:
            raise ValueError(f"operator must be one of {', '.join(OPERATORS)}, got {operator!r}")
        if isinstance(normalization, bool) or not isinstance(normalization, int) or not 0 <= normalization <= 63:
            raise ValueError(f"normalization must be an integer bit mask 0-63, got {normalization!r}")
        if table is not None and not (isinstance(table, str) and all(table.split("."))):
            raise ValueError(f"table must be a name or schema.name, got {table!r}")
        try:
            conninfo = self._pg.conninfo.conninfo_to_dict(str(dsn))
        except self._pg.ProgrammingError as exc:  # libpq names the fragment it could not read: in a dsn
            # with a password (or a URI's user info), that may be (part of) it ('invalid percent-encoded
            # token: "p%zz..."'): not shown
            reason = _first_line(exc)
            if re.search(r"password|@", str(dsn)):
                reason = re.sub(r'"[^"]*"', lambda m: m[0] if m[0] == '"="' else '"***"', reason)
            raise ValueError(f"bad dsn: {reason}") from None
        reading = _uri_reading(str(dsn))
        if reading == "misread":
            raise ValueError("bad dsn: libpq reads this URI otherwise than written (its user info ends at the first "
                             "'@' and at a '/'): percent-encode '@' as %40 and '/' as %2F in the user name, "
                             "password and database name (not shown: the password is part of it)")
        self.dsn, self._conninfo, self._ambiguous = str(dsn), conninfo, reading == "ambiguous"
        # libpq waits for an answer without end when connect_timeout is not set (psycopg >= 3.2: 130 s per
        # address), so an address that accepts and never answers held `harness run` that long
        self._timeout = {} if conninfo.get("connect_timeout") or os.environ.get("PGCONNECT_TIMEOUT") else \
            {"connect_timeout": CONNECT_TIMEOUT_S}
        self.dsn_shown = self._pg.conninfo.make_conninfo(**{k: v for k, v in conninfo.items() if k not in SECRET_PARAMETERS})
        self.table, self.id_column, self.vector_column = table, str(id_column), str(vector_column)
        self.config, self.rank, self.normalization = str(config), rank, normalization
        self.parser, self.operator = parser, operator
        self._code_key, self.use_cache = entry_code(type(self), flag("cache", cache))  # (see DenseRetriever)
        self.connections, self.batch_size = int(connections), int(batch_size)
        if self.connections < 1 or self.batch_size < 1:
            raise ValueError("connections and batch_size must be >= 1")
        self._relation = None  # sql.Identifier of the table searched
        self._stats: dict = {}

    # ----------------------------------------------------------------- description
    def params(self) -> dict:
        out = {"engine": "postgresql", "dsn": self.dsn_shown, "config": self.config, "rank": self.rank,
               "normalization": self.normalization, "parser": self.parser, "operator": self.operator}
        if self.table is None:
            out["table"] = "loaded by the retriever"
        else:
            out.update(table=self.table, id_column=self.id_column, vector_column=self.vector_column)
        return out

    def stats(self) -> dict:
        return dict(self._stats)

    def _connect(self):
        try:
            return self._pg.connect(self.dsn, autocommit=True, **self._timeout)
        except self._pg.Error as exc:
            if self._ambiguous:  # (libpq's reading may hold part of a password: not shown)
                raise HarnessError("cannot connect to PostgreSQL (a URI dsn whose database name holds a raw '@' or "
                                   "whose user info a raw '?' reads two ways, so libpq's reading is not shown: "
                                   "percent-encode '@' as %40, '/' as %2F and '?' as %3F to see it): "
                                   f"{_masked(_first_line(exc), self._conninfo)}") from None
            raise HarnessError(f"cannot connect to PostgreSQL ({self.dsn_shown or 'libpq defaults'}): "
                               f"{_first_line(exc)}") from None

    def _failed(self, doing: str, exc: Exception) -> HarnessError:
        """A failure of the server (a right missing, the server gone, a statement refused): one line."""
        return HarnessError(f"PostgreSQL ({self.dsn_shown or 'libpq defaults'}) failed {doing}: {_first_line(exc)}")

    # ----------------------------------------------------------------- index
    def index(self, corpus: Corpus) -> None:
        started = time.perf_counter()
        self._corpus_ids, self._id_index = corpus.id_array, getattr(corpus, "id_index", None)
        with self._connect() as con:
            try:
                con.execute("SELECT %s::regconfig", (self.config,))
            except self._pg.Error as exc:
                raise ValueError(f"unknown text search configuration {self.config!r}: {_first_line(exc)}") from None
            try:
                self._index(con, corpus, started)
            except self._pg.Error as exc:
                raise self._failed("to load the corpus" if self.table is None else f"to read table {self.table!r}",
                                   exc) from None

    def _index(self, con, corpus: Corpus, started: float) -> None:
        sql = self._pg.sql
        if self.table is None:
            settings = {"format": FORMAT_VERSION, "config": self.config, "definition": self._config_definition(con),
                        **self._code_key}
            name = "harness_fts_" + index_key(corpus, settings)[:24]
            self._relation, self._id_col, self._vec_col = (sql.Identifier(name), sql.Identifier("id"),
                                                           sql.Identifier("tsv"))
            status = self._load(con, corpus, name)
            table = name
        else:
            self._relation = sql.Identifier(*self.table.split("."))
            self._id_col, self._vec_col = sql.Identifier(self.id_column), sql.Identifier(self.vector_column)
            self._check_table(con)
            status, table = "existing table", self.table
        n_rows = con.execute(sql.SQL("SELECT count(*) FROM {}").format(self._relation)).fetchone()[0]
        size = con.execute("SELECT pg_total_relation_size(%s::regclass)",
                           (self._relation.as_string(con),)).fetchone()[0]
        self._stats = {"engine": "postgresql", "server_version": con.execute("SHOW server_version").fetchone()[0],
                       "psycopg_version": self._pg.__version__, "table": table, "cache": status,
                       "n_rows": n_rows, "n_docs": len(corpus), "table_bytes": size,
                       "index_s": round(time.perf_counter() - started, 6)}

    def _config_definition(self, con) -> list:
        """What ``to_tsvector(config, ...)`` depends on as the server defines it, which the loaded table's
        key holds (a table whose ``tsv`` another definition computed is stale): the server's major version
        (its parsers and stemmers), the configuration's parser, and each token type's dictionaries in
        order, with their templates and options (``ALTER TEXT SEARCH CONFIGURATION`` / ``DICTIONARY``).
        The files a dictionary reads (stopwords, synonyms) are not."""
        return list(con.execute(
            "SELECT current_setting('server_version_num')::int / 10000, p.prsname, array("
            " SELECT concat_ws(':', m.maptokentype, m.mapseqno, d.dictname, t.tmplname, d.dictinitoption)"
            " FROM pg_ts_config_map AS m JOIN pg_ts_dict AS d ON d.oid = m.mapdict"
            " JOIN pg_ts_template AS t ON t.oid = d.dicttemplate"
            " WHERE m.mapcfg = c.oid ORDER BY m.maptokentype, m.mapseqno) "
            "FROM pg_ts_config AS c JOIN pg_ts_parser AS p ON p.oid = c.cfgparser WHERE c.oid = %s::regconfig",
            (self.config,)).fetchone())

    def _load(self, con, corpus: Corpus, name: str) -> str:
        """Create and fill the table ``name`` unless a complete one is there; returns what happened."""
        sql = self._pg.sql
        table = sql.Identifier(name)
        with con.transaction():
            con.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (name,))
            status = "built"
            if con.execute("SELECT to_regclass(%s)", (table.as_string(con),)).fetchone()[0] is not None:
                n_rows = con.execute(sql.SQL("SELECT count(*) FROM {}").format(table)).fetchone()[0]
                if self.use_cache and n_rows == len(corpus):
                    return "hit"
                status = "rebuilt (cache=false)" if not self.use_cache else f"rebuilt ({n_rows} rows, not {len(corpus)})"
                con.execute(sql.SQL("DROP TABLE {}").format(table))
            con.execute(sql.SQL(
                "CREATE TABLE {} (id text PRIMARY KEY, contents text NOT NULL, "
                "tsv tsvector GENERATED ALWAYS AS (to_tsvector({}::regconfig, contents)) STORED)"
            ).format(table, sql.Literal(self.config)))
            with con.cursor().copy(sql.SQL("COPY {} (id, contents) FROM STDIN").format(table)) as copy:
                for doc_id, contents in zip(corpus.ids, itertools.chain.from_iterable(corpus.iter_contents())):
                    if "\x00" in doc_id:
                        raise HarnessError(f"document id {doc_id!r} holds a NUL character, which PostgreSQL text "
                                           f"cannot store")
                    copy.write_row((doc_id, _text(contents)))
            con.execute(sql.SQL("CREATE INDEX ON {} USING gin (tsv)").format(table))
            con.execute(sql.SQL("COMMENT ON TABLE {} IS {}").format(table, sql.Literal(
                f"retrieval-harness postgres retriever: corpus of {len(corpus)} documents, config {self.config}; "
                "safe to drop (rebuilt on the next run)")))
            con.execute(sql.SQL("ANALYZE {}").format(table))
        return status

    def _check_table(self, con) -> None:
        """The user's table exists, with the id column and a tsvector column."""
        if con.execute("SELECT to_regclass(%s)", (self._relation.as_string(con),)).fetchone()[0] is None:
            raise ValueError(f"table {self.table!r} not found")
        types = dict(con.execute(
            "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
            (self._relation.as_string(con),)).fetchall())
        if self.id_column not in types:
            raise ValueError(f"table {self.table!r} has no column {self.id_column!r} (id_column)")
        if types.get(self.vector_column) != "tsvector":
            raise ValueError(f"table {self.table!r} has no tsvector column {self.vector_column!r} (vector_column); "
                             f"its columns: {', '.join(f'{k} {v}' for k, v in types.items())}")

    # ----------------------------------------------------------------- search
    def _statement(self):
        sql = self._pg.sql
        tsquery = sql.SQL("{}(%(config)s::regconfig, u.text)").format(sql.SQL(PARSERS[self.parser]))
        if self.operator == "or":
            tsquery = sql.SQL("replace({}::text, ' & ', ' | ')::tsquery").format(tsquery)
        return sql.SQL(
            "SELECT u.ord, hit.id, hit.score "
            "FROM unnest(%(texts)s::text[]) WITH ORDINALITY AS u(text, ord) "
            "CROSS JOIN LATERAL (SELECT {tsquery} AS q) AS t "
            "CROSS JOIN LATERAL ("
            " SELECT d.{id}::text AS id, {rank}(d.{vec}, t.q, %(norm)s) AS score FROM {table} AS d"
            " WHERE d.{vec} @@ t.q ORDER BY score DESC, d.{id}::text COLLATE \"C\" DESC LIMIT %(k)s) AS hit "
            "ORDER BY u.ord, hit.score DESC, hit.id COLLATE \"C\" DESC"
        ).format(tsquery=tsquery, id=self._id_col, vec=self._vec_col, rank=sql.SQL(self.rank), table=self._relation)

    def search(self, queries: Queries, k: int) -> Run:
        if self._relation is None:
            raise RuntimeError("index() must be called before search()")
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k must be an integer >= 1, got {k!r}")
        statement, texts = self._statement(), [_text(t) for t in queries.texts]
        pool: queue.SimpleQueue = queue.SimpleQueue()
        opened = []
        n_workers = min(self.connections, max(1, -(-len(texts) // self.batch_size)))
        try:
            for _ in range(n_workers):
                opened.append(self._connect())
                pool.put(opened[-1])

            def batch(start: int, stop: int) -> tuple[np.ndarray, list[str], list[float]]:
                con = pool.get()
                try:
                    rows = con.execute(statement, {"texts": texts[start:stop], "config": self.config,
                                                   "norm": self.normalization, "k": k}).fetchall()
                except self._pg.Error as exc:
                    raise self._failed("to search", exc) from None
                finally:
                    pool.put(con)
                ords = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
                return np.bincount(ords - 1, minlength=stop - start), [r[1] for r in rows], [r[2] for r in rows]

            parts = in_batches(batch, len(texts), self.batch_size, n_workers)
        finally:
            for con in opened:
                con.close()
        lengths = np.concatenate([p[0] for p in parts]) if parts else np.empty(0, dtype=np.int64)
        ids = [d for p in parts for d in p[1]]
        # float4 values: psycopg reads the shortest decimal that rounds to each; back to the exact float4.
        scores = np.array([s for p in parts for s in p[2]], dtype=np.float32).astype(np.float64)
        return self._run(queries, lengths, ids, scores)

    def _run(self, queries: Queries, lengths: np.ndarray, ids: list[str], scores: np.ndarray) -> Run:
        """The Run over the corpus's ids; ids the corpus lacks (a user's table) are appended to the vocabulary."""
        if any(d is None for d in ids):  # (a user's table: its id column may hold NULL)
            raise HarnessError(f"table {self.table!r}: a row that matches a query has a NULL {self.id_column!r} "
                               f"(id_column): every row searched needs a document id")
        index = self._id_index if self._id_index is not None else {d: i for i, d in enumerate(self._corpus_ids)}
        codes = np.fromiter((index.get(d, -1) for d in ids), dtype=np.int64, count=len(ids))
        vocab = self._corpus_ids
        missing = codes < 0
        if missing.any():
            extra = list(dict.fromkeys(d for d, m in zip(ids, missing.tolist()) if m))
            position = {d: len(vocab) + i for i, d in enumerate(extra)}
            codes[missing] = [position[d] for d, m in zip(ids, missing.tolist()) if m]
            vocab = np.concatenate([vocab, np.array(extra, dtype=object)])
            index = None
        self._stats["returned_docs_not_in_corpus"] = int(len(vocab) - len(self._corpus_ids))
        if self.table is not None and len(codes):  # a user's id column need not be unique
            entry_query = np.repeat(np.arange(len(lengths)), lengths)
            pairs = np.stack([entry_query, codes], axis=1)
            first = np.unique(pairs, axis=0, return_index=True)[1]
            if len(first) < len(codes):
                again = int(np.setdiff1d(np.arange(len(codes)), first)[0])
                raise HarnessError(f"table {self.table!r}: document id {str(vocab[codes[again]])!r} is on more than one "
                                   f"row that matches query {queries.ids[entry_query[again]]!r}: its "
                                   f"{self.id_column!r} (id_column) must be unique, one row per document")
        return hits_run(queries.ids, lengths, codes, scores, vocab, index)

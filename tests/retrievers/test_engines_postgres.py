"""The ``postgres`` retriever against a real PostgreSQL: a throwaway cluster started for this module
(tests/retrievers/pg_cluster.py; skipped with the reason when the server binaries are absent)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from harness.datasets.corpus import Corpus, Queries
from harness.errors import HarnessError
from retrievers import create

from . import pg_cluster

psycopg = pytest.importorskip("psycopg", reason="the postgres retriever needs psycopg 3 (the 'postgres' extra)")

DOCS = {"d1": "apple apple banana", "d2": "banana cherry", "d3": "cherry date fig grape", "d4": "kiwi lemon",
        "d5": "mango", "d6": "cherry cherry cherry", "d7": "mango"}


@pytest.fixture(scope="module")
def dsn():
    yield from pg_cluster.start_cluster()


def corpus(docs: dict[str, str] = DOCS) -> Corpus:
    return Corpus(list(docs), [""] * len(docs), list(docs.values()))


def queries(*texts: str) -> Queries:
    return Queries([f"q{i}" for i in range(len(texts))], list(texts))


def engine_ranking(dsn: str, docs: dict[str, str], text: str, k: int, rank: str = "ts_rank") -> list[tuple[str, float]]:
    """The oracle: PostgreSQL's rank of each document computed one by one (no table, no index, no
    batching), then sorted in Python by the evaluator's rule (float32 score desc, id desc), top k."""
    with psycopg.connect(dsn) as con:
        scored = []
        for doc_id, body in docs.items():
            row = con.execute(f"SELECT {rank}(to_tsvector('english', %s), q), to_tsvector('english', %s) @@ q "
                              "FROM (SELECT replace(websearch_to_tsquery('english', %s)::text, ' & ', ' | ')::tsquery AS q) t",
                              (body, body, text)).fetchone()
            if row[1]:
                scored.append((doc_id, float(np.float32(row[0]))))
    return sorted(scored, key=lambda t: (t[1], t[0]), reverse=True)[:k]


def test_ranking_matches_the_engine_document_by_document(dsn):
    r = create("postgres", dsn=dsn, batch_size=2, connections=2)  # 3 queries: two batches on two connections
    r.index(corpus())
    texts = ("apple cherry", "mango", "cherry grape banana")
    run = r.search(queries(*texts), k=3)
    for i, text in enumerate(texts):
        assert list(run.to_dict()[f"q{i}"].items()) == engine_ranking(dsn, DOCS, text, 3)
    assert run.doc_ids(1) == ["d7", "d5"]  # same text, same score: document id descending


def test_ts_rank_cd_values(dsn):
    # ts_rank_cd (PostgreSQL's tsrank.c, calc_rank_cd): each cover of a one-term query adds the
    # weight of an unlabelled lexeme, D = 0.1, divided by 1: one occurrence 0.1, three 0.3.
    r = create("postgres", dsn=dsn, rank="ts_rank_cd")
    r.index(corpus())
    run = r.search(queries("cherry"), k=10)
    assert run.to_dict()["q0"] == {"d6": float(np.float32(0.3)), "d3": float(np.float32(0.1)),
                                   "d2": float(np.float32(0.1))}
    assert r.params()["rank"] == "ts_rank_cd"


def test_operator_and_keeps_postgres_semantics(dsn):
    r = create("postgres", dsn=dsn, operator="and", parser="plain")
    r.index(corpus())
    run = r.search(queries("banana cherry", "apple cherry"), k=10)
    assert run.doc_ids(0) == ["d2"] and run.doc_ids(1) == []


def test_hostile_queries_are_data(dsn):
    r = create("postgres", dsn=dsn)
    r.index(corpus())
    hostile = ["'; DROP TABLE harness; --", "apple' OR '1'='1", "cherry & !banana | (fig <-> grape):*",
               "\\' \\\\ \"\" \"apple", "", "the of and", "*** () -- :: & | !"]
    run = r.search(queries(*hostile), k=10)
    assert run.doc_ids(0) == [] and run.doc_ids(4) == [] and run.doc_ids(5) == [] and run.doc_ids(6) == []
    assert run.doc_ids(1)[0] == "d1"
    # websearch_to_tsquery reads & ! | ( ) <-> :* as punctuation: cherry banana fig grape, or-ed.
    assert set(run.doc_ids(2)) == {"d1", "d2", "d3", "d6"}
    assert r.search(queries("apple"), k=1).doc_ids(0) == ["d1"]  # the table is intact
    assert r.stats()["n_rows"] == len(DOCS)


def test_a_nul_character_in_a_query_or_a_document_is_a_separator(dsn):
    """PostgreSQL text cannot hold NUL (psycopg: DataError "PostgreSQL text fields cannot contain NUL
    (0x00) bytes"), which JSON allows ("\\u0000"): it was a traceback at search or load time. Read as
    a space, a separator as any tokenizer reads it: "apple\\0banana" ranks as "apple banana"."""
    docs = {**DOCS, "d8": "kiwi\x00papaya"}
    r = create("postgres", dsn=dsn, config="simple")
    r.index(corpus(docs))
    run = r.search(queries("apple\x00banana", "apple banana", "papaya"), k=10)
    assert run.to_dict()["q0"] == run.to_dict()["q1"] and run.doc_ids(0)[0] == "d1"
    assert run.doc_ids(2) == ["d8"]
    with pytest.raises(HarnessError, match=r"document id 'd\\x001' holds a NUL character"):
        create("postgres", dsn=dsn, config="simple", cache=False).index(Corpus(["d\x001"], [""], ["apple"]))


def test_or_ranking_matches_an_or_query_of_the_lexemes_built_independently(dsn):
    """Random small corpora (ties, empty documents, stopwords): the run equals ts_rank of each document
    against 'l1' | 'l2' | ... built from to_tsvector(query) (no websearch_to_tsquery, no replace),
    sorted in Python by float32 score desc, id desc (code point order), top k."""
    import random

    rng = random.Random(5)
    words = ["apple", "apples", "banana", "cherry", "the", "fig", "run", "running"]
    chars = ["a", "B", "z", "1", "\u00e9", "\u4e2d", "\U0001F600", "\uffff", "\U00010000"]
    with psycopg.connect(dsn, autocommit=True) as con:
        for trial in range(4):
            ids = list(dict.fromkeys("".join(rng.choice(chars) for _ in range(rng.randint(1, 3)))
                                     for _ in range(12)))
            docs = {d: " ".join(rng.choice(words) for _ in range(rng.randint(0, 5))) for d in ids}
            rank, k = ("ts_rank", "ts_rank_cd")[trial % 2], rng.randint(1, 6)
            r = create("postgres", dsn=dsn, rank=rank, batch_size=2)
            r.index(corpus(docs))
            texts = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 4))) for _ in range(5)]
            run = r.search(queries(*texts), k).to_dict()
            for i, text in enumerate(texts):
                q = con.execute("SELECT array_to_string(tsvector_to_array(to_tsvector('english', %s)), ' | ')",
                                (text,)).fetchone()[0]
                scored = [] if not q else [(d, float(np.float32(s))) for d, (s, m) in (
                    (d, con.execute(f"SELECT {rank}(to_tsvector('english', %s), %s::tsquery), "
                                    "to_tsvector('english', %s) @@ %s::tsquery", (body, q, body, q)).fetchone())
                    for d, body in docs.items()) if m]
                expected = sorted(scored, key=lambda t: (t[1], t[0]), reverse=True)[:k]
                assert list(run.get(f"q{i}", {}).items()) == expected


def test_loaded_table_is_reused_and_rebuilt_when_incomplete(dsn):
    first = create("postgres", dsn=dsn, config="simple")
    first.index(corpus())
    assert first.stats()["cache"] == "built" and first.stats()["server_version"]
    second = create("postgres", dsn=dsn, config="simple")
    second.index(corpus())
    assert second.stats()["cache"] == "hit" and second.stats()["table"] == first.stats()["table"]
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute(psycopg.sql.SQL("DELETE FROM {} WHERE id = 'd1'").format(psycopg.sql.Identifier(first.stats()["table"])))
    third = create("postgres", dsn=dsn, config="simple")
    third.index(corpus())
    assert third.stats()["cache"] == f"rebuilt ({len(DOCS) - 1} rows, not {len(DOCS)})"
    assert third.search(queries("apple"), k=3).doc_ids(0) == ["d1"]
    fourth = create("postgres", dsn=dsn, config="simple", cache=False)
    fourth.index(corpus())
    assert fourth.stats()["cache"] == "rebuilt (cache=false)"


def test_an_existing_table_with_quoted_names(dsn):
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute('CREATE SCHEMA IF NOT EXISTS "My Schema"')
        con.execute('DROP TABLE IF EXISTS "My Schema"."Articles"')
        con.execute('CREATE TABLE "My Schema"."Articles" ("Doc ID" integer, "search vec" tsvector)')
        con.execute('INSERT INTO "My Schema"."Articles" VALUES (1, to_tsvector(\'english\', \'mango mango\')), '
                    '(2, to_tsvector(\'english\', \'mango kiwi\')), (9, to_tsvector(\'english\', \'mango\'))')
    r = create("postgres", dsn=dsn, table="My Schema.Articles", id_column="Doc ID", vector_column="search vec")
    r.index(Corpus(["1", "2"], ["", ""], ["mango mango", "mango kiwi"]))
    run = r.search(queries("mango"), k=10)
    assert run.doc_ids(0) == ["1", "9", "2"]  # ts_rank: 2 occurrences, then 1 in a shorter vector
    assert r.stats()["returned_docs_not_in_corpus"] == 1 and r.stats()["cache"] == "existing table"
    with pytest.raises(ValueError, match="no tsvector column 'Doc ID'"):
        create("postgres", dsn=dsn, table="My Schema.Articles", id_column="Doc ID",
                 vector_column="Doc ID").index(corpus())
    with pytest.raises(ValueError, match="table 'nope' not found"):
        create("postgres", dsn=dsn, table="nope").index(corpus())


def test_bad_settings_and_connections_are_one_line_errors(dsn):
    with pytest.raises(ValueError, match="unknown text search configuration 'klingon'"):
        create("postgres", dsn=dsn, config="klingon").index(corpus())
    with pytest.raises(ValueError, match="rank must be one of"):
        create("postgres", rank="ts_rank); DROP TABLE x; --")
    with pytest.raises(HarnessError, match="cannot connect to PostgreSQL"):
        create("postgres", dsn="host=/nonexistent-socket-dir password=secret").index(corpus())
    assert "secret" not in json.dumps(create("postgres", dsn="host=h password=secret").params())


def test_missing_psycopg_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(HarnessError, match=r"retrieval-harness\[postgres\]"):
        create("postgres")


def test_cli_run(dsn, tmp_path):
    from tests.bench.bench_helpers import write_tiny

    folder = write_tiny(tmp_path / "tiny")
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "--dataset", str(folder), "--retriever", "postgres",
                           "--param", f"dsn={dsn}", "--k", "1,3", "--output-dir", str(tmp_path / "out"), "--quiet"],
                          capture_output=True, text=True, env=os.environ.copy())
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(next((tmp_path / "out").glob("*/postgres/metrics.json")).read_text())
    assert doc["retriever"]["params"]["engine"] == "postgresql" and doc["retriever"]["params"]["config"] == "english"
    assert doc["retriever_stats"]["server_version"].split()[0].count(".") >= 1
    # tiny (tests/bench/bench_helpers.py): q1 "banana cherry" -> d2 has both terms (grade 2); q2 "fig" -> d4.
    assert doc["metrics"]["P@1"] == 1.0


def test_the_cluster_fixture_skips_without_the_server(monkeypatch):
    monkeypatch.setattr(pg_cluster, "server_bindir", lambda: None)
    with pytest.raises(pytest.skip.Exception, match="needs the PostgreSQL server binaries"):
        next(pg_cluster.start_cluster())


# ----------------------------------------------------------------- found by the engines review
def test_a_failure_of_the_server_is_one_line(dsn):
    """psycopg.Error is neither a HarnessError nor a ValueError: a role without the right to create
    the table (PostgreSQL 15 grants no CREATE on schema public), a user's table it may not read, or
    a statement refused while searching was a traceback. Expected: one HarnessError line naming the
    server and the step, PostgreSQL's own message (exit 2 in the CLI)."""
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute("CREATE ROLE review_reader LOGIN")  # (the cluster is this module's own)
        con.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        con.execute("CREATE TABLE review_secret (id text, tsv tsvector)")
        con.execute("INSERT INTO review_secret VALUES ('d5', to_tsvector('english', 'mango'))")
    reader = dsn.replace("user=postgres", "user=review_reader")
    docs = {"r1": "review reader corpus", "r2": "kiwi"}  # (a corpus no other test loads: its table is absent)
    with pytest.raises(HarnessError, match=r"failed to load the corpus: permission denied for schema public"):
        create("postgres", dsn=reader).index(corpus(docs))
    with pytest.raises(HarnessError, match=r"failed to read table 'review_secret': permission denied for table"):
        create("postgres", dsn=reader, table="review_secret").index(corpus())
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute("GRANT SELECT ON review_secret TO review_reader")
    r = create("postgres", dsn=reader, table="review_secret")
    r.index(corpus())
    assert r.search(queries("mango"), k=1).doc_ids(0) == ["d5"]
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute("REVOKE SELECT ON review_secret FROM review_reader")
    with pytest.raises(HarnessError, match=r"failed to search: permission denied for table review_secret"):
        r.search(queries("mango"), k=1)


def test_a_null_id_in_a_users_table_is_one_line(dsn):
    """A matching row of a user's table whose id column is NULL reached the Run as None: TypeError
    "run document ids must be str", a traceback. Expected: a HarnessError naming the table and column."""
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute("DROP TABLE IF EXISTS review_nulls")
        con.execute("CREATE TABLE review_nulls (doc text, tsv tsvector)")
        con.execute("INSERT INTO review_nulls VALUES (NULL, to_tsvector('english', 'mango')), "
                    "('d5', to_tsvector('english', 'mango kiwi'))")
    r = create("postgres", dsn=dsn, table="review_nulls", id_column="doc")
    r.index(corpus())
    assert r.search(queries("kiwi"), k=5).doc_ids(0) == ["d5"]
    with pytest.raises(HarnessError, match=r"table 'review_nulls': a row that matches a query has a NULL 'doc'"):
        r.search(queries("mango"), k=5)


def test_an_id_on_two_rows_of_a_users_table_is_one_line_naming_the_table(dsn):
    """A user's id column that is not unique gave a run listing one document twice for a query, which
    trec_eval refuses ("duplicate docs"); it was refused by the generic search() check, whose line named
    neither the table nor the column. Expected: a HarnessError naming both, the id and the query."""
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute("DROP TABLE IF EXISTS review_repeats")
        con.execute("CREATE TABLE review_repeats (doc text, tsv tsvector)")
        con.execute("INSERT INTO review_repeats VALUES ('d7', to_tsvector('english', 'mango')), "
                    "('d5', to_tsvector('english', 'mango kiwi')), ('d7', to_tsvector('english', 'mango mango'))")
    r = create("postgres", dsn=dsn, table="review_repeats", id_column="doc")
    r.index(corpus())
    assert r.search(queries("kiwi"), k=5).doc_ids(0) == ["d5"]  # the repeated id matches no query: searched
    with pytest.raises(HarnessError, match=r"table 'review_repeats': document id 'd7' is on more than one row that "
                                           r"matches query 'q1': its 'doc' \(id_column\) must be unique"):
        r.search(queries("kiwi", "mango"), k=5)


# ----------------------------------------------------------------- found by the second engines review
def test_a_changed_text_search_configuration_loads_a_new_table(dsn):
    """The loaded table's key held the configuration's name only: after ALTER TEXT SEARCH CONFIGURATION
    (or a server upgrade, new stemmers) the table whose tsv the old definition computed was a "hit",
    and a query parsed with the new one missed: "running" (now mapped to the simple dictionary:
    'running') found nothing in a tsv holding 'run'. Expected, worked from the definitions: before,
    "running" -> 'run' matches d1; after, the fresh table holds 'running' for d1: d1 again, from a
    new table (cache "built"), as cache=false gives."""
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute("DROP TEXT SEARCH CONFIGURATION IF EXISTS review_cfg")
        con.execute("CREATE TEXT SEARCH CONFIGURATION review_cfg (COPY = english)")
    docs = {"d1": "running shoes", "d2": "the runner"}
    first = create("postgres", dsn=dsn, config="review_cfg")
    first.index(corpus(docs))
    assert first.search(queries("running"), k=5).doc_ids(0) == ["d1"]
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute("ALTER TEXT SEARCH CONFIGURATION review_cfg ALTER MAPPING FOR asciiword WITH simple")
    second = create("postgres", dsn=dsn, config="review_cfg")
    second.index(corpus(docs))
    assert second.stats()["cache"] == "built" and second.stats()["table"] != first.stats()["table"]
    assert second.search(queries("running"), k=5).doc_ids(0) == ["d1"]
    third = create("postgres", dsn=dsn, config="review_cfg")
    third.index(corpus(docs))
    assert third.stats()["cache"] == "hit" and third.stats()["table"] == second.stats()["table"]


def test_the_ssl_key_password_is_not_recorded():
    """libpq's sslpassword (the client key's passphrase) was kept in params()["dsn"], written to
    metrics.json, and in every error line; only "password" was removed. Expected: neither secret."""
    r = create("postgres", dsn="host=h dbname=d password=hunter2 sslpassword=s3cret sslmode=require")
    assert sorted(r.params()["dsn"].split()) == ["dbname=d", "host=h", "sslmode=require"]
    assert "s3cret" not in r.dsn_shown and "hunter2" not in r.dsn_shown
    uri = create("postgres", dsn="postgresql://me:hunter2@h/d?sslpassword=s3cret")
    assert "s3cret" not in json.dumps(uri.params()) and "hunter2" not in json.dumps(uri.params())

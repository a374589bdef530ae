"""A URI dsn whose password holds a raw '@' or '/' (a common mistake: percent-encoding is needed):
libpq ends a URI's user info at the first '@', and reads no user info past a '/', so the rest of the
password became the host, port or database name, which the retriever shows in its error line
(``cannot connect to PostgreSQL (user=u dbname=db host=ss@h): failed to resolve host 'ss@h'``) and
records in params() (metrics.json). docs/engines.md: the dsn is "recorded and shown without its
secrets". libpq's readings below are psycopg.conninfo.conninfo_to_dict's (libpq parses locally: no
server needed). Engines review (s16)."""

from __future__ import annotations

import pytest

from harness.secrets import without_secrets
from retrievers import create

psycopg = pytest.importorskip("psycopg", reason="the postgres retriever needs psycopg 3 (the 'postgres' extra)")

SECRET_PARTS = ("ss", "pa", "pw")


@pytest.mark.parametrize("dsn, libpq_reads", [
    # libpq: password "p", host "ss@h" (the password's tail)
    ("postgresql://u:p@ss@h/db", {"user": "u", "password": "p", "dbname": "db", "host": "ss@h"}),
    # libpq: no user info at all: host "u", port "pa", dbname "ss@h/db" (the whole password, shown)
    ("postgresql://u:pa/ss@h/db", {"dbname": "ss@h/db", "host": "u", "port": "pa"}),
    # a raw '?' keeps the password "pa?s" whole, but the second '@' puts "s" in the host
    ("postgresql://u:pa?s@s@h/db", {"user": "u", "password": "pa?s", "dbname": "db", "host": "s@h"}),
    # a raw '@' in the user name: the password "pw" is read as part of the host ("corp:pw@h")
    ("postgresql://me@corp:pw@h/db", None),
])
def test_a_uri_libpq_misreads_is_refused_without_its_password(dsn, libpq_reads):
    if libpq_reads is not None:
        assert psycopg.conninfo.conninfo_to_dict(dsn) == libpq_reads  # the misreading, as worked out above
    with pytest.raises(ValueError) as caught:
        create("postgres", dsn=dsn)
    line = str(caught.value)
    assert line.startswith("bad dsn: libpq reads this URI otherwise than written") and "\n" not in line
    assert "%40" in line and "%2F" in line  # it says how to write it
    assert not any(f"{part}@" in line or f":{part}" in line or f"={part}" in line for part in SECRET_PARTS)


@pytest.mark.parametrize("dsn, shown", [
    ("postgresql://u:p%40ss%2Fx@h/db", "user=u dbname=db host=h"),  # the same password, percent-encoded
    ("postgresql://u:pw@h1:5432,h2:5433/db", "user=u dbname=db host=h1,h2 port=5432,5433"),
    ("postgresql://h:5432/db?user=me@corp&password=x@y", "user=me@corp dbname=db host=h port=5432"),
    ("postgresql://u:pa:ss?x@h/db", "user=u dbname=db host=h"),  # ':' and '?' are read as written
    ("postgresql://u:@h/db", "user=u dbname=db host=h"),
    ("postgresql:///db?host=/run/user@1000/pg", "dbname=db host=/run/user@1000/pg"),  # a socket folder
    ("host=h password=p@ss/x user=u", "host=h user=u"),
])
def test_a_uri_libpq_reads_as_written_is_accepted_and_shown_without_the_password(dsn, shown):
    retriever = create("postgres", dsn=dsn)
    assert dict(kv.split("=", 1) for kv in retriever.params()["dsn"].split()) == \
        dict(kv.split("=", 1) for kv in shown.split())


@pytest.mark.parametrize("value, shown", [
    ("postgresql://u:p@ss@h/db", "postgresql://u:***@h/db"),    # was postgresql://u:***@ss@h/db
    ("postgresql://u:pa/ss@h/db", "postgresql://u:***@h/db"),   # was unmasked
    ("postgresql://me@corp:pw@h/db", "postgresql://me@corp:***@h/db"),  # was unmasked
    ("postgres://bob:sec@db:5432/x", "postgres://bob:***@db:5432/x"),
    ("postgresql://h:5432/db?user=a@b", "postgresql://h:5432/db?user=a@b"),
    ("postgresql://h:5432/db", "postgresql://h:5432/db"),
])
def test_a_recorded_uri_holds_no_part_of_a_raw_password(value, shown):
    """harness/secrets.py masks a bench or pipeline config's dsn (bench.json, metrics.json): a bench whose
    postgres cell is refused still records its config in bench.json."""
    assert without_secrets({"dsn": value}) == {"dsn": shown}

"""How the postgres retriever takes a URI dsn (retrievers/engines/postgres.py ``_uri_reading``, ``_connect``).

1. Valid URIs were refused by the misreading check of the engines review (c6e9b63), which compared
   libpq's password with "the user info up to the last '@' before '?'":
   ``postgresql://u:pw@h/db?password=other`` (libpq takes the query's password, as its docs say) and
   ``postgresql://h:5432/my@db`` (a raw '@' in the path: RFC 3986 and libpq read database "my@db").
   Both said "bad dsn: ... percent-encode '@' as %40 and '/' as %2F", which did not fit.
2. A misreading it let through: ``postgresql://h?user=me@corp&password=secret`` (an '@' in the query
   with no '/' before it ends libpq's user info there, so the host is "corp&password=secret"): the
   failed connection's line printed ``host=corp&password=secret``.
3. The database name holding '@' is genuinely ambiguous: ``postgresql://127.0.0.1:1/pw@h`` is database
   "pw@h" on 127.0.0.1 port 1, and also how ``user 127.0.0.1, password "1/pw", host h`` reads when the
   password's '/' is not percent-encoded. It is accepted as libpq reads it (a successful connection
   proves that reading), and a failed connection's line shows no part of libpq's reading.
4. Without ``connect_timeout`` libpq waits for a server that accepts and never answers without end
   (libpq docs: "Zero, negative, or not specified means wait indefinitely"); psycopg 3.3.9 stops each
   attempt after its own 130 s (measured here: 130.0 s). The retriever now sets 10 s unless the dsn
   or PGCONNECT_TIMEOUT sets one.

libpq's readings asserted below are psycopg.conninfo.conninfo_to_dict's (libpq's own parser, local:
no server needed). Engines review (s16, follow-up)."""

from __future__ import annotations

import socket
import threading

import pytest

from harness.datasets.corpus import Corpus
from harness.errors import HarnessError
from retrievers import create

psycopg = pytest.importorskip("psycopg", reason="the postgres retriever needs psycopg 3 (the 'postgres' extra)")


def _shown(retriever) -> dict:
    return dict(kv.split("=", 1) for kv in retriever.params()["dsn"].split())


@pytest.mark.parametrize("dsn, libpq_reads, shown", [
    ("postgresql://u:pw@h/db?password=other", {"user": "u", "password": "other", "dbname": "db", "host": "h"},
     {"user": "u", "dbname": "db", "host": "h"}),
    ("postgresql://h:5432/my@db", {"dbname": "my@db", "host": "h", "port": "5432"},
     {"dbname": "my@db", "host": "h", "port": "5432"}),
    ("postgresql://u:pw@h:5432/my@db", {"user": "u", "password": "pw", "dbname": "my@db", "host": "h", "port": "5432"},
     {"user": "u", "dbname": "my@db", "host": "h", "port": "5432"}),
    ("postgresql://[::1]:5432/my@db", {"dbname": "my@db", "host": "::1", "port": "5432"},
     {"dbname": "my@db", "host": "::1", "port": "5432"}),
])
def test_a_uri_libpq_reads_as_written_is_accepted(dsn, libpq_reads, shown):
    assert psycopg.conninfo.conninfo_to_dict(dsn) == libpq_reads
    assert _shown(create("postgres", dsn=dsn)) == shown  # (was: ValueError "bad dsn: libpq reads this URI ...")


@pytest.mark.parametrize("dsn, libpq_reads, secret", [
    # the query's '@' ends libpq's user info: the query's password lands in the host
    ("postgresql://h?user=me@corp&password=secret", {"user": "h?user=me", "host": "corp&password=secret"}, "secret"),
    # a password "/ss": its ':' is read as an empty port, "ss" as the database name's head
    ("postgresql://u:/ss@h", {"dbname": "ss@h", "host": "u"}, "ss@"),
    # a password "zq/ss": port "zq" (not a number), "ss" in the database name (an IPv6 host after it)
    ("postgresql://u:zq/ss@[::1]/db", {"dbname": "ss@[::1]/db", "host": "u", "port": "zq"}, "zq"),
])
def test_a_uri_libpq_misreads_is_refused_without_its_password(dsn, libpq_reads, secret):
    assert psycopg.conninfo.conninfo_to_dict(dsn) == libpq_reads
    with pytest.raises(ValueError) as caught:
        create("postgres", dsn=dsn)
    line = str(caught.value)
    assert line.startswith("bad dsn: libpq reads this URI otherwise than written") and secret not in line


def _never_answering_server():
    """A local socket that accepts connections and never answers (closed by the caller)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held = []

    def accept() -> None:
        try:
            while True:
                held.append(server.accept()[0])
        except OSError:  # (closed)
            pass

    threading.Thread(target=accept, daemon=True).start()
    return server, held


def _index_outcome(retriever, wait_s: float = 60.0):
    """The exception ``retriever.index`` raises, on a thread given ``wait_s`` seconds; None if it is still
    waiting then."""
    outcome = []

    def index() -> None:
        try:
            retriever.index(Corpus(["d1"], [""], ["alpha"]))
        except BaseException as exc:  # noqa: BLE001 - recorded for the test
            outcome.append(exc)
    thread = threading.Thread(target=index, daemon=True)
    thread.start()
    thread.join(wait_s)
    return outcome[0] if outcome else None


@pytest.mark.parametrize("dsn, secret", [
    # database "pw@h" on 127.0.0.1 port 1 (refused at once), or user "127.0.0.1", password "1/pw", host "h"
    ("postgresql://127.0.0.1:1/pw@h", "pw"),
    # user "127.0.0.1?password=sec", host 127.0.0.1 port 1: the query's '@' read as the user info's end
    ("postgresql://127.0.0.1?password=sec@127.0.0.1:1", "sec"),
])
def test_an_ambiguous_uri_is_accepted_and_its_failed_connection_shows_no_part_of_it(dsn, secret):
    retriever = create("postgres", dsn=dsn)  # (was: refused, or accepted and shown whole)
    caught = _index_outcome(retriever)
    assert isinstance(caught, HarnessError), caught
    line = str(caught)
    assert line.startswith("cannot connect to PostgreSQL (a URI dsn whose database name holds a raw '@'")
    assert "Connection refused" in line and "\n" not in line  # libpq's reason, its values masked
    assert secret not in line and "127.0.0.1" not in line and "port 1 " not in line, line


def test_a_server_that_accepts_and_never_answers_is_given_up_on(monkeypatch):
    monkeypatch.delenv("PGCONNECT_TIMEOUT", raising=False)
    server, held = _never_answering_server()
    try:
        retriever = create("postgres", dsn=f"host=127.0.0.1 port={server.getsockname()[1]} dbname=x user=x")
        caught = _index_outcome(retriever, wait_s=60)  # the default: 10 s (psycopg 3.3's own: 130 s)
        assert caught is not None, "still connecting after 60 s"
        assert isinstance(caught, HarnessError)
        assert str(caught).startswith("cannot connect to PostgreSQL (") and "timeout" in str(caught)
    finally:
        server.close()
        for con in held:
            con.close()


@pytest.mark.parametrize("dsn, env, passed", [
    ("host=h dbname=x", None, {"connect_timeout": 10}),
    ("host=h dbname=x connect_timeout=3", None, {}),  # the dsn's own value is kept
    ("postgresql://h/x?connect_timeout=0", None, {}),
    ("host=h dbname=x", "4", {}),  # PGCONNECT_TIMEOUT, libpq's environment, too
])
def test_the_default_connect_timeout_gives_way_to_the_dsns(monkeypatch, dsn, env, passed):
    if env is None:
        monkeypatch.delenv("PGCONNECT_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("PGCONNECT_TIMEOUT", env)
    calls = []

    def connect(conninfo, **kwargs):
        calls.append((conninfo, kwargs))
        raise psycopg.OperationalError("no server here")
    monkeypatch.setattr(psycopg, "connect", connect)
    with pytest.raises(HarnessError, match="no server here"):
        create("postgres", dsn=dsn).index(Corpus(["d1"], [""], ["alpha"]))
    assert calls == [(dsn, {"autocommit": True, **passed})]

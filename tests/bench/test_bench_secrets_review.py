"""Secrets the recorded configs still held after ``without_secrets`` (harness/secrets.py), and
legitimate values it changed; found by the review of the session's last commits. The oracle for what
libpq reads as the password is libpq itself (psycopg's ``conninfo_to_dict``) where psycopg is installed."""

from __future__ import annotations

import pytest

from harness.bench import run_bench
from harness.secrets import without_secrets
from tests.bench.bench_helpers import HangingRetriever
from tests.bench.test_bench_review3 import _config

SECRET = "hunter2"


def test_an_escaped_space_in_an_unquoted_password_is_masked_whole():
    """libpq reads ``password=hunter\\ 2`` as the password "hunter 2" (a backslash escapes the next
    character of an unquoted value); the mask stopped at the space and wrote "2" (the rest of the
    secret) into the results: ``password=*** 2 user=x``."""
    dsn = "host=h password=hunter\\ 2 user=x"
    psycopg = pytest.importorskip("psycopg")
    assert psycopg.conninfo.conninfo_to_dict(dsn)["password"] == "hunter 2"  # (the oracle: libpq)
    assert without_secrets({"dsn": dsn}) == {"dsn": "host=h password=*** user=x"}


def test_a_password_in_a_uris_query_masks_its_value_only():
    """``postgresql://h/d?password=sec&sslmode=require``: libpq's password is "sec" and sslmode
    "require"; the mask took the rest of the string (``?password=***``, the sslmode lost from the
    record). Expected: the parameters after it kept."""
    uri = f"postgresql://h/d?password={SECRET}&sslmode=require&sslpassword=k#frag"
    assert without_secrets(uri) == "postgresql://h/d?password=***&sslmode=require&sslpassword=***#frag"


@pytest.mark.parametrize("value", ["/data/password=1/corpus.jsonl", "runs/password=2/run.trec",
                                   "C:\\runs\\password=3.trec"])
def test_a_path_holding_password_is_recorded_as_written(value):
    """A folder named ``password=1`` (a partitioned data set's layout) is no connection parameter; the
    path was recorded as ``/data/password=***`` (the rest of it dropped from the record)."""
    assert without_secrets({"path": value}) == {"path": value}
    assert without_secrets({"cmd": f'psql "host=h password={SECRET}" -f {value}'}) == {
        "cmd": f'psql "host=h password=*** -f {value}'}  # (a dsn among other text: still masked)


def test_a_secret_named_parameter_and_a_literal_secret_header_are_masked():
    """A config's ``password = "..."`` (a plugin's own parameter) and the http retriever's literal
    ``Authorization`` header were written whole (docs/http.md: "A literal value of a header whose name
    looks secret ... is recorded as <redacted>", as its params() do); a ``${VAR}`` reference and other
    headers are kept."""
    spec = {"type": "http", "params": {"url": "https://s/q", "password": SECRET, "sslpassword": "k",
                                       "headers": {"Authorization": f"Bearer {SECRET}", "X-Api-Key": "${KEY}",
                                                   "Accept": "application/json"}}}
    assert without_secrets(spec) == {"type": "http", "params": {
        "url": "https://s/q", "password": "***", "sslpassword": "***",
        "headers": {"Authorization": "<redacted>", "X-Api-Key": "${KEY}", "Accept": "application/json"}}}


def test_no_result_file_of_a_bench_holds_a_secret_header_or_parameter(tmp_path):
    plugin = "tests.bench.test_bench_secrets_review:WithHeaders"
    params = {"password": SECRET, "headers": {"Authorization": f"Bearer {SECRET}"}}
    config = _config(tmp_path, [{"type": plugin, "label": "h", "params": params}],
                     pipelines=[{"label": "p", "stages": [{"name": "s", "type": "retrieve", "retriever": plugin,
                                                           "params": params}]}])
    result = run_bench(config)
    assert [o.status for o in result.outcomes] == ["run", "run"]
    written = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert [p for p in written if SECRET in p.read_text(errors="replace")] == []


class WithHeaders(HangingRetriever):
    """Takes a password and request headers and, as the http retriever does, records no secret in params()."""

    def __init__(self, password: str = "", headers: dict | None = None):
        super().__init__()

    def params(self) -> dict:
        return {}

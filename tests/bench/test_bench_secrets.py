"""A connection secret in a bench config (a postgres retriever's dsn = "... password=...") was written
whole into every cell's metrics.json (bench.config and bench.retriever) and into bench.json, and a
pipeline stage's into metrics.json, where docs/engines.md says the dsn is recorded without it (the
retriever's own params() leave it out; the config as written did not). Engines review."""

from __future__ import annotations

import pytest

from harness.bench import run_bench
from harness.secrets import without_secrets
from tests.bench.bench_helpers import HangingRetriever
from tests.bench.test_bench_review3 import _config

SECRET = "hunter2"
DSN = f"host=/tmp/pg dbname=x password={SECRET} sslpassword='a b'"
PLUGIN = "tests.bench.test_bench_secrets:Secretive"


@pytest.mark.parametrize("value, shown", [
    (DSN, "host=/tmp/pg dbname=x password=*** sslpassword=***"),
    (f"postgresql://bob:{SECRET}@db:5432/x", "postgresql://bob:***@db:5432/x"),
    ("password = 'it\\'s' user=bob", "password=*** user=bob"),
    ("no secret here", "no secret here"),
])
def test_secrets_are_masked_in_strings(value, shown):
    assert without_secrets({"a": [value], "b": 3}) == {"a": [shown], "b": 3}


def test_no_result_file_of_a_bench_holds_the_secret(tmp_path):
    config = _config(tmp_path, [{"type": PLUGIN, "label": "pg", "params": {"tag": DSN}}],
                     pipelines=[{"label": "p", "stages": [{"name": "s", "type": "retrieve", "retriever": PLUGIN,
                                                           "params": {"tag": DSN}}]}])
    result = run_bench(config)
    assert [o.status for o in result.outcomes] == ["run", "run"]
    written = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"metrics.json", "bench.json", "leaderboard.json"}
    assert [p for p in written if SECRET in p.read_text(errors="replace")] == []


class Secretive(HangingRetriever):
    """Takes a connection string (its str param ``tag``) and, as the postgres retriever does, reports
    none of it in params()."""

    def params(self) -> dict:
        return {}

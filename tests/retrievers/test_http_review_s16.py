"""The http retriever (review s16): a live service's run in a pipeline, header values HTTP cannot send,
query-string values that are no strings, and NaN in a body template.

1. A pipeline's stage cache is keyed by the stage's params(): the http retriever's were its request
   template only, so the second run of a pipeline read the first run's answers back ("cache: hit")
   and sent no request: a CI gate of a live service scored a stale run. Now params() hold the sha256
   of the answers scored (None before a search): the service is queried on every run, and a stage
   after it is reused only when the service answered exactly as before.
2. A header value with a line break (a key file's trailing newline in ``${SEARCH_API_KEY}``) was
   refused by the HTTP library, whose error quotes the whole value: the secret was printed in the
   error line, after every query had been retried as if the service had failed.
3. ``params`` values were sent as Python's ``str()``: ``true`` as ``True`` (Elasticsearch refuses it),
   ``null`` as ``None``, a list as ``['a', 'b']``.
4. ``NaN`` in a body template (the --param JSON reader takes it) failed at the first query with
   "Out of range float values are not JSON compliant", naming no part.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

from harness.datasets import load_dataset
from harness.datasets.corpus import Queries
from harness.errors import HarnessError
from harness.evaluation import Evaluator
from harness.pipeline import StageCache, parse_pipeline, run_pipeline
from retrievers.http import HTTPRetriever
from tests.retrievers.http_fakes import FakeEngine, Received
from tests.pipeline.fakes import write_three_docs

FAST = {"preset": "harness", "backoff": 0.01, "max_backoff": 0.05}


# ----------------------------------------------------------------------------- 1. a live service in a pipeline
def _dataset(tmp_path):
    ds = write_three_docs(tmp_path)
    (tmp_path / "other.trec").write_text("q1 Q0 d3 1 1.0 o\nq2 Q0 d3 1 1.0 o\n")
    return ds


def test_a_pipeline_queries_the_live_service_on_every_run(tmp_path):
    # Worked example. Index "A": every query gets d1 (2.0), d2 (1.0): q1's relevant d1 at rank 1 (NDCG@10 1),
    # q2's d2 at rank 2 (1 / log2(3)); mean (1 + 1/log2(3)) / 2 = 0.81546. Index "B": d3 only, judged for
    # neither query: NDCG@10 0.
    index = {"hits": [{"id": "d1", "score": 2.0}, {"id": "d2", "score": 1.0}]}

    def answer(request: Received, n: int):
        return 200, index

    ds = load_dataset(str(_dataset(tmp_path)), "test")
    cache, evaluator = StageCache(tmp_path / "cache"), Evaluator(["NDCG@10"])
    with FakeEngine(answer) as engine:
        pipeline = parse_pipeline({"name": "p", "stages": [
            {"name": "svc", "type": "retrieve", "retriever": "http", "params": {"url": engine.url, **FAST}},
            {"name": "other", "type": "retrieve", "retriever": "run-file",
             "params": {"path": str(tmp_path / "other.trec")}},
            {"name": "f", "type": "fuse", "inputs": ["svc", "other"], "method": "rrf"}]}, "p.toml")

        def run(name):
            _, outcomes = run_pipeline(ds, pipeline, evaluator, [10], output_dir=tmp_path / name, cache=cache)
            return {o.stage.name: o for o in outcomes}

        first = run("first")
        assert len(engine.received) == 2
        assert first["svc"].result.means["NDCG@10"] == pytest.approx((1 + 1 / math.log2(3)) / 2)

        index = {"hits": [{"id": "d3", "score": 5.0}]}  # the service's index changed
        second = run("second")
        assert len(engine.received) == 4  # queried again (the old code: a cache hit, no request)
        assert second["svc"].status == "miss"
        assert second["svc"].result.means["NDCG@10"] == 0.0
        assert second["f"].status == "miss"  # the fusion of the new answers, not the old
        assert second["f"].run.doc_vocab[second["f"].run.doc_codes].tolist() == ["d3", "d3"]

        third = run("third")  # the same answers again: the service is queried, the stage after it reused
        assert len(engine.received) == 6
        assert (third["svc"].status, third["other"].status, third["f"].status) == ("miss", "hit", "hit")
        assert third["f"].key == second["f"].key != first["f"].key
        # Stored: "other" and the two fusions; never the service's runs, which no lookup could find (three
        # runs stored two, one per answers_sha256, and read none).
        stored = sorted(path.stem for path in (tmp_path / "cache").rglob("*.json"))
        assert stored == sorted({first["other"].key, first["f"].key, second["f"].key})


def test_a_bench_cell_of_a_live_service_is_run_again_not_reused(tmp_path):
    from harness.bench import run_bench
    from tests.bench.test_bench_review3 import _config

    with FakeEngine(lambda request, n: (200, {"hits": []})) as engine:
        config = _config(tmp_path, retrievers=[{"type": "http", "label": "svc", "params": {"url": engine.url, **FAST}}])
        first = run_bench(config, echo=lambda line: None)
        asked = len(engine.received)
        second = run_bench(config, echo=lambda line: None)
        assert [o.status for o in first.outcomes] == [o.status for o in second.outcomes] == ["run"]  # (was "reused")
        assert len(engine.received) == 2 * asked > 0


def test_params_record_the_sha256_of_the_answers_scored():
    index = {"hits": [{"id": "d1", "score": 2.0}, {"id": "d2", "score": 1.0}]}
    with FakeEngine(lambda request, n: (200, index)) as engine:
        retriever = HTTPRetriever(url=engine.url, **FAST)
        assert retriever.params()["answers_sha256"] is None
        retriever.search(Queries(["q1"], ["x"]), 10)
        first = retriever.params()["answers_sha256"]
        index = {"hits": [{"id": "d2", "score": 1.0}, {"id": "d1", "score": 2.0}]}  # same hits, another order
        retriever.search(Queries(["q1"], ["x"]), 10)
        assert retriever.params()["answers_sha256"] == first
        index = {"hits": [{"id": "d1", "score": 2.0}, {"id": "d2", "score": 1.5}]}
        retriever.search(Queries(["q1"], ["x"]), 10)
        assert retriever.params()["answers_sha256"] != first
    # the digest is of one JSON line per query: [query id, [doc ids], [scores]]
    import hashlib

    assert first == hashlib.sha256(b'["q1", ["d1", "d2"], [2.0, 1.0]]\n').hexdigest()


# ----------------------------------------------------------------------------- 2. header values HTTP cannot send
SECRET = "sekrit-4f9a2c"


@pytest.mark.parametrize("value, problem", [
    (SECRET + "\n", "a line break (\\n) at its end"),
    (SECRET + "\r\n", "a carriage return (\\r)"),
    (SECRET + " ", "a space or tab at its start or end"),
    (SECRET + "é", "a non-ASCII character"),
])
def test_a_header_value_http_cannot_send_is_named_without_the_secret(monkeypatch, value, problem):
    monkeypatch.setenv("S16_SEARCH_KEY", value)
    with FakeEngine(lambda request, n: (200, {"hits": []})) as engine:
        retriever = HTTPRetriever(url=engine.url, index_check=True,
                                  headers={"Authorization": "Bearer ${S16_SEARCH_KEY}"}, **FAST)
        for call in (lambda: retriever.search(Queries(["q1"], ["x"]), 10), retriever.count_documents):
            with pytest.raises(HarnessError) as raised:
                call()
            message = str(raised.value)
            assert SECRET not in message
            assert "header 'Authorization'" in message and "${S16_SEARCH_KEY}" in message and problem in message
        assert engine.received == []  # refused before any request, never retried


def test_a_literal_header_value_or_name_http_cannot_send_is_refused_when_built():
    with pytest.raises(HarnessError, match=r"header 'X-Api-Key': its value holds a line break"):
        HTTPRetriever(url="http://127.0.0.1:9", headers={"X-Api-Key": SECRET + "\n"}, **FAST)
    with pytest.raises(HarnessError, match=r"header name 'X Api' is not an HTTP header name"):
        HTTPRetriever(url="http://127.0.0.1:9", headers={"X Api": "v"}, **FAST)
    HTTPRetriever(url="http://127.0.0.1:9", headers={"X-Api-Key": "a b\tc", "X-Empty": ""}, **FAST)  # sendable


def test_the_cli_prints_one_line_without_the_secret_and_exits_2(tmp_path):
    with FakeEngine(lambda request, n: (200, {"hits": []})) as engine:
        proc = subprocess.run(
            [sys.executable, "-m", "harness", "run", "--dataset", "scifact", "--retriever", "http",
             "--param", f"url={engine.url}", "--param", "preset=harness",
             "--param", 'headers={"Authorization": "Bearer ${S16_SEARCH_KEY}"}', "--k", "10", "-o", str(tmp_path)],
            capture_output=True, text=True, timeout=120,
            env={**os.environ, "HARNESS_PROGRESS": "0", "S16_SEARCH_KEY": SECRET + "\n"})
        assert engine.received == []
    assert proc.returncode == 2
    assert SECRET not in proc.stdout + proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "error: header 'Authorization': its value (from ${S16_SEARCH_KEY}) holds a line break (\\n) at its end, "
        "which HTTP cannot send; a header value is ASCII text without line breaks (the value is not shown)"]


# ----------------------------------------------------------------------------- 3. query-string values
def test_query_string_values_are_sent_as_json_writes_them():
    with FakeEngine(lambda request, n: (200, {"response": {"docs": []}})) as engine:
        retriever = HTTPRetriever(url=engine.url, preset="solr", backoff=0.01,
                                  params={"q": "{query}", "rows": "{k}", "debug": True, "fuzzy": False,
                                          "boost": 0.5, "mm": 2})
        retriever.search(Queries(["q1"], ["x"]), 10)
        # as Elasticsearch and Solr read booleans (Elasticsearch refuses "True": only true or false)
        assert engine.received[0].query == {"q": "x", "rows": "10", "debug": "true", "fuzzy": "false",
                                            "boost": "0.5", "mm": "2"}


@pytest.mark.parametrize("value, shown", [(None, "null"), (["a", "b"], '["a", "b"]'), ({"a": 1}, '{"a": 1}'),
                                          (float("nan"), "NaN")])
def test_a_query_string_value_with_no_one_text_form_is_refused(value, shown):
    with pytest.raises(HarnessError) as raised:
        HTTPRetriever(url="http://127.0.0.1:9", preset="solr", params={"q": "{query}", "fq": value})
    assert str(raised.value) == f"params.fq: a query-string value is a string, a number or true/false; got {shown}"


# ----------------------------------------------------------------------------- 4. NaN in a body template
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_nan_or_infinity_in_a_body_template_is_refused_when_built(value):
    with pytest.raises(HarnessError, match=r"^body\.query\.boost: -?(nan|inf) is not a JSON number"):
        HTTPRetriever(url="http://127.0.0.1:9", preset="elasticsearch",
                      body={"size": "{k}", "query": {"match": {"text": "{query}"}, "boost": value}})


# ----------------------------------------------------------------------------- 5. a dot-segment in the URL
@pytest.mark.parametrize("text, segment", [("..", "%2E%2E"), (".", "%2E"), ("...", "..."), ("a.b", "a.b")])
def test_a_query_text_that_is_a_dot_segment_stays_one_path_segment(text, segment):
    # docs/http.md: in url a value is one percent-encoded component, never a path separator. httpx resolves
    # dot-segments (RFC 3986 5.2.4): "/x/../search" is sent as "/search", "/x/./search" as "/x/search".
    with FakeEngine(lambda request, n: (200, {"hits": []})) as engine:
        retriever = HTTPRetriever(url=engine.url + "/x/{query}/search", hits="hits", id_field="id",
                                  score_field="score", backoff=0.01)
        retriever.search(Queries(["q1"], [text]), 10)
        assert [r.path for r in engine.received] == [f"/x/{segment}/search"]

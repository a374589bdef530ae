"""The http retriever (review s16, follow-ups): partial answers, secrets in the query string, ids a run
file cannot hold, and a password in the URL beside an Authorization header.

1. An engine that answers from part of its index says so in an HTTP 200 answer, and the hits were scored
   as the service's complete ranking. The signs, from each engine's search API reference:
   Elasticsearch / OpenSearch ``"timed_out": true`` (the ``timeout`` ran out: "the hits accumulated up to
   that point") and ``_shards.failed`` > 0 (``allow_partial_search_results`` defaults to true); Solr
   ``responseHeader.partialResults: true`` (``timeAllowed``, ``shards.tolerant``); Vespa ``root.errors``, a
   true flag in ``root.coverage.degraded`` (``timeout``, ``match-phase``, ``adaptive-timeout``,
   ``non-ideal-state``), ``root.coverage.full: false`` or ``root.coverage.coverage`` < 100 (Vespa's
   "Default JSON Result Format" and "Graceful Query Coverage Degradation"). Now such an answer is a
   failed attempt, retried as a 5xx is, then a failed query under ``on_failure``.
2. ``url=...?api_key=X`` and ``params={"token": "X"}`` were written whole into metrics.json, and ``${VAR}``
   was refused there ("unknown placeholder"); the URL's own query string was also dropped whenever the
   request had params (httpx 0.28 replaces it), and a preset's path was appended after it.
3. A service id with whitespace failed at the run-file write, naming no query, leaving a result folder
   with only its ``.lock``.
4. ``http://user:pw@host`` with an ``Authorization`` header: httpx sent the URL's Basic credentials and
   never the configured header.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from harness.datasets.corpus import Corpus, Queries
from harness.errors import HarnessError, HarnessWarning
from retrievers.http import HTTPRetriever, QueryFailed
from tests.retrievers.http_fakes import FakeEngine, Received
from tests.retrievers.test_http_review_s16 import _dataset

ONE = Queries(["q1"], ["stem cells"])
QUICK = {"backoff": 0.01, "max_backoff": 0.05}


def harness(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HARNESS_PROGRESS": "0", **(env or {})})


# ----------------------------------------------------------------------------- 1. partial answers
def _elastic(timed_out=False, failed=0, clusters=None):
    answer = {"took": 3, "timed_out": timed_out,
              "_shards": {"total": 5, "successful": 5 - failed, "skipped": 0, "failed": failed},
              "hits": {"total": {"value": 1, "relation": "eq"}, "max_score": 1.5,
                       "hits": [{"_index": "scifact", "_id": "d1", "_score": 1.5}]}}
    if clusters is not None:
        answer["_clusters"] = clusters
    return answer


def _ccs(successful=2, skipped=0, partial=None, failed=None):
    # a cross-cluster search's _clusters block: total / successful / skipped (Elasticsearch 6.x+, OpenSearch),
    # running / partial / failed and per-cluster details with string statuses (Elasticsearch 8.10+)
    block = {"total": successful + skipped + (partial or 0) + (failed or 0), "successful": successful,
             "skipped": skipped}
    if partial is not None:
        block.update(running=0, partial=partial, failed=failed or 0,
                     details={"(local)": {"status": "successful", "indices": "scifact", "timed_out": False}})
    return block


def _solr(partial=None):
    header = {"status": 0, "QTime": 1, "params": {}}
    if partial is not None:
        header["partialResults"] = partial
    return {"responseHeader": header,
            "response": {"numFound": 1, "start": 0, "numFoundExact": True, "docs": [{"id": "d1", "score": 1.5}]}}


def _vespa(coverage=100, full=True, degraded=None, errors=None):
    cover = {"coverage": coverage, "documents": 5183, "full": full, "nodes": 2, "results": 2, "resultsFull": 2}
    if degraded is not None:
        cover["degraded"] = degraded
    root = {"id": "toplevel", "relevance": 1.0, "fields": {"totalCount": 1}, "coverage": cover,
            "children": [{"id": "id:scifact:doc::d1", "relevance": 1.5, "fields": {"id": "d1"}}]}
    if errors is not None:
        root["errors"] = errors
    return {"root": root}


VESPA_TIMEOUT = {"match-phase": False, "timeout": True, "adaptive-timeout": False, "non-ideal-state": False}
PARTIAL = [  # (preset, partial answer, the signal named)
    ("elasticsearch", _elastic(timed_out=True), "timed_out is true"),
    ("elasticsearch", _elastic(failed=2), "_shards.failed is 2"),
    ("opensearch", _elastic(failed=1), "_shards.failed is 1"),
    # a remote cluster with skip_unavailable left out: HTTP 200, _shards counts only the clusters searched
    ("elasticsearch", _elastic(clusters=_ccs(successful=1, skipped=1)), "_clusters.skipped is 1"),
    ("opensearch", _elastic(clusters=_ccs(successful=2, skipped=1)), "_clusters.skipped is 1"),
    ("elasticsearch", _elastic(clusters=_ccs(successful=1, partial=1)), "_clusters.partial is 1"),
    ("elasticsearch", _elastic(clusters=_ccs(successful=1, partial=0, failed=1)), "_clusters.failed is 1"),
    ("solr", _solr(partial=True), "responseHeader.partialResults is true"),
    ("vespa", _vespa(errors=[{"code": 12, "summary": "Timed out", "message": "Timeout while waiting for sc0.num0"}]),
     'root.errors is [{"code": 12, "summary": "Timed out", "message": "Timeout while waiting for sc0.num0"}]'),
    ("vespa", _vespa(coverage=99, degraded=VESPA_TIMEOUT),  # Vespa's documented example of a degraded answer
     'root.coverage.degraded is {"match-phase": false, "timeout": true, "adaptive-timeout": false, '
     '"non-ideal-state": false}'),
    ("vespa", _vespa(full=False), "!root.coverage.full"),
    ("vespa", _vespa(coverage=97), "root.coverage.coverage is 97"),
]
COMPLETE = {"elasticsearch": _elastic(), "opensearch": _elastic(), "solr": _solr(), "vespa": _vespa()}


@pytest.mark.parametrize("preset, answer, signal", PARTIAL)
def test_a_partial_answer_is_retried_then_fails_naming_the_query_and_the_signal(preset, answer, signal):
    with FakeEngine(lambda request, n: (200, answer)) as engine:
        with pytest.raises(QueryFailed) as failed:
            HTTPRetriever(url=engine.url, preset=preset, retries=2, **QUICK).search(ONE, 10)
    message = str(failed.value)
    assert message.startswith("http retriever: query 'q1' failed: a partial answer from ")
    assert message.endswith(" (after 3 attempts)")
    if signal.startswith("!"):
        assert f": {signal[1:]} is false (after" in message
    else:
        assert f": {signal} (after" in message
    assert len(engine.received) == 3  # retried as a 5xx is: the first try and 2 retries (the old code: 1, scored)


@pytest.mark.parametrize("preset", COMPLETE)
def test_a_partial_answer_then_a_complete_one_scores_the_complete_one(preset):
    partial = next(answer for p, answer, _ in PARTIAL if p == preset)
    with FakeEngine(lambda request, n: (200, partial if n == 0 else COMPLETE[preset])) as engine:
        system = HTTPRetriever(url=engine.url, preset=preset, **QUICK)
        run = system.search(ONE, 10)
    assert run.to_dict() == {"q1": {"d1": 1.5}}
    stats = system.stats()
    assert (stats["attempts"], stats["retried_queries"], stats["failed_queries"]) == (2, 1, [])


def test_a_complete_answer_with_its_coverage_and_shard_fields_is_not_partial():
    # every sign present and saying "complete": Vespa's degraded block with every flag false, coverage 100
    # and a cross-cluster search's complete _clusters blocks (old and 8.10+ shapes: the per-cluster details'
    # string statuses and timed_out false are no sign)
    answers = [("elasticsearch", _elastic()), ("solr", _solr(partial=False)),
               ("elasticsearch", _elastic(clusters=_ccs(successful=3))),
               ("opensearch", _elastic(clusters=_ccs(successful=2, partial=0, failed=0))),
               ("vespa", _vespa(degraded={k: False for k in VESPA_TIMEOUT}, errors=[]))]
    for preset, answer in answers:
        with FakeEngine(lambda request, n: (200, answer)) as engine:
            assert HTTPRetriever(url=engine.url, preset=preset, retries=0).search(ONE, 10).to_dict() == {
                "q1": {"d1": 1.5}}
            assert len(engine.received) == 1


def test_under_on_failure_empty_a_partial_answer_is_a_failed_query_with_its_cause():
    with FakeEngine(lambda request, n: (200, _elastic(timed_out=request.text == "b"))) as engine:
        system = HTTPRetriever(url=engine.url, preset="elasticsearch", on_failure="empty", retries=1, **QUICK)
        with pytest.warns(HarnessWarning, match=r"^http retriever: 1 of 2 queries failed .*: q2$"):
            run = system.search(Queries(["q1", "q2"], ["a", "b"]), 10)
    assert run.to_dict() == {"q1": {"d1": 1.5}, "q2": {}}
    stats = system.stats()
    assert stats["failed_queries"] == ["q2"]
    assert stats["failures"]["q2"] == (f"a partial answer from POST {engine.url}/_search: timed_out is true "
                                       f"(after 2 attempts)")


def test_a_full_template_names_its_own_partial_field_and_a_preset_s_can_be_turned_off():
    answer = {"meta": {"degraded": True, "coverage": 80}, "results": [{"id": "d1", "score": 1.0}]}
    mapping = {"hits": "results", "id_field": "id", "score_field": "score", "retries": 0, **QUICK}
    with FakeEngine(lambda request, n: (200, answer)) as engine:
        for partial_field, signal in (("meta.degraded", "meta.degraded is true"),
                                      (["meta.coverage<100"], "meta.coverage is 80"),
                                      (["meta.absent", "!meta.degraded", "meta.coverage<50.5"], None)):
            system = HTTPRetriever(url=engine.url + "/q", partial_field=partial_field, **mapping)
            assert system.params()["partial_field"] == ([partial_field] if isinstance(partial_field, str)
                                                        else partial_field)
            if signal is None:
                assert system.search(ONE, 10).to_dict() == {"q1": {"d1": 1.0}}
            else:
                with pytest.raises(QueryFailed, match=f": {signal}$"):
                    system.search(ONE, 10)
        assert "partial_field" not in HTTPRetriever(url=engine.url + "/q", **mapping).params()
    with FakeEngine(lambda request, n: (200, _elastic(timed_out=True))) as engine:  # a deliberate choice, recorded
        system = HTTPRetriever(url=engine.url, preset="elasticsearch", partial_field=[], retries=0)
        assert system.search(ONE, 10).to_dict() == {"q1": {"d1": 1.5}}
        assert "partial_field" not in system.params()
    for bad in ("", "a..b", "!", [3]):
        with pytest.raises(HarnessError, match=r"^partial_field takes dotted paths such as timed_out, "):
            HTTPRetriever(url="http://127.0.0.1:9/q", partial_field=bad, **mapping)
    with pytest.raises(HarnessError, match=r"^partial_field takes a dotted path or a JSON list of them; got"):
        HTTPRetriever(url="http://127.0.0.1:9/q", partial_field=3, **mapping)


def test_the_cli_fails_a_partial_answer_with_one_line_and_writes_nothing(tmp_path):
    ds = _dataset(tmp_path)
    with FakeEngine(lambda request, n: (200, _elastic(failed=1))) as engine:
        proc = harness("run", "--dataset", str(ds), "--retriever", "http", "--param", f"url={engine.url}/idx",
                       "--param", "preset=elasticsearch", "--param", "concurrency=1", "--param", "retries=1",
                       "--param", "backoff=0.01", "--k", "10", "-o", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: http retriever: query 'q1' failed: a partial answer from POST {engine.url}/idx/_search: "
        f"_shards.failed is 1 (after 2 attempts)"]
    assert not (tmp_path / "out").exists()


# ----------------------------------------------------------------------------- 2. secrets in the query string
LITERAL, FROM_ENV = "lit-5ecret-77aa", "env-5ecret-91/b+c d"


def _logged(request: Received, n: int):
    return 200, {"hits": [{"id": "d1", "score": 2.0}, {"id": "d2", "score": 1.0}]}


def test_env_references_in_the_query_string_are_sent_and_literal_secrets_are_recorded_redacted(monkeypatch):
    monkeypatch.setenv("S16B_KEY", FROM_ENV)
    with FakeEngine(_logged) as engine:
        system = HTTPRetriever(url=engine.url + "/idx?api_key=${S16B_KEY}&token=" + LITERAL + "&index=v2",
                               preset="harness", params={"q": "{query}", "k": "{k}", "auth": "${S16B_KEY}",
                                                         "secret": LITERAL, "keyword": "{query}", "lang": "en"})
        system.search(ONE, 10)
    sent = engine.received[0]
    assert sent.path == "/idx/search"  # the preset's path before the URL's query string (was: after it, path "/")
    # the URL's own query string and the params, together (httpx replaced the first by the second)
    assert sent.query == {"api_key": FROM_ENV, "token": LITERAL, "index": "v2", "q": "stem cells", "k": "10",
                          "auth": FROM_ENV, "secret": LITERAL, "keyword": "stem cells", "lang": "en"}
    recorded = system.params()
    assert recorded["url"] == engine.url + "/idx/search?api_key=${S16B_KEY}&token=<redacted>&index=v2"
    assert recorded["params"] == {"q": "{query}", "k": "{k}", "auth": "${S16B_KEY}", "secret": "<redacted>",
                                  "keyword": "{query}", "lang": "en"}
    assert LITERAL not in json.dumps(recorded) and FROM_ENV not in json.dumps(recorded)


def test_the_cli_records_no_query_string_secret_in_any_file_or_line(tmp_path):
    ds = _dataset(tmp_path)
    with FakeEngine(lambda request, n: (401, {"error": "bad key"})
                    if request.query.get("api_key") != FROM_ENV else _logged(request, n)) as engine:
        args = ["run", "--dataset", str(ds), "--retriever", "http", "--param",
                "url=" + engine.url + "?api_key=${S16B_KEY}&password=" + LITERAL, "--param", "preset=harness",
                "--param", 'params={"q": "{query}", "k": "{k}", "token": "' + LITERAL + '"}', "--k", "10"]
        ok = harness(*args, "-o", str(tmp_path / "ok"), env={"S16B_KEY": FROM_ENV})
        refused = harness(*args, "-o", str(tmp_path / "refused"), env={"S16B_KEY": "wrong-" + LITERAL})
        unset = harness(*args, "-o", str(tmp_path / "unset"))
    assert ok.returncode == 0, ok.stderr
    files = [p for p in (tmp_path / "ok").rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"metrics.json", "per_query.jsonl", "run.trec"}
    for path in files:
        assert LITERAL.encode() not in path.read_bytes() and FROM_ENV.encode() not in path.read_bytes(), path
    for proc in (ok, refused, unset):
        assert LITERAL not in proc.stdout + proc.stderr and FROM_ENV not in proc.stdout + proc.stderr
    doc = json.loads(next((tmp_path / "ok").rglob("metrics.json")).read_text())
    assert doc["retriever"]["params"]["url"] == engine.url + "/search?api_key=${S16B_KEY}&password=<redacted>"
    assert doc["retriever"]["params"]["params"]["token"] == "<redacted>"
    assert doc["per_query"]["q1"]["NDCG@10"] == 1.0  # d1 first: the service answered the keyed requests
    # (the first query to fail is q1 or q2: eight requests are in flight at once, concurrency=8)
    assert refused.returncode == 2 and refused.stderr.startswith(tuple(
        f"error: http retriever: query '{q}' failed: HTTP 401 from GET {engine.url}/search: " for q in ("q1", "q2")))
    assert unset.returncode == 2 and unset.stderr.strip().splitlines() == [
        "error: url names the environment variable S16B_KEY, which is not set"]


def test_an_env_reference_outside_the_query_string_or_unset_is_refused_before_any_request(monkeypatch):
    monkeypatch.delenv("S16B_UNSET", raising=False)
    with pytest.raises(HarnessError, match=r"^url: \$\{NAME\} \(an environment variable\) is read only in the query "):
        HTTPRetriever(url="http://127.0.0.1:9/${S16B_KEY}/search", preset="harness")
    with FakeEngine(_logged) as engine:
        system = HTTPRetriever(url=engine.url, preset="harness", params={"q": "{query}", "key": "${S16B_UNSET}"})
        with pytest.raises(HarnessError, match=r"^params\.key names the environment variable S16B_UNSET, which is "
                                               r"not set$"):
            system.search(ONE, 10)
    assert engine.received == []


def test_index_check_sends_the_url_s_query_string_with_its_env_reference(monkeypatch):
    monkeypatch.setenv("S16B_KEY", FROM_ENV)

    def answer(request: Received, n: int):
        if request.query.get("api_key") != FROM_ENV:
            return 401, {"error": "no key"}
        return 200, {"response": {"numFound": 3, "docs": []}}

    with FakeEngine(answer) as engine:
        system = HTTPRetriever(url=engine.url + "/solr/c?api_key=${S16B_KEY}", preset="solr", index_check=3)
        system.index(Corpus(["d1"], [""], ["text"]))  # (index_check gives the count: the corpus is not read)
    assert engine.received[0].path == "/solr/c/select"
    assert engine.received[0].query == {"api_key": FROM_ENV, "q": "*:*", "rows": "0", "wt": "json"}
    assert system.stats()["index_check"] == {"expected": 3, "found": 3}


# ----------------------------------------------------------------------------- 3. ids a run file cannot hold
@pytest.mark.parametrize("doc_id, why", [("a b", "contains whitespace"), ("d\t1", "contains whitespace"),
                                         ("", "empty"), ("d\u00001", "contains NUL: trec_eval would cut the id there")])
def test_a_service_id_a_run_file_cannot_hold_is_one_line_naming_query_and_id_and_nothing_is_written(
        tmp_path, doc_id, why):
    ds = _dataset(tmp_path)
    answer = {"hits": [{"id": "d1", "score": 2.0}, {"id": doc_id, "score": 1.0}]}
    with FakeEngine(lambda request, n: (200, answer if request.query["id"] == "q2" else _logged(request, n)[1])) \
            as engine:
        proc = harness("run", "--dataset", str(ds), "--retriever", "http", "--param", f"url={engine.url}",
                       "--param", "preset=harness", "--param", "concurrency=1", "--k", "10",
                       "-o", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: http retriever: query 'q2' failed: hit 1: document id {doc_id!r} cannot be written to a TREC "
        f"file ({why})"]
    assert not (tmp_path / "out").exists()  # (the old code: out/tiny/http/.lock, and a line naming no query)
    assert len(engine.received) == 2  # not retried: the same answer again


# ----------------------------------------------------------------------------- 4. a password beside Authorization
def test_a_password_in_the_url_beside_an_authorization_header_is_refused():
    with pytest.raises(HarnessError) as refused:
        HTTPRetriever(url="http://elastic:hunter2@127.0.0.1:9", preset="elasticsearch",
                      headers={"authorization": "Bearer ${SEARCH_API_KEY}"})
    assert str(refused.value) == (
        "url holds a user name and password (http://elastic:<redacted>@127.0.0.1:9/_search) and headers set "
        "Authorization: the HTTP client would send the URL's, as Basic authorization, instead of the header; "
        "keep one of them")
    # either alone is sent as given (the header was replaced by Basic elastic:hunter2)
    with FakeEngine(_logged) as engine:
        HTTPRetriever(url=engine.url, preset="harness", headers={"Authorization": "Bearer t0k"}).search(ONE, 10)
        HTTPRetriever(url=engine.url.replace("http://", "http://elastic:hunter2@"), preset="harness",
                      headers={"X-Trace": "1"}).search(ONE, 10)
    assert engine.received[0].headers["authorization"] == "Bearer t0k"
    assert engine.received[1].headers["authorization"] == "Basic ZWxhc3RpYzpodW50ZXIy"  # base64 elastic:hunter2


def test_a_literal_query_string_is_kept_beside_params_and_its_secret_values_recorded_redacted():
    # no ${VAR}: the old code built this template, then sent the request without the URL's own query string
    # (index=v2, api_key) and recorded both secrets whole
    with FakeEngine(_logged) as engine:
        system = HTTPRetriever(url=engine.url + "/search?index=v2&api_key=" + LITERAL, hits="hits", id_field="id",
                               score_field="score", params={"q": "{query}", "access_token": LITERAL})
        system.search(ONE, 10)
    assert engine.received[0].query == {"index": "v2", "api_key": LITERAL, "q": "stem cells", "access_token": LITERAL}
    assert system.params()["url"] == engine.url + "/search?index=v2&api_key=<redacted>"
    assert system.params()["params"] == {"q": "{query}", "access_token": "<redacted>"}


def test_index_check_refuses_a_partial_count_naming_the_signal():
    # Elasticsearch's _count answers with _shards like a search: a failed shard's documents are not counted, and
    # the check said "expected 3, found 2" without the cause (the s16 follow-up's leftover)
    def answer(request: Received, n: int):
        return 200, {"count": 2, "_shards": {"total": 2, "successful": 1, "skipped": 0, "failed": 1}}

    with FakeEngine(answer) as engine:
        system = HTTPRetriever(url=engine.url + "/idx", preset="elasticsearch", index_check=3)
        with pytest.raises(HarnessError) as err:
            system.index(Corpus(["d1"], [""], ["text"]))  # (index_check gives the count: the corpus is not read)
    assert str(err.value) == (f"index_check: a partial answer to GET {engine.url}/idx/_count: _shards.failed is 1; "
                              "its count (2) is not the index's")


def test_an_error_body_that_echoes_a_secret_is_shown_without_it(monkeypatch):
    # A service's error page that repeats the request's key (`invalid key: ...`) printed the key in the error
    # line (the s16 follow-up's leftover): the header's token, a query-string ${VAR}'s value, redacted.
    monkeypatch.setenv("S16C_KEY", "qs-secret-123456")

    def answer(request: Received, n: int):
        return 401, (f"invalid token {request.headers['authorization'][7:]} "
                     f"or key {request.query['api_key']}").encode()

    with FakeEngine(answer) as engine:
        system = HTTPRetriever(url=engine.url + "?api_key=${S16C_KEY}", preset="harness",
                               headers={"Authorization": "Bearer tok-abcdef-987654"}, backoff=0.01, max_backoff=0.05)
        with pytest.raises(QueryFailed) as err:
            system.search(ONE, 10)
    assert "tok-abcdef-987654" not in str(err.value) and "qs-secret-123456" not in str(err.value)
    assert str(err.value).endswith(": 'invalid token <redacted> or key <redacted>'")

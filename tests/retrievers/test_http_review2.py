"""The http retriever against answers it misread (second review). docs/http.md: an answer that is
not JSON or does not fit the response mapping fails its query with one line naming it (not retried;
under on_failure=empty the query is recorded and the run goes on); scores must be finite numbers and
ids Unicode text; a redirect is not followed."""

from __future__ import annotations

import random

import pytest

from harness.datasets.corpus import Queries
from harness.errors import HarnessWarning
from retrievers.http import HTTPRetriever, QueryFailed
from retrievers.http.client import ClientSettings, backoff_delay
from retrievers.http.template import RequestTemplate, ResponseError
from tests.retrievers.http_fakes import FakeEngine, harness_hits

ONE = Queries(["q1"], ["stem cells"])
FAST = {"preset": "harness", "backoff": 0.01, "max_backoff": 0.02}


def fails(answer, message: str, **params) -> None:
    """The query fails with ``message`` after one request (not retried)."""
    with FakeEngine(answer) as engine:
        with pytest.raises(QueryFailed, match="^http retriever: query 'q1' failed: " + message):
            HTTPRetriever(url=engine.url, **{**FAST, **params}).search(ONE, 10)
    assert len(engine.received) == 1


def test_json_nested_too_deep_is_a_query_error_not_a_traceback():
    """json.loads raises RecursionError (no ValueError) on arrays nested 100,000 deep: it escaped as a
    traceback (exit 1), and under on_failure=empty it stopped the whole run."""
    fails(lambda r, n: (200, b"[" * 100_000 + b"]" * 100_000), r"the response of GET .*/search is not valid JSON \(maximum recursion")


def test_a_body_its_content_encoding_does_not_decode_is_a_query_error():
    """httpx.DecodingError is no TransportError: it escaped as a traceback (exit 1)."""
    fails(lambda r, n: (200, b"not gzip", {"Content-Encoding": "gzip"}),
          r"the response could not be read \(DecodingError: .*\) \(GET http://127\.0\.0\.1:\d+/search\)$")


def test_the_empty_policy_records_such_answers_and_goes_on():
    def answer(request, n):
        if request.query["id"] == "q2":
            return 200, b"[" * 100_000 + b"]" * 100_000
        if request.query["id"] == "q3":
            return 200, b"x", {"Content-Encoding": "gzip"}
        return 200, harness_hits(request)

    with FakeEngine(answer) as engine:
        system = HTTPRetriever(url=engine.url, on_failure="empty", **FAST)
        with pytest.warns(HarnessWarning, match=r"^http retriever: 2 of 3 queries failed .*: q2, q3$"):
            run = system.search(Queries(["q1", "q2", "q3"], ["a", "b", "c"]), 2)
    assert {q: list(d) for q, d in run.to_dict().items()} == {"q1": ["q1-d0", "q1-d1"], "q2": [], "q3": []}
    assert system.stats()["failed_queries"] == ["q2", "q3"] and system.stats()["attempts"] == 3


@pytest.mark.parametrize("status, payload", [(307, {"hits": [{"id": "a", "score": 1.0}]}), (301, b"")])
def test_a_redirect_is_named_not_read_as_hits(status, payload):
    """httpx does not follow redirects: a 307's JSON body was read as the query's hits (here a ranking
    ['a'] that the service never gave for it), a 301's empty body reported as 'not valid JSON'."""
    fails(lambda r, n: (status, payload, {"Location": "/v2/search"}),
          rf"HTTP {status} from GET http://127\.0\.0\.1:\d+/search: a redirect to /v2/search \(not followed: "
          r"use that URL\)$")


@pytest.mark.parametrize("raw", [b"Infinity", b"-Infinity", b"1e400", b"-1e400"])
def test_a_score_that_is_no_finite_number_is_a_query_error(raw):
    """Python's json reads the non-JSON token Infinity and the number 1e400 as inf: the run kept an
    infinite score (written 'inf'), where the integer 10**400 is refused (first review) and NaN too."""
    fails(lambda r, n: (200, b'{"hits": [{"id": "a", "score": ' + raw + b"}]}"),
          r"hit 0: score -?inf is not a finite number")


def test_an_id_with_a_lone_surrogate_is_a_query_error():
    """JSON's "\\ud800" escape decodes to a str no UTF-8 encoder takes: the run was searched in full, then
    writing run.trec failed with "'utf-8' codec can't encode character '\\ud800' ..." naming no query."""
    fails(lambda r, n: (200, b'{"hits": [{"id": "ok", "score": 2}, {"id": "a\\ud800", "score": 1}]}'),
          r"hit 1: id 'a\\ud800' holds a lone surrogate escape")


def test_vespa_without_hits_is_empty_but_an_answer_without_root_is_an_error():
    """The vespa preset reads no root.children as no hits; any missing segment did: {} or an error
    object without 'root' was an empty ranking (a judged query silently scored 0)."""
    t = RequestTemplate.build(url="http://127.0.0.1:9/search/", hits="root.children", id_field="fields.id",
                              score_field="relevance", hits_optional=True)
    assert t.read({"root": {"fields": {"totalCount": 0}}}).ids == []
    for payload, missing in (({}, "'root'"), ({"error": "no such schema"}, "'root'"), ({"root": []}, "'root.children'")):
        with pytest.raises(ResponseError, match=f"the response has no {missing}"):
            t.read(payload)
    fails(lambda r, n: (200, {"message": "gateway says hi"}), r"the response has no 'root'", preset="vespa")


def test_the_backoff_of_a_late_retry_does_not_overflow():
    """backoff * 2 ** retry: at retry 1024 the int 2**1024 has no float (OverflowError, a traceback) with
    retries=5000 against a service that keeps failing; the cap is max_backoff (equal jitter in [c/2, c])."""
    settings = ClientSettings(retries=5000, backoff=0.1, max_backoff=5.0)
    rng = random.Random(0)
    for retry in (0, 3, 1023, 1024, 4999):
        cap = min(5.0, 0.1 * 2.0 ** min(retry, 100))
        assert cap / 2 <= backoff_delay(retry, settings, None, rng) <= cap


def test_index_check_names_a_redirect():
    """The count request is not followed either: a 301 was reported as 'no document count at
    'documents' in the answer ... (JSONDecodeError ...)'."""
    from harness.datasets.corpus import Corpus
    from harness.errors import HarnessError

    with FakeEngine(lambda r, n: (301, b"", {"Location": "/v2/healthz"})) as engine:
        with pytest.raises(HarnessError, match=r"^index_check: GET http://127\.0\.0\.1:\d+/healthz answered HTTP 301 "
                                               r"\(a redirect to /v2/healthz, not followed\)$"):
            HTTPRetriever(url=engine.url, index_check=True, **FAST).index(Corpus(["d1"], [""], ["x"]))

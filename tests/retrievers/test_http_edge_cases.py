"""The http retriever on awkward queries and answers: query text in the URL, scores a double cannot
hold, more hits than asked for with float32 ties at the cut (docs/http.md: "ranked by the scores the
service returns (... the evaluator's order) ... and cut to k")."""

from __future__ import annotations

from urllib.parse import unquote

import pytest

from harness.datasets.corpus import Queries
from harness.evaluation.semantics import parse_semantics
from retrievers.http import HTTPRetriever, QueryFailed
from retrievers.http.template import RequestTemplate, ResponseError
from tests.retrievers.http_fakes import FakeEngine

MAPPING = {"hits": "hits", "id_field": "id", "score_field": "score"}
HOSTILE = ["a b", "a#b", "a?x=1&y=2", "a/b/../c", "100%", "a+b", "caf\u00e9 \u4e2d\u6587", "{x}", "q" * 3000]


def test_url_placeholders_are_percent_encoded():
    """A value in the URL is one component (urllib.parse.quote with safe=""): '#' would end the URL
    there (a fragment the service never sees), '?', '&', '=' would add parameters, '/' path segments."""
    t = RequestTemplate.build(url="http://127.0.0.1:9/s/{query_id}?q={query}&n={k}", **MAPPING)
    assert t.render("q/1", "a#b?x=1&y c%", 5).url == "http://127.0.0.1:9/s/q%2F1?q=a%23b%3Fx%3D1%26y%20c%25&n=5"


def test_the_service_receives_the_query_text_as_sent_in_a_url_path_or_query_string():
    ids = [f"q{i}/x" for i in range(len(HOSTILE))]
    expected = sorted(zip(ids, HOSTILE))
    with FakeEngine(lambda request, n: (200, {"hits": []})) as engine:
        HTTPRetriever(url=engine.url + "/s/{query_id}/{query}", retries=0, **MAPPING).search(Queries(ids, HOSTILE), 3)
        # the path: two segments, each one percent-encoded value
        assert sorted(tuple(unquote(part) for part in x.path.split("/")[2:]) for x in engine.received) == expected
        engine.received.clear()
        HTTPRetriever(url=engine.url + "/s?q={query}&id={query_id}", retries=0, **MAPPING).search(
            Queries(ids, HOSTILE), 3)
        assert sorted((x.query["id"], x.query["q"]) for x in engine.received) == expected  # decoded by the service


def test_an_integer_score_beyond_a_double_is_a_clear_error_not_a_crash():
    t = RequestTemplate.build(url="http://127.0.0.1:9/s", **MAPPING)
    with pytest.raises(ResponseError, match=r"hit 1: score \(an integer of 400 digits\) is beyond the range"):
        t.read({"hits": [{"id": "a", "score": 1}, {"id": "b", "score": -10 ** 399}]})
    assert t.read({"hits": [{"id": "a", "score": 10 ** 308}]}).scores == [1e308]  # still a double: kept
    with FakeEngine(lambda request, n: (200, b'{"hits": [{"id": "a", "score": 1' + b"0" * 399 + b"}]}")) as engine:
        with pytest.raises(QueryFailed, match="query 'q1' failed: hit 0: score .* beyond the range of a double"):
            HTTPRetriever(url=engine.url, preset="harness", retries=0).search(Queries(["q1"], ["x"]), 10)


def test_more_hits_than_k_are_cut_in_the_evaluators_order():
    """Scores 1.00000002 > 1.00000001 > 1.0 are one float32 value (1.0), so trec_eval-9 ranks the three
    by id descending: c, b, a; its top 2 is c, b (with their own scores). Cutting the float64 order
    kept a, b, and at depth 1 NDCG@1 of a query judging c relevant was 0 instead of 1."""
    hits = [{"id": "a", "score": 1.00000002}, {"id": "b", "score": 1.00000001}, {"id": "c", "score": 1.0}]
    with FakeEngine(lambda request, n: (200, {"hits": hits})) as engine:
        r = HTTPRetriever(url=engine.url, preset="harness", retries=0)
        r.ranking_semantics = parse_semantics("trec_eval-9")
        assert r.search(Queries(["q1"], ["x"]), 2).to_dict() == {"q1": {"c": 1.0, "b": 1.00000001}}
        r.ranking_semantics = parse_semantics("trec_eval-10")  # doubles: the float64 order
        assert list(r.search(Queries(["q1"], ["x"]), 2).to_dict()["q1"]) == ["a", "b"]

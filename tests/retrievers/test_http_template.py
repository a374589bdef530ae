"""The http retriever's request template: placeholders, response mapping, secrets, validation."""

from __future__ import annotations

import re

import pytest

from harness.errors import HarnessError
from retrievers.http import HTTPRetriever
from retrievers.http.template import FieldPath, HeaderValue, RequestTemplate, ResponseError, redact_url

MAPPING = {"hits": "hits", "id_field": "id", "score_field": "score"}


def template(**kwargs) -> RequestTemplate:
    return RequestTemplate.build(**{"url": "http://127.0.0.1:9/s", **MAPPING, **kwargs})


def test_a_whole_placeholder_keeps_its_type_and_a_partial_one_is_text():
    t = template(method="POST", body={"size": "{k}", "q": "{query}", "tag": "q={query_id} k={k}",
                                      "literal": "{{not a placeholder}}", "n": [1, True, None, "{k}"]})
    request = t.render("q7", "stem {cells}", 25)
    assert request.body == {"size": 25, "q": "stem {cells}", "tag": "q=q7 k=25", "literal": "{not a placeholder}",
                            "n": [1, True, None, 25]}
    assert request.method == "POST" and request.url == "http://127.0.0.1:9/s" and request.params == {}


def test_url_and_query_string_placeholders():
    t = template(url="http://127.0.0.1:9/{query_id}/s", params={"q": "{query}", "rows": "{k}", "fl": "id,score"})
    request = t.render("q1", "a b", 5)
    assert request.url == "http://127.0.0.1:9/q1/s" and request.params == {"q": "a b", "rows": "5", "fl": "id,score"}


@pytest.mark.parametrize("body, message", [
    ({"q": "{text}"}, "body.q: unknown placeholder {text}"),
    ({"q": ["{k:>3}"]}, "body.q[0]: unknown placeholder {k}"),
    ({"q": "{query"}, "body.q: bad template"),
])
def test_a_bad_placeholder_is_refused_up_front(body, message):
    with pytest.raises(HarnessError, match=re.escape(message)):
        template(method="POST", body=body)


@pytest.mark.parametrize("kwargs, message", [
    ({"url": "localhost:9200"}, "url must be an http"),
    ({"method": "PUT"}, "method must be GET or POST"),
    ({"body": {"q": "{query}"}}, "a GET request has no body"),
    ({"hits": None}, "without a preset, the http retriever needs hits"),
    ({"id_field": "a..b"}, "id_field takes a dotted path"),
    ({"headers": {"X-N": 3}}, "header 'X-N' must be a string"),
])
def test_bad_templates_are_refused_with_the_part_at_fault(kwargs, message):
    with pytest.raises(HarnessError, match=message):
        template(**kwargs)


@pytest.mark.parametrize("kwargs, message", [
    ({}, "needs --param url="),
    ({"url": "http://h", "preset": "mongo"}, "unknown http preset 'mongo'; choose one of elasticsearch"),
    ({"url": "http://h", "preset": "solr", "concurrency": 0}, "concurrency must be an integer >= 1"),
    ({"url": "http://h", "preset": "solr", "timeout": -1}, "timeout must be a number > 0"),
    ({"url": "http://h", "preset": "solr", "on_failure": "skip"}, "on_failure must be 'fail' or 'empty'"),
    ({"url": "http://h", **MAPPING, "index_check": True}, "index_check needs a preset"),
])
def test_bad_retriever_parameters(kwargs, message):
    with pytest.raises(HarnessError, match=message):
        HTTPRetriever(**kwargs)


def test_field_paths_walk_objects_and_lists():
    doc = {"root": {"children": [{"fields": {"id": "d1"}}, {"fields": {}}]}}
    assert FieldPath.parse("root.children.0.fields.id", "p").get(doc) == "d1"
    with pytest.raises(KeyError, match="root.children.1.fields.id"):
        FieldPath.parse("root.children.1.fields.id", "p").get(doc)
    with pytest.raises(KeyError, match="root.kids"):
        FieldPath.parse("root.kids", "p").get(doc)


def test_reading_hits():
    t = template()
    hits = t.read({"hits": [{"id": 12, "score": 3}, {"id": "b", "score": 2.5}]})
    assert hits.ids == ["12", "b"] and hits.scores == [3.0, 2.5]
    assert t.read({"hits": []}).ids == []
    with pytest.raises(ResponseError, match="the response has no 'hits'.*top-level keys: error"):
        t.read({"error": "boom"})
    with pytest.raises(ResponseError, match="'hits' in the response is dict, not a list"):
        t.read({"hits": {"id": 1}})
    with pytest.raises(ResponseError, match="hit 1 has no score at 'score' \\(its keys: id\\)"):
        t.read({"hits": [{"id": "a", "score": 1}, {"id": "b"}]})
    with pytest.raises(ResponseError, match="hit 0: score 'high' is not a number"):
        t.read({"hits": [{"id": "a", "score": "high"}]})
    with pytest.raises(ResponseError, match="hit 1: document 'a' appears twice"):
        t.read({"hits": [{"id": "a", "score": 2}, {"id": "a", "score": 1}]})
    optional = RequestTemplate.build(url="http://h/s", hits="root.children", id_field="fields.id",
                                     score_field="relevance", hits_optional=True)
    assert optional.read({"root": {"fields": {"totalCount": 0}}}).ids == []


def test_environment_variables_in_headers_are_expanded_when_sending_and_never_recorded():
    t = template(headers={"Authorization": "ApiKey ${SEARCH_API_KEY}", "X-Api-Key": "literal-secret",
                          "Accept": "application/json"})
    assert t.header_values({"SEARCH_API_KEY": "s3cr3t"}) == {
        "Authorization": "ApiKey s3cr3t", "X-Api-Key": "literal-secret", "Accept": "application/json"}
    assert t.describe()["headers"] == {"Authorization": "ApiKey ${SEARCH_API_KEY}", "X-Api-Key": "<redacted>",
                                       "Accept": "application/json"}
    with pytest.raises(HarnessError, match="header 'Authorization' names the environment variable SEARCH_API_KEY, "
                                           "which is not set"):
        t.header_values({})
    assert HeaderValue("Cookie", "a=b").describe() == "<redacted>"


def test_a_password_in_the_url_is_redacted():
    assert redact_url("https://elastic:changeme@es.local:9200/idx") == "https://elastic:<redacted>@es.local:9200/idx"
    assert redact_url("http://es.local:9200/idx") == "http://es.local:9200/idx"
    retriever = HTTPRetriever(url="https://elastic:changeme@es.local:9200/idx", preset="elasticsearch")
    assert "changeme" not in str(retriever.params())


def test_environment_variables_in_the_body_are_expanded_when_sending_and_never_recorded():
    """A body string may name environment variables as header values do (a service that takes its key in
    the JSON body: ``{"api_key": "${SEARCH_API_KEY}"}``): expanded when the request is rendered, a whole
    ``${VAR}`` string as the variable's text; results record the reference, and a literal value under a
    secret-looking key, at any depth, as ``<redacted>``. An unset variable is one error naming its place."""
    t = template(method="POST", body={"auth": {"api_key": "${SEARCH_API_KEY}"}, "q": "{query}",
                                      "tag": "run-${RUN_TAG}-{query_id}", "token": "literal-tok-123",
                                      "filters": [{"secret": "{query_id}"}]})
    env = {"SEARCH_API_KEY": "s3cr3t-key", "RUN_TAG": "nightly"}
    request = t.render("q1", "a b", 5, t.env_values(env))
    assert request.body == {"auth": {"api_key": "s3cr3t-key"}, "q": "a b", "tag": "run-nightly-q1",
                            "token": "literal-tok-123", "filters": [{"secret": "q1"}]}
    assert t.describe()["body"] == {"auth": {"api_key": "${SEARCH_API_KEY}"}, "q": "{query}",
                                    "tag": "run-${RUN_TAG}-{query_id}", "token": "<redacted>",
                                    "filters": [{"secret": "{query_id}"}]}
    with pytest.raises(HarnessError, match=re.escape("body.auth.api_key names the environment variable "
                                                     "SEARCH_API_KEY, which is not set")):
        t.env_values({"RUN_TAG": "x"})

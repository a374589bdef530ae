"""Presets against fake engines that answer in each engine's documented response shape.

Shapes (from the engines' reference documentation):
* Elasticsearch / OpenSearch ``_search``: ``{"took", "timed_out", "_shards", "hits": {"total": {"value",
  "relation"}, "max_score", "hits": [{"_index", "_id", "_score", ...}]}}``; ``_count``: ``{"count", "_shards"}``.
* Solr ``/select`` with ``fl=id,score&wt=json``: ``{"responseHeader": {"status", "QTime", "params"},
  "response": {"numFound", "start", "maxScore", "numFoundExact", "docs": [{"id", "score"}]}}``.
* Vespa ``/search/`` (default JSON result format): ``{"root": {"id": "toplevel", "relevance", "fields":
  {"totalCount"}, "coverage": {...}, "children": [{"id": "id:ns:doc::x", "relevance", "source", "fields":
  {"sddocname", "documentid", ...}}]}}``; ``children`` is absent when nothing matched.
"""

from __future__ import annotations

import pytest

from harness.datasets.corpus import Corpus, Queries
from harness.errors import HarnessError
from retrievers.http import HTTPRetriever
from tests.retrievers.http_fakes import FakeEngine, Received

# Two queries; q2 matches nothing. Hits in the engine's order; "b" and "c" tie (canonical order puts
# "c" first: ties by document id descending).
QUERIES = Queries(["q1", "q2"], ["stem cells", "nothing matches"])
HITS = {"stem cells": [("a", 3.5), ("b", 1.25), ("c", 1.25)], "nothing matches": []}
CANONICAL = {"q1": {"a": 3.5, "c": 1.25, "b": 1.25}, "q2": {}}
N_DOCS = 5183


def elastic(request: Received, n: int):
    if request.path.endswith("/_count"):
        return 200, {"count": N_DOCS, "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0}}
    hits = HITS[request.text]
    return 200, {"took": 3, "timed_out": False, "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
                 "hits": {"total": {"value": len(hits), "relation": "eq"},
                          "max_score": hits[0][1] if hits else None,
                          "hits": [{"_index": "scifact", "_id": d, "_score": s} for d, s in hits]}}


def solr(request: Received, n: int):
    if request.query["q"] == "*:*":
        return 200, {"responseHeader": {"status": 0, "QTime": 0, "params": request.query},
                     "response": {"numFound": N_DOCS, "start": 0, "numFoundExact": True, "docs": []}}
    hits = HITS[request.text]
    return 200, {"responseHeader": {"status": 0, "QTime": 1, "params": request.query},
                 "response": {"numFound": len(hits), "start": 0, "maxScore": hits[0][1] if hits else 0.0,
                              "numFoundExact": True, "docs": [{"id": d, "score": s} for d, s in hits]}}


def vespa(request: Received, n: int):
    coverage = {"coverage": 100, "documents": N_DOCS, "full": True, "nodes": 1, "results": 1, "resultsFull": 1}
    if "where true" in request.body["yql"]:
        return 200, {"root": {"id": "toplevel", "relevance": 1.0, "fields": {"totalCount": N_DOCS},
                              "coverage": coverage}}
    hits = HITS[request.text]
    root = {"id": "toplevel", "relevance": 1.0, "fields": {"totalCount": len(hits)}, "coverage": coverage}
    if hits:  # Vespa leaves "children" out when nothing matched
        root["children"] = [{"id": f"id:scifact:doc::{d}", "relevance": s, "source": "scifact_content",
                             "fields": {"sddocname": "doc", "documentid": f"id:scifact:doc::{d}", "id": d}}
                            for d, s in hits]
    return 200, {"root": root}


def check_elastic(request: Received):
    assert (request.method, request.path) == ("POST", "/scifact/_search")
    assert request.body["size"] == 7 and request.body["_source"] is False
    assert request.body["query"]["multi_match"]["fields"] == ["title", "text"]


def check_solr(request: Received):
    assert (request.method, request.path) == ("GET", "/solr/scifact/select")
    assert {key: request.query[key] for key in ("fl", "rows", "wt", "defType")} == {
        "fl": "id,score", "rows": "7", "wt": "json", "defType": "edismax"}


def check_vespa(request: Received):
    assert (request.method, request.path) == ("POST", "/search/")
    assert request.body["hits"] == 7 and request.body["yql"] == "select * from sources * where userQuery()"


CASES = {
    "elasticsearch": (elastic, "/scifact", check_elastic),
    "opensearch": (elastic, "/scifact", check_elastic),
    "solr": (solr, "/solr/scifact", check_solr),
    "vespa": (vespa, "", check_vespa),
}


@pytest.mark.parametrize("preset", sorted(CASES))
def test_preset_sends_the_engine_request_and_reads_its_response(preset):
    answer, base, check = CASES[preset]
    with FakeEngine(answer) as engine:
        retriever = HTTPRetriever(url=engine.url + base, preset=preset, concurrency=2, index_check=True)
        retriever.index(Corpus([str(i) for i in range(N_DOCS)], [""] * N_DOCS, [""] * N_DOCS))
        run = retriever.search(QUERIES, 7)
    assert run.to_dict() == CANONICAL
    searches = [r for r in engine.received if r.text in HITS]
    assert sorted(r.text for r in searches) == sorted(QUERIES.texts)
    for request in searches:
        check(request)
    assert retriever.stats()["index_check"] == {"expected": N_DOCS, "found": N_DOCS}


def test_index_check_refuses_a_service_with_another_document_count():
    with FakeEngine(elastic) as engine:
        retriever = HTTPRetriever(url=engine.url + "/scifact", preset="elasticsearch", index_check=True)
        with pytest.raises(HarnessError, match="index_check: the service at .*/scifact holds 5,183 documents, "
                                               "expected 10"):
            retriever.index(Corpus([str(i) for i in range(10)], [""] * 10, [""] * 10))
        HTTPRetriever(url=engine.url + "/scifact", preset="elasticsearch", index_check=N_DOCS).index(
            Corpus(["x"], [""], [""]))  # an explicit count overrides the dataset's


def test_preset_fields_can_be_overridden():
    with FakeEngine(elastic) as engine:
        retriever = HTTPRetriever(url=engine.url + "/scifact", preset="elasticsearch",
                                  body={"size": "{k}", "query": {"match": {"text": "{query}"}}})
        run = retriever.search(Queries(["q1"], ["stem cells"]), 2)
    assert engine.received[0].body == {"size": 2, "query": {"match": {"text": "stem cells"}}}
    assert run.to_dict() == {"q1": {"a": 3.5, "c": 1.25}}
    assert retriever.params()["body"] == {"size": "{k}", "query": {"match": {"text": "{query}"}}}

"""Presets: the request each search engine's API takes and the response shape it returns, as data.

``url`` is the user's base URL (an index or collection for the engines); ``path`` is appended to it.
Every field can be overridden by the parameter of the same name (``--param body=...``).
``partial_field`` names the engine's own signs of a partial answer (retrievers/http/template.py,
:class:`PartialCheck`; sources: each engine's search API reference). ``count``
is the request ``index_check`` sends to read the number of indexed documents.

elasticsearch / opensearch
    ``POST {url}/_search`` with ``{"size": k, "_source": false, "query": {"multi_match": {"query":
    text, "type": "best_fields", "fields": ["title", "text"], "tie_breaker": 0.5}}}`` (the query BEIR's
    Elasticsearch example sends); reads ``hits.hits[]._id`` and ``._score``; partial when ``timed_out``,
    ``_shards.failed > 0``, or, in a cross-cluster search, ``_clusters.skipped``, ``.partial`` or
    ``.failed`` > 0. Count: ``GET {url}/_count`` -> ``count``.
solr
    ``GET {url}/select?q=text&defType=edismax&qf=title text&fl=id,score&rows=k&wt=json``; reads
    ``response.docs[].id`` and ``.score`` (present because ``fl`` asks for it); partial when
    ``responseHeader.partialResults`` is true. Count: ``GET
    {url}/select?q=*:*&rows=0&wt=json`` -> ``response.numFound``.
vespa
    ``POST {url}/search/`` with ``{"yql": "select * from sources * where userQuery()", "query":
    text, "hits": k}``; reads ``root.children[].fields.id`` (a document field named ``id``) and
    ``.relevance``; ``root.children`` is absent when nothing matched; partial when ``root.errors`` is
    non-empty, a ``root.coverage.degraded`` flag is true, ``root.coverage.full`` is false or
    ``root.coverage.coverage`` is below 100. Count: a ``where true`` query
    with ``hits: 0`` -> ``root.fields.totalCount``.
harness
    ``GET {url}/search?q=text&k=k&id=query_id`` (``harness serve``); reads ``hits[].id`` and
    ``.score``. Count: ``GET {url}/healthz`` -> ``documents``.
"""

from __future__ import annotations

from copy import deepcopy

_ELASTIC = {
    "method": "POST",
    "path": "/_search",
    "body": {"size": "{k}", "_source": False,
             "query": {"multi_match": {"query": "{query}", "type": "best_fields", "fields": ["title", "text"],
                                       "tie_breaker": 0.5}}},
    "hits": "hits.hits",
    "id_field": "_id",
    "score_field": "_score",
    # the search's time ran out (the hits found so far), or some shards failed: allow_partial_search_results
    # defaults to true, and the answer is HTTP 200 with the other shards' hits; a cross-cluster search also
    # answers 200 when a remote cluster with skip_unavailable was skipped (its shards are in no _shards count),
    # or (8.10+) answered partially or failed: _clusters.skipped / .partial / .failed > 0 (absent elsewhere)
    "partial_field": ["timed_out", "_shards.failed", "_clusters.skipped", "_clusters.partial", "_clusters.failed"],
    "count": {"method": "GET", "path": "/_count", "field": "count"},
}

PRESETS: dict[str, dict] = {
    "elasticsearch": _ELASTIC,
    "opensearch": deepcopy(_ELASTIC),
    "solr": {
        "method": "GET",
        "path": "/select",
        "params": {"q": "{query}", "defType": "edismax", "qf": "title text", "fl": "id,score", "rows": "{k}",
                   "wt": "json"},
        "hits": "response.docs",
        "id_field": "id",
        "score_field": "score",
        "partial_field": ["responseHeader.partialResults"],  # timeAllowed ran out, or shards.tolerant skipped a shard
        "count": {"method": "GET", "path": "/select", "params": {"q": "*:*", "rows": "0", "wt": "json"},
                  "field": "response.numFound"},
    },
    "vespa": {
        "method": "POST",
        "path": "/search/",
        "body": {"yql": "select * from sources * where userQuery()", "query": "{query}", "hits": "{k}"},
        "hits": "root.children",
        "hits_optional": True,
        "id_field": "fields.id",
        "score_field": "relevance",
        # errors (e.g. a content node's timeout), or less than the whole corpus searched (soft timeout,
        # match-phase degradation, a cluster not in its ideal state)
        "partial_field": ["root.errors", "root.coverage.degraded", "!root.coverage.full",
                          "root.coverage.coverage<100"],
        "count": {"method": "POST", "path": "/search/",
                  "body": {"yql": "select * from sources * where true", "hits": 0},
                  "field": "root.fields.totalCount"},
    },
    "harness": {
        "method": "GET",
        "path": "/search",
        "params": {"q": "{query}", "k": "{k}", "id": "{query_id}"},
        "hits": "hits",
        "id_field": "id",
        "score_field": "score",
        "count": {"method": "GET", "path": "/healthz", "field": "documents"},
    },
}


def preset(name: str) -> dict:
    """A copy of preset ``name`` (HarnessError listing the presets when unknown)."""
    from harness.errors import HarnessError

    if name not in PRESETS:
        raise HarnessError(f"unknown http preset {name!r}; choose one of {', '.join(PRESETS)} "
                           f"(or none, with a full template)")
    return deepcopy(PRESETS[name])

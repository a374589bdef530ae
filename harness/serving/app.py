"""The search service ``harness serve`` runs: any retriever behind a small Starlette app.

Endpoints (responses are JSON; the ``harness`` preset of the http retriever reads the first)::

    GET  /search?q=TEXT&k=10[&id=QID]   {"query_id": QID|null, "query": TEXT, "k": 10,
                                         "hits": [{"id": "doc", "score": 12.5}, ...]}
    POST /search  {"k": 10, "queries": [{"id": "q1", "q": "TEXT"}, ...]}
                                        {"k": 10, "results": [{"query_id": "q1", "hits": [...]}, ...]}
    GET  /healthz                       {"status": "ok", "retriever": NAME, "params": {...},
                                         "dataset": NAME, "documents": N}

Hits come in the evaluator's canonical order (score descending, ties by document id descending),
at most ``k``; scores are the retriever's float64 values, which JSON carries exactly. A bad request
(no ``q``, ``k`` not an integer in 1..max_k, a batch over ``max_batch`` queries or with repeated ids)
gets HTTP 400 and ``{"error": "..."}``. Retrievers are not assumed thread-safe: searches run one at
a time in a worker thread, so the event loop keeps answering ``/healthz``.
"""

from __future__ import annotations

import threading
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from harness.datasets.corpus import Queries

MAX_K = 10_000
MAX_BATCH = 1_000


class BadRequest(Exception):
    pass


def _k(value: Any, max_k: int) -> int:
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= max_k:
        raise BadRequest(f"k must be an integer from 1 to {max_k}; got {value!r}")
    return value


def create_app(retriever, dataset: str, n_documents: int, max_k: int = MAX_K, max_batch: int = MAX_BATCH) -> Starlette:
    """A Starlette app serving an already indexed ``retriever``."""
    lock = threading.Lock()
    health = {"status": "ok", "retriever": retriever.name, "params": retriever.params(), "dataset": dataset,
              "documents": n_documents}

    def search(ids: list[str], texts: list[str], k: int) -> list[list[dict]]:
        with lock:
            run = retriever.search(Queries(ids, texts), k).truncated(k)
        position = {qid: i for i, qid in enumerate(run.query_ids.tolist())}
        out = []
        for qid in ids:
            i = position.get(qid)
            if i is None:
                out.append([])
                continue
            start, end = int(run.offsets[i]), int(run.offsets[i + 1])
            out.append([{"id": doc, "score": score} for doc, score in
                        zip(run.doc_vocab[run.doc_codes[start:end]].tolist(), run.scores[start:end].tolist())])
        return out

    async def search_one(request: Request) -> JSONResponse:
        try:
            text = request.query_params.get("q")
            if text is None:
                raise BadRequest("missing query parameter q")
            k = _k(request.query_params.get("k", "10"), max_k)
        except BadRequest as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        query_id = request.query_params.get("id")
        hits = (await run_in_threadpool(search, [query_id or "q"], [text], k))[0]
        return JSONResponse({"query_id": query_id, "query": text, "k": k, "hits": hits})

    async def search_batch(request: Request) -> JSONResponse:
        try:
            try:
                body = await request.json()
            except ValueError:
                raise BadRequest("the body must be JSON: {\"k\": 10, \"queries\": [{\"id\": \"q1\", \"q\": \"...\"}]}")
            if not isinstance(body, dict) or not isinstance(body.get("queries"), list):
                raise BadRequest("the body must be an object with a \"queries\" list")
            k = _k(body.get("k", 10), max_k)
            queries = body["queries"]
            if len(queries) > max_batch:
                raise BadRequest(f"at most {max_batch} queries per batch; got {len(queries)}")
            ids, texts = [], []
            for i, query in enumerate(queries):
                if not isinstance(query, dict) or not isinstance(query.get("q"), str):
                    raise BadRequest(f"queries[{i}] must be an object with a string \"q\"")
                ids.append(str(query.get("id", i)))
                texts.append(query["q"])
            if len(set(ids)) != len(ids):
                raise BadRequest("query ids in a batch must be unique")
        except BadRequest as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        hits = await run_in_threadpool(search, ids, texts, k) if ids else []
        return JSONResponse({"k": k, "results": [{"query_id": qid, "hits": h} for qid, h in zip(ids, hits)]})

    async def healthz(request: Request) -> JSONResponse:
        return JSONResponse(health)

    return Starlette(routes=[Route("/search", search_one, methods=["GET"]),
                             Route("/search", search_batch, methods=["POST"]),
                             Route("/healthz", healthz, methods=["GET"])])

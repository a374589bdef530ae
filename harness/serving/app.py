"""The search service ``harness serve`` runs: any retriever behind a small Starlette app.

Endpoints (responses are JSON; the ``harness`` preset of the http retriever reads the first)::

    GET  /search?q=TEXT&k=10[&id=QID]   {"query_id": QID|null, "query": TEXT, "k": 10,
                                         "hits": [{"id": "doc", "score": 12.5}, ...]}
    POST /search  {"k": 10, "queries": [{"id": "q1", "q": "TEXT"}, ...]}
                                        {"k": 10, "results": [{"query_id": "q1", "hits": [...]}, ...]}
    GET  /healthz                       {"status": "ok", "retriever": NAME, "params": {...},
                                         "dataset": NAME, "documents": N}

Hits come in the evaluator's canonical order (score descending, ties by document id descending),
at most ``k``, cut in the default evaluator's order (trec_eval-9: scores equal in float32 tie) as
``harness run`` cuts its runs; scores are the retriever's float64 values, which JSON carries
exactly. A bad request (no ``q``, ``k`` not an integer in 1..max_k, a batch over ``max_batch``
queries, with repeated ids, or with a text or id that is not valid Unicode) gets HTTP 400 and
``{"error": "..."}``. Retrievers are not assumed thread-safe: searches run one at
a time in a worker thread, so the event loop keeps answering ``/healthz``.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from harness.columns import is_utf8_text
from harness.datasets.corpus import Queries

MAX_K = 10_000
MAX_BATCH = 1_000


class BadRequest(Exception):
    pass


def _query_params(raw: bytes) -> dict[str, str]:
    """GET /search's parameters, each given once, percent-decoded as UTF-8: a ``q`` or ``id`` whose bytes are no
    UTF-8 (Latin-1, a lone surrogate's ``%ED%A0%80``, which Python's strict UTF-8 refuses too) is a BadRequest,
    as a POST body's ``"\\ud800"`` is (the framework's own parse replaced them with U+FFFD, and the query
    searched was another text); so is a parameter given twice (``q=a&q=b`` searched ``b``)."""
    from urllib.parse import parse_qsl

    try:
        pairs = parse_qsl(raw.decode("latin-1"), keep_blank_values=True, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise BadRequest("a query parameter is not UTF-8 text once percent-decoded") from None
    params: dict[str, str] = {}
    for name, value in pairs:
        if name in params:
            raise BadRequest(f"query parameter {name} given more than once")
        params[name] = value
    return params


def _k(value: Any, max_k: int) -> int:
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        try:
            value = int(value)
        except ValueError:  # digits int() does not read ("²", "--5") or more than it converts: refused below
            pass
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= max_k:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise BadRequest(f"k must be an integer from 1 to {max_k}; got {shown}")
    return value


def create_app(retriever, dataset: str, n_documents: int, max_k: int = MAX_K, max_batch: int = MAX_BATCH,
               semantics=None) -> Starlette:
    """A Starlette app serving an already indexed ``retriever``; ``semantics``: the evaluator's whose
    order decides which hits make the cut at k (None: the default, trec_eval-9)."""
    from harness.evaluation.semantics import parse_semantics, top_depth

    lock = threading.Lock()
    # The evaluator's order (trec_eval-9: scores equal in float32 tie, the larger id first; trec_eval-10:
    # double order) decides which hits make the cut at k, as in `harness run`; a retriever that cuts a
    # ranking it did not score (run-file) is told so.
    semantics = parse_semantics(semantics)
    retriever.ranking_semantics = semantics
    health = {"status": "ok", "retriever": retriever.name, "params": retriever.params(), "dataset": dataset,
              "documents": n_documents, "semantics": semantics.name}

    def search(ids: list[str], texts: list[str], k: int) -> list[list[dict]]:
        with lock:
            run = retriever.search(Queries(ids, texts), k)
        run = top_depth(run, k, semantics)
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
            params = _query_params(request.scope.get("query_string", b""))
            text = params.get("q")
            if text is None:
                raise BadRequest("missing query parameter q")
            k = _k(params.get("k", "10"), max_k)
        except BadRequest as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        query_id = params.get("id")
        hits = (await run_in_threadpool(search, [query_id or "q"], [text], k))[0]
        return JSONResponse({"query_id": query_id, "query": text, "k": k, "hits": hits})

    async def search_batch(request: Request) -> JSONResponse:
        try:
            try:
                body = await request.json()
            except (ValueError, RecursionError):  # RecursionError: arrays or objects nested too deep
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
                query_id = query.get("id", i)
                if isinstance(query_id, bool) or not isinstance(query_id, (str, int)):  # null, a list: no id
                    raise BadRequest(f"queries[{i}] \"id\" must be a string or an integer; got {json.dumps(query_id)}")
                ids.append(str(query_id))
                texts.append(query["q"])
                if not (is_utf8_text(ids[-1]) and is_utf8_text(texts[-1])):  # JSON's "\ud800" escapes: no UTF-8
                    raise BadRequest(f"queries[{i}] holds a lone surrogate escape (\\ud800-\\udfff): not valid "
                                     f"Unicode text")
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

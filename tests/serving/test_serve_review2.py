"""``harness serve`` (second review): keep-alive latency and a deeply nested batch body.

docs/http.md: the service's latencies are what the http retriever records (``retriever_stats.latency_ms``,
metrics.json's efficiency block), so the server may add no fixed delay of its own; and a bad request
gets HTTP 400 and ``{"error": "..."}``, never a 500."""

from __future__ import annotations

import httpx
from starlette.testclient import TestClient

from harness.datasets.corpus import Corpus
from harness.serving import create_app, serve_in_thread
from retrievers import create


def tiny_app():
    system = create("bm25", cache=False)
    system.index(Corpus(["d1", "d2"], ["", ""], ["stem cells divide", "cells in the heart"]))
    return create_app(system, dataset="tiny", n_documents=2, max_k=50)


def test_accepted_connections_get_tcp_nodelay_so_keep_alive_answers_are_not_held():
    """The listening socket was made with proto 0, so asyncio did not set TCP_NODELAY on accepted
    connections (it sets it only where the socket's proto is IPPROTO_TCP): uvicorn writes a response's
    head and body separately, Nagle held the body until the client's delayed ACK (40 ms on Linux), and
    every request after the first on a keep-alive connection took >= 40 ms (measured by the review:
    44 ms each, 0.3 ms with TCP_NODELAY; SciFact at concurrency 1, p50 44-47 ms -> 1.87 ms). Checked
    without timing: a connection accepted on ``bind``'s socket is TCP, and asyncio's own rule then
    turns Nagle off on it; one real keep-alive exchange still answers."""
    import asyncio.base_events as base_events
    import socket

    from harness.serving.server import bind

    listener = bind("127.0.0.1", 0)
    try:
        client = socket.create_connection(listener.getsockname()[:2])
        conn, _ = listener.accept()
        with client, conn:
            assert conn.proto == socket.IPPROTO_TCP
            base_events._set_nodelay(conn)  # what asyncio does with every connection it accepts
            assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        listener.close()
    with serve_in_thread(tiny_app()) as url, httpx.Client() as http:
        for _ in range(3):
            assert http.get(url + "/search", params={"q": "stem", "k": 2}).status_code == 200


def test_a_batch_body_nested_too_deep_gets_400_not_500():
    """json.loads raises RecursionError (not a ValueError) on arrays nested ~100,000 deep: it was a 500."""
    client = TestClient(tiny_app(), raise_server_exceptions=False)
    body = b'{"queries": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    reply = client.post("/search", content=body, headers={"content-type": "application/json"})
    assert reply.status_code == 400
    assert reply.json()["error"].startswith("the body must be JSON")
